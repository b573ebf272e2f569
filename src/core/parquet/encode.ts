import type { ColumnType } from "../table.ts";
import { CODEC_NONE, CODEC_ZSTD, ENC_PLAIN, ENC_RLE } from "./read.ts";
import { ThriftWriter, T } from "./thrift.ts";

/**
 * Parquet files written by svc itself (docs/STORAGE.md "Parquet written by svc"): every column
 * OPTIONAL, one PLAIN data page (v1) per column chunk, definition levels RLE/bit-packed, the page
 * body zstd-compressed, min/max and null counts in the column statistics. The types are the ones
 * DuckDB writes for the same DuckDB types, so DuckDB (and the stock ducklake extension) reads the
 * file as if its own COPY had written it.
 */

/** Parquet physical types (parquet.thrift `Type`). */
const PHYSICAL: Record<ColumnType, number> = {
  varchar: 6, // BYTE_ARRAY
  int32: 1, // INT32
  int64: 2, // INT64
  uint64: 2,
  float64: 5, // DOUBLE
  boolean: 0, // BOOLEAN
  timestamp: 2,
  date: 1,
};

const REP_OPTIONAL = 1;

export interface ParquetColumn {
  name: string;
  type: ColumnType;
  /** Parquet field id (DuckLake maps file columns to table columns by it). */
  fieldId?: number;
}

/** One column of one row group, PLAIN-encoded by the producer. */
export interface ColumnChunkData {
  /** The non-null values, PLAIN: BYTE_ARRAY as 4-byte little-endian length + bytes, INT32 4 bytes, INT64 and DOUBLE 8, BOOLEAN one byte (0 or 1) per value (packed here). */
  values: Uint8Array;
  /** One byte per row, 1 = a value, 0 = NULL; undefined when no row is NULL. */
  defined: Uint8Array | undefined;
  nullCount: number;
  /** Statistics in PLAIN form (BYTE_ARRAY: the bytes alone); undefined = not recorded. */
  min: Uint8Array | undefined;
  max: Uint8Array | undefined;
}

/** Where a written column chunk sits and what it holds (the footer's ColumnMetaData). */
export interface ChunkMeta {
  /** Offset of the chunk's page header in the file. */
  offset: number;
  /** Bytes of the chunk as written (page header + compressed page). */
  size: number;
  /** Bytes of the chunk uncompressed (page header + page body). */
  uncompressed: number;
  numValues: number;
  nullCount: number;
  min: Uint8Array | undefined;
  max: Uint8Array | undefined;
  codec: number;
}

export interface RowGroupMeta {
  rows: number;
  chunks: ChunkMeta[];
}

export const PARQUET_MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // PAR1

