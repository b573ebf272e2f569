import type { Socket, TCPSocketListener } from "bun";
import { hepFrameLength } from "../../hep/index.ts";
import { formatAddress, listenError, parseListen, type Counter, type Logger } from "../../core/index.ts";
import type { HepPipeline, Transport } from "../pipeline.ts";
import type { BoundListener } from "./udp.ts";

export interface TcpListenerOptions {
  listen: string;
  maxConnections: number;
  /** Concurrent connections from one source address (`ingest.hep.tcp.max_connections_per_ip`). */
  maxConnectionsPerIp: number;
  /** A connection that sends nothing for this long is closed (`ingest.hep.tcp.idle_timeout_sec`). */
  idleTimeoutMs: number;
  maxBufferBytes: number;
  /** TLS material: both set → HEP over TLS. */
  tls?: { cert: string; key: string };
}

interface Conn {
  /** Bytes of an incomplete frame carried over to the next read. */
  rest: Uint8Array | null;
  /** Source address the per-IP count is kept under. */
  ip: string;
  /** When the connection last sent bytes (ms since the epoch). */
  lastReadMs: number;
}

/**
 * Why svc closed or refused a HEP stream connection (label `reason` of
 * svc_hep_connections_closed_total). Closes by the agent are not counted there.
 */
export type ConnectionCloseReason = "idle_timeout" | "per_ip_limit" | "max_connections" | "frame_too_large";

/** An IPv4 client of a dual-stack socket shows as `::ffff:a.b.c.d`: one host, one count. */
const sourceIp = (remote: string): string => (remote.startsWith("::ffff:") && remote.includes(".") ? remote.slice(7) : remote);

/** How often idle connections are looked for: a quarter of the timeout, between 100 ms and 5 s. */
const sweepIntervalMs = (idleTimeoutMs: number) => Math.min(5000, Math.max(100, Math.floor(idleTimeoutMs / 4)));

const MAGIC = [0x48, 0x45, 0x50, 0x33]; // "HEP3"

/** Offset of the next "HEP3" at or after `from`, or -1. */
function findMagic(buf: Uint8Array, from: number): number {
  for (let i = from; i + 3 < buf.length; i++) {
    if (buf[i] === MAGIC[0] && buf[i + 1] === MAGIC[1] && buf[i + 2] === MAGIC[2] && buf[i + 3] === MAGIC[3]) return i;
  }
  return -1;
}

/**
 * HEP over TCP/TLS: a stream of back-to-back HEP3 packets (length in octets 4-5). A frame split
 * across reads is carried over; garbage between frames is skipped up to the next "HEP3" and counted.
 *
 * Slots are limited (docs/ARCHITECTURE.md "HEP stream connections"): at most `maxConnections` in
 * all and `maxConnectionsPerIp` per source address, and a connection that sends nothing for
 * `idleTimeoutMs` is closed, so sockets opened and left idle cannot keep real agents out. Every
 * connection svc refuses or closes is counted per reason.
 */
