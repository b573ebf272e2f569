/**
 * HEP ingest on its own thread (`ingest.hep.threads` = 1, the default): the main thread's side.
 * The worker (ingest-worker.ts) owns the UDP/TCP/TLS sockets, decodes, parses and encodes rows;
 * every seal interval it hands over CSV batches, which go into the lake's spool exactly like
 * batches sealed on this thread. This thread keeps DuckDB, the catalog, flushes and the API: at
 * 60-70 k msgs/s one JS thread doing both was the ingest ceiling (docs/BENCHMARKS.md).
 * HEP over HTTP and PCAP import keep using the in-process pipeline (`HepIngest.pipeline`), which
 * also collects the agents and counters the worker reports.
 */
import type { Config } from "./config/index.ts";
import { AppError, errorMessage, type ErrorCode, type Logger, type LogLevel, type MetricsRegistry, type Module, type TableDef } from "./core/index.ts";
import { closeOrphanedFd, createHepPipeline, listenerMetrics, type AgentActivity, type BoundListener, type HepIngest, type SealedBatch } from "./ingest/index.ts";
import type { Lake } from "./lake/index.ts";
import type { CaptureChunk } from "./stream/index.ts";

export interface IngestThreadInit {
  ingest: Config["ingest"];
  maxBufferedRows: number;
  sealIntervalMs: number;
  /** Float64Array over it: [0] the lake's backlog (rows), [1] rows taken from the worker so far. */
  shared: SharedArrayBuffer;
  /**
   * Where every later message to the thread arrives (ToIngestThread other than init): the thread
   * also takes them synchronously between packets, so a busy socket cannot hold them back.
   */
  control: MessagePort;
  logLevel: LogLevel;
  /** Int32Array over it: [0] is 1 while the live-stream broker wants events (docs/STREAM.md "Hand-over"). */
  stream?: SharedArrayBuffer;
}

export type ToIngestThread =
  | { type: "init"; init: IngestThreadInit }
  | { type: "defined"; id: number; def?: TableDef; error?: string }
  | { type: "spare"; key: string; buffer: ArrayBuffer }
  | { type: "stream-spare"; buffer: ArrayBuffer }
  | { type: "stop" };

export type FromIngestThread =
  | { type: "ready"; ports: { udp?: number; tcp?: number; tls?: number }; nice?: number; fds: number[] }
  | { type: "failed"; message: string; code?: ErrorCode }
  | { type: "define"; id: number; def: TableDef }
  | { type: "batches"; batches: SealedBatch[]; counters: Array<[string, string, number]>; agents: AgentActivity[]; final: boolean; stream?: CaptureChunk }
  | { type: "log"; level: LogLevel; msg: string; ctx: Record<string, unknown> };

export interface IngestThreadOptions {
  sealIntervalMs?: number;
  logLevel?: LogLevel;
  /** Time the worker has to start (bind its sockets) and to hand over its last rows at stop. */
  timeoutMs?: number;
  /** The live stream's feed: captured events of each hand-over go there (docs/STREAM.md). */
  stream?: StreamFeed;
}

/** Where the thread's live-stream events go, and the flag that switches their capture on. */
export interface StreamFeed {
  /** [0] = 1 while events are wanted: the thread reads it at each hand-over (no per-packet cost). */
  flag: SharedArrayBuffer;
  /** A tick's records, copied off the thread's buffer (which goes back to the thread at once). */
  accept(bytes: Uint8Array, count: number): void;
}

