/**
 * `svc search --live` as a real process against a running appliance fed with HEP over UDP (issue
 * 17; docs/STREAM.md): one line per event (or the JSON frame), the stream's filters, `--count`,
 * and one-line errors with exit 2 (usage) or 1 (the stream is off).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, response } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { captureOn, hep, series, udpSender, type StreamClient } from "../integration/stream-helpers.ts";
import { cliEnv, ROOT, runCli } from "./cli-harness.ts";

const PASSWORD = "cli-live-password";
const call = { callId: `cli-live-${crypto.randomUUID()}@pbx`, from: "1001", to: "2002" };
const T0_MS = Date.now();

let dir: TempDir;
let home: TempDir;
let a: TestAppliance;
let udp: Awaited<ReturnType<typeof udpSender>>;
let sentinel: StreamClient;
let host = "";

beforeAll(async () => {
  dir = tempDir();
  home = tempDir("svc-home-");
  a = await startTestAppliance(dir.path, {
    coordinator: {
      auth: { admin_password_hash: sha256Hex(PASSWORD) },
      hep_stream: { enable: true, allow_payload: true },
    },
  });
  host = a.app.coordinatorUrl!.replace(/^http:\/\//, "");
  udp = await udpSender(a.app.ingest!.listeners.udp!.port());
  const r = await fetch(`${a.app.coordinatorUrl}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await r.json()) as { token: string }).token;
  // Keeps capture on in the ingest thread for the whole file (the CLI connects later).
  sentinel = await captureOn(
    `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?access_token=${token}`,
    udp.send,
  );
}, 60_000);

afterAll(async () => {
  sentinel?.close();
  udp?.close();
  await a?.[Symbol.asyncDispose]();
  await home?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

/** Starts `svc search --live …`, waits until it subscribed, sends `packets`, returns what it printed. */
async function live(args: string[], packets: Uint8Array[]) {
  const subscribed = series(a.app.metrics.render(), "svc_stream_subscribers");
  const proc = Bun.spawn(
    [
      process.execPath,
      "src/main.ts",
      "search",
      "--live",
      "--host",
      host,
      "--user",
      "admin",
      "--pass",
      PASSWORD,
      ...args,
    ],
    {
      cwd: ROOT,
      env: cliEnv(home.path),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  await waitFor(
    "the CLI to subscribe",
    () => series(a.app.metrics.render(), "svc_stream_subscribers") > subscribed,
    20_000,
  );
  udp.send(packets);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

const traffic = [
  hep({
    srcIp: "10.0.0.1",
    srcPort: 5060,
    dstIp: "10.0.0.2",
    dstPort: 5080,
    tsUs: T0_MS * 1000,
    payload: invite(call),
  }),
  hep({ proto: 5, srcPort: 7000, tsUs: T0_MS * 1000 + 1000, payload: new Uint8Array([0x80, 0xc8, 0, 1, 0, 0, 0, 0]) }),
  hep({
    srcIp: "10.0.0.2",
    srcPort: 5080,
    dstIp: "10.0.0.1",
    dstPort: 5060,
    tsUs: T0_MS * 1000 + 2000,
    payload: response(180, "Ringing", "INVITE", call),
  }),
  hep({
    srcIp: "10.0.0.2",
    srcPort: 5080,
    dstIp: "10.0.0.1",
    dstPort: 5060,
    tsUs: T0_MS * 1000 + 3000,
    payload: response(200, "OK", "INVITE", call),
  }),
];

const utc = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

describe("svc search --live", () => {
  test("one line per SIP event (the default proto), until --count", async () => {
    const r = await live(["--count", "3"], traffic);
    expect(r.stderr).toBe("");
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([
      `${utc(T0_MS)}  SIP   10.0.0.1:5060 -> 10.0.0.2:5080  INVITE  call-id ${call.callId}  1001 -> 2002  cseq 1 INVITE`,
      `${utc(T0_MS + 2)}  SIP   10.0.0.2:5080 -> 10.0.0.1:5060  180 Ringing (INVITE)  call-id ${call.callId}  1001 -> 2002  cseq 1 INVITE`,
      `${utc(T0_MS + 3)}  SIP   10.0.0.2:5080 -> 10.0.0.1:5060  200 OK (INVITE)  call-id ${call.callId}  1001 -> 2002  cseq 1 INVITE`,
    ]);
    expect(r.code).toBe(0);
  }, 60_000);

  test("--format json prints the frames; --only-requests and --include-payload reach the server", async () => {
    const r = await live(
      ["--proto", "sip,rtcp", "--only-requests", "--include-payload", "--format", "json", "--count", "2"],
      traffic,
    );
    const frames = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(frames.map((f) => f.proto)).toEqual([1, 5]);
    expect(frames[0]!.payload).toBe(invite(call));
    expect(frames[1]).toMatchObject({ proto: 5, src_port: 7000, payload_encoding: "base64" });
    expect(r.code).toBe(0);
  }, 60_000);

  test("usage errors and a coordinator without the stream: one line on stderr, exit 2 or 1", async () => {
    const env = cliEnv(home.path);
    const cases: Array<[string[], number, RegExp]> = [
      [["search", "--live", "--host", host, "--limit", "5"], 2, /^svc: --limit does not apply to --live/],
      [["search", "--live", "--host", host, "--method", "INVTE"], 2, /^svc: --method "INVTE" is not a SIP method/],
      [["search", "--live", "--host", host, "--proto", "999"], 2, /^svc: --proto "999" is not a HEP protocol/],
      [["search", "--live", "--host", host, "--format", "csv"], 2, /^svc: --format csv does not apply to --live/],
      [["search", "--host", host, "--history", "3"], 2, /^svc: --history needs --live/],
    ];
    for (const [args, code, message] of cases) {
      const r = await runCli(args, env);
      expect({ args, stderr: r.stderr.trim().split("\n").length, code: r.code }).toEqual({ args, stderr: 1, code });
      expect(r.stderr).toMatch(message);
    }
    await using other = tempDir();
    await using off = await startTestAppliance(other.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const r = await runCli(
      ["search", "--live", "--host", off.app.coordinatorUrl!, "--user", "admin", "--pass", PASSWORD],
      env,
    );
    expect(r.stderr).toBe("svc: the live stream is off on this coordinator (coordinator.hep_stream.enable)\n");
    expect(r.code).toBe(1);
  }, 60_000);
});
