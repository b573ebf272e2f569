/**
 * The central's side of store-and-forward (docs/DEPLOY.md "Forward protocol"): POST
 * /api/v1/forward takes a batch of an edge's packets (sender id, first and last seq), drops the
 * part at or below the sender's position (a replay after a lost answer or a restart), decodes the
 * rest exactly like UDP ingest (the same pipeline code, so the same rows) into CSV batches of its
 * own (a BatchSink, as an ingest thread does), hands them to the lake's spool, and records the
 * sender's new position the moment the last of their spool files is renamed into place, then
 * answers with it.
 *
 * The position lives in `<state>/forward-in/<sender>.pos` (beside the spool, written by rename in
 * the same synchronous step that learns the last spool file is in place), not yet in the catalog
 * commit: docs/DEPLOY.md "Where the central keeps an edge's position" says why and what a kill -9
 * between those renames does (the batch is taken again: its rows twice).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { Config } from "../config/index.ts";
import { AppError, rowsLostCounter, type Counter, type Logger, type MetricsRegistry } from "../core/index.ts";
import { BatchSink, createHepPipeline, eachRecord, type HepPipeline } from "../ingest/index.ts";
import type { Lake } from "../lake/index.ts";

const gunzipAsync = promisify(gunzip);
const SENDER = /^[A-Za-z0-9-]{1,64}$/;
/** Inflated body cap: a batch is at most ingest.forward.batch_bytes (64 MiB) on the edge. */
const MAX_BODY = 64 << 20;
const MAX_PACKETS = 1_000_000;

export interface ForwardReceiverDeps {
  ingest: Config["ingest"];
  lake: Lake;
  /** `<state>/forward-in`. */
  dir: string;
  maxBufferedRows: number;
  logger: Logger;
  metrics: MetricsRegistry;
}

export interface ForwardAnswer {
  /** The last seq of this sender the central holds durably: the edge's log moves past it. */
  last: number;
  accepted: number;
  duplicates: number;
  rejected: Record<string, number>;
}

export class ForwardReceiver {
  private readonly positions = new Map<string, number>();
  /** One batch of a sender at a time: a retry racing its own first attempt waits for it. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly received: Counter;
  private readonly duplicates: Counter;
  /** The forwarded packets' own pipeline and sink: its batches are this receiver's alone. */
  private readonly sink: BatchSink;
  private readonly pipeline: HepPipeline;
  private started: Promise<void> | undefined;

  constructor(private readonly deps: ForwardReceiverDeps) {
    mkdirSync(deps.dir, { recursive: true });
    const lake = deps.lake;
    this.sink = new BatchSink({
      define: async (def) => {
        await lake.defineTable(def);
        return lake.table(`${def.schema}.${def.name}`) ?? def;
      },
      backlog: () => lake.backlog(),
      maxBufferedRows: deps.maxBufferedRows,
      rowsLost: rowsLostCounter(deps.metrics),
    });
    this.pipeline = createHepPipeline(deps.ingest, this.sink, deps.logger, deps.metrics);
    this.received = deps.metrics.counter("svc_forward_received_packets_total", "HEP packets taken from edges' forward batches (POST /api/v1/forward), replays excluded.");
    this.duplicates = deps.metrics.counter("svc_forward_duplicate_packets_total", "HEP packets of forward batches dropped because the central already held them (replays).");
  }

  /** The last seq of `sender` held durably (0 for a sender never seen). */
  position(sender: string): number {
    let p = this.positions.get(sender);
    if (p === undefined) {
      try {
        const n = Number(readFileSync(join(this.deps.dir, `${sender}.pos`), "utf8").trim());
        p = Number.isSafeInteger(n) && n >= 0 ? n : 0;
      } catch {
        p = 0;
      }
      this.positions.set(sender, p);
    }
    return p;
  }

