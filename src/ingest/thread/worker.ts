/**
 * The HEP ingest thread (a Bun Worker started by host.ts): UDP/TCP/TLS listeners →
 * HEP decode → SIP parse → CSV rows in a BatchSink. Every `sealIntervalMs` the batches go to the
 * main thread (buffers transferred, not copied) with the counters, agents and log lines since the
 * last hand-over. The main thread appends them to the lake's spool and drives DuckDB, the catalog
 * and the API, so a flush never competes with packet receipt for one JS thread.
 * Bundled as its own entry point into the executable (scripts/build.ts).
 */
import { receiveMessageOnPort } from "node:worker_threads";
import {
  AppError,
  MetricsRegistry,
  errorMessage,
  forwardingLogger,
  rowsLostCounter,
  threadCpuSeconds,
  type Logger,
  type LogLevel,
  type Module,
  type TableDef,
} from "../../core/index.ts";
import { StreamCapture } from "../../hep/index.ts";
import { BatchSink } from "../batch-sink.ts";
import { decodeHepRecords } from "../forward/hep-records.ts";
import { RawBatch } from "../forward/raw-batch.ts";
import { createHepListeners, createHepPipeline } from "../hep/ingest.ts";
import { sharedListenPort } from "../hep/reuseport.ts";
import { setThreadNice } from "../hep/priority.ts";
import { startMemoryFeed, type MemoryFeedInit } from "./memory-feed.ts";
import type { HepPipeline } from "../pipeline.ts";
import type { FromIngestThread, IngestThreadInit, ToIngestThread } from "./messages.ts";

declare const self: Worker;

const post = (m: FromIngestThread, transfer?: Transferable[]) => self.postMessage(m, transfer ?? []);

/** Log lines go to the main thread's logger (one sink, one format, tests capture them). */
const threadLogger = (min: LogLevel, bound: Record<string, unknown>): Logger =>
  forwardingLogger(min, (level, msg, ctx) => post({ type: "log", level, msg, ctx }), bound);

let pipeline: HepPipeline | undefined;
let sink: BatchSink | undefined;
let modules: Module[] = [];
let timer: ReturnType<typeof setInterval> | undefined;
const registry = new MetricsRegistry();
const lastCounts = new Map<string, number>();
const defines = new Map<number, { resolve: (d: TableDef) => void; reject: (e: Error) => void }>();
let nextDefine = 1;
/**
 * [0] rows in the lake not yet in Parquet; for each thread j, [1 + 2j] rows it handed over and
 * [2 + 2j] rows the main thread took from it (messages.ts). This thread writes only its own [1 + 2i].
 */
let shared: Float64Array | undefined;
let index = 0;
let posted = 0;

/**
 * The lake's backlog plus every thread's rows in flight: [0] is the lake's backlog less every row
 * the main thread took from the threads, so adding what each thread handed over counts every row
 * once, wherever it is (host.ts publishBacklog).
 */
function backlog(s: Float64Array, threads: number): number {
  let n = s[0]!;
  for (let j = 0; j < threads; j++) n += j === index ? posted : s[1 + 2 * j]!;
  return n;
}

/** Main → this thread: replies to table definitions, buffers given back, stop. */
let control: MessagePort | undefined;

/** [0] = 1 while the live stream wants events (set by the main thread's broker). */
let streamFlag: Int32Array | undefined;
let capture: StreamCapture | undefined;
/** Accepted packets as received, for the forward log and the mirror (IngestThreadInit.raw). */
let raw: RawBatch | undefined;
let threadInit: IngestThreadInit | undefined;
let threadLog: Logger | undefined;

/** A table definition asked of the main thread (which owns the catalog). */
const defineOnMain = (def: TableDef) =>
  new Promise<TableDef>((resolve, reject) => {
    const id = nextDefine++;
    defines.set(id, { resolve, reject });
    post({ type: "define", id, def });
  });

