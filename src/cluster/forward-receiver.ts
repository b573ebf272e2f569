/**
 * The central's side of store-and-forward (docs/DEPLOY.md "Forward protocol"): POST
 * /api/v1/forward takes a batch of an edge's packets (sender id, first and last seq), drops the
 * part at or below the sender's position (a replay after a lost answer or a restart), decodes the
 * rest exactly like UDP ingest (the same pipeline code, so the same rows) into CSV batches of its
 * own (a BatchSink, as an ingest thread does) and holds them in memory; it answers with the
 * position it holds (`last`) and the one committed (`committed`).
 *
 * Exactly once (docs/DEPLOY.md "Where the central keeps an edge's position"): the held rows of all
 * senders are committed together, every flush interval or batch_size rows, in ONE catalog
 * transaction with each sender's writer mark `forward:<sender>` (Lake.commitRows). At start a
 * sender's position is its committed mark; rows held but not committed count only while this
 * process lives: after a crash the edge, told the lower position, sends again from there.
 * The `<sender>.pos` files of earlier builds are read once when the catalog has no mark yet.
 * The held rows and their group commit are src/cluster/forward-hold.ts (ForwardHold).
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { Config } from "../config/index.ts";
import {
  AppError,
  errorMessage,
  rowsLostCounter,
  type Counter,
  type Logger,
  type MetricsRegistry,
} from "../core/index.ts";
import {
  BatchSink,
  createForwardDecoders,
  createHepPipeline,
  decodeHepRecords,
  eachRecord,
  FORWARD_KINDS,
  type ForwardDecoders,
  type ForwardKind,
  type HepIngest,
  type HepPipeline,
  type RecordOutcome,
} from "../ingest/index.ts";
import { ForwardHold, type HeldRows } from "./forward-hold.ts";
import { HeldSink } from "./held-sink.ts";
import type { Lake } from "../lake/index.ts";

const gunzipAsync = promisify(gunzip);
const SENDER = /^[A-Za-z0-9-]{1,64}$/;
/** Inflated body cap: a batch is at most ingest.forward.batch_bytes (64 MiB) on the edge. */
const MAX_BODY = 64 << 20;
const MAX_PACKETS = 1_000_000;

export interface ForwardReceiverDeps {
  ingest: Config["ingest"];
  lake: Lake;
  /** `<state>/forward-in`: only the `.pos` files of earlier builds, read once (migration). */
  dir: string;
  maxBufferedRows: number;
  /** Held rows are committed at this many rows (storage.lakehouse.batch_size) … */
  batchSize: number;
  /** … or once the oldest waited this long (storage.lakehouse.flush_interval_sec). */
  flushIntervalMs: number;
  logger: Logger;
  metrics: MetricsRegistry;
  /**
   * HEP batches decoded on the ingest threads when they run (src/ingest/thread/host.ts
   * decodeForward); without it, or with no thread running, on this thread.
   */
  hepThreads?: HepIngest["forward"];
}

export interface ForwardAnswer {
  /** The last seq of this sender the central holds: the edge's cursor moves past it (or back to it). */
  last: number;
  /** The last seq whose rows are committed with the sender's mark: the edge may delete up to it. */
  committed: number;
  accepted: number;
  duplicates: number;
  rejected: Record<string, number>;
}

/** What the central knows of one sender. */
interface SenderState {
  held: number;
  committed: number;
  /** A `.pos` file of an earlier build this position came from: deleted once a mark is committed. */
  legacyPos?: string;
}

/**
 * A sender's stream of one kind: HEP keeps the sender id alone (the marks of earlier builds), the
 * others `<sender>:<kind>`; the writer mark is `forward:<stream>` (docs/DEPLOY.md "Where the central
 * keeps an edge's position").
 */
export const forwardStream = (sender: string, kind: ForwardKind) => (kind === "hep" ? sender : `${sender}:${kind}`);
export const forwardMarkKey = (stream: string) => `forward:${stream}`;

