/**
 * Every command in README.md's code blocks, run (docs/STYLE.md "Tests": an example in the
 * README is run by a test). The appliance is the executable from `make build`
 * (binary-under-test.ts) serving on free loopback ports, fed three calls over HEP/UDP; each README
 * line runs in bash with that executable as `svc` on PATH, exactly as written except for three
 * substitutions: the coordinator address for 127.0.0.1:8080, the capture agent's (a server with
 * the documented agent API) for 127.0.0.1:8008, and the password from the first-run banner for
 * `<the admin password>`. Each line's output is checked, not only its exit code. A line that
 * cannot run here (npm ci would replace the shared node_modules, sudo, systemd) is listed in
 * ELSEWHERE with the test that covers it; a README line in neither list fails the test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { extractSipMessages } from "../../src/pcap/index.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor, type TempDir } from "../harness.ts";
import { binaryUnderTest, ROOT } from "./binary-under-test.ts";
import { fakeAgent, parseCsv } from "./cli-harness.ts";
import { isolatedServeEnv } from "./serve-env.ts";
import { readmeCommands, serveAndWait, type Served } from "./readme-harness.ts";

const RUN = crypto.randomUUID().slice(0, 8);
const ABC = "abc@pbx"; // the README's Call-ID
const BUSY = `busy-${RUN}@pbx`;
const OTHER = `other-${RUN}@pbx`;

let work: TempDir;
let served: Served | undefined;
let env: Record<string, string> = {};
let password = "";

/** The three calls, ten minutes ago: abc@pbx completes, BUSY is answered 486, OTHER rings. */
function calls(): Array<{ src: string; dst: string; payload: string }> {
  const abc: CallParams = { callId: ABC, from: "1001", to: "2002", fromTag: "fa", toTag: "ta" };
  const busy: CallParams = { callId: BUSY, from: "1002", to: "2002", fromTag: "fb", toTag: "tb" };
  const other: CallParams = { callId: OTHER, from: "3003", to: "2002", fromTag: "fo", toTag: "to" };
  const [a, b] = ["10.5.0.1", "10.5.0.2"];
  return [
    { src: a!, dst: b!, payload: invite({ ...abc, srcIp: a }) },
    { src: b!, dst: a!, payload: response(100, "Trying", "INVITE", abc) },
    { src: b!, dst: a!, payload: response(180, "Ringing", "INVITE", abc) },
    { src: b!, dst: a!, payload: response(200, "OK", "INVITE", abc) },
    { src: a!, dst: b!, payload: request("ACK", { ...abc, cseq: 1 }) },
    { src: a!, dst: b!, payload: request("BYE", { ...abc, cseq: 2 }) },
    { src: b!, dst: a!, payload: response(200, "OK", "BYE", { ...abc, cseq: 2 }) },
    { src: a!, dst: b!, payload: invite({ ...busy, srcIp: a }) },
    { src: b!, dst: a!, payload: response(486, "Busy Here", "INVITE", busy) },
    { src: a!, dst: b!, payload: request("ACK", { ...busy, cseq: 1 }) },
    { src: a!, dst: b!, payload: invite({ ...other, srcIp: a }) },
    { src: b!, dst: a!, payload: response(180, "Ringing", "INVITE", other) },
  ];
}
const MESSAGES = calls().length;

