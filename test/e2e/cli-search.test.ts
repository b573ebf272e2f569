/**
 * `svc search` as a real process against a running appliance fed with HEP over UDP (docs/CLI.md "Search client"):
 * every format prints the rows the search API returns (checked against the API's own JSON, read
 * back with independent parsers), the PCAP opens in tshark with the same frames, the token cache
 * (~/.svc_token, 0600) is reused and refreshed on 401, errors are one line with exit 1 or 2.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { extractSipMessages } from "../../src/pcap/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, request, response, type CallParams } from "../fixtures/sip.ts";
import { PEERS, peerTest, tempDir, waitFor, type TempDir } from "../harness.ts";
import { cliEnv, parseCsv, parseLadder, runCli } from "./cli-harness.ts";

const PASSWORD = "cli-search-password";
const RUN = crypto.randomUUID().slice(0, 8);
const T0_MS = Date.now() - 5 * 60_000;
const CALL_A = `cli-A-${RUN}@pbx-a`;
const CALL_A2 = `${CALL_A}_b2b-1`;
const CALL_B = `cli-B-${RUN}@pbx-c`;
const A = { ip: "10.0.0.1", port: 5060 };
const B = { ip: "10.0.0.2", port: 5080 };
const C = { ip: "10.0.0.3", port: 5060 };

type Ep = typeof A;
interface Sent {
  src: Ep;
  dst: Ep;
  payload: string;
  us: number;
}
const sent: Sent[] = [];
function add(src: Ep, dst: Ep, payload: string): void {
  sent.push({ src, dst, payload, us: T0_MS * 1000 + sent.length * 10_000 + 7 });
}
const a: CallParams = {
  callId: CALL_A,
  from: "1001",
  to: "2002",
  fromTag: "fa",
  toTag: "ta",
  extraHeaders: ['Subject: hello, "world"'],
};
const a2: CallParams = { callId: CALL_A2, from: "1001", to: "2002", fromTag: "fa2", toTag: "ta2" };
const b: CallParams = { callId: CALL_B, from: "3003", to: "2002", fromTag: "fb", toTag: "tb" };
add(A, B, invite({ ...a, mediaPort: 40000 }));
add(B, A, response(100, "Trying", "INVITE", a));
add(B, C, invite({ ...a2, srcIp: B.ip, mediaPort: 42000 }));
add(C, B, response(200, "OK", "INVITE", a2));
add(B, A, response(180, "Ringing", "INVITE", a));
add(B, A, response(200, "OK", "INVITE", a));
add(A, B, request("ACK", { ...a, cseq: 1 }));
add(C, B, invite({ ...b, srcIp: C.ip }));
add(B, C, response(486, "Busy Here", "INVITE", b));
add(C, B, request("ACK", { ...b, cseq: 1 }));
add(A, B, request("BYE", { ...a, cseq: 2 }));
add(B, A, response(200, "OK", "BYE", { ...a, cseq: 2 }));

let dir: TempDir;
let home: TempDir;
let appliance: TestAppliance;
let host = "";
let apiToken = "";
const FROM = new Date(T0_MS - 60_000).toISOString();

/** The search API's own answer, the reference every format is compared with. */
async function apiItems(filter: Record<string, unknown>, limit = 100): Promise<Array<Record<string, unknown>>> {
  const r = await fetch(`http://${host}/api/v4/transactions/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiToken}`, "content-type": "application/json" },
    body: JSON.stringify({
      filter: { proto_type: 1, event_type: "call", ...filter },
      param: { limit },
      timestamp: { from: T0_MS - 60_000, to: Date.now() },
    }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: { items: Array<Record<string, unknown>> } }).data.items;
}

const search = (args: string[], env: Record<string, string> = {}) =>
  runCli(["search", "--host", host, "--from", FROM, ...args], cliEnv(home.path, env));

