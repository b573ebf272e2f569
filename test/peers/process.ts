/**
 * External programs as test peers: spawned with their output in files (a full pipe must never block
 * a peer), stopped in `await using` scope exit, and free loopback UDP ports to give them.
 */
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../harness.ts";

export interface PeerProcess extends AsyncDisposable {
  name: string;
  proc: Subprocess;
  /** stdout and stderr so far (for assertions and failure messages). */
  output(): string;
  /** Resolves with the exit code; `timeoutMs` then fails with the output. */
  exited(timeoutMs: number): Promise<number>;
  /** Sends `signal`, waits up to 5 s, then SIGKILL. Idempotent. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

/**
 * Peers still running. A test that times out never reaches its `await using` disposal, so whatever
 * it started is killed when the test process exits instead of outliving it.
 */
const live = new Set<Subprocess>();
process.on("exit", () => {
  for (const p of live) p.kill("SIGTERM"); // the peers clean up their own children (dumpcap, kamailio workers)
});

export function spawnPeer(
  name: string,
  cmd: string[],
  opts: { dir: string; cwd?: string; env?: Record<string, string> },
): PeerProcess {
  const outPath = join(opts.dir, `${name}.out`);
  const errPath = join(opts.dir, `${name}.err`);
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd ?? opts.dir,
    env: { ...process.env, ...opts.env },
    stdin: "ignore",
    stdout: Bun.file(outPath),
    stderr: Bun.file(errPath),
  });
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  const read = (p: string) => {
    try {
      return readFileSync(p, "utf8");
    } catch {
      return "";
    }
  };
  const output = () => `${read(outPath)}${read(errPath)}`;
  const exited = async (timeoutMs: number) => {
    let timer: Timer | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`${name} still running after ${timeoutMs} ms: ${cmd.join(" ")}\n${output().slice(-3000)}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([proc.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode ?? -1;
    proc.kill(signal);
    try {
      return await exited(5000);
    } catch {
      proc.kill("SIGKILL");
      return await proc.exited;
    }
  };
  return { name, proc, output, exited, stop, [Symbol.asyncDispose]: async () => void (await stop()) };
}

/**
 * Ports for a peer or a restart on a known port are picked below the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range), never bound to 0 and read back: a port the kernel gave
 * out once is soon given out again, to a listener on port 0 or to an outgoing connection of any
 * process (another test file running beside this one), and a restart on the same port then finds it
 * taken. Below the range only another such pick can land on it.
 */
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();
const PICK_LOW = Math.min(20000, EPHEMERAL_LOW - 4096);

/** A loopback port that neither a TCP nor a UDP socket has now, below the ephemeral range. */
export function freePort(): number {
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = PICK_LOW + Math.floor(Math.random() * (EPHEMERAL_LOW - PICK_LOW));
    if (udpBound(port)) continue;
    try {
      Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true);
    } catch {
      continue; // taken
    }
    return port;
  }
  throw new Error(`no free loopback port between ${PICK_LOW} and ${EPHEMERAL_LOW}`);
}

/** A free loopback port for a UDP peer (free for TCP too). */
export async function freeUdpPort(): Promise<number> {
  return freePort();
}

/** `n` distinct free ports. */
export async function freeUdpPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(freePort());
  return [...ports];
}

/** Whether some process has a UDP socket bound to 127.0.0.1:`port` (Linux /proc/net/udp). */
export function udpBound(port: number): boolean {
  const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/udp", "utf8")
    .split("\n")
    .some((line) => line.trim().split(/\s+/)[1] === want);
}

/** Whether some process listens on TCP 127.0.0.1:`port` (Linux /proc/net/tcp, state 0A). */
export function tcpListening(port: number): boolean {
  const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .some((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === want && f[3] === "0A";
    });
}

/** Waits until `peer` listens on UDP `port`; fails early with its output if it exits instead. */
export async function waitUdpListening(peer: PeerProcess, port: number, timeoutMs = 10_000): Promise<void> {
  await waitListening(peer, "udp", port, udpBound, timeoutMs);
}

/** Waits until `peer` listens on TCP `port` (a TLS listener too); fails early if it exits instead. */
export async function waitTcpListening(peer: PeerProcess, port: number, timeoutMs = 10_000): Promise<void> {
  await waitListening(peer, "tcp", port, tcpListening, timeoutMs);
}

async function waitListening(
  peer: PeerProcess,
  kind: string,
  port: number,
  bound: (port: number) => boolean,
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    `${peer.name} listening on ${kind} 127.0.0.1:${port}`,
    () => {
      if (peer.proc.exitCode !== null)
        throw new Error(`${peer.name} exited with ${peer.proc.exitCode}: ${peer.output().slice(-3000)}`);
      return bound(port);
    },
    timeoutMs,
  );
}
