import type { Socket, TCPSocketListener } from "bun";
import { HEP_DECODE_REASONS, hepFrameLength } from "../../hep/index.ts";
import { AppError, formatAddress, listenError, parseListen, type Counter, type Logger } from "../../core/index.ts";
import { AUTH_FAILED, type HepPipeline, type Transport } from "../pipeline.ts";
import type { KnownAddressBook } from "./known-addresses.ts";
import { SharedConnectionSlots, sharedSlotLimits } from "./shared-slots.ts";
import { ConnectionSlots, reservedSlots, type RefusalReason, type SlotLimits, type SlotTable } from "./slots.ts";
import type { BoundListener } from "./udp.ts";

export interface TcpListenerOptions {
  listen: string;
  maxConnections: number;
  /** Concurrent connections from one source address (`ingest.hep.tcp.max_connections_per_ip`). */
  maxConnectionsPerIp: number;
  /** Percent of maxConnections only known addresses may take (`ingest.hep.tcp.reserved_for_known_percent`). */
  reservedForKnownPercent: number;
  /** A connection that completes no valid HEP frame for this long is closed (`ingest.hep.tcp.idle_timeout_sec`). */
  idleTimeoutMs: number;
  /** A frame whose first byte came this long ago and that is still incomplete closes its connection (`ingest.hep.tcp.frame_timeout_sec`). */
  frameTimeoutMs: number;
  maxBufferBytes: number;
  /**
   * Addresses that sent valid HEP recently; shared by the TCP and TLS listeners (ingest.ts), and by
   * every thread's listeners through a SharedKnownAddresses (shared-known.ts).
   */
  known: KnownAddressBook;
  /** TLS material: both set → HEP over TLS. */
  tls?: { cert: string; key: string };
  /**
   * Slot state shared with the same listener on other threads (createSharedSlots, made with the
   * limits above; a mismatch is refused): the limits then hold over all of them. Unset: this
   * listener's own table (docs/ARCHITECTURE.md "Slots over several threads").
   */
  shared?: SharedArrayBuffer;
  /** This thread's row of `shared` (0 .. threads-1, one listener per row); default 0. */
  threadIndex?: number;
  /** Bind with SO_REUSEPORT so that every thread's listener takes the same port (docs/ARCHITECTURE.md "Slots over several threads"). */
  reusePort?: boolean;
}

interface Conn {
  /** Bytes of an incomplete frame carried over to the next read. */
  rest: Uint8Array | null;
  /** Source address the per-IP count is kept under. */
  ip: string;
  /** When the connection last completed a valid HEP frame, or was accepted (ms since the epoch). */
  lastFrameMs: number;
  /** When the first byte of the incomplete frame in `rest` arrived (meaningful while `rest` is set). */
  frameStartMs: number;
  /** Whether the connection has completed a valid frame (then it is never evicted). */
  proven: boolean;
}

/**
 * Why svc closed or refused a HEP stream connection (label `reason` of
 * svc_hep_connections_closed_total). Closes by the agent are not counted there.
 */
export type ConnectionCloseReason =
  | RefusalReason
  | "evicted_for_known"
  | "idle_timeout"
  | "frame_timeout"
  | "frame_too_large";

/** Drop reasons of a frame that is not valid HEP for us: it neither resets the idle time nor makes its address known. */
const NOT_VALID = new Set<string>([...HEP_DECODE_REASONS, AUTH_FAILED]);

/** An IPv4 client of a dual-stack socket shows as `::ffff:a.b.c.d`: one host, one count. */
const sourceIp = (remote: string): string =>
  remote.startsWith("::ffff:") && remote.includes(".") ? remote.slice(7) : remote;

/** How often the time-outs are checked: a quarter of the shorter one, between 100 ms and 5 s. */
const sweepIntervalMs = (timeoutMs: number) => Math.min(5000, Math.max(100, Math.floor(timeoutMs / 4)));

/** A flood of refusals or closes logs one line per this long, not one each. */
const LOG_EVERY_MS = 10_000;

