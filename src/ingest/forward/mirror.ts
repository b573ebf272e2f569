/**
 * The lossy live mirror (`ingest.mirror.destinations`, docs/DEPLOY.md "Live mirror"): every
 * accepted HEP packet copied to other collectors over UDP or TCP, as heplify sends to several
 * servers. Never blocks ingest: UDP sends what the socket takes, TCP keeps at most `queueBytes`
 * waiting per destination and reconnects with back-off; everything else is dropped and counted.
 */
import type { Counter, Logger } from "../../core/index.ts";
import { eachRecord } from "./raw-batch.ts";

interface Destination {
  send(p: Uint8Array): boolean;
  close(): void;
}

export interface MirrorMetrics {
  sent: Counter<"destination">;
  dropped: Counter<"destination">;
}

export class HepMirror {
  private readonly dests: Array<{ name: string; d: Destination }> = [];

  constructor(
    private readonly destinations: readonly string[],
    private readonly queueBytes: number,
    private readonly metrics: MirrorMetrics,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    for (const name of this.destinations) {
      const m = /^(udp|tcp):\/\/([^:/\s]+):(\d{1,5})$/.exec(name);
      if (!m) continue; // refused at start (src/config/effects.ts)
      const hostname = m[2]!;
      const port = Number(m[3]);
      const d =
        m[1] === "udp"
          ? await udpDestination(hostname, port)
          : tcpDestination(hostname, port, this.queueBytes, this.logger.child({ mirror: name }));
      this.metrics.sent.inc({ destination: name }, 0);
      this.metrics.dropped.inc({ destination: name }, 0);
      this.dests.push({ name, d });
    }
  }

  /** The records of one hand-over (raw-batch.ts), to every destination. */
  sendChunk(bytes: Uint8Array): void {
    if (this.dests.length === 0) return;
    for (const { name, d } of this.dests) {
      let sent = 0;
      let dropped = 0;
      eachRecord(bytes, (p) => {
        if (d.send(p)) sent++;
        else dropped++;
        return true;
      });
      if (sent) this.metrics.sent.inc({ destination: name }, sent);
      if (dropped) this.metrics.dropped.inc({ destination: name }, dropped);
    }
  }

  stop(): void {
    for (const { d } of this.dests) d.close();
    this.dests.length = 0;
  }
}

async function udpDestination(hostname: string, port: number): Promise<Destination> {
  const sock = await Bun.udpSocket({ connect: { hostname, port } });
  return {
    send: (p) => {
      try {
        return sock.send(p);
      } catch {
        return false; // ICMP unreachable surfaces as an error on the next send
      }
    },
    close: () => sock.close(),
  };
}

function tcpDestination(hostname: string, port: number, queueBytes: number, logger: Logger): Destination {
  type Sock = Awaited<ReturnType<typeof Bun.connect>>;
  let sock: Sock | undefined;
  let connecting = false;
  let closed = false;
  let queued: Uint8Array[] = [];
  let queuedBytes = 0;
  let backoffMs = 250;
  const flush = () => {
    while (sock && queued.length > 0) {
      const head = queued[0]!;
      const n = sock.write(head);
      if (n < head.length) {
        queued[0] = head.subarray(Math.max(0, n));
        queuedBytes -= Math.max(0, n);
        return;
      }
      queued.shift();
      queuedBytes -= head.length;
    }
  };
  const connect = () => {
    if (closed || connecting) return;
    connecting = true;
    Bun.connect({
      hostname,
      port,
      socket: {
        open: (s) => {
          sock = s;
          connecting = false;
          backoffMs = 250;
          flush();
        },
        drain: () => flush(),
        data: () => {},
        close: () => lost(),
        error: () => lost(),
        connectError: () => lost(),
      },
    }).catch(() => lost());
  };
  const lost = () => {
    if (sock === undefined && !connecting) return;
    sock = undefined;
    connecting = false;
    // What waited for this connection is dropped: a live copy, not a delivery guarantee.
    queued = [];
    queuedBytes = 0;
    if (closed) return;
    logger.debug("mirror connection lost; reconnecting", { backoff_ms: backoffMs });
    setTimeout(connect, backoffMs * (0.5 + Math.random() / 2)).unref?.();
    backoffMs = Math.min(30_000, backoffMs * 2);
  };
  connect();
  return {
    send: (p) => {
      if (!sock || queuedBytes + p.length > queueBytes) return false;
      if (queued.length === 0) {
        const n = sock.write(p);
        if (n === p.length) return true;
        const rest = p.slice(Math.max(0, n));
        queued.push(rest);
        queuedBytes += rest.length;
        return true;
      }
      const copy = p.slice();
      queued.push(copy);
      queuedBytes += copy.length;
      return true;
    },
    close: () => {
      closed = true;
      sock?.end();
      sock = undefined;
    },
  };
}