export function createTcpListener(
  pipeline: HepPipeline,
  opts: TcpListenerOptions,
  logger: Logger,
  counters: { connections: Counter<"transport">; resync: Counter<"transport">; closed: Counter<"transport" | "reason"> },
): BoundListener {
  const transport: Transport = opts.tls ? "tls" : "tcp";
  let server: TCPSocketListener<Conn> | undefined;
  let open = 0;
  const sockets = new Set<Socket<Conn>>();
  const perIp = new Map<string, number>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  /** Refusals not logged yet: a flood of connections logs one line per 10 s, not one each. */
  let unlogged = 0;
  let lastRefusalLogMs = 0;

  /** Forgets an accepted connection (its slot and its per-IP count); false when it was not counted. */
  const release = (s: Socket<Conn>): boolean => {
    if (!sockets.delete(s)) return false;
    open--;
    const n = (perIp.get(s.data.ip) ?? 1) - 1;
    if (n > 0) perIp.set(s.data.ip, n);
    else perIp.delete(s.data.ip);
    return true;
  };

  /**
   * Closes a connection svc does not want. terminate(), not end(): a peer that never answers our
   * FIN would keep a half-closed socket (and its file descriptor) for as long as it likes.
   */
  const drop = (s: Socket<Conn>, reason: ConnectionCloseReason) => {
    release(s);
    counters.closed.inc({ transport, reason });
    s.terminate();
  };

  const sweep = () => {
    const before = Date.now() - opts.idleTimeoutMs;
    for (const s of sockets) {
      if (s.data.lastReadMs > before) continue;
      logger.info("HEP connection idle; closing", { remote: s.remoteAddress, idle_timeout_sec: opts.idleTimeoutMs / 1000 });
      drop(s, "idle_timeout");
    }
  };

  const consume = (s: Socket<Conn>, chunk: Uint8Array) => {
    // Once per read (many frames), not per packet.
    s.data.lastReadMs = Date.now();
    let buf = chunk;
    if (s.data.rest) {
      const merged = new Uint8Array(s.data.rest.length + chunk.length);
      merged.set(s.data.rest);
      merged.set(chunk, s.data.rest.length);
      buf = merged;
      s.data.rest = null;
    }
    let off = 0;
    while (off < buf.length) {
      const len = hepFrameLength(buf, off);
      if (len === "need_more") break;
      if (len === "invalid") {
        const next = findMagic(buf, off + 1);
        counters.resync.inc({ transport });
        if (next < 0) {
          // keep a possible partial magic at the end
          off = Math.max(off + 1, buf.length - 3);
          break;
        }
        off = next;
        continue;
      }
      pipeline.handlePacket(buf.subarray(off, off + len), transport, s.remoteAddress);
      off += len;
    }
    if (off < buf.length) {
      if (buf.length - off > opts.maxBufferBytes) {
        logger.warn("HEP TCP frame larger than the per-connection buffer; closing", { remote: s.remoteAddress });
        drop(s, "frame_too_large");
        return;
      }
      s.data.rest = buf.slice(off);
    }
  };

  return {
    name: opts.tls ? "hep-tls" : "hep-tcp",
    async start() {
      const key = opts.tls ? "ingest.hep.tls.listen" : "ingest.hep.tcp.listen";
      const addr = parseListen(opts.listen, key);
      const name = opts.tls ? "hep-tls" : "hep-tcp";
      try {
        server = listen(addr);
      } catch (e) {
        throw listenError(name, opts.listen, key, e);
      }
      sweeper = setInterval(sweep, sweepIntervalMs(opts.idleTimeoutMs));
      sweeper.unref?.();
      logger.info("listening", { module: name, address: formatAddress(addr.hostname, server.port) });
    },
    async stop() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      server?.stop(true);
      for (const s of sockets) s.end();
      sockets.clear();
      perIp.clear();
      open = 0;
      server = undefined;
    },
    port: () => server?.port ?? 0,
  };

  function listen(addr: { hostname: string; port: number }): TCPSocketListener<Conn> {
    return Bun.listen<Conn>({
      hostname: addr.hostname,
      port: addr.port,
      ...(opts.tls ? { tls: { cert: Bun.file(opts.tls.cert), key: Bun.file(opts.tls.key) } } : {}),
      socket: {
        open(s) {
          const ip = sourceIp(s.remoteAddress);
          const fromIp = perIp.get(ip) ?? 0;
          if (fromIp >= opts.maxConnectionsPerIp || open >= opts.maxConnections) {
            const reason = fromIp >= opts.maxConnectionsPerIp ? "per_ip_limit" : "max_connections";
            counters.closed.inc({ transport, reason });
            unlogged++;
            const now = Date.now();
            if (now - lastRefusalLogMs >= 10_000) {
              logger.warn("too many HEP connections; refusing", { remote: s.remoteAddress, reason, refused: unlogged, max: opts.maxConnections, max_per_ip: opts.maxConnectionsPerIp });
              lastRefusalLogMs = now;
              unlogged = 0;
            }
            s.terminate();
            return;
          }
          open++;
          perIp.set(ip, fromIp + 1);
          sockets.add(s);
          s.data = { rest: null, ip, lastReadMs: Date.now() };
          counters.connections.inc({ transport });
        },
        // Present so that Bun calls open() at accept for TLS too: without a handshake handler it
        // waits for the handshake, and a client that never sends a ClientHello would hold its
        // socket unseen by the limits and the idle sweep.
        handshake() {},
        data(s, chunk) {
          consume(s, chunk);
        },
        close(s) {
          release(s);
        },
        error(s, err) {
          logger.debug("HEP connection error", { remote: s.remoteAddress, error: err.message });
        },
      },
    });
  }
}
