import type { RowWriter } from "../../core/index.ts";

/**
 * Rows on their way into DuckDB are encoded as CSV bytes straight from the producer's values: the
 * SIP payload bytes are copied without a UTF-8 decode/encode round trip. DuckDB then parses the
 * batch on its own threads (`read_csv`), off the JS thread (PLATFORM-NOTES: row-by-row appends
 * cost ≈6.4 µs/row on the JS thread, this costs ≈1-2 µs).
 * The quote (and its escape, by doubling) is the control byte 0x01, not `"`: SIP headers and the
 * data_extra JSON are full of `"`, and every one of them cost a split copy; 0x01 does not occur
 * in SIP text, so a payload is one copy. NULL is the unquoted `\N`; every string is quoted so an
 * empty string stays empty.
 */
export const SPOOL_QUOTE = 1;
const QUOTE = SPOOL_QUOTE;
const QUOTE_CHAR = String.fromCharCode(SPOOL_QUOTE);
const COMMA = 44;
const NEWLINE = 10;
const encoder = new TextEncoder();
const NULL_BYTES = [92, 78]; // \N

export class CsvBatch implements RowWriter {
  private buf: Uint8Array;
  private len = 0;
  private field = 0;
  rows = 0;
  /**
   * Span of the values written into field `timeField` (epoch µs): lets the flush know the
   * partition dates without reading the batch back. `timeNulls` when a row had no time there.
   */
  minTime = Number.POSITIVE_INFINITY;
  maxTime = Number.NEGATIVE_INFINITY;
  timeNulls = false;

  /** `initial`: a size to allocate, or a buffer to reuse (its old contents are overwritten). */
  constructor(
    private readonly columnsPerRow: number,
    initial: number | Uint8Array = 1 << 20,
    private readonly timeField = -1,
  ) {
    this.buf = typeof initial === "number" ? new Uint8Array(initial) : initial;
  }

  /** The whole underlying buffer, for reuse by a later batch once this one's bytes are written. */
  get storage(): Uint8Array {
    return this.buf;
  }

  get byteLength(): number {
    return this.len;
  }

  private ensure(extra: number): void {
    const need = this.len + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Offset where the row being written started (for discarding a row left half-written). */
  private rowStart = 0;

  private sep(): void {
    if (this.field === 0) this.rowStart = this.len;
    if (this.field++ > 0) {
      this.ensure(1);
      this.buf[this.len++] = COMMA;
    }
  }

  private writeNull(): void {
    this.ensure(2);
    this.buf[this.len++] = NULL_BYTES[0]!;
    this.buf[this.len++] = NULL_BYTES[1]!;
  }

  private ascii(s: string): void {
    this.ensure(s.length);
    for (let i = 0; i < s.length; i++) this.buf[this.len++] = s.charCodeAt(i);
  }

  str(v: string | null | undefined): this {
    this.sep();
    if (v === null || v === undefined) {
      this.writeNull();
      return this;
    }
    this.ensure(v.length * 6 + 2);
    const buf = this.buf;
    let len = this.len;
    buf[len++] = QUOTE;
    // ASCII fast path (Call-IDs, users, addresses, JSON of plain fields): no subarray, no encoder.
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c >= 0x80) {
        const rest = v.slice(i).replaceAll(QUOTE_CHAR, QUOTE_CHAR + QUOTE_CHAR);
        len += encoder.encodeInto(rest, buf.subarray(len)).written;
        break;
      }
      if (c === QUOTE) buf[len++] = QUOTE;
      buf[len++] = c;
    }
    buf[len++] = QUOTE;
    this.len = len;
    return this;
  }

  /** UTF-8 text given as bytes (the caller has checked it is valid UTF-8 without NUL). */
  bytes(v: Uint8Array): this {
    this.sep();
    this.ensure(v.length * 2 + 2);
    const buf = this.buf;
    buf[this.len++] = QUOTE;
    let start = 0;
    for (;;) {
      const q = v.indexOf(QUOTE, start);
      if (q < 0) {
        buf.set(v.subarray(start), this.len);
        this.len += v.length - start;
        break;
      }
      buf.set(v.subarray(start, q + 1), this.len);
      this.len += q + 1 - start;
      buf[this.len++] = QUOTE;
      start = q + 1;
    }
    buf[this.len++] = QUOTE;
    return this;
  }

  int(v: number | bigint | null | undefined): this {
    this.sep();
    if (v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v))) this.writeNull();
    else this.ascii(typeof v === "bigint" ? v.toString() : String(Math.trunc(v)));
    return this;
  }

  float(v: number | null | undefined): this {
    this.sep();
    if (v === null || v === undefined || Number.isNaN(v)) this.writeNull();
    else if (!Number.isFinite(v)) this.ascii(v > 0 ? "inf" : "-inf");
    else this.ascii(String(v));
    return this;
  }

  bool(v: boolean | null | undefined): this {
    this.sep();
    if (v === null || v === undefined) this.writeNull();
    else this.ascii(v ? "true" : "false");
    return this;
  }

  /** Epoch microseconds; converted with make_timestamp() in the INSERT. */
  time(us: number | null | undefined): this {
    if (this.field === this.timeField) {
      if (us === null || us === undefined || !Number.isFinite(us)) this.timeNulls = true;
      else {
        if (us < this.minTime) this.minTime = us;
        if (us > this.maxTime) this.maxTime = us;
      }
    }
    return this.int(us);
  }

  end(): void {
    if (this.field !== this.columnsPerRow) {
      throw new Error(`row has ${this.field} fields, table has ${this.columnsPerRow} written columns`);
    }
    this.ensure(1);
    this.buf[this.len++] = NEWLINE;
    this.field = 0;
    this.rows++;
  }

  /**
   * Drops a row that was started but never ended (a producer threw mid-row): without this the
   * next row's fields would shift and the whole spool file would fail to parse. Returns whether
   * anything was dropped.
   */
  discardPartialRow(): boolean {
    if (this.field === 0) return false;
    this.len = this.rowStart;
    this.field = 0;
    return true;
  }

  get offset(): number {
    return this.len;
  }

  /** The encoded bytes (a view; valid until the next write). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  reset(): void {
    this.len = 0;
    this.field = 0;
    this.rows = 0;
    this.minTime = Number.POSITIVE_INFINITY;
    this.maxTime = Number.NEGATIVE_INFINITY;
    this.timeNulls = false;
  }
}
