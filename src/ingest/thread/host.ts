/**
 * HEP ingest on its own thread (`ingest.hep.threads` = 1, the default): the main thread's side.
 * The worker (worker.ts) owns the UDP/TCP/TLS sockets, decodes, parses and encodes rows;
 * every seal interval it hands over CSV batches, which go into the lake's spool exactly like
 * batches sealed on this thread. This thread keeps DuckDB, the catalog, flushes and the API: at
 * 60-70 k msgs/s one JS thread doing both was the ingest ceiling (docs/BENCHMARKS.md).
 * HEP over HTTP and PCAP import keep using the in-process pipeline (`HepIngest.pipeline`), which
 * also collects the agents and counters the worker reports.
 */
import type { Config } from "../../config/index.ts";
import { AppError, errorMessage, rowsLostCounter, type Counter, type Logger, type LogLevel, type MetricsRegistry, type Module } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { createHepPipeline, listenerMetrics, type HepIngest } from "../hep/ingest.ts";
import type { BoundListener } from "../hep/udp.ts";
import { closeOrphanedFd } from "../hep/udp-batch.ts";
import type { HepPipeline } from "../pipeline.ts";
import type { FromIngestThread, IngestThreadInit, ToIngestThread } from "./messages.ts";

export interface IngestThreadOptions {
  /**
   * The thread's entry file (worker.ts beside this one), resolved by the composition root
   * (src/main.ts): in the executable every module's import.meta.url is the bundle's, so only a
   * file at the top of src/ resolves the path scripts/build.ts bundles the entry under.
   */
  entry: URL;
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

type Ports = { udp?: number; tcp?: number; tls?: number };

/** One start of a thread: settled by its "ready" or "failed", its end or the start time-out. */
interface Attempt {
  send(m: ToIngestThread, transfer?: Transferable[]): void;
  resolve(): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
  ready: boolean;
  /** Sockets the thread opened itself (batch UDP): released only by it, or by us if it dies. */
  fds: number[];
}

/** HEP listeners on a worker thread; the returned pipeline serves HEP over HTTP and PCAP import. */
export function createThreadedHepIngest(cfg: Config["ingest"], lake: Lake, maxBufferedRows: number, logger: Logger, metrics: MetricsRegistry, opts: IngestThreadOptions): HepIngest {
  const log = logger.child({ module: "ingest" });
  const pipeline = createHepPipeline(cfg, lake, log, metrics);
  const thread = new HepIngestThread(cfg, lake, maxBufferedRows, log, metrics, pipeline, opts);
  const bound = (name: keyof Ports): BoundListener => ({
    name: `hep-${name}`,
    start: async () => {},
    stop: async () => {},
    port: () => thread.ports[name] ?? 0,
  });
  const listeners: HepIngest["listeners"] = {};
  if (cfg.hep.enable && cfg.hep.udp.enable) listeners.udp = bound("udp");
  if (cfg.hep.enable && cfg.hep.tcp.enable) listeners.tcp = bound("tcp");
  if (cfg.hep.enable && cfg.hep.tls.cert && cfg.hep.tls.key) listeners.tls = bound("tls");
  const modules: Module[] = [{ name: "hep-pipeline", start: () => pipeline.start(), stop: async () => pipeline.stop() }, thread];
  return { pipeline, modules, listeners, thread };
}

/** The running ingest thread, started again after a crash; a Module of the appliance. */
export class HepIngestThread implements Module {
  readonly name = "hep-ingest-thread";
  /** The ports the thread bound (reported when ready). */
  readonly ports: Ports = {};
  private readonly rowsLost: Counter;
  private readonly restarts: Counter;
  private readonly sealIntervalMs: number;
  private readonly timeoutMs: number;
  private readonly shared = new SharedArrayBuffer(16);
  /** [0] the lake's backlog (rows), [1] rows taken from the current thread so far. */
  private readonly counts = new Float64Array(this.shared);
  private current: Worker | undefined;
  /** Sends to the current thread's control port. */
  private control: ((m: ToIngestThread, transfer?: Transferable[]) => void) | undefined;
  private stopping = false;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private stopped: (() => void) | undefined;
  private lastRestart = 0;
  private nice: number | undefined;
  /** When the running thread last posted (it hands over every seal interval, rows or not): /health's liveness. */
  private lastHeard: number | undefined;