export class ForwardReceiver {
  private readonly senders = new Map<string, Promise<SenderState>>();
  /** One batch of a sender at a time: a retry racing its own first attempt waits for it. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly received: Counter;
  private readonly duplicates: Counter;
  private readonly gaps: Counter;
  /** The forwarded packets' own pipeline and sink: its batches are this receiver's alone. */
  private readonly sink: BatchSink;
  private readonly pipeline: HepPipeline;
  private started: Promise<void> | undefined;
  /** Rows decoded and held until their group commit with the senders' marks. */
  private readonly hold: ForwardHold;
  private stopped = false;
  /** Line protocol and OTLP: decoded by the receivers' code into rows held here. */
  private readonly heldSink: HeldSink;
  private readonly decoders: ForwardDecoders;
  /**
   * Decoding and sealing of one batch at a time over all senders: the rows a seal takes must be
   * those of the batches whose positions it records (line protocol and OTLP await between rows).
   */
  private decoding: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ForwardReceiverDeps) {
    const lake = deps.lake;
    const { batchSize, flushIntervalMs, logger } = deps;
    this.hold = new ForwardHold(lake, {
      batchSize,
      flushIntervalMs,
      logger,
      markKey: forwardMarkKey,
      committed: (s, w) => this.committed(s, w),
    });
    this.sink = new BatchSink({
      define: async (def) => {
        await lake.defineTable(def);
        return lake.table(`${def.schema}.${def.name}`) ?? def;
      },
      backlog: () => lake.backlog() + this.hold.pending,
      maxBufferedRows: deps.maxBufferedRows,
      rowsLost: rowsLostCounter(deps.metrics),
    });
    this.pipeline = createHepPipeline(deps.ingest, this.sink, deps.logger, deps.metrics);
    this.heldSink = new HeldSink(lake, () => this.hold.pending);
    this.decoders = createForwardDecoders(deps.ingest, this.heldSink, deps.logger, deps.metrics, deps.maxBufferedRows);
    this.received = deps.metrics.counter(
      "svc_forward_received_packets_total",
      "HEP packets taken from edges' forward batches (POST /api/v1/forward), replays excluded.",
    );
    this.duplicates = deps.metrics.counter(
      "svc_forward_duplicate_packets_total",
      "HEP packets of forward batches dropped because the central already held them (replays).",
    );
    this.gaps = deps.metrics.counter(
      "svc_forward_resend_requests_total",
      "Forward batches answered with a lower position because the central does not hold what precedes them (it restarted before committing): the edge sends again from there.",
    );
    // A graceful stop commits what is held before the lake's last flush.
    lake.beforeStop(() => this.stop());
  }

  /** Commits what is held and takes no more (the lake stops next). */
  async stop(): Promise<void> {
    await this.hold.stop();
    this.stopped = true;
  }

  /** The sender's position: its committed mark, or a `.pos` file of an earlier build, or 0. */
  private state(sender: string): Promise<SenderState> {
    let p = this.senders.get(sender);
    if (!p) {
      p = (async () => {
        const mark = await this.deps.lake.writerMark(forwardMarkKey(sender));
        if (mark > 0) return { held: mark, committed: mark };
        const path = join(this.deps.dir, `${sender}.pos`);
        let n = Number.NaN;
        try {
          n = Number(readFileSync(path, "utf8").trim());
        } catch {
          /* no file: a new sender */
        }
        return Number.isSafeInteger(n) && n > 0
          ? { held: n, committed: n, legacyPos: path }
          : { held: 0, committed: 0 };
      })();
      p.catch(() => this.senders.delete(sender));
      this.senders.set(sender, p);
    }
    return p;
  }

  /** The sender's positions (GET /api/v1/forward): an idle edge learns of a commit or of a restart. */
  async position(sender: string, kind = "hep"): Promise<{ last: number; committed: number }> {
    if (!SENDER.test(sender)) throw new AppError("BAD_REQUEST", "sender must be 1 to 64 letters, digits or dashes");
    const st = await this.state(forwardStream(sender, checkKind(kind)));
    return { last: st.held, committed: st.committed };
  }

  /**
   * `floor`: the first seq the edge's log still has (x-svc-forward-floor); a batch whose first seq
   * is above the held position + 1 is taken only when the packets between are gone from the log
   * (deleted at its cap), else the answer names the position to send again from.
   */
  receive(
    sender: string,
    first: number,
    last: number,
    body: Uint8Array,
    remoteIp: string | undefined,
    floor = first,
    kind = "hep",
  ): Promise<ForwardAnswer> {
    const k = checkKind(kind);
    if (!SENDER.test(sender))
      throw new AppError("BAD_REQUEST", "x-svc-forward-sender must be 1 to 64 letters, digits or dashes");
    if (
      !Number.isSafeInteger(first) ||
      !Number.isSafeInteger(last) ||
      first < 1 ||
      last < first ||
      last - first >= MAX_PACKETS
    ) {
      throw new AppError(
        "BAD_REQUEST",
        `x-svc-forward-first and x-svc-forward-last must be sequence numbers with 1 <= first <= last and at most ${MAX_PACKETS} packets`,
      );
    }
    if (!Number.isSafeInteger(floor) || floor < 1)
      throw new AppError("BAD_REQUEST", "x-svc-forward-floor must be a sequence number");
    const stream = forwardStream(sender, k);
    const prev = this.queues.get(stream) ?? Promise.resolve();
    const run = prev.catch(() => {}).then(() => this.receiveInOrder(stream, k, first, last, body, remoteIp, floor));
    this.queues.set(stream, run);
    void run
      .finally(() => {
        if (this.queues.get(stream) === run) this.queues.delete(stream);
      })
      .catch(() => {});
    return run;
  }

  private async receiveInOrder(
    sender: string,
    kind: ForwardKind,
    first: number,
    last: number,
    gz: Uint8Array,
    remoteIp: string | undefined,
    floor: number,
  ): Promise<ForwardAnswer> {
    let body: Uint8Array;
    try {
      body = await gunzipAsync(gz, { maxOutputLength: MAX_BODY });
    } catch (e) {
      throw new AppError(
        "BAD_REQUEST",
        `the body is not gzip of at most ${MAX_BODY} bytes of length-prefixed records`,
        { cause: e },
      );
    }
    const packets: Uint8Array[] = [];
    const end = eachRecord(body, (p) => {
      packets.push(p);
      return true;
    });
    if (end !== body.length || packets.length !== last - first + 1) {
      throw new AppError(
        "BAD_REQUEST",
        `the body holds ${packets.length} whole record(s) but the headers announce ${last - first + 1} (seq ${first}..${last})`,
      );
    }
    await (this.started ??= this.pipeline.start());
    const turn = this.decoding.then(() => this.decodeBatch(sender, kind, first, body, packets, remoteIp, floor));
    this.decoding = turn.catch(() => {});
    return turn;
  }

  /** Runs alone (`decoding`): drops replays, decodes the rest into held rows, seals them with the new position. */
  private async decodeBatch(
    sender: string,
    kind: ForwardKind,
    first: number,
    body: Uint8Array,
    packets: Uint8Array[],
    remoteIp: string | undefined,
    floor: number,
  ): Promise<ForwardAnswer> {
    const st = await this.state(sender);
    const pos = st.held;
    if (first > pos + 1 && floor <= pos + 1) {
      // The edge still has packets this central does not hold (it lost what it held in a crash): send again from pos + 1.
      this.gaps.inc();
      return { last: pos, committed: st.committed, accepted: 0, duplicates: 0, rejected: {} };
    }
    const skip = Math.max(0, Math.min(packets.length, pos - first + 1));
    this.duplicates.inc(undefined, skip);
    if (skip === packets.length)
      return { last: pos, committed: st.committed, accepted: 0, duplicates: skip, rejected: {} };
    const fresh = packets.length - skip;
    if (this.stopped || this.deps.lake.backlog() + this.hold.pending + fresh > this.deps.maxBufferedRows) {
      throw new AppError("UNAVAILABLE", "the central's write buffer is full; retry later");
    }
    let rejected: Record<string, number> = {};
    let accepted = 0;
    let held = first + skip - 1;
    /** Rows a HEP ingest thread decoded and sealed for this batch alone. */
    let fromThread: ReturnType<BatchSink["seal"]> = [];
    if (kind === "hep") {
      const room = this.deps.maxBufferedRows - (this.deps.lake.backlog() + this.hold.pending);
      // On an ingest thread when one runs (the body is transferred there), as HEP over HTTP is.
      const onThread = this.deps.hepThreads?.(body, skip, room, remoteIp);
      // Else here; nothing awaits from the decode to the seal: the sink's batches hold this batch's rows only.
      const r = onThread ? await onThread : { ...decodeHepRecords(this.pipeline, body, skip, remoteIp), batches: [] };
      // Stopped meanwhile: the last commit is done, these rows would go nowhere; the edge sends them again.
      if (this.stopped) throw new AppError("UNAVAILABLE", "the central is stopping; retry later");
      accepted = r.accepted;
      rejected = r.rejected;
      held = first + skip + r.done - 1;
      fromThread = r.batches;
    } else {
      for (let i = skip; i < packets.length; i++) {
        let r: RecordOutcome;
        try {
          r =
            kind === "line_protocol"
              ? await this.decoders.lineProtocol(packets[i]!)
              : await this.decoders.otlp(packets[i]!);
        } catch (e) {
          // A broken invariant (DDL, row layout): logged, and the record comes again with the next batch.
          this.deps.logger.error("a forwarded record could not be stored", {
            kind,
            seq: first + i,
            error: errorMessage(e),
          });
          break;
        }
        if (r.kind === "unavailable") break;
        if (r.kind === "malformed") rejected.malformed = (rejected.malformed ?? 0) + 1;
        else {
          accepted++;
          if (r.problem) rejected[r.problem] = (rejected[r.problem] ?? 0) + 1;
        }
        held = first + i;
      }
    }
    // Rows and the new position held for the group commit (a position alone: every record refused for good).
    const rows: HeldRows[] = [...this.sink.seal(), ...fromThread].map((b) => ({
      key: b.key,
      bytes: new Uint8Array(b.buffer, 0, b.length),
      rows: b.rows,
      columns: b.columns,
      ...(b.span ? { span: b.span } : {}),
    }));
    st.held = Math.max(pos, held);
    this.received.inc(undefined, accepted);
    this.hold.add(sender, st.held, [...rows, ...this.heldSink.take()]);
    return { last: st.held, committed: st.committed, accepted, duplicates: skip, rejected };
  }

  /** After a group commit: the stream's committed position, and a `.pos` file of an earlier build gone. */
  private async committed(stream: string, watermark: number): Promise<void> {
    const st = await this.state(stream);
    st.committed = Math.max(st.committed, watermark);
    if (st.legacyPos) {
      rmSync(st.legacyPos, { force: true });
      delete st.legacyPos;
    }
  }
}

function checkKind(kind: string): ForwardKind {
  const k = FORWARD_KINDS.find((x) => x === kind);
  if (!k) throw new AppError("BAD_REQUEST", `x-svc-forward-kind must be one of ${FORWARD_KINDS.join(", ")}`);
  return k;
}
