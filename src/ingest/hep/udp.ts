import { formatAddress, listenError, parseListen, type Counter, type Logger, type Module } from "../../core/index.ts";
import { socketDrops, socketInode } from "./udp-drops.ts";
import type { HepPipeline } from "../pipeline.ts";
import { setReceiveBuffer } from "./sockopt.ts";
import { openBatchSocket, type BatchSocket, type SocketGroup } from "./udp-batch.ts";

export interface UdpListenerOptions {
  listen: string;
  socketBufferBytes: number;
  /** Read datagrams in batches with recvmmsg(2) where available (udp-batch.ts); false: Bun's socket. */
  batchReceive: boolean;
  /** Where the socket's kernel drops are counted (udp-drops.ts), checked every DROPS_POLL_MS. */
  kernelDrops?: Counter;
  /**
   * This thread's place among several ingest threads sharing the port (docs/ARCHITECTURE.md
   * "Several ingest threads"). Only the batch socket can share it: with Bun's socket (a host name,
   * or `batch_receive` off) only thread 0 listens.
   */
  group?: SocketGroup & { index: number };
}

const DROPS_POLL_MS = 1000;

export interface BoundListener extends Module {
  port(): number;
  /**
   * File descriptors this listener opened itself (the batch socket), which nothing but its close()
   * releases: if the thread that owns them dies, its owner must close them (ingest/thread/host.ts), or
   * the port stays bound and the restarted listener cannot bind it.
   */
  ownedFds?(): number[];
  /**
   * Reads every datagram waiting on the socket now (at most DRAIN_MS): the ingest thread calls it
   * just before each hand-over, so what was sent before a hand-over is in it. The live stream of
   * several threads relies on that to settle events (docs/STREAM.md "Several ingest threads"):
   * an idle thread polls only every 20 ms. Says whether the socket was left empty: not when the
   * drain ran out of time, nor when it is called from inside a packet (the read is under way).
   */
  drain?(): boolean;
}

/** The longest a hand-over's drain reads; under overload the rest waits for the next turn. */
const DRAIN_MS = 20;

/**
 * How long one turn of the batch reader may run before the event loop gets the thread (TCP
 * agents, timers, messages from the main thread share it), and how long it waits when the socket
 * is empty: 1 ms while traffic flows, 20 ms after a second of silence (the receive buffer holds
 * far more than that: 20 ms at 100 k msgs/s is 1.7 MB). Each wake-up of an idle Bun thread costs
 * ≈ 100-150 µs, so an idle listener takes ≈ 0.4 % of a core against 0.1 % for Bun's socket
 * (measured 2026-11-25); tried and dropped: draining with this reader only after Bun's socket
 * woke us (no polling when idle) was slower than Bun's socket alone, 9.0 against 8.6 µs per
 * packet at 90 k msgs/s: Bun reads most datagrams itself and each drain adds an empty call.
 */
const TURN_MS = 4;
const IDLE_WAIT_MS = [1, 20] as const;
const IDLE_POLLS_BEFORE_SLOW = 1000;

