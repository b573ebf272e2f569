/**
 * HEP ingest on worker threads (`ingest.hep.threads` ≥ 1): the main thread's side. Each worker
 * (worker.ts, one OneThread here) owns its UDP/TCP/TLS sockets on the shared ports, decodes,
 * parses and encodes rows; every seal interval it hands over CSV batches, which go into the lake's
 * one spool exactly like batches sealed on this thread. This thread keeps DuckDB, the catalog,
 * flushes and the API: at 60-70 k msgs/s one JS thread doing both was the ingest ceiling
 * (docs/BENCHMARKS.md). HEP over HTTP goes to the threads in turn; PCAP import keeps using the
 * in-process pipeline (`HepIngest.pipeline`), which also collects the agents the threads report.
 * docs/ARCHITECTURE.md "The HEP ingest thread" and "Several ingest threads".
 */
import type { Config } from "../../config/index.ts";
import {
  AppError,
  errorMessage,
  rowsLostCounter,
  type Counter,
  type Logger,
  type MetricsRegistry,
  type Module,
} from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { createClockTableBuffer } from "../hep/clock-table.ts";
import { createHepPipeline, createStreamSlotBuffers, listenerMetrics, type HepIngest } from "../hep/ingest.ts";
import type { BoundListener } from "../hep/udp.ts";
import type { HepPipeline } from "../pipeline.ts";
import type { ForwardDecoded } from "../forward/hep-records.ts";
import type { BoundPorts, FromIngestThread, HepBodyResult, ToIngestThread } from "./messages.ts";
import { OneThread } from "./one-thread.ts";
import { ThreadMetrics } from "./thread-metrics.ts";
import type { IngestThreadOptions, ThreadState } from "./options.ts";

export type { IngestThreadOptions, StreamFeed, ThreadState } from "./options.ts";

/** HEP listeners on worker threads; the returned pipeline serves PCAP import (and HTTP without threads). */
export function createThreadedHepIngest(
  cfg: Config["ingest"],
  lake: Lake,
  maxBufferedRows: number,
  logger: Logger,
  metrics: MetricsRegistry,
  opts: IngestThreadOptions,
): HepIngest {
  const log = logger.child({ module: "ingest" });
  // One table of agent clock offsets for the threads and this thread's pipeline (HEP over HTTP).
  const clockTable = createClockTableBuffer(cfg.hep.time_shift.max_sources);
  const pipeline = createHepPipeline(cfg, lake, log, metrics, { clockTable });
  const threads = new HepIngestThreads(cfg, lake, maxBufferedRows, log, metrics, pipeline, { ...opts, clockTable });
  const bound = (name: keyof BoundPorts): BoundListener => ({
    name: `hep-${name}`,
    start: async () => {},
    stop: async () => {},
    port: () => threads.ports[name] ?? 0,
  });
  const listeners: HepIngest["listeners"] = {};
  if (cfg.hep.enable && cfg.hep.udp.enable) listeners.udp = bound("udp");
  if (cfg.hep.enable && cfg.hep.tcp.enable) listeners.tcp = bound("tcp");
  if (cfg.hep.enable && cfg.hep.tls.cert && cfg.hep.tls.key) listeners.tls = bound("tls");
  const modules: Module[] = [
    { name: "hep-pipeline", start: () => pipeline.start(), stop: async () => pipeline.stop() },
    threads,
  ];
  return {
    pipeline,
    modules,
    listeners,
    thread: threads,
    http: (body, ip) => threads.handleBody(body, ip),
    forward: (body, skip, room, ip) => threads.decodeForward(body, skip, room, ip),
  };
}

/** The running ingest threads, each started again after a crash; a Module of the appliance. */
export class HepIngestThreads implements Module {
  readonly name = "hep-ingest-threads";
  /** The ports thread 0 bound (every thread shares them). */
  readonly ports: BoundPorts = {};
  private readonly rowsLost: Counter;
  private readonly threads: OneThread[] = [];
  private readonly shared: SharedArrayBuffer;
  /** [0] the lake's backlog less the rows taken (publishBacklog); per thread: handed over, taken. */
  private readonly counts: Float64Array;
  private readonly perThread: ThreadMetrics;
  private ticker: ReturnType<typeof setInterval> | undefined;
  /** HEP over HTTP bodies and forward batches waiting for a thread's answer. */
  private readonly bodies = new Map<number, { resolve(r: HepBodyResult): void; reject(e: Error): void }>();
  private readonly forwards = new Map<number, { resolve(r: ForwardDecoded): void; reject(e: Error): void }>();
  private nextBody = 1;
  private nextThread = 0;

