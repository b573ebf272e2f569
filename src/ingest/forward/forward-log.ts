/**
 * The edge's forward log (docs/DEPLOY.md "Forward log"): every accepted HEP packet, appended at
 * each hand-over of the ingest threads, in segment files `<first seq>.seg` under
 * `<state>/forward/`, records length-prefixed (raw-batch.ts). Sequence numbers start at 1 and only
 * grow, over restarts too: a packet's seq is its segment's first seq plus its index there. The last
 * seq the central committed is in `acked` (written by rename); segments wholly at or below it
 * are deleted, and a restart sends again from the packet after it. Above `maxBacklogBytes` the oldest segment goes, its unsent packets counted as
 * dropped. Independent of the lake spool: a flush never waits for it, nor it for a flush.
 * Reads and appends are synchronous on the main thread: nothing else touches the files.
 */
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { eachRecord } from "./raw-batch.ts";

interface Segment {
  first: number;
  count: number;
  bytes: number;
}

export interface ForwardBatch {
  first: number;
  last: number;
  /** The packets' records (length-prefixed). */
  body: Uint8Array;
  count: number;
  /** Where the batch ends: the cursor after its acknowledgement. */
  end: { seg: number; offset: number };
}

export interface ForwardLogOptions {
  dir: string;
  maxBacklogBytes: number;
  segmentBytes: number;
  /** Packets of a deleted segment that were never acknowledged. */
  onDrop(packets: number): void;
}

const NAME = /^(\d{1,20})\.seg$/;
const pad = (n: number) => String(n).padStart(20, "0");

export class ForwardLog {
  private readonly segs: Segment[] = [];
  private fd: number | undefined;
  private nextSeq = 1;
  private ackedSeq = 0;
  /** The next packet to send: segment (by first seq), byte offset in it, its seq. */
  private cursor = { seg: 0, offset: 0, seq: 1 };
  /** Append times of the first packet of each chunk not yet acknowledged: the lag. */
  private readonly times: Array<{ seq: number; atMs: number }> = [];