/** HEP over UDP: one datagram = one packet, handled synchronously as it is read. */
export function createUdpListener(pipeline: HepPipeline, opts: UdpListenerOptions, logger: Logger): BoundListener {
  let socket: Bun.udp.Socket<"uint8array"> | undefined;
  let batch: BatchSocket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let idlePolls = 0;
  let errors = 0;
  let dropsTimer: ReturnType<typeof setInterval> | undefined;
  /** The socket's inode and the drop count already counted. */
  let watched: { inode: number; seen: number } | undefined;

  /** Adds the socket's new kernel drops to the counter. */
  const countDrops = () => {
    if (!watched || !opts.kernelDrops) return;
    const now = socketDrops(watched.inode);
    if (now === undefined || now <= watched.seen) return;
    opts.kernelDrops.inc(undefined, now - watched.seen);
    watched.seen = now;
  };
  // A UDP datagram carries at most 65 507 bytes of payload.
  const scratch = new Uint8Array(new ArrayBuffer(65536));

  const socketError = (message: string) => {
    // ICMP port-unreachable and friends; without a handler each one prints a stack.
    if (errors++ % 1000 === 0) logger.warn("udp socket error", { error: message, count: errors });
  };

  /**
   * Reads what is waiting on `s` until it is empty or `ms` have passed; the datagrams read. Not
   * again from inside a packet (a batch that comes due hands over from there): the socket's one
   * buffer holds the datagrams still being handled.
   */
  let reading = false;
  /** Whether the last read found the socket empty (false while reading, or after a read cut short). */
  let emptied = false;
  const readFor = (s: BatchSocket, ms: number): number => {
    if (reading) return 0;
    reading = true;
    emptied = false;
    try {
      const until = performance.now() + ms;
      let got = 0;
      for (;;) {
        const n = s.receive();
        if (n < 0) socketError(`recvmmsg errno ${-n}`);
        if (n <= 0) {
          emptied = n === 0;
          return got;
        }
        got += n;
        for (let i = 0; i < n; i++) pipeline.handlePacket(s.datagram(i), "udp", s.sender(i), s.receivedAtMs(i));
        if (performance.now() >= until) return got;
      }
    } finally {
      reading = false;
    }
  };

  /** Reads what is waiting, for at most TURN_MS, then gives the event loop a turn. */
  const pump = () => {
    timer = undefined;
    const s = batch;
    if (!s) return;
    const until = performance.now() + TURN_MS;
    const got = readFor(s, TURN_MS);
    if (got > 0) idlePolls = 0;
    else idlePolls++;
    if (batch !== s) return;
    // Still busy: straight back after the event loop's turn. Empty: look again shortly.
    if (got > 0 && performance.now() >= until) setImmediate(pump);
    else timer = setTimeout(pump, idlePolls < IDLE_POLLS_BEFORE_SLOW ? IDLE_WAIT_MS[0] : IDLE_WAIT_MS[1]);
  };

  const startBatch = (hostname: string, port: number): BatchSocket | undefined => {
    const s = openBatchSocket(hostname, port, opts.group);
    if (!s) return undefined;
    batch = s;
    idlePolls = 0;
    timer = setTimeout(pump, 0);
    return s;
  };

  const startBun = async (hostname: string, port: number) => {
    const sock = await Bun.udpSocket({
      hostname,
      port,
      binaryType: "uint8array",
      socket: {
        data(_s, data, _port, address) {
          // Copied into one reused buffer first: the first view (DataView, subarray) of the
          // socket's fresh Uint8Array makes JSC materialise an ArrayBuffer for it, which cost
          // more than this memcpy (≈ 1 µs of 8 per packet, bench/ingest-path.ts). Nothing
          // keeps the packet's bytes past handlePacket (rows copy them).
          scratch.set(data);
          pipeline.handlePacket(scratch.subarray(0, data.length), "udp", address);
        },
        error(_s, err) {
          socketError(err.message);
        },
      },
    });
    socket = sock;
    return sock;
  };

  return {
    name: "hep-udp",
    async start() {
      const key = "ingest.hep.udp.listen";
      const addr = parseListen(opts.listen, key);
      let b: BatchSocket | undefined;
      let fd: number | undefined;
      try {
        b = opts.batchReceive ? startBatch(addr.hostname, addr.port) : undefined;
        if (!b && opts.group && opts.group.index > 0) {
          logger.info(
            "UDP stays on ingest thread 0: only the batch reader can share a port (an IP literal in listen, batch_receive on)",
            { module: "hep-udp" },
          );
          return;
        }
        // `fd` exists at run time on Bun's socket but is not in bun-types (checked with Bun 1.4.5).
        fd = b ? b.fd : ((await startBun(addr.hostname, addr.port)) as unknown as { fd?: number }).fd;
      } catch (e) {
        throw listenError("hep-udp", opts.listen, key, e);
      }
      const effective =
        opts.socketBufferBytes > 0 && fd !== undefined ? setReceiveBuffer(fd, opts.socketBufferBytes) : undefined;
      const inode = fd !== undefined && opts.kernelDrops ? socketInode(fd) : undefined;
      if (inode !== undefined) {
        watched = { inode, seen: socketDrops(inode) ?? 0 };
        dropsTimer = setInterval(countDrops, DROPS_POLL_MS);
        dropsTimer.unref?.();
      }
      if (effective !== undefined && effective < opts.socketBufferBytes) {
        logger.warn(
          "UDP receive buffer smaller than requested: bursts may be lost; raise net.core.rmem_max or grant CAP_NET_ADMIN",
          {
            requested: opts.socketBufferBytes,
            effective,
          },
        );
      }
      // One line per port, not one per thread sharing it.
      logger[(opts.group?.index ?? 0) === 0 ? "info" : "debug"]("listening", {
        module: "hep-udp",
        address: formatAddress(addr.hostname, this.port()),
        receive_buffer: effective,
        reader: b ? "recvmmsg" : "bun",
        ...(opts.group && opts.group.size > 1 ? { threads: opts.group.size } : {}),
      });
    },
    async stop() {
      if (dropsTimer) clearInterval(dropsTimer);
      dropsTimer = undefined;
      countDrops();
      watched = undefined;
      if (timer) clearTimeout(timer);
      timer = undefined;
      // What is already waiting in the socket was accepted by the kernel: take it before closing.
      if (batch) pump();
      if (timer) clearTimeout(timer);
      timer = undefined;
      batch?.close();
      batch = undefined;
      socket?.close();
      socket = undefined;
    },
    port: () => batch?.port ?? socket?.port ?? 0,
    ownedFds: () => (batch ? [batch.fd] : []),
    drain() {
      if (!batch) return true;
      if (reading) return false;
      readFor(batch, DRAIN_MS);
      return emptied;
    },
  };
}