const MAGIC = [0x48, 0x45, 0x50, 0x33]; // "HEP3"

/** Offset of the next "HEP3" at or after `from`, or -1. */
function findMagic(buf: Uint8Array, from: number): number {
  for (let i = from; i + 3 < buf.length; i++) {
    if (buf[i] === MAGIC[0] && buf[i + 1] === MAGIC[1] && buf[i + 2] === MAGIC[2] && buf[i + 3] === MAGIC[3]) return i;
  }
  return -1;
}

/** This thread's handle on the shared slots, whose limits must be the listener's (both come from `ingest.hep.tcp`). */
function sharedSlotTable<T>(buffer: SharedArrayBuffer, threadIndex: number, limits: SlotLimits): SlotTable<T> {
  const l = sharedSlotLimits(buffer);
  if (
    l.maxConnections !== limits.maxConnections ||
    l.maxConnectionsPerIp !== limits.maxConnectionsPerIp ||
    l.reservedForKnown !== limits.reservedForKnown
  ) {
    throw new AppError(
      "INTERNAL",
      `shared HEP stream slots were made for other limits (${JSON.stringify(l)}) than the listener's (${JSON.stringify(limits)})`,
    );
  }
  return new SharedConnectionSlots<T>(buffer, threadIndex);
}

/**
 * HEP over TCP/TLS: a stream of back-to-back HEP3 packets (length in octets 4-5). A frame split
 * across reads is carried over; garbage between frames is skipped up to the next "HEP3" and counted.
 *
 * Slots are limited (docs/ARCHITECTURE.md "HEP stream connections"): at most `maxConnections` in
 * all and `maxConnectionsPerIp` per source address; a share of the slots is kept for addresses
 * that sent valid HEP recently, and when every slot is taken such an address gets the slot of the
 * oldest connection that never sent a valid frame. Idle time runs from the last complete valid
 * frame, not the last byte, and a frame must complete within `frameTimeoutMs`: a trickle of bytes
 * (slow-loris) does not hold a slot. Every connection svc refuses or closes is counted per reason.
 * With `opts.shared` the limits hold over every thread's listener of the port; eviction picks from
 * this listener's own connections (docs/ARCHITECTURE.md "Slots over several threads").
 */