/**
 * The central's forward batches (docs/DEPLOY.md "Forward protocol"): a pipeline and a sink of
 * their own, made at the first batch, so their rows never join this thread's hand-overs to the
 * spool; each batch's rows are sealed and answered alone. `room.n`: rows the receiver still takes.
 */
let forwardDecoder: Promise<{ pipeline: HepPipeline; sink: BatchSink; room: { n: number } }> | undefined;
/** One forward batch at a time, in the order they came. */
let forwardChain: Promise<void> = Promise.resolve();

async function startForwardDecoder(
  init: IngestThreadInit,
  logger: Logger,
): Promise<{ pipeline: HepPipeline; sink: BatchSink; room: { n: number } }> {
  const room = { n: 0 };
  const s = new BatchSink({
    define: defineOnMain,
    backlog: () => init.maxBufferedRows - room.n,
    maxBufferedRows: init.maxBufferedRows,
    rowsLost: rowsLostCounter(registry),
  });
  const p = createHepPipeline(init.ingest, s, logger, registry);
  await p.start();
  return { pipeline: p, sink: s, room };
}

function decodeForward(m: Extract<ToIngestThread, { type: "forward" }>): void {
  const body = new Uint8Array(m.body);
  forwardChain = forwardChain.then(async () => {
    try {
      if (!threadInit || !threadLog) throw new Error("the ingest thread has not started");
      const init = threadInit;
      const log = threadLog;
      forwardDecoder ??= startForwardDecoder(init, log).catch((e: unknown) => {
        forwardDecoder = undefined;
        throw e;
      });
      const d = await forwardDecoder;
      d.room.n = m.room;
      // Synchronous from the decode to the seal: the sealed batches hold this batch's rows only.
      const r = decodeHepRecords(d.pipeline, body, m.skip, m.remoteIp);
      const batches = d.sink.seal();
      post(
        { type: "forward-result", id: m.id, result: { ...r, batches } },
        batches.map((b) => b.buffer),
      );
    } catch (e) {
      post({ type: "forward-result", id: m.id, error: errorMessage(e) });
    }
  });
}

/**
 * Live-stream capture on or off, read at start and once per hand-over: while the broker wants no
 * events (ingest.hep_stream.enable off and nobody subscribed to the coordinator's stream) the
 * pipeline's tap stays unset and a packet costs nothing more (docs/STREAM.md "Hand-over").
 */
function syncCapture(): void {
  if (!pipeline || !streamFlag) return;
  const want = Atomics.load(streamFlag, 0) === 1;
  if (want && !pipeline.tap) {
    // Defined for /metrics by src/stream (streamMetrics) on the main thread, which adds the deltas by name.
    const dropped = registry.counter(
      "svc_stream_events_dropped_total",
      "Live-stream events not delivered, per reason.",
      ["reason"],
    );
    capture ??= new StreamCapture({ onDrop: () => dropped.inc({ reason: "capture_full" }) });
    pipeline.tap = capture.tap;
  } else if (!want && pipeline.tap) {
    pipeline.tap = undefined;
    capture?.clear();
  }
}

/**
 * Messages from the main thread, taken synchronously: under full load the socket never runs dry
 * and the event loop would not get to them (buffers not given back meant a fresh 10 MB buffer
 * per hand-over and 100 MB/s of garbage at 100 k msgs/s).
 */
function drainControl(): void {
  if (!control) return;
  // Bun's MessagePort is the web one; node:worker_threads' helper takes it (typed for Node's).
  const port = control as unknown as Parameters<typeof receiveMessageOnPort>[0];
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) onControl(m.message as ToIngestThread);
}

/**
 * The UDP listener's drain (udp.ts): what waits on the socket is read before each hand-over, so
 * the live stream's merge of several threads can rely on it (docs/STREAM.md "Several ingest threads").
 */
let drainUdp: (() => boolean) | undefined;

