/**
 * Reading data files at a snapshot from a PostgreSQL catalog (DuckLake spec "Queries" → SELECT,
 * SELECT with File Pruning), as src/lake/catalog/file-list.ts does over SQLite: a file is live at
 * snapshot s when begin_snapshot <= s AND (end_snapshot IS NULL OR end_snapshot > s).
 */
import { isAbsolute } from "node:path";
import { AppError } from "../../core/index.ts";
import {
  compareStatValues,
  type DataFileInfo,
  type FileColumnStats,
  FreshStats,
  formatStatValue,
  type StatBound,
  statsMemoOf,
  type TableInfo,
} from "../catalog/index.ts";
import { type Db, liveAt, num, numOrNull, type PgCtx } from "./pg-db.ts";

export interface FileRow {
  data_file_id: string;
  table_id: string;
  begin_snapshot: string;
  end_snapshot: string | null;
  path: string;
  path_is_relative: boolean | null;
  record_count: string;
  file_size_bytes: string;
  footer_size: string | null;
  row_id_start: string | null;
  mapping_id: string | null;
}

export const FILE_COLUMNS = `f.data_file_id, f.table_id, f.begin_snapshot, f.end_snapshot, f.path, f.path_is_relative, f.record_count, f.file_size_bytes,
  f.footer_size, f.row_id_start, f.mapping_id`;

export function resolveFilePath(
  ctx: PgCtx,
  t: Pick<TableInfo, "dataDir">,
  stored: string,
  relative: boolean | null,
): { path: string; absolutePath: string } {
  const rel = relative !== false && !isAbsolute(stored);
  if (!rel)
    return { path: stored.startsWith(ctx.dataPath) ? stored.slice(ctx.dataPath.length) : stored, absolutePath: stored };
  const full = `${t.dataDir}${stored}`;
  if (isAbsolute(full))
    return { path: full.startsWith(ctx.dataPath) ? full.slice(ctx.dataPath.length) : full, absolutePath: full };
  return { path: full, absolutePath: `${ctx.dataPath}${full}` };
}

export interface PgListOptions {
  /** Keep only files whose [min, max] of this column overlaps [min, max] (inclusive). */
  column?: string;
  min?: StatBound;
  max?: StatBound;
  /** Column statistics to load: true = every column (default), a list = those, false = none. */
  stats?: boolean | string[];
  /** Only these files (those live at the snapshot); not with `column`. */
  fileIds?: readonly number[];
}

/** Turns data_file rows into DataFileInfo with the wanted stats, partition values and delete files. */
export async function loadFiles(
  ctx: PgCtx,
  db: Db,
  t: TableInfo,
  rows: FileRow[],
  snap: number,
  stats: boolean | string[],
): Promise<DataFileInfo[]> {
  const byId = new Map<number, DataFileInfo>();
  for (const r of rows) {
    byId.set(num(r.data_file_id), {
      dataFileId: num(r.data_file_id),
      tableId: num(r.table_id),
      ...resolveFilePath(ctx, t, r.path, r.path_is_relative),
      recordCount: num(r.record_count),
      fileSizeBytes: num(r.file_size_bytes),
      footerSize: numOrNull(r.footer_size),
      rowIdStart: numOrNull(r.row_id_start),
      beginSnapshot: num(r.begin_snapshot),
      endSnapshot: numOrNull(r.end_snapshot),
      partitionValues: {},
      columnStats: {},
      mappingId: numOrNull(r.mapping_id),
    });
  }
  if (byId.size === 0) return [];
  const wanted = t.columns.filter((c) => stats === true || (Array.isArray(stats) && stats.includes(c.name)));
  const colName = new Map(wanted.map((c) => [c.columnId, c.name]));
  const partName = t.partitionBy;
  // Files known with their statistics are filled from memory; the others are read, and kept
  // when every column's were read (docs/DUCKLAKE.md "Statistics kept in memory").
  const memo = statsMemoOf(ctx);
  const keep = stats === true;
  const ids = memo.fill(byId, colName, partName);
  const fresh = new Map(keep ? ids.map((id) => [id, new FreshStats(id, byId.get(id)!)]) : []);
  if (colName.size > 0 && ids.length > 0) {
    const rs = (await db.unsafe(
      `SELECT data_file_id, column_id, column_size_bytes, value_count, null_count, min_value, max_value, contains_nan FROM ducklake_file_column_stats
       WHERE data_file_id = ANY($1::bigint[])${keep ? "" : " AND column_id = ANY($2::bigint[])"}`,
      keep ? [ids] : [ids, [...colName.keys()]],
    )) as Array<Record<string, unknown>>;
    for (const s of rs) {
      const read: FileColumnStats = {
        min: (s.min_value as string | null) ?? null,
        max: (s.max_value as string | null) ?? null,
        nullCount: numOrNull(s.null_count),
        valueCount: numOrNull(s.value_count),
        sizeBytes: numOrNull(s.column_size_bytes),
        containsNan: (s.contains_nan as boolean | null) ?? null,
      };
      const st = fresh.get(num(s.data_file_id))?.column(num(s.column_id), read) ?? read;
      const name = colName.get(num(s.column_id));
      const f = byId.get(num(s.data_file_id));
      if (name !== undefined && f !== undefined) f.columnStats[name] = st;
    }
  }
  if (partName !== undefined && ids.length > 0) {
    const parts = (await db.unsafe(
      "SELECT data_file_id, partition_value FROM ducklake_file_partition_value WHERE partition_key_index = 0 AND data_file_id = ANY($1::bigint[])",
      [ids],
    )) as Array<{
      data_file_id: string;
      partition_value: string;
    }>;
    for (const p of parts) {
      const f = byId.get(num(p.data_file_id));
      if (f) f.partitionValues[partName] = p.partition_value;
      fresh.get(num(p.data_file_id))?.partition(p.partition_value);
    }
  }
  memo.keep(fresh.values());
  const deletes = (await db.unsafe(
    `SELECT d.data_file_id, d.path, d.path_is_relative, d.delete_count FROM ducklake_delete_file d WHERE d.table_id = $2 AND ${liveAt("d")}`,
    [snap, t.tableId],
  )) as Array<{ data_file_id: string; path: string; path_is_relative: boolean | null; delete_count: string | null }>;
  for (const del of deletes) {
    const f = byId.get(num(del.data_file_id));
    if (f)
      f.deleteFile = {
        ...resolveFilePath(ctx, t, del.path, del.path_is_relative),
        deleteCount: numOrNull(del.delete_count),
      };
  }
  return [...byId.values()];
}

