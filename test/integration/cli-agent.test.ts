/**
 * `svc agent` against an HTTP server serving the documented capture-agent API (docs/CLI.md
 * "Capture-agent client"; the shape of heplify's GET /health and GET /api/stats): Basic auth on
 * /api/stats only, the stats table and raw JSON, the DEGRADED rule, one-line errors.
 */
import { describe, expect, test } from "bun:test";
import { AppError } from "../../src/core/index.ts";
import { UsageError, runAgent, type CliIo } from "../../src/cli/index.ts";
import { AGENT_STATS as STATS, fakeAgent } from "../e2e/cli-harness.ts";

function captureIo(env: Record<string, string> = {}): CliIo & { outText(): string } {
  let out = "";
  return {
    out: async (t) => void (out += t),
    err: async () => {},
    env,
    stdin: process.stdin,
    stdout: process.stdout,
    now: () => Date.now(),
    outText: () => out,
  };
}

async function agent(args: string[]): Promise<{ code: number; out: string }> {
  const io = captureIo();
  const code = await runAgent(args, io);
  return { code, out: io.outText() };
}

async function agentError(args: string[]): Promise<unknown> {
  try {
    await runAgent(args, captureIo());
  } catch (e) {
    return e;
  }
  throw new Error(`no error for ${args.join(" ")}`);
}

describe("svc agent against the documented agent API", () => {
  test("stats (the default action): node, every counter, the transport table; Basic auth sent", async () => {
    await using a = fakeAgent({ user: "agent", pass: "s3cret" });
    const r = await agent(["--host", a.url, "--user", "agent", "--pass", "s3cret"]);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines.slice(0, 5)).toEqual([
      "Node",
      "  node_name   edge-agent-1",
      "  node_id     2001",
      "  interfaces  eth0, any",
      "  uptime      1h2m5s",
    ]);
    expect(lines.slice(6, 17)).toEqual([
      "Packets",
      "  total       1500",
      "  sip         1200",
      "  rtcp        100",
      "  rtcp_fail   10",
      "  rtp         0",
      "  dns         5",
      "  log         0",
      "  hep_sent    1300",
      "  duplicates  5",
      "  unknown     180",
    ]);
    expect(lines.slice(18)).toEqual([
      "Transports",
      "  addr                    proto  connected  reconnects  sent  errors",
      "  ----------------------  -----  ---------  ----------  ----  ------",
      "  homer.example.com:9060  tcp    yes        0           1300  0",
      "  10.9.9.9:9060           udp    no         3           0     17",
    ]);
    expect(a.hits.get("/api/stats")).toBe(1);
  });

  test("--format json prints the agent's raw answer", async () => {
    await using a = fakeAgent();
    const r = await agent(["stats", "--host", a.url, "--format", "json"]);
    expect(JSON.parse(r.out)).toEqual(STATS);
    expect(r.out).toBe(`${JSON.stringify(STATS)}\n`);
  });

  test("missing members print as -; no transports is said so", async () => {
    await using a = fakeAgent();
    a.set({ stats: { node_name: "bare", packets: { total: 3, sip: 2 } } });
    const out = (await agent(["--host", a.url])).out;
    expect(out).toContain("  node_id     -\n");
    expect(out).toContain("  hep_sent    -\n");
    expect(out).toContain("  uptime      -\n");
    expect(out.trimEnd().endsWith("Transports\n  (none)")).toBe(true);
  });

  test("health: ok exits 0; DEGRADED (no connected HEP transport) exits 1; /health needs no credentials", async () => {
    await using a = fakeAgent({ user: "agent", pass: "s3cret" });
    expect(await agent(["health", "--host", a.url])).toEqual({
      code: 0,
      out: "status                ok\nconnected_transports  1\nqueue                 4\nbuffer                0 bytes\n",
    });
    a.set({ connected: false });
    expect(await agent(["health", "--host", a.url])).toEqual({
      code: 1,
      out: "status                DEGRADED\nconnected_transports  0\nqueue                 4\nbuffer                65536 bytes\n",
    });
    const json = await agent(["health", "--host", a.url, "--format", "json"]);
    expect([json.code, JSON.parse(json.out)]).toEqual([
      1,
      { status: "degraded", connected_transports: 0, queue_size: 4, buffer_size_bytes: 65536 },
    ]);
  });

  test("401: missing or wrong credentials are named; other failures are one line", async () => {
    await using a = fakeAgent({ user: "agent", pass: "s3cret" });
    const missing = await agentError(["stats", "--host", a.url]);
    expect(missing).toBeInstanceOf(AppError);
    expect((missing as Error).message).toBe(
      "agent answered 401 on /api/stats: it needs --user and --pass (api_settings.user / pass)",
    );
    expect(((await agentError(["--host", a.url, "--user", "agent", "--pass", "nope"])) as Error).message).toBe(
      "agent answered 401 on /api/stats: wrong --user or --pass",
    );
    const gone = (await agentError(["--host", "127.0.0.1:1"])) as Error;
    expect(gone.message).toBe(
      "GET http://127.0.0.1:1/api/stats: connection refused (is the service running on that address?)",
    );
  });

  test.each([
    [["bogus"], 'unknown action "bogus" (stats, health or watch)'],
    [["stats", "health"], "one action expected"],
    [["--format", "xml"], "--format must be table or json"],
    [["watch", "--interval", "0s"], "--interval must be a duration of at least 100ms"],
    [["--interval", "soon"], "--interval must be a duration"],
    [["--pass", "x"], "--pass needs --user"],
  ])("usage %p", async (args, message) => {
    const e = await agentError(args as string[]);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toContain(message);
  });
});