/** Batches, counters and agents since the last hand-over. */
function handOver(final = false): void {
  drainControl();
  const drained = drainUdp?.() ?? true;
  const batches = sink?.seal() ?? [];
  for (const b of batches) posted += b.rows;
  if (shared) shared[1 + 2 * index] = posted;
  const stream = capture?.seal();
  const rawChunk = raw?.seal();
  syncCapture();
  const cpuSec = threadCpuSeconds();
  post(
    {
      type: "batches",
      batches,
      counters: registry.counterDeltas(lastCounts),
      agents: pipeline?.agents.drain() ?? [],
      final,
      drained,
      ...(stream ? { stream } : {}),
      ...(rawChunk ? { raw: rawChunk } : {}),
      ...(cpuSec !== undefined ? { cpuSec } : {}),
    },
    [...batches.map((b) => b.buffer), ...(stream ? [stream.buffer] : []), ...(rawChunk ? [rawChunk.buffer] : [])],
  );
}

async function start(init: IngestThreadInit): Promise<void> {
  const logger = threadLogger(init.logLevel, { module: "ingest", thread: "ingest" });
  threadInit = init;
  threadLog = logger;
  shared = new Float64Array(init.shared);
  index = init.index;
  posted = 0;
  const s = shared;
  if (init.stream) streamFlag = new Int32Array(init.stream);
  sink = new BatchSink({
    define: defineOnMain,
    // In flight: handed over, not yet taken by the main thread (then counted in the lake's backlog).
    backlog: () => backlog(s, init.count),
    maxBufferedRows: init.maxBufferedRows,
    ...(init.spoolFormat ? { format: init.spoolFormat } : {}),
    rowsLost: rowsLostCounter(registry),
    due: { ms: init.sealIntervalMs, run: () => handOver() },
  });
  const want = init.ingest.hep.thread_nice;
  const nice = setThreadNice(want);
  if (nice !== undefined && nice > want) {
    logger.warn(
      "HEP ingest thread runs at a lower priority than configured (needs RLIMIT_NICE or CAP_SYS_NICE): under full load a flush can delay socket reads",
      { nice, wanted: want },
    );
  }
  pipeline = createHepPipeline(
    init.ingest,
    sink,
    logger,
    registry,
    init.clockTable ? { clockTable: init.clockTable } : {},
  );
  await pipeline.start();
  if (init.raw) {
    // Defined for /metrics by src/ingest/forward on the main thread, which adds the deltas by name.
    const dropped = registry.counter("svc_forward_dropped_packets_total", "HEP packets never forwarded, per reason.", [
      "reason",
    ]);
    raw = new RawBatch(64 << 20, () => dropped.inc({ reason: "handover_full" }));
    pipeline.raw = raw.add;
  }
  // With ingest.hep_stream.enable the ring fills from the first packet on (history for the first subscriber).
  syncCapture();
  const l = init.feed
    ? { modules: [feedModule(init.feed, pipeline)], listeners: {} }
    : createHepListeners(init.ingest, pipeline, logger, registry, {
        index: init.index,
        count: init.count,
        first: init.first,
        ...(init.ports ? { ports: init.ports } : {}),
        ...(init.slots ? { slots: init.slots } : {}),
      });
  modules = [];
  for (const m of l.modules) {
    try {
      await m.start();
    } catch (e) {
      // The sockets already open (a UDP batch socket is closed by nothing else): released before
      // the thread reports failure, so a later attempt can bind them again.
      await stopModules();
      throw e;
    }
    modules.push(m);
  }
  if (init.first && init.count > 1) {
    try {
      refuseSharedStreamPorts(init.ingest, l.listeners);
    } catch (e) {
      await stopModules();
      throw e;
    }
  }
  const udp = (l.listeners as { udp?: { drain?(): boolean } }).udp;
  if (udp?.drain) drainUdp = () => udp.drain?.() ?? true;
  timer = setInterval(() => handOver(), init.sealIntervalMs);
  post({
    type: "ready",
    ...(nice !== undefined ? { nice } : {}),
    fds: Object.values(l.listeners).flatMap((x) => x?.ownedFds?.() ?? []),
    ports: {
      ...(l.listeners.udp ? { udp: l.listeners.udp.port() } : {}),
      ...(l.listeners.tcp ? { tcp: l.listeners.tcp.port() } : {}),
      ...(l.listeners.tls ? { tls: l.listeners.tls.port() } : {}),
    },
  });
}

