import { encodeParquet, type ParquetColumn, type RowGroupMeta } from "./parquet/encode.ts";
import { SPOOL_MAX_LINE_BYTES } from "./csv-batch.ts";
import { csvColumns, type RowWriter, type TableDef } from "./table.ts";
import { Column } from "./column-values.ts";
import { jsonObjectInto, newUuidState, uuidv7Into } from "./row-bytes.ts";

/**
 * Rows of one table written column by column, PLAIN-encoded as Parquet wants them, and sealed into
 * a Parquet file of one row group (docs/STORAGE.md "Parquet written by svc"). The producer writes
 * fields in the spool order (the uuid columns, then the written columns: the same calls as to
 * CsvBatch); `date_of:` columns are filled at the end of each row from their time column, so the
 * file holds every column of the table in table order, as a flush COPY writes it.
 */

const encoder = new TextEncoder();
const DAY_US = 86_400_000_000;

export class ColumnBatch implements RowWriter {
  /** The table's columns in table order (the file's), and for each spool field the column it fills. */
  private readonly columns: Column[];
  private readonly fields: Column[];
  /** date_of columns and the column each is computed from. */
  private readonly dates: Array<{ date: Column; from: Column }>;
  private readonly timeColumn: Column | undefined;
  private field = 0;
  private readonly uuid = newUuidState();
  rows = 0;
  minTime = Number.POSITIVE_INFINITY;
  maxTime = Number.NEGATIVE_INFINITY;
  timeNulls = false;

  constructor(
    readonly def: TableDef,
    rowsHint = 4096,
  ) {
    this.columns = def.columns.map((c) => new Column(c, c.type === "varchar" ? rowsHint * 16 : rowsHint * 8, rowsHint));
    const byName = new Map(this.columns.map((c) => [c.def.name, c]));
    this.fields = csvColumns(def).map((c) => byName.get(c.name)!);
    this.dates = this.columns
      .filter((c) => c.def.derived?.startsWith("date_of:"))
      .map((date) => ({ date, from: byName.get(date.def.derived!.slice(8))! }));
    this.timeColumn = byName.get(def.timeColumn);
  }

  /** Bytes held (the values of every column). */
  get byteLength(): number {
    let n = 0;
    for (const c of this.columns) n += c.len;
    return n;
  }

  private next(): Column {
    const c = this.fields[this.field++];
    if (!c) throw new Error(`row has more than ${this.fields.length} fields`);
    c.rowLen = c.len;
    return c;
  }

  private nul(c: Column): this {
    c.rowDefined(this.rows, 0);
    return this;
  }

  str(v: string | null | undefined): this {
    const c = this.next();
    if (v === null || v === undefined) return this.nul(c);
    const at = c.beginString(v.length * 3);
    const buf = c.buf;
    let len = c.len;
    for (let i = 0; i < v.length; i++) {
      const ch = v.charCodeAt(i);
      if (ch >= 0x80) {
        len += encoder.encodeInto(v.slice(i), buf.subarray(len)).written;
        break;
      }
      buf[len++] = ch;
    }
    c.len = len;
    c.endString(at);
    c.rowDefined(this.rows, 1);
    return this;
  }

  bytes(v: Uint8Array): this {
    const c = this.next();
    const at = c.beginString(v.length);
    c.buf.set(v, c.len);
    c.len += v.length;
    c.endString(at);
    c.rowDefined(this.rows, 1);
    return this;
  }

  /** A JSON object as one string value (CsvBatch.jsonObject's members and text). */
  jsonObject(kv: readonly unknown[]): this {
    const c = this.next();
    const at = c.beginString(2);
    jsonObjectInto(c, kv);
    c.endString(at);
    c.rowDefined(this.rows, 1);
    return this;
  }