  constructor(private readonly opts: ForwardLogOptions) {
    mkdirSync(opts.dir, { recursive: true });
    this.ackedSeq = readNumber(join(opts.dir, "acked")) ?? 0;
    const files = readdirSync(opts.dir)
      .map((f) => NAME.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    for (const first of files) {
      const path = this.path(first);
      const bytes = readFileSync(path);
      let count = 0;
      const good = eachRecord(bytes, () => {
        count++;
        return true;
      });
      // A record torn by a crash mid-append is cut off: its packet never got a seq anybody saw.
      if (good < bytes.length) {
        const fd = openSync(path, "r+");
        ftruncateSync(fd, good);
        closeSync(fd);
      }
      this.segs.push({ first, count, bytes: good });
    }
    const tail = this.segs.at(-1);
    this.nextSeq = Math.max(this.ackedSeq + 1, tail ? tail.first + tail.count : 1);
    const mtime = tail ? statSync(this.path(tail.first)).mtimeMs : Date.now();
    this.seekCursor(this.ackedSeq + 1);
    if (this.cursor.seq < this.nextSeq) this.times.push({ seq: this.cursor.seq, atMs: mtime });
    this.dropAcked();
  }

  private path(first: number): string {
    return join(this.opts.dir, `${pad(first)}.seg`);
  }

  /** The cursor at `seq` (or the first packet after it that is still in the log). */
  private seekCursor(seq: number): void {
    for (const s of this.segs) {
      if (s.first + s.count <= seq) continue;
      if (s.first >= seq) {
        this.cursor = { seg: s.first, offset: 0, seq: s.first };
        return;
      }
      const bytes = readFileSync(this.path(s.first)).subarray(0, s.bytes);
      let at = s.first;
      const offset = eachRecord(bytes, () => (at >= seq ? false : (at++, true)));
      this.cursor = { seg: s.first, offset, seq };
      return;
    }
    // Past every packet in the log (all acknowledged): the next append continues the last segment
    // when it continues its seqs, so the cursor waits at that segment's end; else at a new one.
    const tail = this.segs.at(-1);
    if (tail && tail.first + tail.count === this.nextSeq && tail.bytes < this.opts.segmentBytes)
      this.cursor = { seg: tail.first, offset: tail.bytes, seq: this.nextSeq };
    else this.cursor = { seg: this.nextSeq, offset: 0, seq: this.nextSeq };
  }

  /**
   * Appends `count` records (`bytes`); their seqs are the next ones. A chunk is split at segment
   * boundaries, so no segment grows past `segmentBytes` by more than one packet whatever the size of
   * a hand-over: the cap, which drops whole segments, then holds to within one segment.
   */
  append(bytes: Uint8Array, count: number, nowMs = Date.now()): void {
    if (count === 0) return;
    // One time per hand-over (10 a second), bounded: past the bound the lag reads a little high.
    if (this.cursor.seq === this.nextSeq || this.times.length < 100_000)
      this.times.push({ seq: this.nextSeq, atMs: nowMs });
    let start = 0;
    let at = 0;
    let n = 0;
    let room = this.room();
    eachRecord(bytes, (p) => {
      if (n > 0 && 4 + p.length > room) {
        // The records so far fill this segment: written, and the next ones start a new segment.
        this.write(bytes.subarray(start, at), n);
        start = at;
        n = 0;
        room = this.room();
      }
      n++;
      at += 4 + p.length;
      room -= 4 + p.length;
      return true;
    });
    if (n > 0) this.write(bytes.subarray(start, at), n);
    this.enforceCap();
  }

  /** Bytes the tail segment still takes (0 when a new one must start). */
  private room(): number {
    const tail = this.segs.at(-1);
    if (!tail || tail.first + tail.count !== this.nextSeq) return 0;
    return Math.max(0, this.opts.segmentBytes - tail.bytes);
  }

  /** Writes `n` records to the tail segment, or to a new one when the tail is full or not continued. */
  private write(bytes: Uint8Array, n: number): void {
    let tail = this.segs.at(-1);
    // A segment's records have consecutive seqs from its name: one that does not end right before
    // nextSeq (the central acknowledged past it) is never appended to.
    if (!tail || tail.bytes >= this.opts.segmentBytes || tail.first + tail.count !== this.nextSeq) {
      if (this.fd !== undefined) closeSync(this.fd);
      tail = { first: this.nextSeq, count: 0, bytes: 0 };
      this.segs.push(tail);
      this.fd = openSync(this.path(tail.first), "a");
    } else if (this.fd === undefined) this.fd = openSync(this.path(tail.first), "a");
    let off = 0;
    while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
    tail.count += n;
    tail.bytes += bytes.length;
    this.nextSeq += n;
  }

  /** Deletes the oldest segments while the log is over its cap (never the one being written). */
  private enforceCap(): void {
    while (this.segs.length > 1 && this.backlogBytes() > this.opts.maxBacklogBytes) {
      const s = this.segs.shift()!;
      const unsent = Math.max(0, s.first + s.count - Math.max(this.cursor.seq, s.first));
      if (unsent > 0) this.opts.onDrop(unsent);
      unlinkSync(this.path(s.first));
      if (this.cursor.seg === s.first) {
        const next = this.segs[0]!;
        this.cursor = { seg: next.first, offset: 0, seq: next.first };
      }
    }
    while (this.times.length > 1 && this.times[1]!.seq <= this.cursor.seq) this.times.shift();
  }

  /** Bytes in the log's segments (acknowledged packets of the oldest one included). */
  backlogBytes(): number {
    let n = 0;
    for (const s of this.segs) n += s.bytes;
    return n;
  }

  /** Packets not yet acknowledged. */
  backlogPackets(): number {
    return this.nextSeq - this.cursor.seq;
  }

  /** Seconds since the oldest unacknowledged packet was appended (0 when none waits). */
  lagSec(nowMs = Date.now()): number {
    if (this.cursor.seq >= this.nextSeq) return 0;
    let at: number | undefined;
    for (const t of this.times) {
      if (t.seq > this.cursor.seq) break;
      at = t.atMs;
    }
    at ??= this.times[0]?.atMs ?? nowMs;
    return Math.max(0, (nowMs - at) / 1000);
  }

  acked(): number {
    return this.ackedSeq;
  }

  /** The next batch from the cursor: at most `maxPackets` and `maxBytes` (one packet at least). */
  read(maxPackets: number, maxBytes: number): ForwardBatch | undefined {
    if (this.cursor.seq >= this.nextSeq) return undefined;
    let seg = this.segs.find((s) => s.first === this.cursor.seg);
    let offset = this.cursor.offset;
    if (!seg || offset >= seg.bytes) {
      // The cursor's segment is finished: the next one.
      seg = this.segs.find((s) => s.first > this.cursor.seg && s.count > 0);
      if (!seg) return undefined;
      this.cursor = { seg: seg.first, offset: 0, seq: Math.max(this.cursor.seq, seg.first) };
      offset = 0;
    }
    const want = Math.min(seg.bytes - offset, maxBytes + 4 + 65_536);
    const fd = openSync(this.path(seg.first), "r");
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(want);
      let got = 0;
      while (got < want) {
        const n = readSync(fd, bytes, got, want - got, offset + got);
        if (n <= 0) break;
        got += n;
      }
      bytes = bytes.subarray(0, got);
    } finally {
      closeSync(fd);
    }
    let count = 0;
    let size = 0;
    const end = eachRecord(bytes, (p) => {
      if (count > 0 && (count >= maxPackets || size + 4 + p.length > maxBytes)) return false;
      count++;
      size += 4 + p.length;
      return true;
    });
    const used = end;
    if (count === 0) return undefined;
    const first = this.cursor.seq;
    return {
      first,
      last: first + count - 1,
      body: bytes.subarray(0, used),
      count,
      end: { seg: seg.first, offset: offset + used },
    };
  }