  constructor(
    private readonly cfg: Config["ingest"],
    private readonly lake: Lake,
    private readonly maxBufferedRows: number,
    private readonly log: Logger,
    private readonly metrics: MetricsRegistry,
    private readonly pipeline: HepPipeline,
    private readonly opts: IngestThreadOptions,
  ) {
    // The worker's counters land in these (same names): register them here too.
    listenerMetrics(metrics);
    this.rowsLost = rowsLostCounter(metrics);
    this.restarts = metrics.counter("svc_hep_ingest_thread_restarts_total", "Times the HEP ingest thread ended unexpectedly and was started again.");
    this.sealIntervalMs = opts.sealIntervalMs ?? 100;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** The running thread: for diagnostics and tests. */
  worker(): Worker | undefined {
    return this.current;
  }

  /** Epoch ms of the running thread's last message (every seal interval); undefined while none runs. */
  lastHeardMs(): number | undefined {
    return this.current ? this.lastHeard : undefined;
  }

  async start(): Promise<void> {
    await this.spawn();
    this.ticker = setInterval(this.publishBacklog, 20);
    this.log.info("HEP ingest thread started", { ports: this.ports, nice: this.nice });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.ticker) clearInterval(this.ticker);
    const w = this.current;
    if (!w) return;
    // Listeners close, the last rows are handed over, then the worker ends.
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.log.error("HEP ingest thread did not hand over its last rows in time", { timeout_ms: this.timeoutMs });
        resolve();
      }, this.timeoutMs);
      this.stopped = () => {
        clearTimeout(t);
        resolve();
      };
      this.control?.({ type: "stop" });
    });
    this.current = undefined;
    this.control = undefined;
    await w.terminate();
  }

  private readonly publishBacklog = (): void => {
    this.counts[0] = this.lake.backlog();
  };

  /** A hand-over: batches into the lake's spool, their buffers back to the thread once written. */
  private onBatches(w: Worker, m: Extract<FromIngestThread, { type: "batches" }>): void {
    const counts = this.counts;
    for (const b of m.batches) {
      const bytes = new Uint8Array(b.buffer, 0, b.length);
      const ok = this.lake.acceptBatch(b.key, bytes, b.rows, b.columns, b.span, () => {
        if (w === this.current) this.control?.({ type: "spare", key: b.key, buffer: b.buffer }, [b.buffer]);
      });
      if (!ok) {
        this.rowsLost.inc({ reason: "unknown_table" }, b.rows);
        this.log.error("rows from the ingest thread for a table the lake does not have", { table: b.key, rows: b.rows });
      }
      counts[1] = counts[1]! + b.rows;
    }
    this.publishBacklog();
    if (m.stream) {
      // Copied (exact size) so the ring keeps no 1 MiB buffer for a few events; the buffer goes back.
      const bytes = new Uint8Array(m.stream.buffer, 0, m.stream.length).slice();
      if (w === this.current) this.control?.({ type: "stream-spare", buffer: m.stream.buffer }, [m.stream.buffer]);
      this.opts.stream?.accept(bytes, m.stream.count);
    }
    this.metrics.applyCounterDeltas(m.counters);
    if (m.agents.length) this.pipeline.agents.merge(m.agents);
    if (m.final) this.stopped?.();
  }

  private spawn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const w = new Worker(this.opts.entry.href);
      const channel = new MessageChannel();
      // A new thread (also after a crash) counts the rows it hands over from 0.
      this.counts[1] = 0;
      const send = (m: ToIngestThread, transfer: Transferable[] = []) => channel.port1.postMessage(m, transfer);
      this.current = w;
      this.control = send;
      const a: Attempt = {
        send,
        resolve,
        reject,
        ready: false,
        fds: [],
        timer: setTimeout(() => {
          if (a.ready) return;
          reject(new Error(`the HEP ingest thread did not start within ${this.timeoutMs} ms`));
          void w.terminate();
        }, this.timeoutMs),
      };
      w.onmessage = (e: MessageEvent<FromIngestThread>) => this.onMessage(w, a, e.data);
      w.addEventListener("error", (e) => this.log.error("HEP ingest thread error", { error: (e as ErrorEvent).message }));
      w.addEventListener("close", () => this.onClose(w, a));
      const init: IngestThreadInit = {
        ingest: this.cfg,
        maxBufferedRows: this.maxBufferedRows,
        sealIntervalMs: this.sealIntervalMs,
        shared: this.shared,
        logLevel: this.opts.logLevel ?? "info",
        control: channel.port2,
        ...(this.opts.stream ? { stream: this.opts.stream.flag } : {}),
      };
      w.postMessage({ type: "init", init } satisfies ToIngestThread, [channel.port2]);
    });
  }

  private onMessage(w: Worker, a: Attempt, m: FromIngestThread): void {
    switch (m.type) {
      case "batches":
        this.onBatches(w, m);
        break;
      case "define":
        this.lake
          .defineTable(m.def)
          .then(() => a.send({ type: "defined", id: m.id, def: this.lake.table(`${m.def.schema}.${m.def.name}`) ?? m.def }))
          .catch((err) => a.send({ type: "defined", id: m.id, error: errorMessage(err) }));
        break;
      case "log":
        this.log[m.level](m.msg, m.ctx);
        break;
      case "ready":
        a.ready = true;
        a.fds = m.fds;
        clearTimeout(a.timer);
        Object.assign(this.ports, m.ports);
        this.nice = m.nice;
        a.resolve();
        break;
      case "failed":
        clearTimeout(a.timer);
        void w.terminate();
        // An AppError keeps its code across the thread (a taken port is CONFIG_INVALID: exit 2).
        a.reject(m.code ? new AppError(m.code, m.message) : new Error(m.message));
        break;
    }
    // Alive only once it has its sockets: a thread logs before it is ready.
    if (w === this.current && a.ready) this.lastHeard = Date.now();
  }

  private onClose(w: Worker, a: Attempt): void {
    if (w === this.current && !this.stopping && !a.ready) {
      // Ended while starting: fail this start now rather than at the start time-out.
      clearTimeout(a.timer);
      a.reject(new Error("the HEP ingest thread ended while starting"));
      return;
    }
    if (w !== this.current || this.stopping || !a.ready) return;
    this.lastHeard = undefined;
    // Its sockets would keep the ports bound (and take datagrams nobody reads): close them first.
    const closed = a.fds.filter(closeOrphanedFd);
    a.fds = [];
    // A crash must not end ingest for good: start again (at most every 5 s).
    this.restarts.inc();
    this.log.error("HEP ingest thread ended unexpectedly; starting it again", { in_ms: Math.max(0, this.lastRestart + 5000 - Date.now()), sockets_closed: closed.length });
    this.respawn();
  }

  /** Starts a new thread, at most every 5 s, until one starts (a port taken meanwhile, say). */
  private respawn(): void {
    setTimeout(
      () => {
        if (this.stopping) return;
        this.lastRestart = Date.now();
        this.spawn().catch((err) => {
          this.log.error("HEP ingest thread did not start again; trying again in 5 s", { error: errorMessage(err) });
          this.respawn();
        });
      },
      Math.max(0, this.lastRestart + 5000 - Date.now()),
    );
  }
}