async function login(pw: string): Promise<number> {
  const r = await fetch(`http://${served!.address}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: pw }),
  });
  return r.status;
}

beforeAll(async () => {
  work = tempDir("svc-readme-");
  const bin = await binaryUnderTest();
  const base: Record<string, string> = {};
  // INVOCATION_ID: a runner under systemd must not make the banner's hint say `sudo -u`.
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("SVC_") && !["COLUMNS", "TMUX", "INVOCATION_ID"].includes(k)) base[k] = v;
  // What the service runs with; the README's commands get the same (reset-admin-password reads it).
  const serveEnv = {
    ...base,
    ...isolatedServeEnv(join(work.path, "data")),
    SVC_RUNTIME_CACHE_DIR: join(work.path, "cache"),
    SVC_LOG_FORMAT: "json",
  };
  served = await serveAndWait([bin.path, "serve"], work.path, serveEnv);
  password = served.banner.password;
  const udp = await Bun.udpSocket({});
  const t0Us = (Date.now() - 10 * 60_000) * 1000;
  calls().forEach((m, i) =>
    udp.send(
      encodeHep3({
        srcIp: m.src,
        dstIp: m.dst,
        srcPort: 5060,
        dstPort: 5060,
        timestampUs: t0Us + i * 20_000,
        protoType: 1,
        captureId: 7,
        nodeName: "readme",
        payload: m.payload,
      }),
      served!.hepUdpPort,
      "127.0.0.1",
    ),
  );
  udp.close();
  const token = (
    (await (
      await fetch(`http://${served.address}/api/v4/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password }),
      })
    ).json()) as { token: string }
  ).token;
  await waitFor(
    `${MESSAGES} messages searchable`,
    async () => {
      const r = await fetch(`http://${served!.address}/api/v4/transactions/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          filter: { proto_type: 1, event_type: "call" },
          param: { limit: 100 },
          timestamp: { from: Date.now() - 3_600_000, to: Date.now() },
        }),
      });
      return ((await r.json()) as { data: { items: unknown[] } }).data.items.length === MESSAGES;
    },
    30_000,
  );
  const pathDir = join(work.path, "path");
  Bun.spawnSync(["mkdir", "-p", pathDir, join(work.path, "home"), join(work.path, "cwd")]);
  symlinkSync(bin.path, join(pathDir, "svc"));
  env = { ...serveEnv, PATH: `${pathDir}:${process.env.PATH ?? ""}`, HOME: join(work.path, "home"), COLUMNS: "160" };
}, 180_000);

afterAll(async () => {
  await served?.stop();
  await work?.[Symbol.asyncDispose]();
});

/** bash -c, in the work dir, with what the block exported so far. */
async function sh(script: string, extraEnv: Record<string, string> = {}, cwd = join(work.path, "cwd")) {
  const proc = Bun.spawn(["bash", "-c", script], {
    cwd,
    env: { ...env, ...extraEnv },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}
type Ran = Awaited<ReturnType<typeof sh>>;

/** Lines that do not run here, each with the place that runs or checks it. */
const ELSEWHERE: Record<string, string> = {
  "npm ci && npm start":
    "npm ci would replace the node_modules this run uses (.ci/run runs it); `npm start` is the next test",
  "npm test": "this suite",
  "make build && sudo install -m 0755 dist/svc /usr/local/bin/svc":
    "binary-under-test.ts runs `make build` (BIN= a temp path) and every svc line here runs that executable; sudo install is a copy",
  "make build": "binary-under-test.ts (the executable every line here runs)",
  "sudo appliance/install.sh [--no-start]":
    ".ci/run installs into a staging DESTDIR and loads the shipped config with the binary",
};

/** The check of each line that runs, keyed by the command (its `# comment` cut off). */
const CHECKS: Record<string, (r: Ran) => Promise<void> | void> = {
  "npx svc --version": (r) => {
    expect(r.stdout).toMatch(/^svc \d+\.\d+\.\d+\S* \([0-9a-z]+\) bun \d/);
    expect(r.code).toBe(0);
  },
  "svc reset-admin-password": async (r) => {
    const pw = /^ {2}password: +(\S+)$/m.exec(r.stdout)?.[1];
    expect(pw).toBeDefined();
    expect(await login(pw!)).toBe(201);
    expect(await login(password)).toBe(401);
    password = pw!;
  },
  "export SVC_PASSWORD='<the admin password>'": (r) => expect(r.code).toBe(0),
  "svc search --host 127.0.0.1:8080 --user admin --call-id 'abc@pbx' --format callflow": (r) => {
    expect(r.stdout).toContain(`Call-IDs: ${ABC}`);
    expect(r.stdout).toMatch(/│─+ INVITE \(SDP\) ─+>│/);
    expect(r.stdout).toMatch(/│<─+ 200 OK ─+│/);
    expect(r.stdout).toContain("7 messages, 2 endpoints");
    expect(existsSync(join(env.HOME!, ".svc_token"))).toBe(true);
    expect(r.code).toBe(0);
  },
  "svc search --host 127.0.0.1:8080 --from 2h --response-code 486 --cseq-method INVITE --format csv": (r) => {
    const [head, ...rows] = parseCsv(r.stdout);
    const col = (name: string) => head!.indexOf(name);
    // The readable default columns (README "Terminal"): the status is the event column.
    expect(head).toEqual(["timestamp", "event", "caller", "callee", "session_id", "src", "dst"]);
    expect(rows.map((x) => [x[col("session_id")], x[col("event")]])).toEqual([[BUSY, "486"]]);
    expect(r.code).toBe(0);
  },
  "svc search --host 127.0.0.1:8080 --from 2h --method INVITE --grep 'caller=1001,1002' --format csv": (r) => {
    const [head, ...rows] = parseCsv(r.stdout);
    expect(rows.map((x) => x[head!.indexOf("session_id")]).sort()).toEqual([ABC, BUSY].sort());
    expect(r.stderr).toStartWith('Post-filter grep="caller=1001,1002": 3 → 2 rows (filtered the 3 rows fetched)\n');
    expect(r.code).toBe(0);
  },
  "svc search --host 127.0.0.1:8080 --call-id 'abc@pbx' --format pcap -o call.pcap": (r) => {
    expect(r.stderr).toBe("wrote 7 frames of 1 call to call.pcap\n");
    const frames = extractSipMessages(new Uint8Array(readFileSync(join(work.path, "cwd", "call.pcap")))).messages;
    expect(frames.map((f) => new TextDecoder().decode(f.payload).split("\r\n")[0])).toEqual(
      calls()
        .slice(0, 7)
        .map((m) => m.payload.split("\r\n")[0]),
    );
    expect(r.code).toBe(0);
  },
  'svc search --host 127.0.0.1:8080 --sql "SELECT method, count(*) FROM svc_lake.main.hep_proto_1_call GROUP BY 1"': (
    r,
  ) => {
    const invites = r.stdout.split("\n").find((l) => /\bINVITE\b/.test(l));
    expect(invites?.split(/[\s│|]+/).filter((x) => x !== "")).toEqual(["INVITE", "3"]);
    expect(r.code).toBe(0);
  },
  "SVC_PASSWORD=p svc agent stats --host 127.0.0.1:8008 --user u": (r) => {
    expect(r.stdout).toContain("  hep_sent    1300\n");
    expect(r.code).toBe(0);
  },
};

describe("README.md", () => {
  peerTest(
    "every command in a code block runs against the appliance and prints what the README promises",
    [PEERS.tmux],
    async () => {
      await using agent = fakeAgent({ user: "u", pass: "p" });
      const sub = (line: string) =>
        line
          .replaceAll("127.0.0.1:8080", served!.address)
          .replaceAll("127.0.0.1:8008", agent.url.replace("http://", ""))
          .replaceAll("<the admin password>", password);
      const seen: string[] = [];
      for (const block of readmeCommands(readFileSync(join(ROOT, "README.md"), "utf8"))) {
        const exported: string[] = [];
        for (const { line, command } of block) {
          seen.push(command);
          if (ELSEWHERE[command]) continue;
          if (command.startsWith("journalctl -u svc | ")) {
            // The journal holds the service's stderr: the same pipe over the stderr of this serve.
            writeFileSync(join(work.path, "journal.txt"), served!.stderr());
            const r = await sh(
              `cat ${join(work.path, "journal.txt")} | ${command.slice("journalctl -u svc | ".length)}`,
            );
            expect(r.stdout).toContain(`   password:  ${served!.banner.password}\n`);
            expect(r.stdout).toContain(`   URL:       http://${served!.address}/\n`);
            continue;
          }
          if (command.includes("--interactive")) {
            await interactive(sub([...exported, line].join("\n")));
            continue;
          }
          const check = CHECKS[command];
          if (!check) throw new Error(`README line without a check or a reason in ELSEWHERE: ${command}`);
          const r = await sh(
            sub([...exported, line].join("\n")),
            {},
            command.startsWith("npx ") ? ROOT : join(work.path, "cwd"),
          );
          try {
            await check(r);
          } catch (e) {
            throw new Error(
              `README line: ${line}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\nexit ${r.code}\n${(e as Error).message}`,
            );
          }
          if (command.startsWith("export ")) exported.push(line);
        }
      }
      console.log(`README: ${seen.length} commands, ${seen.length - Object.keys(ELSEWHERE).length} run here`);
      // Every check and reason belongs to a README line (none left over from an older README).
      expect([...Object.keys(CHECKS), ...Object.keys(ELSEWHERE)].filter((k) => !seen.includes(k))).toEqual([]);
    },
    180_000,
  );

  test("`npm start` serves the dashboard from source on the configured ports", async () => {
    await using dir = tempDir("svc-readme-start-");
    const startEnv = { ...env, ...isolatedServeEnv(dir.path) };
    const s = await serveAndWait(["npm", "start"], ROOT, startEnv);
    try {
      const page = await fetch(`http://${s.address}/`);
      expect(await page.text()).toContain('<meta name="svc-api-base" content="/api/v4">');
      expect(page.status).toBe(200);
      expect(s.banner.password.length).toBeGreaterThanOrEqual(16);
    } finally {
      await s.stop();
    }
  }, 120_000);
});

/** The interactive line in tmux: the form, Enter searches, Esc back, Esc quits with exit 0. */
async function interactive(script: string): Promise<void> {
  const sock = join(work.path, "tmux.sock");
  const file = join(work.path, "interactive.sh");
  writeFileSync(file, `cd ${join(work.path, "cwd")}\n${script}\necho "EXIT=$?"\nexec cat\n`);
  const tmux = (...args: string[]) => {
    const r = Bun.spawnSync(["tmux", "-S", sock, ...args], { env, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`tmux ${args.join(" ")}: ${r.stderr.toString()}`);
    return r.stdout.toString();
  };
  const screen = () => tmux("capture-pane", "-p", "-t", "readme");
  const see = (what: string, ok: (s: string) => boolean) =>
    waitFor(`screen shows ${what}`, () => ok(screen()), 15_000, 50).catch((e: Error) => {
      throw new Error(`${e.message}\n--- screen ---\n${screen()}`);
    });
  tmux("new-session", "-d", "-s", "readme", "-x", "160", "-y", "48", `bash ${file}`);
  try {
    await see(
      "the form with the host",
      (s) => s.includes("svc search · interactive") && s.includes(`Host        ${served!.address}`),
    );
    tmux("send-keys", "-t", "readme", "Enter");
    await see(`the ${MESSAGES} rows`, (s) => s.includes(`svc search · ${MESSAGES} rows · table`) && s.includes(ABC));
    tmux("send-keys", "-t", "readme", "Escape");
    await see("the form again", (s) => s.includes("svc search · interactive"));
    tmux("send-keys", "-t", "readme", "Escape");
    await see("exit 0", (s) => s.includes("EXIT=0"));
  } finally {
    try {
      tmux("kill-server");
    } catch {
      // already gone
    }
  }
}