/** Definition levels (max level 1) as the RLE/bit-packed hybrid with its 4-byte length prefix. */
export function definitionLevels(rows: number, defined: Uint8Array | undefined): Uint8Array {
  if (!defined) {
    // One RLE run of `rows` ones: header varint(rows << 1), then the value in one byte.
    const head: number[] = [];
    let v = rows * 2;
    while (v >= 0x80) {
      head.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    head.push(v, 1);
    const out = new Uint8Array(4 + head.length);
    new DataView(out.buffer).setUint32(0, head.length, true);
    out.set(head, 4);
    return out;
  }
  // Bit-packed groups of 8 values, least significant bit first: header varint(groups << 1 | 1).
  const groups = Math.ceil(rows / 8);
  const head: number[] = [];
  let v = groups * 2 + 1;
  while (v >= 0x80) {
    head.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  head.push(v);
  const out = new Uint8Array(4 + head.length + groups);
  new DataView(out.buffer).setUint32(0, head.length + groups, true);
  out.set(head, 4);
  packBits(defined, rows, out, 4 + head.length);
  return out;
}

/** One bit per byte of `src` (0 or 1), least significant bit first. */
function packBits(src: Uint8Array, n: number, out: Uint8Array, at: number): void {
  for (let i = 0; i < n; i++) if (src[i]) out[at + (i >>> 3)]! |= 1 << (i & 7);
}

export function pageHeader(rows: number, uncompressed: number, compressed: number): Uint8Array {
  const t = new ThriftWriter();
  t.i32(1, 0) // DATA_PAGE
    .i32(2, uncompressed)
    .i32(3, compressed)
    .struct(5)
    .i32(1, rows)
    .i32(2, ENC_PLAIN)
    .i32(3, ENC_RLE)
    .i32(4, ENC_RLE)
    .end();
  return t.finish();
}

/**
 * One column chunk: page header + page. Small pages stay uncompressed (zstd's frame would be
 * larger than what it saves); `level` 0 writes every page uncompressed.
 */
function chunk(
  col: ParquetColumn,
  d: ColumnChunkData,
  rows: number,
  level: number,
): { parts: Uint8Array[]; size: number; uncompressed: number; codec: number } {
  const levels = definitionLevels(rows, d.defined);
  let values = d.values;
  if (col.type === "boolean") {
    const n = d.values.length;
    const packed = new Uint8Array(Math.ceil(n / 8));
    packBits(d.values, n, packed, 0);
    values = packed;
  }
  const body = new Uint8Array(levels.length + values.length);
  body.set(levels, 0);
  body.set(values, levels.length);
  const compress = level > 0 && body.length >= 64;
  const page = compress ? Bun.zstdCompressSync(body, { level }) : body;
  const header = pageHeader(rows, body.length, page.length);
  return {
    parts: [header, page],
    size: header.length + page.length,
    uncompressed: header.length + body.length,
    codec: compress ? CODEC_ZSTD : CODEC_NONE,
  };
}

/**
 * A Parquet file of one row group: the parts to write in order (magic, chunks, footer), their
 * total length, and the row group's metadata (offsets in this file).
 */
export function encodeParquet(
  columns: readonly ParquetColumn[],
  data: readonly ColumnChunkData[],
  rows: number,
  level = 1,
): { parts: Uint8Array[]; length: number; rowGroup: RowGroupMeta } {
  const parts: Uint8Array[] = [PARQUET_MAGIC];
  let at = PARQUET_MAGIC.length;
  const chunks: ChunkMeta[] = [];
  columns.forEach((col, i) => {
    const d = data[i]!;
    const c = chunk(col, d, rows, level);
    parts.push(...c.parts);
    chunks.push({
      offset: at,
      size: c.size,
      uncompressed: c.uncompressed,
      numValues: rows,
      nullCount: d.nullCount,
      min: d.min,
      max: d.max,
      codec: c.codec,
    });
    at += c.size;
  });
  const rowGroup = { rows, chunks };
  const tail = footer(columns, [rowGroup]);
  parts.push(...tail);
  return { parts, length: at + tail.reduce((a, p) => a + p.length, 0), rowGroup };
}

/** The schema element of a column: physical type, OPTIONAL, name, field id, converted and logical type. */
function schemaElement(t: ThriftWriter, c: ParquetColumn): void {
  t.element().i32(1, PHYSICAL[c.type]).i32(3, REP_OPTIONAL).string(4, c.name);
  // converted_type (6): UTF8 0, DATE 6, TIMESTAMP_MICROS 10, UINT_64 14, INT_32 17, INT_64 18
  const converted = { varchar: 0, date: 6, timestamp: 10, uint64: 14, int32: 17, int64: 18 }[c.type as string];
  if (converted !== undefined) t.i32(6, converted);
  if (c.fieldId !== undefined) t.i32(9, c.fieldId);
  // logicalType (10), a union, where DuckDB writes one: TIMESTAMP 8 {isAdjustedToUTC, unit MICROS 2}
  if (c.type === "timestamp") t.struct(10).struct(8).bool(1, false).struct(2).struct(2).end().end().end().end();
  t.end();
}

/** The footer (FileMetaData, its length, the magic) of a file holding `rowGroups`. */
export function footer(columns: readonly ParquetColumn[], rowGroups: readonly RowGroupMeta[]): Uint8Array[] {
  const t = new ThriftWriter();
  t.i32(1, 1);
  t.list(2, T.STRUCT, columns.length + 1);
  t.element().string(4, "duckdb_schema").i32(5, columns.length).end();
  for (const c of columns) schemaElement(t, c);
  t.i64(
    3,
    rowGroups.reduce((a, g) => a + g.rows, 0),
  );
  t.list(4, T.STRUCT, rowGroups.length);
  rowGroups.forEach((g, ordinal) => {
    t.element().list(1, T.STRUCT, g.chunks.length);
    g.chunks.forEach((ch, i) => {
      const c = columns[i]!;
      t.element().i64(2, ch.offset).struct(3);
      t.i32(1, PHYSICAL[c.type]).list(2, T.I32, 2).i32Element(ENC_PLAIN).i32Element(ENC_RLE);
      t.list(3, T.BINARY, 1).stringElement(c.name);
      t.i32(4, ch.codec).i64(5, ch.numValues).i64(6, ch.uncompressed).i64(7, ch.size).i64(9, ch.offset);
      t.struct(12).i64(3, ch.nullCount);
      if (ch.max && ch.min) t.binary(5, ch.max).binary(6, ch.min);
      t.end(); // statistics
      t.end(); // meta_data
      t.end(); // column chunk
    });
    const compressed = g.chunks.reduce((a, c) => a + c.size, 0);
    t.i64(
      2,
      g.chunks.reduce((a, c) => a + c.uncompressed, 0),
    )
      .i64(3, g.rows)
      .i64(5, g.chunks[0]?.offset ?? 4)
      .i64(6, compressed)
      .i16(7, ordinal)
      .end();
  });
  t.string(6, "svc");
  const meta = t.finish();
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, meta.length, true);
  return [meta, len, PARQUET_MAGIC];
}
