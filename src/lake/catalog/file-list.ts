/**
 * Reading data files at a snapshot (DuckLake spec "Queries" → SELECT, SELECT with File Pruning):
 * a file is live at snapshot s when begin_snapshot <= s AND (end_snapshot IS NULL OR end_snapshot > s).
 */
import { isAbsolute } from "node:path";
import { AppError } from "../../core/index.ts";
import { type Ctx, liveAt } from "./catalog-db.ts";
import { getTableById } from "./tables.ts";
import type { DataFileInfo, FileColumnStats, ListFilesOptions, TableInfo, TableStats } from "./types.ts";
import { FreshStats, statsMemoOf } from "./stats-memo.ts";
import { compareStatValues, formatStatValue } from "./values.ts";

export interface FileRow {
  data_file_id: number;
  table_id: number;
  begin_snapshot: number;
  end_snapshot: number | null;
  path: string;
  path_is_relative: number | null;
  record_count: number;
  file_size_bytes: number;
  footer_size: number | null;
  row_id_start: number | null;
  mapping_id: number | null;
}

/** Types whose stats text sorts like the values under SQLite's byte-wise TEXT order (index-friendly). */
const TEXT_ORDERED = new Set([
  "varchar",
  "json",
  "uuid",
  "date",
  "timestamp",
  "timestamp_us",
  "timestamp_ms",
  "timestamp_ns",
  "timestamp_s",
]);

function resolveFilePath(
  ctx: Ctx,
  t: TableInfo,
  stored: string,
  relative: number | null,
): { path: string; absolutePath: string } {
  const rel = relative !== 0 && !isAbsolute(stored);
  if (!rel)
    return { path: stored.startsWith(ctx.dataPath) ? stored.slice(ctx.dataPath.length) : stored, absolutePath: stored };
  const full = `${t.dataDir}${stored}`;
  if (isAbsolute(full))
    return { path: full.startsWith(ctx.dataPath) ? full.slice(ctx.dataPath.length) : full, absolutePath: full };
  return { path: full, absolutePath: `${ctx.dataPath}${full}` };
}

