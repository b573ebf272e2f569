import { asciiInto, grown, integerInto, jsonObjectInto, newUuidState, uuidv7Into, type ByteSink } from "./row-bytes.ts";
import { csvColumns, type RowWriter, type TableDef } from "./table.ts";

const encoder = new TextEncoder();

/**
 * Rows on their way into DuckDB are encoded as CSV bytes straight from the producer's values: the
 * SIP payload bytes are copied without a UTF-8 decode/encode round trip. DuckDB then parses the
 * batch on its own threads (`read_csv`), off the JS thread (docs/PLATFORM.md "Writing rows into DuckDB": row-by-row appends
 * cost ≈6.4 µs/row on the JS thread, this costs ≈1-2 µs).
 * The quote (and its escape, by doubling) is the control byte 0x01, not `"`: SIP headers and the
 * data_extra JSON are full of `"`, and every one of them cost a split copy; 0x01 does not occur
 * in SIP text, so a payload is one copy. NULL is the unquoted `\N`; every string is quoted so an
 * empty string stays empty.
 *
 * Over 400 lines on purpose: the encoder is the ingest hot path (one call per column per row at
 * 100 k rows/s); its byte writers share the growable buffer and the partial-row state, and an
 * indirection between files cost measurable time (docs/BENCHMARKS.md).
 */
export const SPOOL_QUOTE = 1;
/**
 * The longest spool line DuckDB reads back (read_csv `max_line_size`, src/lake/writer/spool-sql.ts).
 * A longer row is refused by end() as it is written: accepted, it made its spool file unreadable,
 * so the row (and the rest of its file) was lost after the producer had been told it was stored.
 * Kept at 1 MiB: the spool is read with a buffer of twice this per file (SPOOL_READ_BUFFER_BYTES).
 */
export const SPOOL_MAX_LINE_BYTES = 1 << 20;
const QUOTE = SPOOL_QUOTE;
const QUOTE_CHAR = String.fromCharCode(SPOOL_QUOTE);
const COMMA = 44;
const NEWLINE = 10;
const NULL_BYTES = [92, 78]; // \N
export class CsvBatch implements RowWriter, ByteSink {
  /** The bytes so far (ByteSink, for the shared writers of row-bytes.ts). */
  buf: Uint8Array;
  len = 0;
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

  ensure(extra: number): void {
    if (this.len + extra > this.buf.length) this.buf = grown(this.buf, this.len, this.len + extra);
  }

  /** Offset where the row being written started (for discarding a row left half-written). */
  private rowStart = 0;

  /** Starts a field: the comma before it, and room for `extra` more bytes. */
  private sep(extra = 2): void {
    if (this.field === 0) this.rowStart = this.len;
    if (this.len + extra + 1 > this.buf.length) this.ensure(extra + 1);
    if (this.field++ > 0) this.buf[this.len++] = COMMA;
  }

  /** After sep(): room for 2 bytes is there. */
  private writeNull(): void {
    this.buf[this.len++] = NULL_BYTES[0]!;
    this.buf[this.len++] = NULL_BYTES[1]!;
  }

  /** A finite integer in decimal, written digit by digit (no string). After sep(24). */
  private integer(v: number): void {
    integerInto(this, v);
  }

  private readonly uuid = newUuidState();

  private ascii(s: string): void {
    asciiInto(this, s);
  }

  str(v: string | null | undefined): this {
    if (v === null || v === undefined) {
      this.sep();
      this.writeNull();
      return this;
    }
    this.sep(v.length * 6 + 2);
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
    this.sep(v.length * 2 + 2);
    const buf = this.buf;
    buf[this.len++] = QUOTE;
    let start = 0;
    let q = v.indexOf(QUOTE);
    if (q < 0) {
      // The common case (0x01 is not text): one copy, no view.
      buf.set(v, this.len);
      this.len += v.length;
      buf[this.len++] = QUOTE;
      return this;
    }
    for (;;) {
      if (start > 0) q = v.indexOf(QUOTE, start);
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
    this.sep(24);
    if (v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v))) this.writeNull();
    else if (typeof v === "bigint") this.ascii(v.toString());
    else this.integer(Math.trunc(v));
    return this;
  }

  /**
   * A UUIDv7 (RFC 9562: 48-bit Unix ms, version 7, 12 bits of sub-millisecond time, 62 random
   * bits) as a quoted string field, written straight into the batch: `Bun.randomUUIDv7()` made a
   * string per row and copied it. The 12 bits carry the fraction of the millisecond (RFC 9562
   * method 3, ≈ 0.24 µs steps) and never go backwards on one thread (unless the clock steps back by
   * more than a second), so ordering rows by id
   * follows the order they were received in, also across ingest threads (docs/ARCHITECTURE.md
   * "Several ingest threads").
   */
  uuidv7(nowMs: number): this {
    this.sep(38);
    this.buf[this.len++] = QUOTE;
    uuidv7Into(this, this.uuid, nowMs);
    this.buf[this.len++] = QUOTE;
    return this;
  }

  float(v: number | null | undefined): this {
    this.sep(32);
    if (v === null || v === undefined || Number.isNaN(v)) this.writeNull();
    else if (!Number.isFinite(v)) this.ascii(v > 0 ? "inf" : "-inf");
    else this.ascii(String(v));
    return this;
  }

  bool(v: boolean | null | undefined): this {
    this.sep(5);
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

  /**
   * A JSON object as one string field, written straight into the batch: `kv` holds keys and values
   * in turn (ASCII keys that need no escaping; values strings, finite numbers, booleans or flat
   * string maps; undefined members are skipped). The text is exactly JSON.stringify's for the
   * same object, without building the object or the string (data_extra of every HEP row).
   */
  jsonObject(kv: readonly unknown[]): this {
    this.sep(2);
    this.buf[this.len++] = QUOTE;
    jsonObjectInto(this, kv);
    this.ensure(1);
    this.buf[this.len++] = QUOTE;
    return this;
  }

  /** Ends the row; false when it was longer than SPOOL_MAX_LINE_BYTES and dropped instead (the producer reports it). */
  end(): boolean {
    if (this.field !== this.columnsPerRow) {
      throw new Error(`row has ${this.field} fields, table has ${this.columnsPerRow} written columns`);
    }
    if (this.len + 1 - this.rowStart > SPOOL_MAX_LINE_BYTES) {
      this.len = this.rowStart;
      this.field = 0;
      return false;
    }
    this.ensure(1);
    this.buf[this.len++] = NEWLINE;
    this.field = 0;
    this.rows++;
    return true;
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

/** An empty batch for rows of `def` that tracks the span of its time column. */
export function newCsvBatch(def: TableDef, initial?: number | Uint8Array): CsvBatch {
  const cols = csvColumns(def);
  return new CsvBatch(
    cols.length,
    initial,
    cols.findIndex((c) => c.name === def.timeColumn),
  );
}