beforeAll(async () => {
  dir = tempDir("svc-cli-search-");
  home = tempDir("svc-cli-home-");
  appliance = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, api_settings: { enable_token_access: true } },
  });
  host = appliance.app.coordinatorUrl!.replace("http://", "");
  const udp = await Bun.udpSocket({});
  for (const m of sent) {
    udp.send(
      encodeHep3({
        srcIp: m.src.ip,
        dstIp: m.dst.ip,
        srcPort: m.src.port,
        dstPort: m.dst.port,
        timestampUs: m.us,
        protoType: 1,
        captureId: 9,
        nodeName: "edge-9",
        payload: m.payload,
      }),
      appliance.app.ingest!.listeners.udp!.port(),
      "127.0.0.1",
    );
  }
  udp.close();
  const login = await fetch(`http://${host}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  apiToken = ((await login.json()) as { token: string }).token;
  await waitFor("all 12 messages searchable", async () => (await apiItems({})).length === sent.length, 20_000);
  // An alias for B: the callflow names it.
  const alias = await fetch(`http://${host}/api/v4/aliases`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiToken}`, "content-type": "application/json" },
    body: JSON.stringify({ ip: B.ip, name: "pbx-b" }),
  });
  expect(alias.status).toBeLessThan(300);
}, 60_000);

afterAll(async () => {
  await appliance?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
  await home?.[Symbol.asyncDispose]();
});