  receive(sender: string, first: number, last: number, body: Uint8Array, remoteIp: string | undefined): Promise<ForwardAnswer> {
    if (!SENDER.test(sender)) throw new AppError("BAD_REQUEST", "x-svc-forward-sender must be 1 to 64 letters, digits or dashes");
    if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || first < 1 || last < first || last - first >= MAX_PACKETS) {
      throw new AppError("BAD_REQUEST", `x-svc-forward-first and x-svc-forward-last must be sequence numbers with 1 <= first <= last and at most ${MAX_PACKETS} packets`);
    }
    const prev = this.queues.get(sender) ?? Promise.resolve();
    const run = prev.catch(() => {}).then(() => this.receiveInOrder(sender, first, last, body, remoteIp));
    this.queues.set(sender, run);
    void run
      .finally(() => {
        if (this.queues.get(sender) === run) this.queues.delete(sender);
      })
      .catch(() => {});
    return run;
  }

  private async receiveInOrder(sender: string, first: number, last: number, gz: Uint8Array, remoteIp: string | undefined): Promise<ForwardAnswer> {
    let body: Uint8Array;
    try {
      body = await gunzipAsync(gz, { maxOutputLength: MAX_BODY });
    } catch (e) {
      throw new AppError("BAD_REQUEST", `the body is not gzip of at most ${MAX_BODY} bytes of length-prefixed HEP packets`, { cause: e });
    }
    const packets: Uint8Array[] = [];
    const end = eachRecord(body, (p) => {
      packets.push(p);
      return true;
    });
    if (end !== body.length || packets.length !== last - first + 1) {
      throw new AppError("BAD_REQUEST", `the body holds ${packets.length} whole packet(s) but the headers announce ${last - first + 1} (seq ${first}..${last})`);
    }
    await (this.started ??= this.pipeline.start());
    const pos = this.position(sender);
    const skip = Math.max(0, Math.min(packets.length, pos - first + 1));
    this.duplicates.inc(undefined, skip);
    if (skip === packets.length) return { last: pos, accepted: 0, duplicates: skip, rejected: {} };
    const fresh = packets.length - skip;
    if (this.deps.lake.backlog() + fresh > this.deps.maxBufferedRows) {
      throw new AppError("UNAVAILABLE", "the central's write buffer is full; retry later");
    }
    const rejected: Record<string, number> = {};
    let accepted = 0;
    let held = first + skip - 1;
    // From here to the hand-over to the spool nothing awaits: the sink's batches hold this batch's rows only.
    for (let i = skip; i < packets.length; i++) {
      const r = this.pipeline.storePacket(packets[i]!, "forward", remoteIp);
      if (r.ok) accepted++;
      else if (r.reason === "backlog_full")
        break; // not taken: this packet and the rest come again with the next batch
      // Decodes no better on a second try: counted (svc_hep_packets_dropped_total) and acknowledged.
      else rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
      held = first + i;
    }
    const batches = this.sink.seal();
    let waiting = batches.length;
    const path = join(this.deps.dir, `${sender}.pos`);
    const record = () => {
      // The last spool file of the batch is in place: the position follows at once (docs/DEPLOY.md).
      if (held <= pos) return;
      writeFileSync(`${path}.tmp`, String(held));
      renameSync(`${path}.tmp`, path);
      this.positions.set(sender, held);
    };
    const keys = new Set<string>();
    for (const b of batches) {
      keys.add(b.key);
      const ok = this.deps.lake.acceptBatch(b.key, new Uint8Array(b.buffer, 0, b.length), b.rows, b.columns, b.span, () => {
        if (--waiting === 0) record();
      });
      if (!ok) throw new AppError("UNAVAILABLE", `the central cannot take rows of ${b.key} now; retry later`);
    }
    if (batches.length === 0) record();
    // False when a spool write failed: then the position was not recorded either.
    const spooled = await Promise.all([...keys].map((k) => this.deps.lake.whenSpooled(k)));
    if (!spooled.every(Boolean) || waiting > 0) throw new AppError("UNAVAILABLE", "the central could not write the batch's rows to its spool; retry later");
    this.received.inc(undefined, accepted);
    return { last: Math.max(pos, held), accepted, duplicates: skip, rejected };
  }
}
