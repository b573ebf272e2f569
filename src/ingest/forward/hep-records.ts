/**
 * The central's decoding of one forward batch of HEP packets (docs/DEPLOY.md "Forward protocol"),
 * shared by the forward receiver's own pipeline (main thread) and the HEP ingest threads (worker.ts):
 * the packets after the first `skip` (replays) go through the pipeline like UDP ingest
 * (`transport="forward"`) into a sink of their own, which is sealed right after, so the sealed
 * batches hold this batch's rows only. A packet refused for good (does not decode, wrong auth key)
 * is counted and passed over; a full buffer stops the batch before the packet (sent again).
 */
import type { SealedBatch } from "../batch-sink.ts";
import type { HepPipeline } from "../pipeline.ts";
import { eachRecord } from "./raw-batch.ts";

export interface HepRecordsResult {
  /** Packets passed over from the first one after `skip`: taken, or refused for good. */
  done: number;
  accepted: number;
  rejected: Record<string, number>;
}

/** A batch decoded on an ingest thread: the counts and its rows, sealed (buffers transferred). */
export interface ForwardDecoded extends HepRecordsResult {
  batches: SealedBatch[];
}

/** Runs synchronously (no await): nothing else writes into the pipeline's sink meanwhile. */
export function decodeHepRecords(
  pipeline: HepPipeline,
  body: Uint8Array,
  skip: number,
  remoteIp: string | undefined,
): HepRecordsResult {
  const rejected: Record<string, number> = {};
  let accepted = 0;
  let done = 0;
  let i = 0;
  eachRecord(body, (p) => {
    if (i++ < skip) return true;
    const r = pipeline.storePacket(p, "forward", remoteIp);
    // Not taken: the answer's `last` stops before it and the edge sends it again.
    if (!r.ok && r.reason === "backlog_full") return false;
    if (r.ok) accepted++;
    // Decodes no better on a second try: counted (svc_hep_packets_dropped_total) and acknowledged.
    else rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
    done++;
    return true;
  });
  return { done, accepted, rejected };
}
