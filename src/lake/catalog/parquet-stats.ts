/**
 * Turning a Parquet file's own metadata into the catalog's per-file column statistics (pure code).
 * The writer reads the rows of DuckDB's `parquet_metadata('<file>')` (one per row group and column
 * chunk) and the file's last 8 bytes; this folds them into NewDataFile fields the way the ducklake
 * extension fills ducklake_file_column_stats (value_count = non-NULL values, column_size_bytes =
 * compressed bytes of the column's chunks, min/max in the catalog text format).
 */
import { AppError } from "../../core/index.ts";
import type { NewColumnStats, TableInfo } from "./types.ts";
import { compareStatValues, formatStatValue, typeHasNan } from "./values.ts";

/** The parquet_metadata() columns used (DuckDB returns BIGINT columns as bigint). */
export interface ParquetChunkStats {
  path_in_schema: string;
  stats_min_value: string | null;
  stats_max_value: string | null;
  stats_null_count: bigint | number | null;
  num_values: bigint | number | null;
  total_compressed_size: bigint | number | null;
}

const num = (v: bigint | number | null) => (v === null ? null : Number(v));

/**
 * Column stats of one file keyed by column name. `containsNan` names float columns holding NaN
 * (Parquet min/max leave NaN out, so the writer computes it, e.g. `bool_or(isnan(x))`). A column
 * whose chunks lack null counts is given `nullCount` = all values (pruning then keeps the file).
 */
export function columnStatsFromParquet(
  table: Pick<TableInfo, "columns">,
  chunks: ParquetChunkStats[],
  containsNan: ReadonlySet<string> = new Set(),
): Record<string, NewColumnStats> {
  const out: Record<string, NewColumnStats> = {};
  const byName = new Map(table.columns.map((c) => [c.name, c]));
  // A chunk with values but no bound (DuckDB leaves min/max out of a float chunk holding NaN) makes
  // the file's bound unknown: a bound from the other chunks alone would be too narrow to prune by.
  const unknown = new Set<string>();
  for (const ch of chunks) {
    const col = byName.get(ch.path_in_schema);
    if (col === undefined) continue;
    const s = out[col.name] ?? { min: null, max: null, nullCount: 0, valueCount: 0, sizeBytes: 0 };
    out[col.name] = s;
    const values = num(ch.num_values) ?? 0;
    const nulls = num(ch.stats_null_count);
    s.nullCount += nulls ?? 0;
    s.valueCount = (s.valueCount ?? 0) + values - (nulls ?? 0);
    s.sizeBytes = (s.sizeBytes ?? 0) + (num(ch.total_compressed_size) ?? 0);
    const min = formatStatValue(col.type, ch.stats_min_value);
    const max = formatStatValue(col.type, ch.stats_max_value);
    if ((min === null || max === null) && (nulls === null || values > nulls)) unknown.add(col.name);
    if (min !== null && (s.min === null || compareStatValues(col.type, min, s.min) < 0)) s.min = min;
    if (max !== null && (s.max === null || compareStatValues(col.type, max, s.max) > 0)) s.max = max;
  }
  for (const name of unknown) {
    const s = out[name]!;
    s.min = null;
    s.max = null;
  }
  for (const [name, s] of Object.entries(out)) {
    const col = byName.get(name);
    if (col && typeHasNan(col.type)) s.containsNan = containsNan.has(name);
  }
  return out;
}

/** Footer length from a Parquet file's last 8 bytes: a little-endian uint32 followed by "PAR1". */
export function parquetFooterSize(tail: Uint8Array): number {
  if (tail.length < 8) throw new AppError("VALIDATION", "a Parquet tail needs 8 bytes");
  const t = tail.subarray(tail.length - 8);
  if (t[4] !== 0x50 || t[5] !== 0x41 || t[6] !== 0x52 || t[7] !== 0x31)
    throw new AppError("VALIDATION", "not a Parquet file (no PAR1 at the end)");
  return new DataView(t.buffer, t.byteOffset, 8).getUint32(0, true);
}