describe("svc search against a running appliance", () => {
  test("login with --user/--pass caches the JWT in ~/.svc_token (0600); the next run reuses it", async () => {
    const first = await search(["--user", "admin", "--pass", PASSWORD, "--format", "json"]);
    expect(first.stderr).toBe(`${sent.length} rows\n`);
    expect(first.code).toBe(0);
    const cache = join(home.path, ".svc_token");
    expect(statSync(cache).mode & 0o777).toBe(0o600);
    const entry = (JSON.parse(readFileSync(cache, "utf8")) as Record<string, { user: string; token: string }>)[
      `http://${host}/api/v4`
    ]!;
    expect(entry.user).toBe("admin");
    // Reused without credentials.
    const again = await search(["--format", "json", "--limit", "1"]);
    expect(JSON.parse(again.stdout)).toHaveLength(1);
    expect(again.code).toBe(0);
    expect(readFileSync(cache, "utf8")).toContain(entry.token);
  });

  test("json: exactly the API's rows, every column", async () => {
    const r = await search(["--format", "json"]);
    expect(JSON.parse(r.stdout)).toEqual(await apiItems({}));
    expect(r.code).toBe(0);
  });

  test("csv and table default to the columns an engineer reads; --fields all shows every column", async () => {
    const items = await apiItems({ call_id: CALL_A });
    const ep = (ip: unknown, port: unknown) => `${String(ip)}:${String(port)}`;
    const expected = items.map((i) => [
      String(i.timestamp),
      String(i.event),
      String(i.caller),
      String(i.callee),
      String(i.session_id),
      ep(i.src_ip, i.src_port),
      ep(i.dst_ip, i.dst_port),
    ]);
    const csv = await search(["--format", "csv", "--call-id", CALL_A]);
    expect(parseCsv(csv.stdout)).toEqual([
      ["timestamp", "event", "caller", "callee", "session_id", "src", "dst"],
      ...expected,
    ]);
    const table = await search(["--call-id", CALL_A], { COLUMNS: "250" });
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]!.split(/\s+/)).toEqual(["timestamp", "event", "caller", "callee", "session_id", "src", "dst"]);
    expect(lines.slice(2, -1).map((l) => l.split(/\s+/))).toEqual(expected);
    // --fields picks the derived src/dst too; json keeps every column the API sent.
    const picked = await search(["--format", "csv", "--fields", "session_id,src", "--call-id", CALL_A]);
    expect(parseCsv(picked.stdout).slice(1)).toEqual(
      items.map((i) => [String(i.session_id), ep(i.src_ip, i.src_port)]),
    );
  });

  test("csv: RFC 4180 (CRLF, quoted commas, quotes and line breaks) with the API's values", async () => {
    const r = await search(["--format", "csv", "--fields", "all", "--call-id", CALL_A]);
    const records = parseCsv(r.stdout);
    const items = await apiItems({ call_id: CALL_A });
    expect(records[0]).toEqual(Object.keys(items[0]!));
    const text = (v: unknown) =>
      v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    expect(records.slice(1)).toEqual(items.map((i) => Object.values(i).map(text)));
    expect(records.slice(1).map((rec) => rec[records[0]!.indexOf("payload")])).toContainEqual(
      expect.stringContaining('Subject: hello, "world"\r\n'),
    );
    expect(r.stderr).toBe("7 rows\n");
    expect(r.code).toBe(0);
  });

  test("table: a header, one aligned line per row within the terminal width, the count line", async () => {
    const r = await search(["--call-id", `${CALL_A};${CALL_B}`], { COLUMNS: "100" });
    const lines = r.stdout.trimEnd().split("\n");
    const items = await apiItems({ call_id: `${CALL_A};${CALL_B}` });
    expect(lines[0]).toMatch(/^timestamp +event +caller +callee +session_id/);
    expect(lines[1]).toMatch(/^-+ +-+ /);
    expect(lines.slice(2, -1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual(
      items.map((i) => [String(i.timestamp), String(i.event), String(i.caller)]),
    );
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(100);
    expect(lines.slice(2, -1).every((l) => l.endsWith("…"))).toBe(true);
    expect(lines.at(-1)).toBe("10 rows");
    expect(r.code).toBe(0);
  });

  test("vertical: one block per row with every field, multi-line payloads kept", async () => {
    const r = await search(["--format", "vertical", "--call-id", CALL_B]);
    const items = await apiItems({ call_id: CALL_B });
    const blocks = r.stdout.split(/^\*+ \d+\. row \*+$/m).slice(1);
    expect(blocks).toHaveLength(items.length);
    blocks.forEach((blk, i) => {
      expect(blk).toContain(`session_id: ${CALL_B}`);
      expect(blk).toContain(`     event: ${String(items[i]!.event)}`);
      expect(blk).toContain(`      uuid: ${String(items[i]!.uuid)}`);
    });
    // Payload lines after the first are indented under the value column ("storage_volume: " is the widest name).
    expect(r.stdout).toContain(`\n${" ".repeat("storage_volume: ".length)}Call-ID: ${CALL_B}\n`);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("3 rows");
  });

  test("the limit cut the answer: one stderr line with the API's total, exit 0", async () => {
    const note = `svc: showing 5 of ${sent.length} matches; raise --limit for more\n`;
    const json = await search(["--format", "json", "--limit", "5"]);
    expect(JSON.parse(json.stdout)).toEqual(await apiItems({}, 5));
    expect([json.stderr, json.code]).toEqual([`5 rows (limit 5 reached)\n${note}`, 0]);
    const table = await search(["--limit", "5"], { COLUMNS: "100" });
    expect(table.stdout.trimEnd().split("\n").at(-1)).toBe("5 rows (limit 5 reached)");
    expect([table.stderr, table.code]).toEqual([note, 0]);
    // Filtered: the count is the filter's (7 messages of call A), not the table's.
    const filtered = await search(["--call-id", CALL_A, "--limit", "2", "--format", "csv"]);
    expect([filtered.stderr, filtered.code]).toEqual([
      "2 rows (limit 2 reached)\nsvc: showing 2 of 7 matches; raise --limit for more\n",
      0,
    ]);
    // Exactly the limit, nothing cut: no note.
    const all = await search(["--format", "json", "--limit", String(sent.length)]);
    expect([all.stderr, all.code]).toEqual([`${sent.length} rows\n`, 0]);
  });

  test("fields, post-filters with the stderr summary line", async () => {
    const r = await search([
      "--format",
      "csv",
      "--fields",
      "event,src_ip,session_id",
      "--grep",
      "method=INVITE,486",
      "--exclude",
      `session_id=${CALL_A2}`,
    ]);
    const items = (await apiItems({})).filter(
      (i) =>
        (i.method === "INVITE" || Object.values(i).some((v) => JSON.stringify(v ?? "").includes("486"))) &&
        i.session_id !== CALL_A2,
    );
    expect(parseCsv(r.stdout)).toEqual([
      ["event", "src_ip", "session_id"],
      ...items.map((i) => [String(i.event), String(i.src_ip), String(i.session_id)]),
    ]);
    expect(r.stderr).toBe(
      `Post-filter grep="method=INVITE,486" exclude="session_id=${CALL_A2}": 12 → ${items.length} rows (filtered the 12 rows fetched)\n${items.length} rows\n`,
    );
    // The two INVITEs of A and B and the 486 of B; a random UUID or timestamp containing "486"
    // may add a row to both sides (the grep matches any field), so count the intended ones.
    expect(items.filter((i) => i.method === "INVITE" || i.response_code === 486).length).toBe(3);
  });

  test("--response-code finds the answers (an INVITE has no status code); --cseq-method narrows to the ones to INVITE", async () => {
    const r = await search([
      "--format",
      "csv",
      "--fields",
      "session_id,response_code,cseq_method",
      "--response-code",
      "486",
      "--cseq-method",
      "invite",
    ]);
    const items = await apiItems({ response_code: 486, cseq_method: "INVITE" });
    expect(items.map((i) => i.session_id)).toEqual([CALL_B]);
    expect(parseCsv(r.stdout)).toEqual([
      ["session_id", "response_code", "cseq_method"],
      [CALL_B, "486", "INVITE"],
    ]);
    expect(r.code).toBe(0);
    const several = await search(["--format", "json", "--response-code", "486;180"]);
    expect((JSON.parse(several.stdout) as Array<{ response_code: number }>).map((i) => i.response_code).sort()).toEqual(
      [180, 486],
    );
    const bad = await search(["--response-code", "busy"]);
    expect(bad.stderr.trim()).toBe(
      'svc: --response-code "busy" is not a SIP status code (486) or a ;-separated list (486;600;603)',
    );
    expect(bad.code).toBe(2);
  });

  test("--grep at the limit says it filtered only the fetched rows", async () => {
    const r = await search(["--format", "csv", "--limit", "4", "--grep", "method=INVITE"]);
    const fetched = await apiItems({}, 4);
    const kept = fetched.filter((i) => i.method === "INVITE").length;
    expect(r.stderr).toStartWith(
      `Post-filter grep="method=INVITE": 4 → ${kept} rows (filtered only the 4 rows fetched: the search stopped at --limit 4, so more rows may match; raise --limit or narrow the search)\n`,
    );
    expect(r.code).toBe(0);
  });

  test("the password from SVC_PASSWORD or --pass-stdin (kept out of ps); --pass-stdin needs --user", async () => {
    for (const [how, env, stdin, extra] of [
      ["SVC_PASSWORD", { SVC_PASSWORD: PASSWORD }, undefined, []],
      ["--pass-stdin", {}, `${PASSWORD}\n`, ["--pass-stdin"]],
    ] as const) {
      await using fresh = tempDir("svc-cli-home-");
      const r = await runCli(
        ["search", "--host", host, "--from", FROM, "--user", "admin", "--format", "json", "--limit", "1", ...extra],
        cliEnv(fresh.path, env),
        stdin,
      );
      expect({ how, code: r.code }).toEqual({ how, code: 0 });
      expect({ how, stderr: r.stderr }).toEqual({
        how,
        stderr: expect.stringMatching(
          /^1 row \(limit 1 reached\)\nsvc: showing 1 of \d+ matches; raise --limit for more\n$/,
        ),
      });
    }
    await using fresh = tempDir("svc-cli-home-");
    const wrong = await runCli(
      ["search", "--host", host, "--user", "admin"],
      cliEnv(fresh.path, { SVC_PASSWORD: "not-it" }),
    );
    expect(wrong.stderr).toContain("login as admin failed: HTTP 401");
    expect(wrong.code).toBe(1);
    const noUser = await runCli(["search", "--host", host, "--pass-stdin"], cliEnv(fresh.path), "x\n");
    expect(noUser.stderr.trim()).toBe("svc: --pass-stdin needs --user");
    expect(noUser.code).toBe(2);
  });

  test("SVC_HOST stands in for --host and SVC_TOKEN for --token; --user on the command line wins over SVC_TOKEN", async () => {
    await using fresh = tempDir("svc-cli-home-");
    const r = await runCli(
      ["search", "--from", FROM, "--format", "json", "--limit", "1"],
      cliEnv(fresh.path, { SVC_HOST: host, SVC_TOKEN: apiToken }),
    );
    expect([r.code, JSON.parse(r.stdout).length]).toEqual([0, 1]);
    const noHost = await runCli(["search", "--from", FROM], cliEnv(fresh.path, { SVC_TOKEN: apiToken }));
    expect([noHost.stderr.trim(), noHost.code]).toEqual(["svc: --host is required (host:port of the coordinator)", 2]);
    // A wrong SVC_TOKEN is not sent when --user asks for a login.
    const login = await runCli(
      ["search", "--from", FROM, "--user", "admin", "--format", "json", "--limit", "1"],
      cliEnv(fresh.path, { SVC_HOST: host, SVC_TOKEN: "not.a.jwt", SVC_PASSWORD: PASSWORD }),
    );
    expect([login.code, JSON.parse(login.stdout).length]).toEqual([0, 1]);
    const wrong = await runCli(
      ["search", "--from", FROM],
      cliEnv(fresh.path, { SVC_HOST: host, SVC_TOKEN: "not.a.jwt" }),
    );
    expect(wrong.code).toBe(1);
  });

  test("chart: the server's counts over the searched range add up to the messages (test/e2e/cli-chart.test.ts has more)", async () => {
    const r = await search([
      "--format",
      "chart",
      "--from",
      new Date(T0_MS - 30_000).toISOString(),
      "--to",
      new Date(T0_MS + 30_000).toISOString(),
    ]);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/bucket 1s, 12 events \(whole range\)$/);
    const counts = lines.slice(1).map((l) => Number(/│ +(\d+)/.exec(l)?.[1] ?? NaN));
    // 1 s buckets from the second of --from; --to falls in the last one.
    expect(counts.length).toBe(Math.ceil((T0_MS + 30_000 - Math.floor((T0_MS - 30_000) / 1000) * 1000) / 1000));
    expect(counts.reduce((x, y) => x + y, 0)).toBe(12);
    // All 12 messages fall within 110 ms of T0: one or two non-empty buckets in the middle.
    expect(counts.slice(0, 29).every((c) => c === 0)).toBe(true);
  });

  test("callflow: endpoints as columns (alias shown), arrows in capture order with labels, count line, Call-IDs", async () => {
    const r = await search(["--format", "flow", "--call-id", `${CALL_A};${CALL_A2}`]);
    const { endpoints, arrows } = parseLadder(r.stdout);
    const key = (e: Ep) => `${e.ip}:${e.port}`;
    expect(endpoints).toEqual([key(A), key(B), key(C)]);
    expect(r.stdout).toContain("(pbx-b)");
    const expected = sent.filter(
      (m) => m.payload.includes(`Call-ID: ${CALL_A}\r\n`) || m.payload.includes(`Call-ID: ${CALL_A2}\r\n`),
    );
    expect(arrows.map((x) => `${x.from}>${x.to}`)).toEqual(expected.map((m) => `${key(m.src)}>${key(m.dst)}`));
    expect(arrows.map((x) => x.label.replace(/ \[\d\]$/, ""))).toEqual([
      "INVITE (SDP)",
      "100 Trying",
      "INVITE (SDP)",
      "200 OK",
      "180 Ringing",
      "200 OK",
      "ACK",
      "BYE",
      "200 OK",
    ]);
    expect(arrows.map((x) => x.time)).toEqual(
      expected.map((m) => new Date(m.us / 1000).toISOString().slice(11, 23) + String(m.us % 1000).padStart(3, "0")),
    );
    expect(r.stdout).toContain("\n9 messages, 3 endpoints\n");
    expect(r.stdout).toContain(`Call-IDs: [1] ${CALL_A}, [2] ${CALL_A2}`);
    expect(r.code).toBe(0);
  });

  test("pcap: a file (never stdout) with one frame per message, oldest first, same framing as the export", async () => {
    const out = join(home.path, "call.pcap");
    const r = await search(["--format", "pcap", "-o", out, "--call-id", CALL_B]);
    expect([r.stdout, r.stderr, r.code]).toEqual(["", `wrote 3 frames of 1 call to ${out}\n`, 0]);
    const frames = extractSipMessages(new Uint8Array(readFileSync(out))).messages;
    const expected = sent.filter((m) => m.payload.includes(`Call-ID: ${CALL_B}\r\n`));
    expect(
      frames.map((f) => [f.timestampUs, f.srcIp, f.srcPort, f.dstIp, f.dstPort, new TextDecoder().decode(f.payload)]),
    ).toEqual(expected.map((m) => [m.us, m.src.ip, m.src.port, m.dst.ip, m.dst.port, m.payload]));
  });

  test("pcap holds whole calls: a BYE match brings every message of its call and its correlated leg", async () => {
    const out = join(home.path, "bye.pcap");
    const r = await search(["--format", "pcap", "-o", out, "--method", "BYE"]);
    expect([r.stdout, r.stderr, r.code]).toEqual(["", `wrote 9 frames of 1 call to ${out}\n`, 0]);
    const frames = extractSipMessages(new Uint8Array(readFileSync(out))).messages;
    const expected = sent.filter(
      (m) => m.payload.includes(`Call-ID: ${CALL_A}\r\n`) || m.payload.includes(`Call-ID: ${CALL_A2}\r\n`),
    );
    expect(frames.map((f) => [f.timestampUs, new TextDecoder().decode(f.payload)])).toEqual(
      expected.map((m) => [m.us, m.payload]),
    );
    // The default --limit 50 of the screen formats does not apply: --limit 1 takes the calls of the newest match only.
    const one = await search(["--format", "pcap", "-o", out, "--limit", "1"]);
    expect(one.stderr.split("\n")[0]).toBe(`wrote 9 frames of 1 call to ${out}`);
  });

  peerTest(
    "pcap opens in tshark: the frames and SIP fields tshark reads are the sent messages",
    [PEERS.tshark],
    async () => {
      const out = join(home.path, "all.pcap");
      const r = await search(["--format", "pcap", "--output", out]);
      expect(r.code).toBe(0);
      const ts = Bun.spawnSync(
        [
          "tshark",
          "-r",
          out,
          "-T",
          "fields",
          "-E",
          "separator=|",
          "-e",
          "frame.time_epoch",
          "-e",
          "ip.src",
          "-e",
          "udp.srcport",
          "-e",
          "ip.dst",
          "-e",
          "udp.dstport",
          "-e",
          "sip.Call-ID",
          "-e",
          "sip.Method",
          "-e",
          "sip.Status-Code",
          "-e",
          "_ws.expert.severity",
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      expect(ts.exitCode).toBe(0);
      const rows = ts.stdout
        .toString()
        .trim()
        .split("\n")
        .map((l) => l.split("|"));
      const epochUs = (s: string) =>
        Number(s.split(".")[0]) * 1_000_000 + Number((s.split(".")[1] ?? "").padEnd(6, "0").slice(0, 6));
      expect(
        rows.map((x) => [epochUs(x[0]!), x[1], Number(x[2]), x[3], Number(x[4]), x[5], x[6] || Number(x[7])]),
      ).toEqual(
        sent.map((m) => [
          m.us,
          m.src.ip,
          m.src.port,
          m.dst.ip,
          m.dst.port,
          /Call-ID: (.*)\r\n/.exec(m.payload)![1],
          /^SIP\/2\.0 (\d+)/.exec(m.payload) ? Number(/^SIP\/2\.0 (\d+)/.exec(m.payload)![1]) : m.payload.split(" ")[0],
        ]),
      );
      // No dissector warnings or errors (a malformed frame would raise one).
      expect(rows.filter((x) => x[8] !== "" && x[8] !== undefined)).toEqual([]);
    },
    30_000,
  );

  test("pcap rules: --output required, SIP only, not interactive (exit 2); no SIP payload (exit 1)", async () => {
    const noOut = await search(["--format", "pcap"]);
    expect([noOut.stdout, noOut.stderr, noOut.code]).toEqual([
      "",
      "svc: --format pcap needs --output <file> (binary is never written to stdout)\n",
      2,
    ]);
    expect((await search(["--format", "pcap", "-o", "x.pcap", "--proto", "rtcp"])).code).toBe(2);
    expect((await search(["--format", "pcap", "-o", "x.pcap", "--interactive"])).stderr).toContain("--interactive");
    const none = await search(["--format", "pcap", "-o", join(home.path, "none.pcap"), "--call-id", "no-such-call"]);
    expect([none.stderr, none.code]).toEqual(["svc: no PCAP written: the search matched no messages\n", 1]);
  });

  test("--sql goes to POST /query; its columns and rows print like a search", async () => {
    const r = await search([
      "--sql",
      `SELECT session_id, count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE '%${RUN}%' GROUP BY session_id ORDER BY n DESC`,
      "--format",
      "csv",
    ]);
    expect(parseCsv(r.stdout)).toEqual([
      ["session_id", "n"],
      [CALL_A, "7"],
      [CALL_B, "3"],
      [CALL_A2, "2"],
    ]);
    expect(r.code).toBe(0);
    const bad = await search(["--sql", "DELETE FROM svc_lake.main.hep_proto_1_call"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toStartWith("svc: POST /query: HTTP 400");
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("no rows: exit 0 and a 0 rows count line", async () => {
    const r = await search(["--call-id", "no-such-call"]);
    expect([r.stdout, r.code]).toEqual(["0 rows\n", 0]);
  });

  test("OTLP: --call-id is a trace_id, SIP-only flags are named as ignored (--debug shows the body)", async () => {
    const r = await search([
      "--proto",
      "OTLP-Traces",
      "--call-id",
      "4bf92f35",
      "--payload",
      "GET",
      "--method",
      "INVITE",
      "--format",
      "json",
      "--debug",
    ]);
    expect(r.stderr).toContain(
      '> {"filter":{"proto_type":200,"event_type":"default","trace_id":"4bf92f35","name":"%GET%","raw":"%GET%"}',
    );
    expect(r.stderr).toContain("ignored for proto 200: --method\n");
    expect(r.stderr).toContain("> authorization: Bearer ***\n");
    expect(r.stderr).not.toContain(apiToken);
    expect([r.stdout, r.code]).toEqual(["[]\n", 0]);
  });

  test("401 with a cached token: re-login when --user/--pass are given, otherwise a one-line error", async () => {
    const cache = join(home.path, ".svc_token");
    const key = `http://${host}/api/v4`;
    writeFileSync(cache, JSON.stringify({ [key]: { user: "admin", token: "expired.jwt.token", expires_at: "" } }), {
      mode: 0o600,
    });
    const relogin = await search(["--user", "admin", "--pass", PASSWORD, "--limit", "1", "--format", "json"]);
    expect(relogin.code).toBe(0);
    const fresh = (JSON.parse(readFileSync(cache, "utf8")) as Record<string, { token: string }>)[key]!.token;
    expect(fresh).not.toBe("expired.jwt.token");
    expect((await search(["--limit", "1", "--format", "json"])).code).toBe(0);

    writeFileSync(cache, JSON.stringify({ [key]: { user: "admin", token: "expired.jwt.token", expires_at: "" } }), {
      mode: 0o600,
    });
    const denied = await search(["--limit", "1"]);
    expect(denied.stderr).toMatch(
      /^svc: the cached token was rejected \(UNAUTHORIZED: .*\); log in again with --user and --pass\n$/,
    );
    expect(denied.code).toBe(1);
  });

  test("a static API token in its own header (--token-header) for scripts", async () => {
    const created = await fetch(`http://${host}/api/v4/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "cli-script" }),
    });
    expect(created.status).toBe(201);
    const secret = ((await created.json()) as { data: { token: string } }).data.token;
    const r = await search([
      "--token",
      secret,
      "--token-header",
      "Auth-Token",
      "--format",
      "json",
      "--limit",
      "2",
      "--debug",
    ]);
    expect(JSON.parse(r.stdout)).toEqual(await apiItems({}, 2));
    expect(r.stderr).toContain("> Auth-Token: ***\n");
    expect(r.stderr).not.toContain(secret);
    expect(r.stderr).not.toContain("authorization:");
    expect(r.code).toBe(0);
    const wrong = await search(["--token", "svc_not_a_token", "--token-header", "Auth-Token"]);
    expect([wrong.stderr.startsWith("svc: --token was rejected (UNAUTHORIZED: "), wrong.code]).toEqual([true, 1]);
  });

  test("errors and usage: one line each, exit 1 or 2", async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [["--token", "not-a-jwt"], 1, /^svc: --token was rejected \(UNAUTHORIZED: .*\)$/],
      [["--user", "admin", "--pass", "wrong", "--token", "x"], 1, /^svc: login as admin failed: HTTP 401 /],
      [["--limit", "50001"], 2, /^svc: --limit must be an integer from 1 to 50000, got "50001"$/],
      [["--from", "last tuesday"], 2, /^svc: --from: "last tuesday" is not a duration/],
      [["--format", "yaml"], 2, /^svc: --format "yaml" is not one of/],
      [["--frobnicate"], 2, /^svc: unknown flag "--frobnicate"$/],
    ];
    for (const [args, code, message] of cases) {
      const r = await search(args);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code, stdout: "" });
      expect(r.stderr.trimEnd()).toMatch(message);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    }
    const down = await runCli(["search", "--host", "127.0.0.1:1", "--token", "x"], cliEnv(home.path));
    expect([down.stderr.trim(), down.code]).toEqual([
      "svc: POST http://127.0.0.1:1/api/v4/transactions/search: connection refused (is the service running on that address?)",
      1,
    ]);
    const noHost = await runCli(["search"], cliEnv(home.path));
    expect([noHost.stderr, noHost.code]).toEqual(["svc: --host is required (host:port of the coordinator)\n", 2]);
    const help = await runCli(["search", "--help"], cliEnv(home.path));
    expect(help.stdout).toContain("--call-id");
    expect(help.code).toBe(0);
  });
});
