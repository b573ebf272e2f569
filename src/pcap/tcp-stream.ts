/**
 * One direction of a TCP connection put back in sequence order (RFC 9293 §3.4: sequence numbers
 * modulo 2^32). Retransmitted bytes are dropped, out-of-order segments wait for the hole before
 * them, and a hole that never fills (lost in the capture) is skipped once too much waits behind it
 * or at the end of the file. Bytes that became contiguous thanks to a packet belong to that packet:
 * it is the one that completes whatever message they finish, which is how tshark reports it.
 */

export interface FrameRef {
  frameNumber: number;
  timestampUs: number;
}

export interface StreamChunk {
  data: Uint8Array;
  /** Bytes before this chunk are missing from the capture: a parser must resynchronise. */
  gapBefore: boolean;
  /** The packet that made these bytes available. */
  at: FrameRef;
}

export type SegmentKind = "in_order" | "retransmission" | "out_of_order" | "empty";

export interface PushResult {
  kind: SegmentKind;
  /** A SYN with a new initial sequence number: the old connection's buffered bytes are void. */
  restarted: boolean;
  chunks: StreamChunk[];
}

export interface TcpLimits {
  /** Bytes allowed to wait behind a hole before the hole is declared lost. */
  maxPendingBytes: number;
  maxPendingSegments: number;
}

interface Held {
  data: Uint8Array;
  at: FrameRef;
}

/** Signed distance a - b in sequence space. */
const seqDiff = (a: number, b: number) => (a - b) | 0;

export class TcpDirection {
  private nextSeq: number | null = null;
  private isn: number | null = null;
  private readonly pending = new Map<number, Held>();
  private pendingBytes = 0;

  constructor(private readonly limits: TcpLimits = { maxPendingBytes: 1 << 20, maxPendingSegments: 256 }) {}

  push(seg: { seq: number; syn: boolean; payload: Uint8Array }, at: FrameRef): PushResult {
    let restarted = false;
    let seq = seg.seq;
    if (seg.syn) {
      if (this.isn !== seg.seq) {
        restarted = this.nextSeq !== null;
        this.isn = seg.seq;
        this.nextSeq = (seg.seq + 1) >>> 0;
        this.pending.clear();
        this.pendingBytes = 0;
      }
      // Data on a SYN (TCP Fast Open, RFC 7413) starts after the SYN's own sequence number.
      seq = (seg.seq + 1) >>> 0;
    }
    const data = seg.payload;
    if (data.length === 0) return { kind: "empty", restarted, chunks: [] };
    if (this.nextSeq === null) this.nextSeq = seq;
    const d = seqDiff(seq, this.nextSeq);
    if (d + data.length <= 0) return { kind: "retransmission", restarted, chunks: [] };
    if (d > 0) {
      const held = this.pending.get(seq);
      if (held === undefined || held.data.length < data.length) {
        this.pendingBytes += data.length - (held?.data.length ?? 0);
        this.pending.set(seq, { data, at });
      }
      const chunks: StreamChunk[] = [];
      if (this.pendingBytes > this.limits.maxPendingBytes || this.pending.size > this.limits.maxPendingSegments) {
        this.skipHole(chunks);
      }
      return { kind: "out_of_order", restarted, chunks };
    }
    // d <= 0: in order, possibly overlapping bytes we already have (a partial retransmission).
    const fresh = data.subarray(-d);
    this.nextSeq = (this.nextSeq + fresh.length) >>> 0;
    const chunks: StreamChunk[] = [{ data: fresh, gapBefore: false, at }];
    this.drain(chunks, at);
    return { kind: "in_order", restarted, chunks };
  }

  /** End of capture: hand over whatever waits behind holes, each part marked as following a gap. */
  flush(): StreamChunk[] {
    const chunks: StreamChunk[] = [];
    while (this.pending.size > 0) this.skipHole(chunks);
    return chunks;
  }

  /** Gives up on the bytes before the earliest held segment and continues from it. */
  private skipHole(chunks: StreamChunk[]): void {
    if (this.nextSeq === null) return;
    let first: number | null = null;
    for (const seq of this.pending.keys()) {
      if (first === null || seqDiff(seq, first) < 0) first = seq;
    }
    if (first === null) return;
    const held = this.pending.get(first);
    if (held === undefined) return;
    this.pending.delete(first);
    this.pendingBytes -= held.data.length;
    this.nextSeq = (first + held.data.length) >>> 0;
    chunks.push({ data: held.data, gapBefore: true, at: held.at });
    this.drain(chunks, held.at);
  }

  /** Moves held segments that have become contiguous into `chunks`, attributed to `at`. */
  private drain(chunks: StreamChunk[], at: FrameRef): void {
    for (let progressed = true; progressed; ) {
      progressed = false;
      for (const [seq, held] of this.pending) {
        if (this.nextSeq === null) return;
        const d = seqDiff(seq, this.nextSeq);
        if (d > 0) continue;
        this.pending.delete(seq);
        this.pendingBytes -= held.data.length;
        if (d + held.data.length <= 0) continue;
        const fresh = held.data.subarray(-d);
        this.nextSeq = (this.nextSeq + fresh.length) >>> 0;
        chunks.push({ data: fresh, gapBefore: false, at });
        progressed = true;
      }
    }
  }
}
