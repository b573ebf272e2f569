/**
 * Accepted HEP packets as received, length-prefixed back to back (u32 big-endian length, then the
 * packet): what the ingest thread hands over for the forward log and the live mirror, and the
 * record format of the forward log and of a forward batch's body (docs/DEPLOY.md "Forward protocol").
 */

/** One hand-over's packets: `buffer` holds the records in [0, length), `count` of them. */
export interface RawChunk {
  buffer: ArrayBuffer;
  length: number;
  count: number;
}

const START = 1 << 16;

/** Collects packets between hand-overs; bounded, the overflow counted by the caller through `onDrop`. */
export class RawBatch {
  private buf = new Uint8Array(START);
  private view = new DataView(this.buf.buffer);
  private len = 0;
  private n = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onDrop: () => void,
  ) {}

  readonly add = (p: Uint8Array): void => {
    const need = this.len + 4 + p.length;
    if (need > this.buf.length) {
      if (need > this.maxBytes) {
        this.onDrop();
        return;
      }
      const next = new Uint8Array(Math.min(this.maxBytes, Math.max(need, this.buf.length * 2)));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    this.view.setUint32(this.len, p.length);
    this.buf.set(p, this.len + 4);
    this.len = need;
    this.n++;
  };

  /** The packets since the last seal (the buffer is handed over: a fresh one takes its place). */
  seal(): RawChunk | undefined {
    if (this.n === 0) return undefined;
    const out: RawChunk = { buffer: this.buf.buffer as ArrayBuffer, length: this.len, count: this.n };
    this.buf = new Uint8Array(Math.max(START, Math.min(this.maxBytes, this.len)));
    this.view = new DataView(this.buf.buffer);
    this.len = 0;
    this.n = 0;
    return out;
  }
}

/**
 * Walks the records of `bytes` until `fn` answers false (that record not taken) or a record is torn;
 * returns the offset after the last record taken (a log cuts a torn tail off there).
 */
export function eachRecord(bytes: Uint8Array, fn: (packet: Uint8Array) => boolean | undefined): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let off = 0;
  while (off + 4 <= bytes.length) {
    const len = view.getUint32(off);
    if (off + 4 + len > bytes.length) break;
    if (fn(bytes.subarray(off + 4, off + 4 + len)) === false) return off;
    off += 4 + len;
  }
  return off;
}