  constructor(
    cfg: Config["ingest"],
    private readonly lake: Lake,
    maxBufferedRows: number,
    private readonly log: Logger,
    private readonly metrics: MetricsRegistry,
    private readonly pipeline: HepPipeline,
    private readonly opts: IngestThreadOptions,
  ) {
    // The workers' counters land in these (same names): register them here too.
    listenerMetrics(metrics);
    this.rowsLost = rowsLostCounter(metrics);
    const restarts = metrics.counter(
      "svc_hep_ingest_thread_restarts_total",
      "Times a HEP ingest thread ended unexpectedly and was started again.",
    );
    const count = Math.max(1, opts.count ?? 1);
    this.shared = new SharedArrayBuffer(8 * (1 + 2 * count));
    this.counts = new Float64Array(this.shared);
    this.perThread = new ThreadMetrics(metrics, count);
    // Several threads share the stream ports: their connection limits hold over all of them.
    const slots = count > 1 && !opts.feed ? createStreamSlotBuffers(cfg, count) : undefined;
    for (let index = 0; index < count; index++) {
      this.threads.push(
        new OneThread({
          entry: opts.entry,
          index,
          count,
          cfg,
          maxBufferedRows,
          sealIntervalMs: opts.sealIntervalMs ?? 100,
          ...(opts.spoolFormat ? { spoolFormat: opts.spoolFormat } : {}),
          timeoutMs: opts.timeoutMs ?? 30_000,
          logLevel: opts.logLevel ?? "info",
          shared: this.shared,
          ...(opts.stream ? { streamFlag: opts.stream.flag } : {}),
          ...(opts.feed ? { feed: opts.feed } : {}),
          ...(opts.raw ? { raw: true } : {}),
          ...(slots ? { slots } : {}),
          ...(opts.clockTable ? { clockTable: opts.clockTable } : {}),
          restarts,
          log,
          // Thread 0 resolves a configured port 0; the others (and every restart) join its ports.
          ports: () => (index === 0 && Object.keys(this.ports).length === 0 ? undefined : this.ports),
          onMessage: (t, m) => this.onMessage(t, m),
        }),
      );
    }
  }

  get count(): number {
    return this.threads.length;
  }

  /** Thread `i`'s running worker: for diagnostics and tests. */
  worker(i = 0): Worker | undefined {
    return this.threads[i]?.worker();
  }

  /** The oldest last message over all threads (every seal interval); undefined while one is not running. */
  lastHeardMs(): number | undefined {
    let oldest: number | undefined;
    for (const t of this.threads) {
      if (t.lastHeard === undefined) return undefined;
      oldest = oldest === undefined ? t.lastHeard : Math.min(oldest, t.lastHeard);
    }
    return oldest;
  }

  /** Every thread's state (/health). */
  states(): ThreadState[] {
    return this.threads.map((t) => ({ index: t.index, lastHeardMs: t.lastHeard, ...this.perThread.state(t.index) }));
  }

  async start(): Promise<void> {
    const [first, ...rest] = this.threads;
    await first!.start();
    Object.assign(this.ports, first!.ports);
    try {
      await Promise.all(rest.map((t) => t.start()));
    } catch (e) {
      await this.stop();
      throw e;
    }
    this.ticker = setInterval(this.publishBacklog, 20);
    this.log.info("HEP ingest threads started", { threads: this.threads.length, ports: this.ports, nice: first!.nice });
  }

  async stop(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    await Promise.all(this.threads.map((t) => t.stop()));
    for (const b of [...this.bodies.values(), ...this.forwards.values()])
      b.reject(new AppError("UNAVAILABLE", "HEP ingest is stopping; retry"));
    this.bodies.clear();
    this.forwards.clear();
  }

  /**
   * HEP over HTTP: the body goes to the next running thread in turn (decode and parse off this
   * thread), which answers with the counts. Without a running thread, the in-process pipeline.
   */
  handleBody(body: Uint8Array, remoteIp: string | undefined): Promise<HepBodyResult> {
    const sent = this.toThread(this.bodies, body, (id, copy) => ({
      type: "hep",
      id,
      body: copy,
      ...(remoteIp ? { remoteIp } : {}),
    }));
    return sent ?? Promise.resolve(this.pipeline.handleStream(body, "http", remoteIp));
  }

  /**
   * A central's forward batch of HEP packets (length-prefixed, the first `skip` replays) decoded on
   * the next running thread, answered with its counts and exactly its rows, sealed; the rows are
   * not handed to the spool (the forward receiver holds them for its commit, docs/DEPLOY.md "Where
   * the central keeps an edge's position"). Undefined without a running thread: the caller decodes.
   * `body` is transferred (unusable after).
   */
  decodeForward(
    body: Uint8Array,
    skip: number,
    room: number,
    remoteIp: string | undefined,
  ): Promise<ForwardDecoded> | undefined {
    return this.toThread(this.forwards, body, (id, copy) => ({
      type: "forward",
      id,
      body: copy,
      skip,
      room,
      ...(remoteIp ? { remoteIp } : {}),
    }));
  }