function chunks<T>(xs: T[], n = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** Turns data_file rows into DataFileInfo with stats (all columns, some, or none) and partition values. */
export function loadFiles(
  ctx: Ctx,
  t: TableInfo,
  rows: FileRow[],
  snap: number,
  stats: boolean | string[],
): DataFileInfo[] {
  const byId = new Map<number, DataFileInfo>();
  for (const r of rows) {
    byId.set(r.data_file_id, {
      dataFileId: r.data_file_id,
      tableId: r.table_id,
      ...resolveFilePath(ctx, t, r.path, r.path_is_relative),
      recordCount: r.record_count,
      fileSizeBytes: r.file_size_bytes,
      footerSize: r.footer_size,
      rowIdStart: r.row_id_start,
      beginSnapshot: r.begin_snapshot,
      endSnapshot: r.end_snapshot,
      partitionValues: {},
      columnStats: {},
      mappingId: r.mapping_id,
    });
  }
  const wanted = t.columns.filter((c) => stats === true || (Array.isArray(stats) && stats.includes(c.name)));
  const colName = new Map(wanted.map((c) => [c.columnId, c.name]));
  const partName = t.partitionBy;
  // Files known with their statistics are filled from memory; the others are read, and kept
  // when every column's were read (docs/DUCKLAKE.md "Statistics kept in memory").
  const memo = statsMemoOf(ctx);
  const keep = stats === true;
  for (const ids of chunks(memo.fill(byId, colName, partName))) {
    const inList = ids.map(() => "?").join(",");
    const fresh = new Map(keep ? ids.map((id) => [id, new FreshStats(id, byId.get(id)!)]) : []);
    if (colName.size > 0) {
      const rs = ctx.db
        .query<
          {
            data_file_id: number;
            column_id: number;
            column_size_bytes: number | null;
            value_count: number | null;
            null_count: number | null;
            min_value: string | null;
            max_value: string | null;
            contains_nan: number | null;
          },
          number[]
        >(
          `SELECT data_file_id, column_id, column_size_bytes, value_count, null_count, min_value, max_value, contains_nan FROM ducklake_file_column_stats
           WHERE data_file_id IN (${inList})${keep ? "" : ` AND column_id IN (${[...colName.keys()].join(",")})`}`,
        )
        .all(...ids);
      for (const s of rs) {
        const read: FileColumnStats = {
          min: s.min_value,
          max: s.max_value,
          nullCount: s.null_count,
          valueCount: s.value_count,
          sizeBytes: s.column_size_bytes,
          containsNan: s.contains_nan === null ? null : s.contains_nan === 1,
        };
        const st = fresh.get(s.data_file_id)?.column(s.column_id, read) ?? read;
        const name = colName.get(s.column_id);
        const f = byId.get(s.data_file_id);
        if (name !== undefined && f !== undefined) f.columnStats[name] = st;
      }
    }
    if (partName !== undefined) {
      const ps = ctx.db
        .query<{ data_file_id: number; partition_value: string }, number[]>(
          `SELECT data_file_id, partition_value FROM ducklake_file_partition_value WHERE partition_key_index = 0 AND data_file_id IN (${inList})`,
        )
        .all(...ids);
      for (const p of ps) {
        const f = byId.get(p.data_file_id);
        if (f) f.partitionValues[partName] = p.partition_value;
        fresh.get(p.data_file_id)?.partition(p.partition_value);
      }
    }
    memo.keep(fresh.values());
  }
  const deletes = ctx.db
    .query<
      { data_file_id: number; path: string; path_is_relative: number | null; delete_count: number | null },
      { $snap: number; $t: number }
    >(
      `SELECT d.data_file_id, d.path, d.path_is_relative, d.delete_count FROM ducklake_delete_file d WHERE d.table_id = $t AND ${liveAt("d")}`,
    )
    .all({ $snap: snap, $t: t.tableId });
  for (const del of deletes) {
    const f = byId.get(del.data_file_id);
    if (f) f.deleteFile = { ...resolveFilePath(ctx, t, del.path, del.path_is_relative), deleteCount: del.delete_count };
  }
  return [...byId.values()];
}

/**
 * Live files of a table at a snapshot, optionally pruned to those whose [min, max] of a column
 * overlaps [opts.min, opts.max]. Files whose stats for that column are NULL with non-NULL values
 * (unknown bounds) are kept; files without a stats row for it (column absent: all NULL) are pruned.
 */
export function listDataFiles(
  ctx: Ctx,
  tableId: number,
  snap: number,
  opts: ListFilesOptions & { stats?: boolean | string[] } = {},
): DataFileInfo[] {
  const t = getTableById(ctx, tableId, snap);
  const params = { $snap: snap, $t: tableId };
  if (opts.column === undefined) {
    let rows = ctx.db
      .query<FileRow, typeof params>(
        `SELECT f.* FROM ducklake_data_file f WHERE f.table_id = $t AND ${liveAt("f")} ORDER BY f.data_file_id`,
      )
      .all(params);
    if (opts.fileIds !== undefined) {
      const wanted = new Set(opts.fileIds);
      rows = rows.filter((r) => wanted.has(r.data_file_id));
    }
    return loadFiles(ctx, t, rows, snap, opts.stats ?? true);
  }
  if (opts.fileIds !== undefined)
    throw new AppError("VALIDATION", "listDataFiles: fileIds and column pruning do not combine");
  const col = t.columns.find((c) => c.name === opts.column);
  if (!col) throw new AppError("VALIDATION", `table ${t.schemaName}.${t.name} has no column ${opts.column}`);
  const lo = opts.min === undefined ? null : formatStatValue(col.type, opts.min);
  const hi = opts.max === undefined ? null : formatStatValue(col.type, opts.max);
  const textOrdered = TEXT_ORDERED.has(col.type);
  // With text-ordered stats the range test runs in SQLite as a range scan of the
  // (table_id, column_id, max_value) index; other types are compared as typed values below
  // (integers: "10" > "9"). A second indexed query adds files with unknown (NULL) bounds.
  const select = `SELECT f.*, s.min_value, s.max_value, s.null_count FROM ducklake_file_column_stats s
       JOIN ducklake_data_file f ON f.data_file_id = s.data_file_id AND f.table_id = $t AND ${liveAt("f")}
       WHERE s.table_id = $t AND s.column_id = $c`;
  type Row = FileRow & { min_value: string | null; max_value: string | null; null_count: number | null };
  const bounded: Record<string, string | number> = { ...params, $c: col.columnId };
  let range = " AND s.max_value IS NOT NULL";
  if (textOrdered && lo !== null) {
    range = " AND s.max_value >= $lo";
    bounded.$lo = lo;
  }
  if (textOrdered && hi !== null) {
    range += " AND (s.min_value IS NULL OR s.min_value <= $hi)";
    bounded.$hi = hi;
  }
  const rows = [
    ...ctx.db.query<Row, Record<string, string | number>>(`${select}${range}`).all(bounded),
    ...ctx.db
      .query<Row, Record<string, string | number>>(
        `${select} AND s.max_value IS NULL AND (s.null_count IS NULL OR s.null_count < f.record_count)`,
      )
      .all({ ...params, $c: col.columnId }),
  ].sort((a, b) => a.data_file_id - b.data_file_id);
  const keep = rows.filter((r) => {
    if (r.min_value === null || r.max_value === null) return true;
    if (lo !== null && compareStatValues(col.type, r.max_value, lo) < 0) return false;
    if (hi !== null && compareStatValues(col.type, r.min_value, hi) > 0) return false;
    return true;
  });
  return loadFiles(ctx, t, keep, snap, opts.stats ?? true);
}

export function tableStats(ctx: Ctx, tableId: number, snap: number): TableStats {
  const t = getTableById(ctx, tableId, snap);
  const row = ctx.db
    .query<{ record_count: number; next_row_id: number; file_size_bytes: number }, [number]>(
      "SELECT record_count, next_row_id, file_size_bytes FROM ducklake_table_stats WHERE table_id = ? ORDER BY rowid DESC LIMIT 1",
    )
    .get(tableId);
  const files = ctx.db
    .query<{ n: number }, { $snap: number; $t: number }>(
      `SELECT count(*) AS n FROM ducklake_data_file f WHERE f.table_id = $t AND ${liveAt("f")}`,
    )
    .get({ $snap: snap, $t: tableId });
  const columns: TableStats["columns"] = {};
  const names = new Map(t.columns.map((c) => [c.columnId, c.name]));
  const cs = ctx.db
    .query<
      {
        column_id: number;
        contains_null: number | null;
        contains_nan: number | null;
        min_value: string | null;
        max_value: string | null;
      },
      [number]
    >(
      "SELECT column_id, contains_null, contains_nan, min_value, max_value FROM ducklake_table_column_stats WHERE table_id = ? ORDER BY rowid",
    )
    .all(tableId);
  for (const c of cs) {
    const name = names.get(c.column_id);
    if (name === undefined) continue;
    columns[name] = {
      min: c.min_value,
      max: c.max_value,
      containsNull: c.contains_null === null ? null : c.contains_null === 1,
      containsNan: c.contains_nan === null ? null : c.contains_nan === 1,
    };
  }
  return {
    tableId,
    recordCount: row?.record_count ?? 0,
    nextRowId: row?.next_row_id ?? 0,
    fileSizeBytes: row?.file_size_bytes ?? 0,
    fileCount: files?.n ?? 0,
    columns,
  };
}
