/**
 * What the catalog needs to know about a Parquet data file, read from the file itself with
 * hyparquet (no DuckDB): its columns (name, Parquet field id = DuckLake column id, DuckLake type),
 * row count, footer length and the per-column statistics the ducklake extension stores in
 * ducklake_file_column_stats (docs/DUCKLAKE.md "What the Parquet writer must do"). The statistics
 * come from the footer; only float columns are read (page by page) to learn whether they hold
 * NaN, which Parquet min/max leave out. Used by `svc system --rebuild-catalog` (docs/OPERATIONS.md).
 */
import { open, stat } from "node:fs/promises";
import { parquetMetadata, parquetRead, type FileMetaData, type SchemaElement } from "hyparquet";
import { AppError, errorMessage } from "../../core/index.ts";
import {
  columnStatsFromParquet,
  formatStatValue,
  type LakeType,
  type NewColumnStats,
  type ParquetChunkStats,
} from "../catalog/index.ts";

export interface FooterColumn {
  fieldId: number;
  name: string;
  type: LakeType;
}

export interface ParquetFacts {
  recordCount: number;
  fileSizeBytes: number;
  footerSize: number;
  columns: FooterColumn[];
  /** By column name, as commitDataFiles takes them. */
  columnStats: Record<string, NewColumnStats>;
}

/** Timestamps as microseconds and dates as days (bigint/number), the inputs formatStatValue takes. */
const PARSERS = {
  timestampFromMicroseconds: (us: bigint) => us,
  timestampFromMilliseconds: (ms: bigint) => ms * 1000n,
  timestampFromNanoseconds: (ns: bigint) => ns / 1000n,
  dateFromDays: (days: number) => days,
};

/** Parquet physical type + annotations → DuckLake type name, or why the column cannot be one of ours. */
export function lakeTypeOf(e: SchemaElement): LakeType | string {
  const lt = e.logical_type;
  const ct = e.converted_type;
  switch (e.type) {
    case "BOOLEAN":
      return "boolean";
    case "INT32":
      if (ct === "DATE" || lt?.type === "DATE") return "date";
      if (ct === "INT_16" || (lt?.type === "INTEGER" && lt.bitWidth === 16 && lt.isSigned)) return "int16";
      if (ct === undefined || ct === "INT_32")
        return lt === undefined || (lt.type === "INTEGER" && lt.bitWidth === 32 && lt.isSigned)
          ? "int32"
          : `INT32 ${lt.type}`;
      return `INT32 ${ct}`;
    case "INT64":
      if (lt?.type === "TIMESTAMP")
        return lt.unit === "MICROS" ? (lt.isAdjustedToUTC ? "timestamptz" : "timestamp") : `TIMESTAMP ${lt.unit}`;
      if (ct === "TIMESTAMP_MICROS") return "timestamp";
      if (ct === "UINT_64" || (lt?.type === "INTEGER" && !lt.isSigned)) return "uint64";
      if (ct === undefined || ct === "INT_64")
        return lt === undefined || lt.type === "INTEGER" ? "int64" : `INT64 ${lt.type}`;
      return `INT64 ${ct}`;
    case "FLOAT":
      return "float32";
    case "DOUBLE":
      return "float64";
    case "BYTE_ARRAY":
      if (ct === "JSON" || lt?.type === "JSON") return "json";
      if (ct === "UTF8" || lt?.type === "STRING") return "varchar";
      return "BYTE_ARRAY without a string annotation (blob)";
    case "FIXED_LEN_BYTE_ARRAY":
      return lt?.type === "UUID" && e.type_length === 16
        ? "uuid"
        : `FIXED_LEN_BYTE_ARRAY ${lt?.type ?? ct ?? ""}`.trim();
    default:
      return String(e.type ?? "nested group");
  }
}

const isLake = (t: string): t is LakeType => !t.includes(" ") && /^[a-z0-9]+$/.test(t);

/** A float32 as DuckDB prints a FLOAT: the shortest decimal that reads back as the same float32. */
function float32Text(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  for (let p = 1; p <= 9; p++) {
    const s = x.toPrecision(p);
    if (Math.fround(Number(s)) === x) return s;
  }
  return String(x);
}

function statText(type: LakeType, v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (type === "float32" && typeof v === "number")
    return Number.isNaN(v) ? null : formatStatValue("float64", float32Text(v));
  return formatStatValue(type, v as string | number | bigint | boolean);
}

