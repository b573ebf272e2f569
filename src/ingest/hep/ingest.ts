/**
 * HEP ingest on one thread: the pipeline (decode, SIP parse, rows into a Sink) and the UDP, TCP and
 * TLS listeners feeding it. The ingest thread (src/ingest/thread/) runs the same pieces on a worker.
 */
import type { Config } from "../../config/index.ts";
import { formatAddress, parseListen, type Logger, type MetricsRegistry, type Module } from "../../core/index.ts";
import { HepPipeline, pipelineMetrics, type Sink } from "../pipeline.ts";
import { KnownAddresses, type KnownAddressBook } from "./known-addresses.ts";
import { createSharedKnown, SharedKnownAddresses } from "./shared-known.ts";
import { createSharedSlots, releaseThread } from "./shared-slots.ts";
import { reservedSlots } from "./slots.ts";
import { createTcpListener } from "./tcp.ts";
import { createUdpListener, type BoundListener } from "./udp.ts";
import type { ForwardDecoded } from "../forward/hep-records.ts";

export interface HepIngest {
  pipeline: HepPipeline;
  /** Pipeline first (defines tables), then listeners; stopped in reverse. */
  modules: Module[];
  listeners: { udp?: BoundListener; tcp?: BoundListener; tls?: BoundListener };
  /** The ingest threads when the listeners run on workers (`ingest.hep.threads` ≥ 1): for /health, diagnostics and tests. */
  thread?: {
    readonly count: number;
    /** Thread `i`'s running worker (0 when not given). */
    worker(i?: number): Worker | undefined;
    /** Epoch ms of the oldest last message over the threads (every seal interval); undefined while one is not running. */
    lastHeardMs(): number | undefined;
    states(): Array<{
      index: number;
      lastHeardMs: number | undefined;
      cpuShare: number | undefined;
      kernelDropsLastMinute: number;
    }>;
  };
  /** HEP over HTTP on the ingest threads (the in-process pipeline without them). */
  http?: (
    body: Uint8Array,
    remoteIp: string | undefined,
  ) => Promise<{ accepted: number; rejected: Record<string, number>; unframed?: string }>;
  /** A central's forward batch decoded on the ingest threads (host.ts decodeForward); undefined result: no thread runs. */
  forward?: (
    body: Uint8Array,
    skip: number,
    room: number,
    remoteIp: string | undefined,
  ) => Promise<ForwardDecoded> | undefined;
}

/** The HEP pipeline over `sink` (decode, SIP parse, routing, rows; counters in `metrics`). */
/** `clockTable`: the agents' clock offsets shared by several ingest threads (clock-table.ts). */
export function createHepPipeline(
  cfg: Config["ingest"],
  sink: Sink,
  logger: Logger,
  metrics: MetricsRegistry,
  opts: { clockTable?: SharedArrayBuffer } = {},
): HepPipeline {
  return new HepPipeline(
    sink,
    {
      customHeaders: cfg.sip.custom_headers,
      correlationHeaders: cfg.sip.correlation_headers,
      authKey: cfg.hep.auth_key,
      maxSkewMs: cfg.hep.max_clock_skew_sec * 1000,
      maxAgeMs: cfg.hep.max_age_days * 86_400_000,
      timeShift: {
        enable: cfg.hep.time_shift.enable,
        maxAheadMs: cfg.hep.time_shift.max_ahead_sec * 1000,
        reanchorGapMs: cfg.hep.time_shift.reanchor_gap_sec * 1000,
        maxSources: cfg.hep.time_shift.max_sources,
      },
      ...(opts.clockTable ? { clockTable: opts.clockTable } : {}),
    },
    pipelineMetrics(metrics),
    logger,
  );
}