/**
 * Thread 0's first listeners of several: with SO_REUSEPORT a process of the same user could share
 * a TCP or TLS port unseen, so a port another listener already has is refused (a taken port is an
 * error; docs/ARCHITECTURE.md "Several ingest threads"). UDP checks its own socket (udp-batch.ts).
 */
function refuseSharedStreamPorts(
  ingest: IngestThreadInit["ingest"],
  listeners: { tcp?: { port(): number }; tls?: { port(): number } },
): void {
  for (const name of ["tcp", "tls"] as const) {
    const l = listeners[name];
    if (!l) continue;
    const port = l.port();
    if (port > 0 && sharedListenPort(port)) {
      // The address as configured, the port as bound (a configured port 0 binds one of its own).
      const listen = ingest.hep[name].listen.replace(/:\d+$/, `:${port}`);
      throw new AppError(
        "CONFIG_INVALID",
        `hep-${name}: cannot listen on ${listen} (ingest.hep.${name}.listen): address already in use (another socket shares the port)`,
      );
    }
  }
}

/** The benchmark's packets from memory in place of the listeners (memory-feed.ts). */
function feedModule(feed: MemoryFeedInit, p: HepPipeline): Module {
  let stopFeed: (() => void) | undefined;
  return {
    name: "memory-feed",
    start: async () => {
      stopFeed = startMemoryFeed(feed, p);
    },
    stop: async () => stopFeed?.(),
  };
}

async function stopModules(): Promise<void> {
  for (const m of [...modules].reverse()) {
    try {
      await m.stop();
    } catch {
      /* closing a socket that is gone */
    }
  }
  modules = [];
}

async function stop(): Promise<void> {
  await stopModules();
  if (timer) clearInterval(timer);
  sink?.close();
  pipeline?.stop();
  handOver(true);
}

self.onmessage = (e: MessageEvent<ToIngestThread>) => {
  const m = e.data;
  if (m.type !== "init") return;
  control = m.init.control;
  control.onmessage = (ev: MessageEvent<ToIngestThread>) => onControl(ev.data);
  start(m.init).catch((err) =>
    post({ type: "failed", message: errorMessage(err), ...(err instanceof AppError ? { code: err.code } : {}) }),
  );
};

function onControl(m: ToIngestThread): void {
  switch (m.type) {
    case "defined": {
      const d = defines.get(m.id);
      defines.delete(m.id);
      if (m.def) d?.resolve(m.def);
      else d?.reject(new Error(m.error ?? "table definition failed"));
      break;
    }
    case "spare":
      sink?.giveBack(m.key, m.buffer);
      break;
    case "stream-spare":
      capture?.giveBack(m.buffer);
      break;
    case "hep": {
      // HEP over HTTP given to this thread (host.ts): decoded here, answered with the counts. The
      // rows are handed over first (same port, so in order): a 202 means they are in the lake's
      // write path as on the in-process pipeline, and a flush right after it includes them.
      const result = pipeline
        ? pipeline.handleStream(new Uint8Array(m.body), "http", m.remoteIp)
        : { accepted: 0, rejected: { not_ready: 1 } };
      if (result.accepted > 0) handOver();
      post({ type: "hep-result", id: m.id, result });
      break;
    }
    case "forward":
      decodeForward(m);
      break;
    case "stop":
      void stop();
      break;
  }
}
