/**
 * The loadgen command line and run profiles over real files and sockets (docs/LOADGEN.md "Command
 * line", "Run profiles", "Control API"): profile-flag rules with their exit code and one stderr line,
 * an alias run with summary_json / trace_msg / stat_period, and a composite file with a management
 * server (two listeners, control API with a token) and a client engine.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  DEFAULT_OPTIONS,
  Engine,
  planFromArgv,
  runLoadgen,
  startPlan,
  type LoadgenIo,
} from "../../src/loadgen/index.ts";
import { JwtSigner } from "../../src/auth/index.ts";
import { tempDir, waitFor } from "../harness.ts";
import { freeUdpPorts } from "../peers/process.ts";

function captureIo() {
  const out: string[] = [];
  const err: string[] = [];
  const io: LoadgenIo = { out: (l) => out.push(l), err: (l) => err.push(l) };
  return { io, out, err };
}

async function run(argv: string[]) {
  const c = captureIo();
  const code = await runLoadgen(argv, c.io);
  return { code, out: c.out, err: c.err };
}

describe("loadgen command line", () => {
  test.each([
    [["-config", "p.json"], /-config needs -run-alias <name>/],
    [["-run-alias", "x"], /-run-alias needs -config <file>/],
    [["-list-aliases"], /-list-aliases needs -config <file>/],
    [["tui", "-config", "p.json"], /apply only to the root command, not to "tui"/],
    [["pcap2scenario", "-run-alias", "x"], /apply only to the root command, not to "pcap2scenario"/],
    [["profile", "-config", "p.json"], /apply only to the root command, not to "profile"/],
    [["shell", "-run-alias", "x"], /apply only to the root command, not to "shell"/],
    [["tui", "-interval", "5ms"], /-interval must be at least 100ms/],
    [["tui", "-bogus"], /unknown tui flag -bogus/],
    [["server", "-config", "p.json", "-run-alias", "x"], /do not combine with "server"/],
    [["server", "-list-aliases"], /do not combine with "server"/],
    [["-config-server", "s.json"], /-config-server was removed: .*loadgen server -config <file>/],
    [["--config-client=c.json"], /-config-client was removed/],
    [["-sn", "uac", "-r", "fast", "h:1"], /-r needs a non-negative number, got "fast"/],
    [["-bogus", "1"], /unknown flag -bogus/],
    [["-sn", "uac"], /needs the remote address/],
    [["-sn", "uac", "-t", "s1", "h:1"], /transport "s1" is not one of u1, un, ui, t1, tn, l1, ln/],
    [["-sn", "uac", "no-such-host.invalid:5060"], /cannot resolve the remote host "no-such-host.invalid"/],
    [["server", "-t", "l1", "-p", "0"], /a TLS listener \(127\.0\.0\.1:0\) needs tls_cert and tls_key/],
    [["-sf", "x.xml", "h:1"], /cannot read scenario x.xml: ENOENT/],
    [["-sn", "uac", "-ip_field", "1", "h:1"], /-ip_field 1 needs -t ui/],
    [["-sn", "uac", "-t", "ui", "h:1"], /-t ui needs -inf <file>/],
    [["-sn", "uas", "-t", "ui", "-p", "0"], /transport ui is for client scenarios/],
    [["-sn", "uac", "-hep_raw_rtcp", "h:1"], /^loadgen: hep_raw_rtcp needs hep_addr /],
    [["-sn", "uac", "-hep_homer_lake_rtcp=true", "h:1"], /^loadgen: hep_homer_lake_rtcp needs hep_addr /],
    [["server", "-p", "0", "-send_media_report"], /^loadgen: send_media_report needs hep_addr /],
  ])("%j exits 2 with one line", async (argv, message) => {
    const r = await run(argv as string[]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
    expect(r.err[0]).toStartWith("loadgen: ");
    expect(r.code).toBe(2);
  });

  test("a server scenario file on the plain command line listens on 5060 unless -p says otherwise", async () => {
    await using dir = tempDir("svc-loadgen-cli-");
    const sf = join(dir.path, "answer.xml");
    writeFileSync(
      sf,
      `<scenario><recv request="OPTIONS"/><send>SIP/2.0 200 OK\n[last_Via:]\n[last_From:]\n[last_To:]\n[last_Call-ID:]\n[last_CSeq:]\nContent-Length: 0</send></scenario>`,
    );
    const plan = planFromArgv(["-sf", sf]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    expect([plan.engines[0]!.mode, plan.engines[0]!.opts.local_port]).toEqual(["management", 5060]);
    const p0 = planFromArgv(["-sf", sf, "-p", "0"]);
    if (!("engines" in p0)) throw new Error("expected a run plan");
    expect(p0.engines[0]!.opts.local_port).toBe(0);
  });

  test("profile files: -list-aliases sorted, invalid JSON, unknown alias, flat file with aliases", async () => {
    await using dir = tempDir("svc-loadgen-cli-");
    const aliases = join(dir.path, "aliases.json");
    writeFileSync(
      aliases,
      JSON.stringify({ aliases: { b: { remote_addr: "h" }, a: { remote_addr: "h" }, c: { server: true } } }),
    );
    const list = await run([`--config=${aliases}`, "-list-aliases"]);
    expect(list.out).toEqual(["a", "b", "c"]);
    expect(list.code).toBe(0);
    const unknown = await run(["-config", aliases, "-run-alias", "zz"]);
    expect(unknown.err[0]).toMatch(/unknown alias "zz" \(known: a, b, c\)/);
    expect(unknown.code).toBe(2);
    const flatWithAliases = await run(["server", "-config", aliases]);
    expect(flatWithAliases.err[0]).toMatch(/a flat profile has no "aliases" key/);
    const bad = join(dir.path, "bad.json");
    writeFileSync(bad, "{ rate: 5 ");
    const invalid = await run(["-config", bad, "-run-alias", "x"]);
    expect(invalid.err[0]).toMatch(/bad.json: invalid JSON/);
    expect(invalid.code).toBe(2);
    const missing = await run(["-config", join(dir.path, "none.json"), "-list-aliases"]);
    expect(missing.err[0]).toMatch(/cannot read profile .*none.json: ENOENT/);
  });

  test("an alias run writes summary_json, trace_msg and stat_period lines; extra_args and the command line apply", async () => {
    await using dir = tempDir("svc-loadgen-cli-");
    const uas = new Engine({
      opts: { ...DEFAULT_OPTIONS, listeners: [], scenario_name: "uas", local_port: 0 },
      mode: "management",
    });
    await uas.start();
    try {
      const summary = join(dir.path, "summary.json");
      const trace = join(dir.path, "messages.log");
      const profile = join(dir.path, "p.json");
      writeFileSync(
        profile,
        JSON.stringify({
          aliases: {
            calls: {
              remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
              scenario_name: "uac",
              rate: 1,
              total_calls: 50,
              summary_json: summary,
              trace_msg: true,
              stat_period: "20ms",
              extra_args: ["-r", "100", "-message_file", trace],
            },
          },
        }),
      );
      const r = await run(["-config", profile, "-run-alias", "calls", "-m", "4", "-d", "30"]);
      expect(r.err).toEqual([]);
      const s = JSON.parse(readFileSync(summary, "utf8"));
      expect([s.id, s.calls_created, s.calls_successful, s.calls_failed, s.rate]).toEqual(["calls", 4, 4, 0, 100]);
      const log = readFileSync(trace, "utf8");
      expect(log.match(/^INVITE sip:/gm)).toHaveLength(4);
      expect(log.match(/^BYE sip:/gm)).toHaveLength(4);
      expect(log.match(/^SIP\/2\.0 200 OK/gm)).toHaveLength(8);
      expect(r.out.filter((l) => /^loadgen .*uac: created=\d+/.test(l)).length).toBeGreaterThanOrEqual(2);
      expect(r.code).toBe(0);
    } finally {
      await uas.stop();
    }
  });
  test("tui and shell talk to a running loadgen's control API", async () => {
    const plan = planFromArgv(["server", "-sn", "uas", "-p", "0", "-api_addr", "127.0.0.1:0", "-api_token", "tok-123"]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const running = await startPlan(plan, captureIo().io);
    try {
      const api = `127.0.0.1:${running.api!.port}`;
      const tui = captureIo();
      expect(
        await runLoadgen(
          ["tui", "-api_addr", api, "-api_token", "tok-123", "-interval", "100ms", "-count", "2"],
          tui.io,
        ),
      ).toBe(0);
      expect(tui.out).toHaveLength(2);
      expect(tui.out[0]).toMatch(/^loadgen \S+s uas: created=0 current=0 ok=0 failed=0/);

      const shell = captureIo();
      async function* lines() {
        yield* ["stats", "rate 25", "pause", "bogus", "resume", "quit", "stats"];
      }
      const code = await runLoadgen(["shell", "-api_addr", api, "-api_token", "tok-123"], {
        ...shell.io,
        lines: lines(),
      });
      expect(shell.out).toEqual([
        expect.stringMatching(/uas: created=0/),
        '{"rate":25,"paused":false,"engines":1,"applied":{"rate":["server"]}}',
        '{"rate":25,"paused":true,"engines":1,"applied":{"pause":["server"]}}',
        '{"rate":25,"paused":false,"engines":1,"applied":{"pause":["server"]}}',
      ]);
      expect(shell.err).toEqual([expect.stringMatching(/unknown command "bogus"/)]);
      expect(code).toBe(1);

      const denied = captureIo();
      expect(await runLoadgen(["tui", "-api_addr", api, "-count", "1"], denied.io)).toBe(1);
      expect(denied.err).toEqual(["loadgen tui: control API 401: missing or wrong bearer token (api_token)"]);

      // The token may come from LOADGEN_API_TOKEN instead of the command line (ps shows argv).
      const fromEnv = captureIo();
      process.env.LOADGEN_API_TOKEN = "tok-123";
      try {
        expect(await runLoadgen(["tui", "-api_addr", api, "-count", "1"], fromEnv.io)).toBe(0);
      } finally {
        delete process.env.LOADGEN_API_TOKEN;
      }
      expect(fromEnv.out[0]).toMatch(/ uas: created=0/);
    } finally {
      await running.stop();
    }
  });
});

describe("management mode", () => {
  test("a composite file: two listeners, a client engine, GET /api/v1/stats multi, POST /api/v1/control with a token", async () => {
    await using dir = tempDir("svc-loadgen-cli-");
    const [p1, p2] = await freeUdpPorts(2);
    const file = join(dir.path, "composite.json");
    writeFileSync(
      file,
      JSON.stringify({
        rate: 100,
        api_addr: "127.0.0.1:0",
        api_token: "secret-token",
        server: { id: "srv", listeners: [{ local_ip: "127.0.0.1", local_port: p1 }, { local_port: p2 }] },
        clients: [{ id: "calls", remote_addr: `127.0.0.1:${p2}`, total_calls: 5 }],
      }),
    );
    const plan = planFromArgv(["server", "-config", file]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const c = captureIo();
    const running = await startPlan(plan, c.io);
    try {
      const base = `http://127.0.0.1:${running.api!.port}`;
      const auth = { Authorization: "Bearer secret-token" };
      expect((await fetch(`${base}/api/v1/stats`)).status).toBe(401);
      expect((await fetch(`${base}/api/v1/stats`, { headers: { Authorization: "Bearer wrong-token!" } })).status).toBe(
        401,
      );
      const stats = await waitFor("client finished", async () => {
        const body = (await (await fetch(`${base}/api/v1/stats`, { headers: auth })).json()) as {
          multi: boolean;
          engines: Array<{ id: string; stats: { calls_successful: number; mode: string } }>;
        };
        return body.engines[1]?.stats.calls_successful === 5 ? body : null;
      });
      expect(stats.multi).toBe(true);
      expect(stats.engines.map((e) => [e.id, e.stats.mode])).toEqual([
        ["srv", "management"],
        ["calls", "load"],
      ]);
      expect(stats.engines[0]!.stats.calls_successful).toBe(5);
      // The first listener answers too.
      const opt = new Engine({
        opts: {
          ...DEFAULT_OPTIONS,
          listeners: [],
          scenario_name: "options",
          remote_addr: `127.0.0.1:${p1}`,
          rate: 100,
          total_calls: 2,
        },
        mode: "load",
      });
      await opt.start();
      await opt.done;
      expect(opt.snapshot().calls_successful).toBe(2);

      const post = (body: string) =>
        fetch(`${base}/api/v1/control`, {
          method: "POST",
          headers: { ...auth, "Content-Type": "application/json" },
          body,
        });
      const ok = await post(JSON.stringify({ rate: 7, pause: true }));
      expect(await ok.json()).toEqual({
        rate: 7,
        paused: true,
        engines: 2,
        applied: { rate: ["srv", "calls"], pause: ["srv", "calls"] },
      });
      const after = (await (await fetch(`${base}/api/v1/stats`, { headers: auth })).json()) as {
        engines: Array<{ stats: { rate: number; paused: boolean } }>;
      };
      expect(after.engines.map((e) => [e.stats.rate, e.stats.paused])).toEqual([
        [7, true],
        [7, true],
      ]);
      for (const [body, message] of [
        ["{", /not valid JSON/],
        [JSON.stringify({ rate: -1 }), /rate must be a number/],
        [JSON.stringify({ pause: "yes" }), /pause must be true or false/],
        [JSON.stringify({ speed: 1 }), /unknown control key "speed"/],
        [JSON.stringify({}), /nothing to change/],
      ] as const) {
        const r = await post(body);
        expect(r.status).toBe(400);
        expect(((await r.json()) as { message: string }).message).toMatch(message);
      }
      expect((await fetch(`${base}/api/v1/nope`, { headers: auth })).status).toBe(404);
    } finally {
      await running.stop();
    }
    expect(await running.finished).toBe(0);
  });

  test("internal users: the first start creates admin with a printed password; login gives a JWT the API accepts", async () => {
    await using dir = tempDir("svc-loadgen-cli-");
    const file = join(dir.path, "flat.json");
    writeFileSync(
      file,
      JSON.stringify({
        scenario_name: "uas",
        api_addr: "127.0.0.1:0",
        auth: { type: "internal", sqlite_path: "users.db", jwt_secret: "a-secret-of-20-chars" },
      }),
    );
    const start = async () => {
      const plan = planFromArgv(["server", "-config", file, "-p", "0"]);
      if (!("engines" in plan)) throw new Error("expected a run plan");
      const c = captureIo();
      return { running: await startPlan(plan, c.io), out: c.out };
    };
    const first = await start();
    const password = first.out.map((l) => /password \(shown once\): (\S+)/.exec(l)?.[1]).find(Boolean)!;
    expect(password).toBeString();
    const base = () => `http://127.0.0.1:${running.api!.port}/api/v1`;
    let running = first.running;
    const login = (pw: string) =>
      fetch(`${base()}/login`, { method: "POST", body: JSON.stringify({ username: "admin", password: pw }) });
    try {
      expect((await fetch(`${base()}/stats`)).status).toBe(401);
      expect((await login("wrong-password")).status).toBe(401);
      expect((await fetch(`${base()}/login`, { method: "POST", body: "[]" })).status).toBe(400);
      const { token } = (await (await login(password)).json()) as { token: string };
      const stats = await fetch(`${base()}/stats`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await stats.json()) as { mode: string }).mode).toBe("management");
      // A token signed with another secret is refused.
      const forged = await new JwtSigner("another-secret-of-20").sign({
        sub: "admin",
        username: "admin",
        admin: true,
        jti: "x",
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 60,
        provider: "internal",
      });
      expect((await fetch(`${base()}/stats`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
    } finally {
      await running.stop();
    }
    // The users persist: a second start prints no new password and the old one still logs in.
    const second = await start();
    running = second.running;
    try {
      expect(second.out.some((l) => l.includes("shown once"))).toBe(false);
      expect((await login(password)).status).toBe(200);
    } finally {
      await running.stop();
    }
  });

  test("a single flat management profile answers GET /api/v1/stats with the flat object", async () => {
    await using dir = tempDir("svc-loadgen-cli-");
    const file = join(dir.path, "flat.json");
    writeFileSync(file, JSON.stringify({ scenario_name: "uas", api_addr: "127.0.0.1:0" }));
    const plan = planFromArgv(["server", "-config", file, "-p", "0"]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const running = await startPlan(plan, captureIo().io);
    try {
      const body = (await (await fetch(`http://127.0.0.1:${running.api!.port}/api/v1/stats`)).json()) as Record<
        string,
        unknown
      >;
      expect(body.multi).toBeUndefined();
      expect(body.mode).toBe("management");
      expect(body.scenario).toBe("uas");
    } finally {
      await running.stop();
    }
  });
});