/** Reads the footer of `path` (one read of the file's tail). Throws VALIDATION with the reason. */
export async function readParquetFacts(path: string): Promise<ParquetFacts> {
  const size = (await stat(path)).size;
  const fh = await open(path, "r");
  let meta: FileMetaData;
  let footerSize: number;
  try {
    if (size < 12) throw new AppError("VALIDATION", `${size} bytes: too short for Parquet`);
    const tail = Buffer.alloc(8);
    await fh.read(tail, 0, 8, size - 8);
    if (tail.toString("latin1", 4) !== "PAR1")
      throw new AppError("VALIDATION", "no PAR1 at the end (incomplete or not Parquet)");
    footerSize = tail.readUInt32LE(0);
    if (footerSize + 12 > size) throw new AppError("VALIDATION", `footer length ${footerSize} exceeds the file`);
    const footer = Buffer.alloc(footerSize + 8);
    await fh.read(footer, 0, footer.length, size - footer.length);
    try {
      meta = parquetMetadata(footer, { parsers: PARSERS, geoparquet: false });
    } catch (e) {
      throw new AppError("VALIDATION", `unreadable footer: ${errorMessage(e)}`);
    }
  } finally {
    await fh.close();
  }
  const [root, ...elements] = meta.schema;
  if (!root || elements.length !== (root.num_children ?? 0) || elements.some((e) => (e.num_children ?? 0) > 0)) {
    throw new AppError("VALIDATION", "nested columns (struct, list, map) are not supported");
  }
  const columns: FooterColumn[] = [];
  for (const e of elements) {
    if (e.field_id === undefined)
      throw new AppError("VALIDATION", `column ${e.name} has no Parquet field id (DuckLake maps columns by field id)`);
    const t = lakeTypeOf(e);
    if (!isLake(t)) throw new AppError("VALIDATION", `column ${e.name}: unsupported Parquet type ${t}`);
    columns.push({ fieldId: e.field_id, name: e.name, type: t });
  }
  const typeOf = new Map(columns.map((c) => [c.name, c.type]));
  const chunks: ParquetChunkStats[] = [];
  for (const rg of meta.row_groups) {
    for (const ch of rg.columns) {
      const md = ch.meta_data;
      const name = md?.path_in_schema[0];
      const type = name === undefined ? undefined : typeOf.get(name);
      if (!md || name === undefined || type === undefined) continue;
      const s = md.statistics;
      chunks.push({
        path_in_schema: name,
        stats_min_value: statText(type, s?.min_value ?? s?.min),
        stats_max_value: statText(type, s?.max_value ?? s?.max),
        stats_null_count: s?.null_count ?? null,
        num_values: md.num_values,
        total_compressed_size: md.total_compressed_size,
      });
    }
  }
  const floats = columns.filter((c) => c.type === "float32" || c.type === "float64").map((c) => c.name);
  const nan = floats.length === 0 ? new Set<string>() : await nanColumns(path, size, meta, floats);
  return {
    recordCount: Number(meta.num_rows),
    fileSizeBytes: size,
    footerSize,
    columns,
    columnStats: columnStatsFromParquet(
      { columns: columns.map((c) => ({ columnId: c.fieldId, name: c.name, type: c.type, order: c.fieldId })) },
      chunks,
      nan,
    ),
  };
}

/** Float columns holding a NaN: read page by page (one column, one row group at a time). */
async function nanColumns(path: string, size: number, metadata: FileMetaData, names: string[]): Promise<Set<string>> {
  const file = {
    byteLength: size,
    slice: async (start: number, end?: number) => {
      const fh = await open(path, "r");
      try {
        const buf = Buffer.alloc((end ?? size) - start);
        await fh.read(buf, 0, buf.length, start);
        return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) as ArrayBuffer;
      } finally {
        await fh.close();
      }
    },
  };
  const compressors = { ZSTD: (input: Uint8Array) => new Uint8Array(Bun.zstdDecompressSync(input)) };
  const out = new Set<string>();
  let rowStart = 0;
  for (const rg of metadata.row_groups) {
    const rowEnd = rowStart + Number(rg.num_rows);
    for (const name of names) {
      if (out.has(name)) continue;
      await parquetRead({
        file,
        metadata,
        columns: [name],
        rowStart,
        rowEnd,
        compressors,
        onPage: (p) => {
          const values = p.columnData as ArrayLike<unknown>;
          for (let i = 0; i < values.length; i++) {
            const v = values[i];
            if (typeof v === "number" && Number.isNaN(v)) {
              out.add(name);
              break;
            }
          }
        },
      });
    }
    rowStart = rowEnd;
  }
  return out;
}