/**
 * Live files of table `t` at `snap` in data_file_id order, optionally pruned to those whose [min, max]
 * of a column overlaps [opts.min, opts.max]. As in SQLite: files whose bounds for the column are NULL
 * with non-NULL values (unknown) are kept; files without a stats row for it (all NULL) are pruned.
 * The comparison is done here on typed values (compareStatValues), never by the server's collation.
 */
export async function listFiles(
  ctx: PgCtx,
  db: Db,
  t: TableInfo,
  snap: number,
  opts: PgListOptions = {},
): Promise<DataFileInfo[]> {
  const stats = opts.stats ?? true;
  if (opts.column === undefined) {
    const only = opts.fileIds === undefined ? "" : " AND f.data_file_id = ANY($3::bigint[])";
    const args: unknown[] = opts.fileIds === undefined ? [snap, t.tableId] : [snap, t.tableId, [...opts.fileIds]];
    const rows = (await db.unsafe(
      `SELECT ${FILE_COLUMNS} FROM ducklake_data_file f WHERE f.table_id = $2 AND ${liveAt("f")}${only} ORDER BY f.data_file_id`,
      args,
    )) as FileRow[];
    return loadFiles(ctx, db, t, rows, snap, stats);
  }
  if (opts.fileIds !== undefined)
    throw new AppError("VALIDATION", "listDataFiles: fileIds and column pruning do not combine");
  const col = t.columns.find((c) => c.name === opts.column);
  if (!col) throw new AppError("VALIDATION", `table ${t.schemaName}.${t.name} has no column ${opts.column}`);
  const lo = opts.min === undefined ? null : formatStatValue(col.type, opts.min);
  const hi = opts.max === undefined ? null : formatStatValue(col.type, opts.max);
  const rows = (await db.unsafe(
    `SELECT ${FILE_COLUMNS}, s.min_value, s.max_value FROM ducklake_file_column_stats s
     JOIN ducklake_data_file f ON f.data_file_id = s.data_file_id AND f.table_id = $2 AND ${liveAt("f")}
     WHERE s.table_id = $2 AND s.column_id = $3 AND (s.max_value IS NOT NULL OR s.null_count IS NULL OR s.null_count < f.record_count)
     ORDER BY f.data_file_id`,
    [snap, t.tableId, col.columnId],
  )) as Array<FileRow & { min_value: string | null; max_value: string | null }>;
  const keep = rows.filter((r) => {
    if (r.min_value === null || r.max_value === null) return true;
    if (lo !== null && compareStatValues(col.type, r.max_value, lo) < 0) return false;
    if (hi !== null && compareStatValues(col.type, r.min_value, hi) > 0) return false;
    return true;
  });
  return loadFiles(ctx, db, t, keep, snap, stats);
}
