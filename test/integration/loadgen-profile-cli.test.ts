/**
 * `loadgen profile check|show|keys|init` through the command line (docs/LOADGEN.md "profile
 * subcommand"): runLoadgen in-process and `bun src/main.ts loadgen profile …` as a process, over
 * real files: every verb, every usage error (exit 2 and one stderr line), relative scenario and
 * injection files against the profile's folder, masking, and the init example running calls.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { planFromArgv, runLoadgen, startPlan, type LoadgenIo } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";

const ROOT = join(import.meta.dir, "../..");

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: LoadgenIo = { out: (l) => out.push(l), err: (l) => err.push(l) };
  const code = await runLoadgen(argv, io);
  return { code, out, err };
}

/** The real entry point as a process, started in `cwd`. */
async function spawnLoadgen(argv: string[], cwd: string) {
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "loadgen", ...argv], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}

const PING_XML = `<scenario>
<send retrans="500"><![CDATA[OPTIONS sip:[service]@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:loadgen@[local_ip]>;tag=[pid]-[call_number]
To: <sip:[service]@[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: 1 OPTIONS
Content-Length: 0]]></send>
<recv response="200"/>
</scenario>`;

describe("loadgen profile: usage", () => {
  test.each([[["profile"]], [["profile", "-h"]], [["profile", "--help"]], [["profile", "check", "-h"]]])(
    "%j prints the usage and exits 0",
    async (argv) => {
      const r = await run(argv);
      expect(r.err).toEqual([]);
      expect(r.out).toHaveLength(1);
      expect(r.out[0]).toStartWith("loadgen profile: check and inspect run-profile files");
      expect(r.out[0]).toContain("loadgen profile show <file> [<alias>] [flags]");
      expect(r.code).toBe(0);
    },
  );

  test.each([
    [
      ["profile", "lint", "p.json"],
      /^loadgen: unknown profile command "lint" \(check, show, keys, init; loadgen profile -h\)$/,
    ],
    [
      ["profile", "-config", "p.json"],
      /^loadgen: -config, -run-alias and -list-aliases apply only to the root command, not to "profile"$/,
    ],
    [["profile", "check", "-config", "p.json"], /apply only to the root command, not to "profile"/],
    [["profile", "show", "p.json", "-run-alias", "calls"], /apply only to the root command, not to "profile"/],
    [["profile", "check", "-list-aliases"], /apply only to the root command, not to "profile"/],
    [["profile", "check"], /^loadgen: usage: loadgen profile check <file> \[flags\]$/],
    [["profile", "show"], /^loadgen: usage: loadgen profile show <file> \[<alias>\] \[flags\]$/],
    [["profile", "check", "/no/such/profile.json"], /^loadgen: cannot read profile \/no\/such\/profile.json: ENOENT$/],
    [
      ["profile", "check", "a.json", "b.json"],
      /^loadgen: profile check takes one file, got also "b.json" \(the arguments after the file are the run's flags\)$/,
    ],
    [
      ["profile", "show", "a.json", "calls", "-r", "5", "B.JSON"],
      /^loadgen: profile show takes one file, got also "B.JSON"/,
    ],
    [["profile", "init", "yaml"], /^loadgen: profile init takes alias, flat or composite, got "yaml"$/],
    [["profile", "init", "flat", "alias"], /profile init takes one form, got also "alias"/],
    [["profile", "keys", "all"], /^loadgen: profile keys takes no arguments, got "all"$/],
  ])("%j exits 2 with one line", async (argv, message) => {
    const r = await run(argv as string[]);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
    expect(r.code).toBe(2);
  });
});

describe("loadgen profile check", () => {
  test("each init example is accepted by check, run as processes through the real entry point", async () => {
    await using dir = tempDir("svc-loadgen-profile-");
    for (const [form, lines] of [
      ["alias", ["alias calls: ", "alias options: ", "alias register: ", "alias uas: mode=management"]],
      [
        "flat",
        ["engine server: mode=management scenario=uas transport=u1 binds=udp/127.0.0.1:5060,tcp/127.0.0.1:5060"],
      ],
      [
        "composite",
        ["engine server: ", "engine calls-udp: mode=load", "engine calls-tcp: mode=load scenario=uac transport=t1"],
      ],
    ] as const) {
      const init = await spawnLoadgen(["profile", "init", form], dir.path);
      expect(init.err).toBe("");
      expect(init.code).toBe(0);
      writeFileSync(join(dir.path, `${form}.json`), init.out);
      const checked = await spawnLoadgen(["profile", "check", `${form}.json`], dir.path);
      expect(checked.err).toBe("");
      const out = checked.out.trimEnd().split("\n");
      expect(out).toHaveLength(lines.length);
      out.forEach((l, i) => expect(l).toStartWith(lines[i]!));
      expect(checked.code).toBe(0);
    }
    const bad = join(dir.path, "bad.json");
    writeFileSync(bad, JSON.stringify({ aliases: { calls: { remote_addr: "h", rate: "fast" } } }));
    const failed = await spawnLoadgen(["profile", "check", "bad.json"], dir.path);
    expect(failed.out).toBe("");
    expect(failed.err).toBe('loadgen: bad.json: alias calls: "rate" must be a number ≥ 0\n');
    expect(failed.code).toBe(2);
  });

  test("relative scenario_file and injection_file are found next to the profile, not in the working directory", async () => {
    await using dir = tempDir("svc-loadgen-profile-");
    const profiles = join(dir.path, "profiles");
    mkdirSync(profiles);
    writeFileSync(join(profiles, "ping.xml"), PING_XML);
    writeFileSync(join(profiles, "users.csv"), "SEQUENTIAL\n1000;secret\n");
    const file = join(profiles, "p.json");
    writeFileSync(
      file,
      JSON.stringify({
        aliases: {
          ping: { remote_addr: "127.0.0.1:5060", scenario_file: "ping.xml", injection_file: "users.csv", rate: 2 },
        },
      }),
    );
    const ok = await spawnLoadgen(["profile", "check", "profiles/p.json"], dir.path);
    expect(ok.err).toBe("");
    expect(ok.out).toBe(
      "alias ping: mode=load scenario=ping transport=u1 remote=127.0.0.1:5060 rate=2/s total=unlimited\n",
    );
    expect(ok.code).toBe(0);

    writeFileSync(
      file,
      JSON.stringify({
        aliases: { a: { remote_addr: "h" }, ping: { remote_addr: "h", scenario_file: "nothere.xml" } },
      }),
    );
    const missing = await run(["profile", "check", file]);
    expect(missing.err).toEqual([
      `loadgen: ${file}: alias ping: cannot read scenario ${join(profiles, "nothere.xml")}: ENOENT`,
    ]);
    expect(missing.out).toEqual([]);
    expect(missing.code).toBe(2);

    writeFileSync(
      file,
      JSON.stringify({
        server: { scenario_name: "uas", local_port: 5070 },
        client: { id: "c", remote_addr: "127.0.0.1:5070", injection_file: "rows.csv" },
      }),
    );
    const noRows = await run(["profile", "check", file]);
    expect(noRows.err).toEqual([
      `loadgen: ${file}: engine c: cannot read injection file ${join(profiles, "rows.csv")}: ENOENT`,
    ]);
    expect(noRows.code).toBe(2);

    writeFileSync(
      join(profiles, "broken.xml"),
      "<scenario><send>OPTIONS sip:x SIP/2.0</send><exec command='ls'/></scenario>",
    );
    writeFileSync(file, JSON.stringify({ remote_addr: "h", scenario_file: "broken.xml" }));
    const broken = await run(["profile", "check", file]);
    expect(broken.err).toEqual([
      `loadgen: ${file}: engine client: ${join(profiles, "broken.xml")}: <exec> is not built yet (send, recv, pause, nop, label, timewait; docs/LOADGEN.md)`,
    ]);
    expect(broken.code).toBe(2);
  });

  test("TLS listeners need readable tls_cert and tls_key files", async () => {
    await using dir = tempDir("svc-loadgen-profile-");
    const cert = join(dir.path, "cert.pem");
    const file = join(dir.path, "tls.json");
    const profile = (key: string) => ({
      scenario_name: "uas",
      listeners: [{ transport: "l1", local_port: 5061, tls_cert: cert, tls_key: key }],
      api_addr: "127.0.0.1:0",
    });
    writeFileSync(cert, "not checked for content");
    writeFileSync(file, JSON.stringify(profile(join(dir.path, "key.pem"))));
    const missing = await run(["profile", "check", file]);
    expect(missing.err).toEqual([
      `loadgen: ${file}: engine server: cannot read tls_key ${join(dir.path, "key.pem")}: ENOENT`,
    ]);
    expect(missing.code).toBe(2);
    writeFileSync(file, JSON.stringify(profile(cert)));
    const ok = await run(["profile", "check", file]);
    expect(ok.out).toEqual([
      "engine server: mode=management scenario=uas transport=u1 binds=tls/127.0.0.1:5061 api=127.0.0.1:0",
    ]);
    expect(ok.code).toBe(0);
  });

  test("the flags after the file take part as in a run: a duplicate bind, a flag error", async () => {
    await using dir = tempDir("svc-loadgen-profile-");
    const file = join(dir.path, "c.json");
    writeFileSync(
      file,
      JSON.stringify({
        server: { scenario_name: "uas", local_port: 5070 },
        clients: [{ remote_addr: "127.0.0.1:5070", local_port: 5080 }],
      }),
    );
    expect((await run(["profile", "check", file])).code).toBe(0);
    const dup = await run(["profile", "check", file, "-p", "5080"]);
    expect(dup.err).toEqual([`loadgen: ${file}: duplicate bind udp 127.0.0.1:5080 (server and client-1)`]);
    expect(dup.code).toBe(2);
    const flag = await run(["profile", "check", file, "-r", "fast"]);
    expect(flag.err).toEqual([`loadgen: ${file}: -r needs a non-negative number, got "fast"`]);
    expect(flag.code).toBe(2);
  });
});

describe("loadgen profile show, keys, init", () => {
  test("show masks every secret and applies the four merge steps", async () => {
    await using dir = tempDir("svc-loadgen-profile-");
    const file = join(dir.path, "p.json");
    writeFileSync(
      file,
      JSON.stringify({
        aliases: {
          calls: {
            remote_addr: "h:5060",
            auth_password: "alias-pw-1",
            hep_addr: "127.0.0.1:9060",
            hep_password: "hep-pw-2",
            rate: 5,
            extra_args: ["-r", "7", "-api_token", "tok-3"],
          },
          srv: {
            server: true,
            api_addr: "127.0.0.1:0",
            auth: { type: "internal", sqlite_path: "u.db", jwt_secret: "jwt-secret-4-of-twenty" },
          },
        },
      }),
    );
    const calls = await spawnLoadgen(["profile", "show", "p.json", "calls", "-r", "9", "-ap", "cli-pw-5"], dir.path);
    expect(calls.err).toBe("");
    for (const s of ["alias-pw-1", "hep-pw-2", "tok-3", "cli-pw-5"]) expect(calls.out).not.toContain(s);
    const shown = JSON.parse(calls.out);
    expect([
      shown.alias,
      shown.engines[0].options.rate,
      shown.engines[0].options.auth_password,
      shown.engines[0].options.hep_password,
      shown.api_token,
    ]).toEqual(["calls", 9, "***", "***", "***"]);
    expect(calls.code).toBe(0);

    const srv = await run(["profile", "show", file, "srv"]);
    expect(srv.out.join("\n")).not.toContain("jwt-secret-4-of-twenty");
    expect(JSON.parse(srv.out.join("\n")).auth).toEqual({
      type: "internal",
      sqlite_path: join(dir.path, "u.db"),
      jwt_secret: "***",
    });

    const noAlias = await run(["profile", "show", file]);
    expect(noAlias.err).toEqual([`loadgen: ${file}: name the alias to show after the file (known: calls, srv)`]);
    expect(noAlias.code).toBe(2);
    const unknown = await run(["profile", "show", file, "sv"]);
    expect(unknown.err).toEqual([`loadgen: ${file}: unknown alias "sv" (known: calls, srv)`]);
    expect(unknown.code).toBe(2);
  });

  test("keys prints one row per profile key with its type and flag", async () => {
    const r = await run(["profile", "keys"]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^KEY +TYPE +FLAG OR MEANING$/);
    expect(r.out).toContainEqual(expect.stringMatching(/^remote_addr +string +-rsa$/));
    expect(r.out).toContainEqual(expect.stringMatching(/^rate +number +-r$/));
    expect(r.out.length).toBeGreaterThan(30);
  });

  test("the alias example runs: its uas alias answers the calls of its calls alias", async () => {
    await using dir = tempDir("svc-loadgen-profile-");
    const init = await run(["profile", "init"]);
    expect(init.code).toBe(0);
    const file = join(dir.path, "example.json");
    writeFileSync(file, init.out.join("\n"));
    const plan = planFromArgv(["-config", file, "-run-alias", "uas", "-p", "0", "-api_addr", "127.0.0.1:0"]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const server = await startPlan(plan, { out: () => {}, err: () => {} });
    try {
      const port = server.engines[0]!.binds[0]!.port;
      const calls = await run([
        "-config",
        file,
        "-run-alias",
        "calls",
        "-m",
        "3",
        "-r",
        "100",
        "-d",
        "0",
        "-stat_period=",
        "-hep_addr=",
        `127.0.0.1:${port}`,
      ]);
      expect(calls.err).toEqual([]);
      expect(calls.out.at(-1)).toMatch(/uac: created=3 .*ok=3 failed=0/);
      expect(calls.code).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
