import type { Socket, TCPSocketListener } from "bun";
import { hepFrameLength } from "../../hep/index.ts";
import { formatAddress, listenError, parseListen, type Counter, type Logger } from "../../core/index.ts";
import type { HepPipeline, Transport } from "../pipeline.ts";
import type { BoundListener } from "./udp.ts";

export interface TcpListenerOptions {
  listen: string;
  maxConnections: number;
  maxBufferBytes: number;
  /** TLS material: both set → HEP over TLS. */
  tls?: { cert: string; key: string };
}

interface Conn {
  /** Bytes of an incomplete frame carried over to the next read. */
  rest: Uint8Array | null;
}

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
 */
export function createTcpListener(
  pipeline: HepPipeline,
  opts: TcpListenerOptions,
  logger: Logger,
  counters: { connections: Counter<"transport">; resync: Counter<"transport"> },
): BoundListener {
  const transport: Transport = opts.tls ? "tls" : "tcp";
  let server: TCPSocketListener<Conn> | undefined;
  let open = 0;
  const sockets = new Set<Socket<Conn>>();

  const consume = (s: Socket<Conn>, chunk: Uint8Array) => {
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
        s.end();
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
      logger.info("listening", { module: name, address: formatAddress(addr.hostname, server.port) });
    },
    async stop() {
      server?.stop(true);
      for (const s of sockets) s.end();
      sockets.clear();
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
          if (open >= opts.maxConnections) {
            logger.warn("too many HEP connections; refusing", { remote: s.remoteAddress, max: opts.maxConnections });
            s.end();
            return;
          }
          open++;
          sockets.add(s);
          s.data = { rest: null };
          counters.connections.inc({ transport });
        },
        data(s, chunk) {
          consume(s, chunk);
        },
        close(s) {
          if (sockets.delete(s)) open--;
        },
        error(s, err) {
          logger.debug("HEP connection error", { remote: s.remoteAddress, error: err.message });
        },
      },
    });
  }
}
