/**
 * The central's side of store-and-forward (docs/DEPLOY.md "Forward protocol"): POST
 * /api/v1/forward takes a batch of an edge's packets (sender id, first and last seq), drops the
 * part at or below the sender's position (a replay after a lost answer or a restart), decodes the
 * rest exactly like UDP ingest (the same pipeline, so the same rows), waits until those rows are
 * in the spool, and only then records the sender's new position and answers with it.
 *
 * The position lives in `<state>/forward-in/<sender>.pos` (beside the spool, written by rename
 * after the spool files of the batch's rows are renamed into place), not yet in the catalog
 * commit: docs/DEPLOY.md "Where the central keeps an edge's position" says why and what a kill -9
 * between those two renames does (the batch is taken again: its rows twice).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { AppError, type Counter, type Logger, type MetricsRegistry } from "../core/index.ts";
import { eachRecord, type HepPipeline } from "../ingest/index.ts";
import type { Lake } from "../lake/index.ts";

const gunzipAsync = promisify(gunzip);
const SENDER = /^[A-Za-z0-9-]{1,64}$/;
/** Inflated body cap: a batch is at most ingest.forward.batch_bytes (64 MiB) on the edge. */
const MAX_BODY = 64 << 20;
const MAX_PACKETS = 1_000_000;

export interface ForwardReceiverDeps {
  pipeline: HepPipeline;
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

  constructor(private readonly deps: ForwardReceiverDeps) {
    mkdirSync(deps.dir, { recursive: true });
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
    const pos = this.position(sender);
    const skip = Math.max(0, Math.min(packets.length, pos - first + 1));
    this.duplicates.inc(undefined, skip);
    if (skip === packets.length) return { last: pos, accepted: 0, duplicates: skip, rejected: {} };
    const fresh = packets.length - skip;
    if (this.deps.lake.backlog() + fresh > this.deps.maxBufferedRows) {
      throw new AppError("UNAVAILABLE", "the central's write buffer is full; retry later");
    }
    const keys = new Set<string>();
    const rejected: Record<string, number> = {};
    let accepted = 0;
    let held = first + skip - 1;
    for (let i = skip; i < packets.length; i++) {
      const r = this.deps.pipeline.storePacket(packets[i]!, "forward", remoteIp);
      if (r.ok) {
        keys.add(r.value);
        accepted++;
      } else if (r.reason === "backlog_full") {
        break; // not taken: this packet and the rest come again with the next batch
      } else {
        // Decodes no better on a second try: counted (svc_hep_packets_dropped_total) and acknowledged.
        rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
      }
      held = first + i;
    }
    const spooled = await Promise.all([...keys].map((k) => this.deps.lake.whenSpooled(k)));
    if (!spooled.every(Boolean)) throw new AppError("UNAVAILABLE", "the central could not write the batch's rows to its spool; retry later");
    if (held > pos) {
      const path = join(this.deps.dir, `${sender}.pos`);
      writeFileSync(`${path}.tmp`, String(held));
      renameSync(`${path}.tmp`, path);
      this.positions.set(sender, held);
    }
    this.received.inc(undefined, accepted);
    return { last: Math.max(pos, held), accepted, duplicates: skip, rejected };
  }
}