  int(v: number | bigint | null | undefined): this {
    const c = this.next();
    if (v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v))) return this.nul(c);
    if (typeof v === "bigint") {
      c.ensure(8);
      new DataView(c.buf.buffer, c.buf.byteOffset + c.len, 8).setBigUint64(0, BigInt.asUintN(64, v), true);
      c.len += 8;
      c.exact = false;
    } else {
      const n = Math.trunc(v);
      if (c.def.type === "int32") c.int32(n);
      else c.int64(n);
      if (n < c.min) c.min = n;
      if (n > c.max) c.max = n;
    }
    c.rowDefined(this.rows, 1);
    return this;
  }

  float(v: number | null | undefined): this {
    const c = this.next();
    if (v === null || v === undefined || Number.isNaN(v)) return this.nul(c);
    c.float64(v);
    if (v < c.min) c.min = v;
    if (v > c.max) c.max = v;
    c.rowDefined(this.rows, 1);
    return this;
  }

  bool(v: boolean | null | undefined): this {
    const c = this.next();
    if (v === null || v === undefined) return this.nul(c);
    c.ensure(1);
    c.buf[c.len++] = v ? 1 : 0;
    c.rowDefined(this.rows, 1);
    return this;
  }

  time(us: number | null | undefined): this {
    const c = this.fields[this.field];
    if (c === this.timeColumn) {
      if (us === null || us === undefined || !Number.isFinite(us)) this.timeNulls = true;
      else {
        if (us < this.minTime) this.minTime = us;
        if (us > this.maxTime) this.maxTime = us;
      }
    }
    return this.int(us);
  }

  /** A UUIDv7 string (CsvBatch.uuidv7's bytes, unquoted). */
  uuidv7(nowMs: number): this {
    const c = this.next();
    const at = c.beginString(36);
    uuidv7Into(c, this.uuid, nowMs);
    c.endString(at);
    c.rowDefined(this.rows, 1);
    return this;
  }

  /**
   * Ends the row; false when its values pass SPOOL_MAX_LINE_BYTES and it was dropped instead (the
   * producer reports it): the same bound as a CSV spool line, so a row is kept or refused the same
   * way whatever the spool's format.
   */
  end(): boolean {
    if (this.field !== this.fields.length)
      throw new Error(`row has ${this.field} fields, table has ${this.fields.length} written columns`);
    let bytes = 0;
    for (let i = 0; i < this.field; i++) bytes += this.fields[i]!.len - this.fields[i]!.rowLen;
    if (bytes > SPOOL_MAX_LINE_BYTES) {
      this.discardPartialRow();
      return false;
    }
    for (const { date, from } of this.dates) {
      if (from.defined[this.rows] === 1 && from.len === from.rowLen + 8) {
        const b = from.buf;
        const at = from.rowLen;
        const lo = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! * 16777216);
        const hi = b[at + 4]! | (b[at + 5]! << 8) | (b[at + 6]! << 16) | (b[at + 7]! << 24);
        const day = Math.floor((hi * 4294967296 + (lo >>> 0)) / DAY_US);
        date.rowLen = date.len;
        date.int32(day);
        if (day < date.min) date.min = day;
        if (day > date.max) date.max = day;
        date.rowDefined(this.rows, 1);
      } else date.rowDefined(this.rows, 0);
    }
    this.field = 0;
    this.rows++;
    return true;
  }

  /** Drops a row that was started but never ended; whether anything was dropped. */
  discardPartialRow(): boolean {
    if (this.field === 0) return false;
    for (let i = 0; i < this.field; i++) {
      const c = this.fields[i]!;
      if (c.defined[this.rows] === 0) c.nulls--;
      c.len = c.rowLen;
    }
    this.field = 0;
    return true;
  }

  /**
   * The rows as a Parquet file of one row group (the parts to write in order) with `fieldIds` by
   * column name when given; the batch can be reset afterwards.
   */
  encode(
    fieldIds?: ReadonlyMap<string, number>,
    level = 1,
  ): { parts: Uint8Array[]; length: number; rowGroup: RowGroupMeta } {
    const cols: ParquetColumn[] = this.columns.map((c) => ({
      name: c.def.name,
      type: c.def.type,
      ...(fieldIds?.has(c.def.name) ? { fieldId: fieldIds.get(c.def.name)! } : {}),
    }));
    return encodeParquet(
      cols,
      this.columns.map((c) => c.data(this.rows)),
      this.rows,
      level,
    );
  }

  reset(): void {
    for (const c of this.columns) c.reset();
    this.field = 0;
    this.rows = 0;
    this.minTime = Number.POSITIVE_INFINITY;
    this.maxTime = Number.NEGATIVE_INFINITY;
    this.timeNulls = false;
  }
}
