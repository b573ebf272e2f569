/**
 * The real appliance as a child process for the shared-lake and kill -9 tests (pg-lake-torture,
 * lake-remote-kill9, pg-lake-outage, lake-kill9, hep-threads-kill9, forward-kill9): `svc serve --config-path <file>`, the executable in SVC_TEST_BINARY when set, else
 * `bun src/main.ts`. The bound ports come from its `"msg":"listening"` log lines (every listener on
 * 127.0.0.1:0); every JSON log line is kept for assertions. Killed when the test process exits.
 */
import { resolve } from "node:path";
import type { Subprocess } from "bun";
import { encodeHep3 } from "../../src/hep/index.ts";
import { waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";

const ROOT = resolve(import.meta.dir, "../..");

export interface SvcChild {
  name: string;
  proc: Subprocess<"ignore", "ignore", "pipe">;
  /** Module → `host:port` ("hep-udp", "hep-tcp", "node-http", "coordinator-http"). */
  addr: Map<string, string>;
  lines: Array<Record<string, unknown>>;
  port(module: string): number;
  /** GET on the node port. */
  node(path: string): Promise<Response>;
  /** One counter or gauge of /metrics summed over its labels (0 when absent). */
  metric(name: string): Promise<number>;
  /** SIGTERM, then the "stopped" line's counters (rows accepted, written, lost by this run). */
  stop(): Promise<{ code: number; accepted: number; written: number; lost: number }>;
  kill9(): Promise<void>;
}

/** The caller's environment minus SVC_* (loadConfig reads SVC_<PATH> and rejects unknown keys), plus `extra`. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) env[k] = v;
  return { ...env, ...extra };
}

const live = new Set<Subprocess>();
process.on("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

export async function spawnSvc(
  name: string,
  cfgPath: string,
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<SvcChild> {
  const binary = process.env.SVC_TEST_BINARY;
  const cmd = binary
    ? [resolve(binary), "serve", "--config-path", cfgPath]
    : [process.execPath, "src/main.ts", "serve", "--config-path", cfgPath];
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: childEnv(env), stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const addr = new Map<string, string>();
  const lines: Array<Record<string, unknown>> = [];
  let started = false;
  const reading = (async () => {
    const dec = new TextDecoder();
    let buf = "";
    const reader = proc.stderr.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buf += dec.decode(r.value, { stream: true });
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const text = buf.slice(0, i);
        buf = buf.slice(i + 1);
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          line = { level: "raw", msg: text };
        }
        lines.push(line);
        if (line.msg === "listening") addr.set(String(line.module), String(line.address));
        if (line.msg === "svc started") started = true;
      }
    }
  })();
  await waitFor(
    `${name} listening`,
    () => {
      if (proc.exitCode !== null)
        throw new Error(`${name} exited ${proc.exitCode}: ${JSON.stringify(lines.slice(-5))}`);
      return started && addr.has("node-http");
    },
    timeoutMs,
  );
  const port = (m: string) => {
    const a = addr.get(m);
    if (!a) throw new Error(`${name} has no ${m} listener`);
    return Number(a.slice(a.lastIndexOf(":") + 1));
  };
  const node = (path: string) => fetch(`http://127.0.0.1:${port("node-http")}${path}`);
  const metric = async (metricName: string) => {
    const text = await (await fetch(`http://127.0.0.1:${port("coordinator-http")}/metrics`)).text();
    let sum = 0;
    for (const m of text.matchAll(new RegExp(`^${metricName}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, "gm")))
      sum += Number(m[1]);
    return sum;
  };
  const stop = async () => {
    proc.kill("SIGTERM");
    const code = await proc.exited;
    await reading;
    const s = lines.find((l) => l.msg === "stopped");
    return {
      code,
      accepted: Number(s?.rows_accepted ?? Number.NaN),
      written: Number(s?.rows_written ?? Number.NaN),
      lost: Number(s?.rows_lost ?? Number.NaN),
    };
  };
  const kill9 = async () => {
    proc.kill("SIGKILL");
    await proc.exited;
    await reading;
  };
  return { name, proc, addr, lines, port, node, metric, stop, kill9 };
}

/**
 * A counter of the child once two reads 300 ms apart agree: an ingest thread's counts reach
 * /metrics with its hand-overs (every 100 ms), so the last datagrams may still be in one.
 */
export async function settledMetric(child: SvcChild, name: string): Promise<number> {
  let last = -1;
  return await waitFor(
    `${name} settled`,
    async () => {
      const now = await child.metric(name);
      const settled = now === last;
      last = now;
      return settled ? now : undefined;
    },
    30_000,
    300,
  );
}

/** One INVITE as HEP3 with Call-ID `callId`, timestamped now. */
export function hepInvite(callId: string, protocol: "udp" | "tcp"): Uint8Array {
  return encodeHep3({
    ipFamily: 4,
    ipProtocol: protocol === "udp" ? 17 : 6,
    srcIp: "10.7.0.1",
    dstIp: "10.7.0.2",
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: Date.now() * 1000,
    protoType: 1,
    captureId: 7,
    payload: invite({ callId, from: "tort-a", to: "tort-b" }),
  });
}

/**
 * Sends INVITEs to `child` over UDP and TCP, `perTick` of each every 10 ms, Call-IDs
 * `<prefix>-u-<n>` and `<prefix>-t-<n>`, until `stop()`; returns how many were handed to the kernel.
 */
export async function startHepSender(child: SvcChild, prefix: string, perTick: number) {
  const udp = await Bun.udpSocket({});
  // What the socket did not take goes when it asks for more (drain).
  let drained: (() => void) | undefined;
  const tcp = await Bun.connect({
    hostname: "127.0.0.1",
    port: child.port("hep-tcp"),
    socket: { data() {}, error() {}, drain: () => drained?.(), close: () => drained?.() },
  });
  let sentUdp = 0;
  let sentTcp = 0;
  let pending: Uint8Array | null = null;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      try {
        for (let i = 0; i < perTick; i++)
          udp.send(hepInvite(`${prefix}-u-${sentUdp++}`, "udp"), child.port("hep-udp"), "127.0.0.1");
      } catch {
        // the child is gone (ICMP port unreachable): the test is ending anyway
      }
      if (pending === null) {
        const frames: Uint8Array[] = [];
        for (let i = 0; i < perTick; i++) frames.push(hepInvite(`${prefix}-t-${sentTcp++}`, "tcp"));
        pending = Buffer.concat(frames);
      }
      const n = tcp.write(pending);
      pending = n >= pending.length ? null : pending.subarray(n);
      await Bun.sleep(10); // pacing of the offered load, not a wait for a condition
    }
    // The rest of the stream before the connection closes: what was built is sent.
    while (pending !== null && pending.length > 0) {
      const wait = new Promise<void>((r) => (drained = r));
      const n = tcp.write(pending);
      if (n < 0) break; // the connection is closed: nothing more can go
      pending = n >= pending.length ? null : pending.subarray(n);
      if (pending !== null) await wait;
    }
  })();
  return {
    /** Idempotent: the first call closes the sockets. */
    async stop() {
      const first = !stopped;
      stopped = true;
      await loop;
      if (first) {
        tcp.end();
        udp.close();
      }
      return { udp: sentUdp, tcp: sentTcp };
    },
  };
}