export function createTcpListener(
  pipeline: HepPipeline,
  opts: TcpListenerOptions,
  logger: Logger,
  counters: {
    connections: Counter<"transport">;
    resync: Counter<"transport">;
    closed: Counter<"transport" | "reason">;
  },
): BoundListener {
  const transport: Transport = opts.tls ? "tls" : "tcp";
  let server: TCPSocketListener<Conn> | undefined;
  const limits = {
    maxConnections: opts.maxConnections,
    maxConnectionsPerIp: opts.maxConnectionsPerIp,
    reservedForKnown: reservedSlots(opts.maxConnections, opts.reservedForKnownPercent),
  };
  const slots: SlotTable<Socket<Conn>> = opts.shared
    ? sharedSlotTable(opts.shared, opts.threadIndex ?? 0, limits)
    : new ConnectionSlots<Socket<Conn>>(limits);
  let sweeper: ReturnType<typeof setInterval> | undefined;
  /** Refusals and evictions not logged yet, per reason (logged together once per LOG_EVERY_MS). */
  const unlogged = new Map<ConnectionCloseReason, number>();
  let lastLogMs = 0;

  const noteClose = (reason: ConnectionCloseReason, nowMs: number) => {
    counters.closed.inc({ transport, reason });
    unlogged.set(reason, (unlogged.get(reason) ?? 0) + 1);
    if (nowMs - lastLogMs < LOG_EVERY_MS) return;
    logger.warn("HEP stream connections refused or closed by svc", {
      transport,
      ...Object.fromEntries(unlogged),
      open: slots.size,
      ...(opts.shared ? { open_all_threads: slots.total } : {}),
      max: slots.limits.maxConnections,
      max_per_ip: slots.limits.maxConnectionsPerIp,
    });
    unlogged.clear();
    lastLogMs = nowMs;
  };

  /**
   * Closes a connection svc does not want. terminate(), not end(): a peer that never answers our
   * FIN would keep a half-closed socket (and its file descriptor) for as long as it likes.
   */
  const drop = (s: Socket<Conn>, reason: ConnectionCloseReason, nowMs = Date.now()) => {
    slots.release(s, s.data.ip);
    noteClose(reason, nowMs);
    s.terminate();
  };

  const sweep = () => {
    const now = Date.now();
    for (const s of slots.connections()) {
      if (now - s.data.lastFrameMs >= opts.idleTimeoutMs) drop(s, "idle_timeout", now);
      else if (s.data.rest && now - s.data.frameStartMs >= opts.frameTimeoutMs) drop(s, "frame_timeout", now);
    }
  };

  const consume = (s: Socket<Conn>, chunk: Uint8Array) => {
    // Once per read (many frames), not per packet.
    const now = Date.now();
    let buf = chunk;
    const carried = s.data.rest !== null;
    if (s.data.rest) {
      const merged = new Uint8Array(s.data.rest.length + chunk.length);
      merged.set(s.data.rest);
      merged.set(chunk, s.data.rest.length);
      buf = merged;
      s.data.rest = null;
    }
    let valid = false;
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
      const dropped = pipeline.handlePacket(buf.subarray(off, off + len), transport, s.remoteAddress);
      // A frame kept out by a full backlog was still valid HEP from a real agent.
      if (dropped === undefined || !NOT_VALID.has(dropped)) valid = true;
      off += len;
    }
    if (valid) {
      s.data.lastFrameMs = now;
      if (!s.data.proven) {
        s.data.proven = true;
        slots.prove(s);
      }
      opts.known.remember(s.data.ip, now);
    }
    if (off < buf.length) {
      if (buf.length - off > opts.maxBufferBytes) {
        logger.warn("HEP TCP frame larger than the per-connection buffer; closing", { remote: s.remoteAddress });
        drop(s, "frame_too_large", now);
        return;
      }
      // The frame's clock starts with its first byte: kept while the same frame is still coming.
      if (!carried || off > 0) s.data.frameStartMs = now;
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
      sweeper = setInterval(sweep, sweepIntervalMs(Math.min(opts.idleTimeoutMs, opts.frameTimeoutMs)));
      sweeper.unref?.();
      logger.info("listening", { module: name, address: formatAddress(addr.hostname, server.port) });
    },
    async stop() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      server?.stop(true);
      for (const s of slots.connections()) s.end();
      slots.clear();
      server = undefined;
    },
    port: () => server?.port ?? 0,
  };

  function listen(addr: { hostname: string; port: number }): TCPSocketListener<Conn> {
    // bun-types 1.4.5 lists reusePort for Bun.connect only; Bun.listen honours it (docs/ARCHITECTURE.md "Slots over several threads").
    const reuse: { reusePort?: boolean } = opts.reusePort ? { reusePort: true } : {};
    return Bun.listen<Conn>({
      hostname: addr.hostname,
      port: addr.port,
      ...reuse,
      ...(opts.tls ? { tls: { cert: Bun.file(opts.tls.cert), key: Bun.file(opts.tls.key) } } : {}),
      socket: {
        open(s) {
          const ip = sourceIp(s.remoteAddress);
          const now = Date.now();
          const admission = slots.admit(ip, opts.known.has(ip, now));
          if (!admission.ok) {
            noteClose(admission.reason, now);
            s.terminate();
            return;
          }
          if (admission.evict) drop(admission.evict, "evicted_for_known", now);
          slots.add(s, ip);
          s.data = { rest: null, ip, lastFrameMs: now, frameStartMs: now, proven: false };
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
          // A refused socket has no data: release() finds no slot for it.
          if (s.data) slots.release(s, s.data.ip);
        },
        error(s, err) {
          logger.debug("HEP connection error", { remote: s.remoteAddress, error: err.message });
        },
      },
    });
  }
}