/** Counters of the stream listeners (registered on every thread that reports them). */
export function listenerMetrics(metrics: MetricsRegistry) {
  return {
    connections: metrics.counter("svc_hep_connections_total", "HEP stream connections accepted, per transport.", [
      "transport",
    ]),
    resync: metrics.counter(
      "svc_hep_stream_resync_total",
      "Times a HEP stream had bytes that were not a HEP3 frame and was resynchronised.",
      ["transport"],
    ),
    closed: metrics.counter(
      "svc_hep_connections_closed_total",
      "HEP stream connections svc refused or closed, per transport and reason: max_connections, per_ip_limit and reserved_for_known (refused at accept), evicted_for_known (a connection that never sent a valid frame, closed to let in an address that has), idle_timeout (no valid HEP frame completed for ingest.hep.tcp.idle_timeout_sec), frame_timeout (a frame not complete within ingest.hep.tcp.frame_timeout_sec), frame_too_large (over max_buffer_bytes). Closes by the agent are not counted.",
      ["transport", "reason"],
    ),
    kernelDrops: metrics.counter(
      "svc_hep_udp_kernel_drops_total",
      "HEP datagrams the kernel dropped before the UDP listener read them (receive buffer full: raise ingest.hep.udp.socket_buffer_bytes or find what starves the ingest thread); read from /proc/net/udp every second.",
    ),
  };
}

/**
 * Connection limits of the TCP and TLS listeners (both from `ingest.hep.tcp`). They share one
 * memory of known addresses: an agent that sent valid HEP over one is known to the other.
 */
const streamLimits = (cfg: Config["ingest"], known: KnownAddressBook) => ({
  maxConnections: cfg.hep.tcp.max_connections,
  maxConnectionsPerIp: cfg.hep.tcp.max_connections_per_ip,
  reservedForKnownPercent: cfg.hep.tcp.reserved_for_known_percent,
  idleTimeoutMs: cfg.hep.tcp.idle_timeout_sec * 1000,
  frameTimeoutMs: cfg.hep.tcp.frame_timeout_sec * 1000,
  maxBufferBytes: cfg.hep.tcp.max_buffer_bytes,
  known,
});

/**
 * Where one of several ingest threads stands (docs/ARCHITECTURE.md "Several ingest threads"):
 * its number, how many share the ports, whether it is the first socket on them, and the ports
 * thread 0 already bound (configured port 0 resolves once; every later socket joins that port).
 */
export interface ThreadPlace {
  index: number;
  count: number;
  first: boolean;
  ports?: { udp?: number; tcp?: number; tls?: number };
  /** Connection limits shared by every thread's stream listeners (shared-slots.ts, shared-known.ts). */
  slots?: StreamSlotBuffers;
}

/** The shared state of the stream listeners over several threads: made once by the main thread. */
export interface StreamSlotBuffers {
  tcp?: SharedArrayBuffer;
  tls?: SharedArrayBuffer;
  known: SharedArrayBuffer;
}

/** Slot limits of the TCP and TLS listeners (both from `ingest.hep.tcp`). */
const slotLimits = (cfg: Config["ingest"]) => ({
  maxConnections: cfg.hep.tcp.max_connections,
  maxConnectionsPerIp: cfg.hep.tcp.max_connections_per_ip,
  reservedForKnown: reservedSlots(cfg.hep.tcp.max_connections, cfg.hep.tcp.reserved_for_known_percent),
});

/** The shared slot state for `threads` ingest threads (docs/ARCHITECTURE.md "Slots over several threads"). */
export function createStreamSlotBuffers(cfg: Config["ingest"], threads: number): StreamSlotBuffers {
  return {
    ...(cfg.hep.tcp.enable ? { tcp: createSharedSlots(slotLimits(cfg), { threads }) } : {}),
    ...(cfg.hep.tls.cert && cfg.hep.tls.key ? { tls: createSharedSlots(slotLimits(cfg), { threads }) } : {}),
    known: createSharedKnown({
      knownAddresses: cfg.hep.tcp.known_addresses,
      ttlMs: cfg.hep.tcp.known_address_ttl_sec * 1000,
    }),
  };
}

