/**
 * One column of a ColumnBatch (src/core/column-batch.ts): its values PLAIN-encoded as Parquet wants
 * them, its definition levels and the statistics the file's footer carries (docs/STORAGE.md
 * "Parquet written by svc").
 */
import type { ColumnChunkData } from "./parquet/encode.ts";
import { grown, type ByteSink } from "./row-bytes.ts";
import type { ColumnDef } from "./table.ts";

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
/** String statistics are kept only while every value is at most this long (payloads, JSON: none). */
const MAX_STAT_BYTES = 256;

/** One column's values (PLAIN), definition levels and numeric statistics. */
export class Column implements ByteSink {
  buf: Uint8Array;
  len = 0;
  defined: Uint8Array;
  nulls = 0;
  /** Length before this row's value (to drop a half-written row). */
  rowLen = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  /** False once a value was written the numeric statistics cannot hold (a bigint). */
  exact = true;
  longest = 0;

  constructor(
    readonly def: ColumnDef,
    size: number,
    rows: number,
  ) {
    this.buf = new Uint8Array(size);
    this.defined = new Uint8Array(rows);
  }

  ensure(extra: number): void {
    if (this.len + extra > this.buf.length) this.buf = grown(this.buf, this.len, this.len + extra);
  }

  rowDefined(row: number, v: number): void {
    if (row >= this.defined.length) {
      const next = new Uint8Array(this.defined.length * 2);
      next.set(this.defined);
      this.defined = next;
    }
    this.defined[row] = v;
    if (v === 0) this.nulls++;
  }

  /** 8 bytes little-endian of an integer below 2^53 in magnitude (two's complement). */
  int64(v: number): void {
    this.ensure(8);
    const hi = Math.floor(v / 4294967296);
    const lo = v - hi * 4294967296;
    const b = this.buf;
    let at = this.len;
    b[at++] = lo & 255;
    b[at++] = (lo >>> 8) & 255;
    b[at++] = (lo >>> 16) & 255;
    b[at++] = lo >>> 24;
    b[at++] = hi & 255;
    b[at++] = (hi >>> 8) & 255;
    b[at++] = (hi >>> 16) & 255;
    b[at++] = (hi >>> 24) & 255;
    this.len = at;
  }

  /** 8 bytes of an IEEE 754 double, little-endian. */
  float64(v: number): void {
    this.ensure(8);
    f64[0] = v;
    this.buf.set(f64Bytes, this.len);
    this.len += 8;
  }

  int32(v: number): void {
    this.ensure(4);
    const b = this.buf;
    let at = this.len;
    b[at++] = v & 255;
    b[at++] = (v >>> 8) & 255;
    b[at++] = (v >>> 16) & 255;
    b[at++] = (v >>> 24) & 255;
    this.len = at;
  }

  /** Starts a BYTE_ARRAY value: room for the length, patched by endString(). */
  beginString(extra: number): number {
    this.ensure(extra + 4);
    const at = this.len;
    this.len += 4;
    return at;
  }

  endString(at: number): void {
    const n = this.len - at - 4;
    const b = this.buf;
    b[at] = n & 255;
    b[at + 1] = (n >>> 8) & 255;
    b[at + 2] = (n >>> 16) & 255;
    b[at + 3] = n >>> 24;
    if (n > this.longest) this.longest = n;
  }

  /** The chunk for the encoder: values, definition levels, statistics. */
  data(rows: number): ColumnChunkData {
    const values = this.buf.subarray(0, this.len);
    const some = rows > this.nulls;
    let min: Uint8Array | undefined;
    let max: Uint8Array | undefined;
    const t = this.def.type;
    if (some && t === "varchar") {
      if (this.longest <= MAX_STAT_BYTES) [min, max] = stringStats(values);
    } else if (some && this.exact && t !== "boolean") {
      [min, max] = [numberBytes(t, this.min), numberBytes(t, this.max)];
    } else if (some && t === "boolean") {
      min = new Uint8Array([values.includes(0) ? 0 : 1]);
      max = new Uint8Array([values.includes(1) ? 1 : 0]);
    }
    return {
      values,
      defined: this.nulls > 0 ? this.defined.subarray(0, rows) : undefined,
      nullCount: this.nulls,
      min,
      max,
    };
  }

  reset(): void {
    this.len = 0;
    this.nulls = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
    this.exact = true;
    this.longest = 0;
  }
}

function numberBytes(t: ColumnDef["type"], v: number): Uint8Array {
  if (t === "float64") {
    f64[0] = v;
    return f64Bytes.slice();
  }
  const c = new Column({ name: "", type: t }, 8, 1);
  if (t === "int32" || t === "date") c.int32(v);
  else c.int64(v);
  return c.buf.slice(0, c.len);
}

/** Unsigned byte-wise comparison of v[ai, ai+an) and v[bi, bi+bn). */
function compareBytes(v: Uint8Array, ai: number, an: number, bi: number, bn: number): number {
  const n = Math.min(an, bn);
  for (let k = 0; k < n; k++) {
    const d = v[ai + k]! - v[bi + k]!;
    if (d !== 0) return d;
  }
  return an - bn;
}

/** Min and max of PLAIN BYTE_ARRAY values, compared as unsigned bytes (Parquet's order for strings). */
function stringStats(v: Uint8Array): [Uint8Array, Uint8Array] {
  let minAt = 4;
  let minLen = v[0]! | (v[1]! << 8) | (v[2]! << 16) | (v[3]! << 24);
  let maxAt = minAt;
  let maxLen = minLen;
  let at = 4 + minLen;
  while (at < v.length) {
    const n = v[at]! | (v[at + 1]! << 8) | (v[at + 2]! << 16) | (v[at + 3]! << 24);
    const s = at + 4;
    if (compareBytes(v, s, n, minAt, minLen) < 0) {
      minAt = s;
      minLen = n;
    } else if (compareBytes(v, s, n, maxAt, maxLen) > 0) {
      maxAt = s;
      maxLen = n;
    }
    at = s + n;
  }
  return [v.slice(minAt, minAt + minLen), v.slice(maxAt, maxAt + maxLen)];
}