  /**
   * The central's answer to batch `b` (docs/DEPLOY.md "Forward protocol"): it holds every packet up
   * to `last` and has committed every packet up to `committed`. The cursor moves past `last`: past
   * the batch, or back (a central that lost what it held in a crash, or took only part of the
   * batch) so those packets go again. Only `committed` is durable here (`acked`): segments go once
   * wholly at or below it, and a restart of this edge sends again from it.
   */
  ack(b: ForwardBatch, last: number, committed: number): void {
    if (this.cursor.seq === b.first) {
      if (last >= b.last) this.cursor = { seg: b.end.seg, offset: b.end.offset, seq: b.last + 1 };
      else this.seekCursor(Math.max(last + 1, this.ackedSeq + 1));
    }
    this.commit(committed);
  }

  /** An idle edge's question answered (GET /api/v1/forward): the same rules as `ack`, without a batch. */
  position(last: number, committed: number): void {
    if (last + 1 < this.cursor.seq) this.seekCursor(Math.max(last + 1, this.ackedSeq + 1));
    this.commit(committed);
  }

  private commit(committed: number): void {
    const next = Math.max(this.ackedSeq, Math.min(committed, this.cursor.seq - 1));
    if (next !== this.ackedSeq) {
      this.ackedSeq = next;
      const tmp = join(this.opts.dir, "acked.tmp");
      writeFileSync(tmp, String(this.ackedSeq));
      renameSync(tmp, join(this.opts.dir, "acked"));
    }
    while (this.times.length > 1 && this.times[1]!.seq <= this.cursor.seq) this.times.shift();
    this.dropAcked();
  }

  /** Packets sent and held by the central but not yet committed there (the edge asks again when idle). */
  uncommitted(): number {
    return this.cursor.seq - 1 - this.ackedSeq;
  }

  /** The first seq the log still has (packets below it were committed, or deleted at the cap). */
  floor(): number {
    return this.segs[0]?.first ?? this.nextSeq;
  }

  /** Deletes segments whose packets are all acknowledged (the one being written stays). */
  private dropAcked(): void {
    while (
      this.segs.length > 1 &&
      this.segs[0]!.first + this.segs[0]!.count - 1 <= this.ackedSeq &&
      this.segs[0]!.first < this.cursor.seg
    ) {
      unlinkSync(this.path(this.segs.shift()!.first));
    }
  }

  /** The next seq an appended packet gets. */
  next(): number {
    return this.nextSeq;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The stable id of this edge (`<state>/forward/sender-id`, made once): the central keys positions by it. */
export function senderId(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "sender-id");
  if (existsSync(path)) {
    const id = readFileSync(path, "utf8").trim();
    if (/^[A-Za-z0-9-]{1,64}$/.test(id)) return id;
  }
  const id = crypto.randomUUID();
  writeFileSync(`${path}.tmp`, `${id}\n`);
  renameSync(`${path}.tmp`, path);
  return id;
}

function readNumber(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