  /** Sends `body` to the next running thread in turn and waits for its answer; undefined when none runs. */
  private toThread<R>(
    waiting: Map<number, { resolve(r: R): void; reject(e: Error): void }>,
    body: Uint8Array,
    message: (id: number, body: ArrayBuffer) => Extract<ToIngestThread, { type: "hep" | "forward" }>,
  ): Promise<R> | undefined {
    for (let k = 0; k < this.threads.length; k++) {
      const t = this.threads[(this.nextThread + k) % this.threads.length]!;
      if (t.lastHeard === undefined) continue;
      this.nextThread = (t.index + 1) % this.threads.length;
      const id = this.nextBody++;
      const copy =
        body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
          ? (body.buffer as ArrayBuffer)
          : body.slice().buffer;
      return new Promise<R>((resolve, reject) => {
        // A thread that dies holding the body never answers: the client hears 503 and retries.
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new AppError("UNAVAILABLE", "the HEP ingest thread did not answer in time; retry"));
        }, this.opts.timeoutMs ?? 30_000);
        waiting.set(id, {
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        t.send(message(id, copy), [copy]);
      });
    }
    return undefined;
  }

  /**
   * [0] is the lake's backlog less every row taken from the threads, one value written at once:
   * a thread adds what each thread handed over, so rows moving from a hand-over into the lake are
   * counted exactly once at every moment (two slots written one after the other could be read
   * between the writes, the rows then counted twice or not at all). After a thread restarts, its
   * counts start from 0 and this value is a little low until the next publish (20 ms at most).
   */
  private readonly publishBacklog = (): void => {
    let taken = 0;
    for (let i = 0; i < this.threads.length; i++) taken += this.counts[2 + 2 * i]!;
    this.counts[0] = this.lake.backlog() - taken;
  };

  /** A hand-over: batches into the lake's spool, their buffers back to the thread once written. */
  private onBatches(t: OneThread, m: Extract<FromIngestThread, { type: "batches" }>): void {
    const w = t.worker();
    let rows = 0;
    for (const b of m.batches) {
      const bytes = new Uint8Array(b.buffer, 0, b.length);
      // A Parquet seal's buffer is sized to it: nothing to give back for reuse.
      const ok = this.lake.acceptBatch(
        b.key,
        bytes,
        b.rows,
        b.columns,
        b.span,
        () => {
          if (!b.rowGroup && t.isCurrent(w)) t.send({ type: "spare", key: b.key, buffer: b.buffer }, [b.buffer]);
        },
        b.rowGroup,
      );
      if (!ok) {
        this.rowsLost.inc({ reason: "unknown_table" }, b.rows);
        this.log.error("rows from an ingest thread for a table the lake does not have", {
          table: b.key,
          rows: b.rows,
          thread: t.index,
        });
      }
      rows += b.rows;
    }
    t.taken(rows);
    this.publishBacklog();
    // Beside the rows, never waiting for them: the forward log is not the spool (docs/DEPLOY.md "Forward log").
    if (m.raw) this.opts.raw?.acceptChunk(new Uint8Array(m.raw.buffer, 0, m.raw.length), m.raw.count);
    if (m.stream) {
      // Copied (exact size) so the ring keeps no 1 MiB buffer for a few events; the buffer goes back.
      const bytes = new Uint8Array(m.stream.buffer, 0, m.stream.length).slice();
      t.send({ type: "stream-spare", buffer: m.stream.buffer }, [m.stream.buffer]);
      this.opts.stream?.accept(bytes, m.stream.count);
    }
    this.opts.stream?.handedOver?.(t.index, m.drained !== false);
    this.metrics.applyCounterDeltas(m.counters);
    this.perThread.handOver(t.index, m.counters, m.cpuSec);
    if (m.agents.length) this.pipeline.agents.merge(m.agents);
    if (m.final) t.finalHandOver();
  }

  private onMessage(t: OneThread, m: FromIngestThread): void {
    switch (m.type) {
      case "batches":
        this.onBatches(t, m);
        break;
      case "define":
        this.lake
          .defineTable(m.def)
          .then(() =>
            t.send({ type: "defined", id: m.id, def: this.lake.table(`${m.def.schema}.${m.def.name}`) ?? m.def }),
          )
          .catch((err) => t.send({ type: "defined", id: m.id, error: errorMessage(err) }));
        break;
      case "hep-result": {
        const b = this.bodies.get(m.id);
        this.bodies.delete(m.id);
        b?.resolve(m.result);
        break;
      }
      case "forward-result": {
        const f = this.forwards.get(m.id);
        this.forwards.delete(m.id);
        if (m.result) f?.resolve(m.result);
        else
          f?.reject(
            new AppError(
              "UNAVAILABLE",
              `the HEP ingest thread could not decode the forward batch (${m.error ?? "no result"}); retry`,
            ),
          );
        break;
      }
      case "log":
        this.log[m.level](m.msg, { ...m.ctx, ...(this.threads.length > 1 ? { thread: t.index } : {}) });
        break;
    }
  }
}