/** Frees what thread `index` held in the shared slot state (it ended; a new thread takes its place). */
export function releaseStreamSlots(b: StreamSlotBuffers, index: number): void {
  if (b.tcp) releaseThread(b.tcp, index);
  if (b.tls) releaseThread(b.tls, index);
}

/** `listen` with its port replaced by the one thread 0 bound, when known. */
const atPort = (listen: string, key: string, port: number | undefined): string => {
  if (!port) return listen;
  const a = parseListen(listen, key);
  return formatAddress(a.hostname, port);
};

/** The UDP, TCP and TLS listeners the config enables, feeding `pipeline`. */
export function createHepListeners(
  cfg: Config["ingest"],
  pipeline: HepPipeline,
  logger: Logger,
  metrics: MetricsRegistry,
  place?: ThreadPlace,
): Pick<HepIngest, "modules" | "listeners"> {
  const modules: Module[] = [];
  const listeners: HepIngest["listeners"] = {};
  if (!cfg.hep.enable) return { modules, listeners };
  const shared = place !== undefined && place.count > 1;
  // Stream listeners share a port only with the shared slot state; without it, thread 0 alone listens.
  const streams = !shared || place.index === 0 || place.slots !== undefined;
  const sharedStream = (b: SharedArrayBuffer | undefined) =>
    shared && b ? { shared: b, threadIndex: place.index, reusePort: true } : {};
  const counters = listenerMetrics(metrics);
  const known: KnownAddressBook =
    shared && place.slots
      ? new SharedKnownAddresses(place.slots.known)
      : new KnownAddresses(cfg.hep.tcp.known_addresses, cfg.hep.tcp.known_address_ttl_sec * 1000);
  if (cfg.hep.udp.enable) {
    listeners.udp = createUdpListener(
      pipeline,
      {
        listen: atPort(cfg.hep.udp.listen, "ingest.hep.udp.listen", place?.ports?.udp),
        socketBufferBytes: cfg.hep.udp.socket_buffer_bytes,
        batchReceive: cfg.hep.udp.batch_receive,
        kernelDrops: counters.kernelDrops,
        ...(shared ? { group: { size: place.count, index: place.index, first: place.first } } : {}),
      },
      logger,
    );
    modules.push(listeners.udp);
  }
  if (cfg.hep.tcp.enable && streams) {
    listeners.tcp = createTcpListener(
      pipeline,
      {
        listen: atPort(cfg.hep.tcp.listen, "ingest.hep.tcp.listen", place?.ports?.tcp),
        ...streamLimits(cfg, known),
        ...sharedStream(place?.slots?.tcp),
      },
      logger,
      counters,
    );
    modules.push(listeners.tcp);
  }
  if (cfg.hep.tls.cert && cfg.hep.tls.key && streams) {
    listeners.tls = createTcpListener(
      pipeline,
      {
        listen: atPort(cfg.hep.tls.listen, "ingest.hep.tls.listen", place?.ports?.tls),
        ...streamLimits(cfg, known),
        ...sharedStream(place?.slots?.tls),
        tls: { cert: cfg.hep.tls.cert, key: cfg.hep.tls.key },
      },
      logger,
      counters,
    );
    modules.push(listeners.tls);
  }
  return { modules, listeners };
}

/** Pipeline and listeners on this thread. */
export function createHepIngest(
  cfg: Config["ingest"],
  sink: Sink,
  logger: Logger,
  metrics: MetricsRegistry,
): HepIngest {
  const log = logger.child({ module: "ingest" });
  const pipeline = createHepPipeline(cfg, sink, log, metrics);
  const modules: Module[] = [
    { name: "hep-pipeline", start: () => pipeline.start(), stop: async () => pipeline.stop() },
  ];
  const l = createHepListeners(cfg, pipeline, log, metrics);
  return { pipeline, modules: [...modules, ...l.modules], listeners: l.listeners };
}