/** HEP listeners on a worker thread; the returned pipeline serves HEP over HTTP and PCAP import. */
export function createThreadedHepIngest(cfg: Config["ingest"], lake: Lake, maxBufferedRows: number, logger: Logger, metrics: MetricsRegistry, opts: IngestThreadOptions = {}): HepIngest {
  const log = logger.child({ module: "ingest" });
  const pipeline = createHepPipeline(cfg, lake, log, metrics);
  // The worker's counters land in these (same names): register them here too.
  listenerMetrics(metrics);
  const rowsLost = metrics.counter("svc_lake_rows_lost_total", "Rows that could not be stored, per reason.", ["reason"]);
  const restarts = metrics.counter("svc_hep_ingest_thread_restarts_total", "Times the HEP ingest thread ended unexpectedly and was started again.");
  const sealIntervalMs = opts.sealIntervalMs ?? 100;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const shared = new SharedArrayBuffer(16);
  const counts = new Float64Array(shared);
  const ports: { udp?: number; tcp?: number; tls?: number } = {};
  let worker: Worker | undefined;
  /** Sends to the current thread's control port. */
  let control: ((m: ToIngestThread, transfer?: Transferable[]) => void) | undefined;
  let stopping = false;
  let ticker: ReturnType<typeof setInterval> | undefined;
  let stopped: (() => void) | undefined;
  let lastRestart = 0;
  let nice: number | undefined;
  /** When the running thread last posted (it hands over every seal interval, rows or not): /health's liveness. */
  let lastHeardMs: number | undefined;

  const publishBacklog = () => {
    counts[0] = lake.backlog();
  };

  const onBatches = (w: Worker, m: Extract<FromIngestThread, { type: "batches" }>) => {
    for (const b of m.batches) {
      const bytes = new Uint8Array(b.buffer, 0, b.length);
      const ok = lake.acceptBatch(b.key, bytes, b.rows, b.columns, b.span, () => {
        if (w === worker) control?.({ type: "spare", key: b.key, buffer: b.buffer }, [b.buffer]);
      });
      if (!ok) {
        rowsLost.inc({ reason: "unknown_table" }, b.rows);
        log.error("rows from the ingest thread for a table the lake does not have", { table: b.key, rows: b.rows });
      }
      counts[1] = counts[1]! + b.rows;
    }
    publishBacklog();
    if (m.stream) {
      // Copied (exact size) so the ring keeps no 1 MiB buffer for a few events; the buffer goes back.
      const bytes = new Uint8Array(m.stream.buffer, 0, m.stream.length).slice();
      if (w === worker) control?.({ type: "stream-spare", buffer: m.stream.buffer }, [m.stream.buffer]);
      opts.stream?.accept(bytes, m.stream.count);
    }
    metrics.applyCounterDeltas(m.counters);
    if (m.agents.length) pipeline.agents.merge(m.agents);
    if (m.final) stopped?.();
  };

  const spawn = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const w = new Worker(new URL("./ingest-worker.ts", import.meta.url).href);
      const channel = new MessageChannel();
      // A new thread (also after a crash) counts the rows it hands over from 0.
      counts[1] = 0;
      const send = (m: ToIngestThread, transfer: Transferable[] = []) => channel.port1.postMessage(m, transfer);
      worker = w;
      control = send;
      let ready = false;
      /** Sockets the thread opened itself (batch UDP): released only by it, or by us if it dies. */
      let fds: number[] = [];
      const timer = setTimeout(() => {
        if (ready) return;
        reject(new Error(`the HEP ingest thread did not start within ${timeoutMs} ms`));
        void w.terminate();
      }, timeoutMs);
      w.onmessage = (e: MessageEvent<FromIngestThread>) => {
        const m = e.data;
        switch (m.type) {
          case "batches":
            onBatches(w, m);
            break;
          case "define":
            lake
              .defineTable(m.def)
              .then(() => send({ type: "defined", id: m.id, def: lake.table(`${m.def.schema}.${m.def.name}`) ?? m.def }))
              .catch((err) => send({ type: "defined", id: m.id, error: errorMessage(err) }));
            break;
          case "log":
            log[m.level](m.msg, m.ctx);
            break;
          case "ready":
            ready = true;
            fds = m.fds;
            clearTimeout(timer);
            Object.assign(ports, m.ports);
            nice = m.nice;
            resolve();
            break;
          case "failed":
            clearTimeout(timer);
            void w.terminate();
            // An AppError keeps its code across the thread (a taken port is CONFIG_INVALID: exit 2).
            reject(m.code ? new AppError(m.code, m.message) : new Error(m.message));
            break;
        }
        // Alive only once it has its sockets: a thread logs before it is ready.
        if (w === worker && ready) lastHeardMs = Date.now();
      };
      w.addEventListener("error", (e) => log.error("HEP ingest thread error", { error: (e as ErrorEvent).message }));
      w.addEventListener("close", () => {
        if (w === worker && !stopping && !ready) {
          // Ended while starting: fail this start now rather than at the start time-out.
          clearTimeout(timer);
          reject(new Error("the HEP ingest thread ended while starting"));
          return;
        }
        if (w !== worker || stopping || !ready) return;
        lastHeardMs = undefined;
        // Its sockets would keep the ports bound (and take datagrams nobody reads): close them first.
        const closed = fds.filter(closeOrphanedFd);
        fds = [];
        // A crash must not end ingest for good: start again (at most every 5 s).
        restarts.inc();
        log.error("HEP ingest thread ended unexpectedly; starting it again", { in_ms: Math.max(0, lastRestart + 5000 - Date.now()), sockets_closed: closed.length });
        respawn();
      });
      const init: IngestThreadInit = {
        ingest: cfg,
        maxBufferedRows,
        sealIntervalMs,
        shared,
        logLevel: opts.logLevel ?? "info",
        control: channel.port2,
        ...(opts.stream ? { stream: opts.stream.flag } : {}),
      };
      w.postMessage({ type: "init", init } satisfies ToIngestThread, [channel.port2]);
    });

  /** Starts a new thread, at most every 5 s, until one starts (a port taken meanwhile, say). */
  const respawn = () => {
    setTimeout(() => {
      if (stopping) return;
      lastRestart = Date.now();
      spawn().catch((err) => {
        log.error("HEP ingest thread did not start again; trying again in 5 s", { error: errorMessage(err) });
        respawn();
      });
    }, Math.max(0, lastRestart + 5000 - Date.now()));
  };

  const bound = (name: keyof typeof ports): BoundListener => ({
    name: `hep-${name}`,
    start: async () => {},
    stop: async () => {},
    port: () => ports[name] ?? 0,
  });
  const listeners: HepIngest["listeners"] = {};
  if (cfg.hep.enable && cfg.hep.udp.enable) listeners.udp = bound("udp");
  if (cfg.hep.enable && cfg.hep.tcp.enable) listeners.tcp = bound("tcp");
  if (cfg.hep.enable && cfg.hep.tls.cert && cfg.hep.tls.key) listeners.tls = bound("tls");

  const thread: Module = {
    name: "hep-ingest-thread",
    async start() {
      await spawn();
      ticker = setInterval(publishBacklog, 20);
      log.info("HEP ingest thread started", { ports, nice });
    },
    async stop() {
      stopping = true;
      if (ticker) clearInterval(ticker);
      const w = worker;
      if (!w) return;
      // Listeners close, the last rows are handed over, then the worker ends.
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          log.error("HEP ingest thread did not hand over its last rows in time", { timeout_ms: timeoutMs });
          resolve();
        }, timeoutMs);
        stopped = () => {
          clearTimeout(t);
          resolve();
        };
        control?.({ type: "stop" });
      });
      worker = undefined;
      control = undefined;
      await w.terminate();
    },
  };
  const modules: Module[] = [{ name: "hep-pipeline", start: () => pipeline.start(), stop: async () => pipeline.stop() }, thread];
  return { pipeline, modules, listeners, thread: { worker: () => worker, lastHeardMs: () => (worker ? lastHeardMs : undefined) } };
}
