/**
 * Data files and their statistics: ducklake_data_file, ducklake_file_column_stats,
 * ducklake_file_partition_value, ducklake_table_stats, ducklake_table_column_stats (DuckLake spec
 * "Queries" → INSERT). Each public function is one snapshot in one SQLite transaction.
 */
import { statSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { AppError } from "../../core/index.ts";
import { type Ctx, type Draft, draft, finish, writeTxn } from "./catalog-db.ts";
import { loadFiles, type FileRow } from "./file-list.ts";
import { settleDataFiles } from "./inflight.ts";
import { getTableById, partitionKeys } from "./tables.ts";
import type { DataFileInfo, NewColumnStats, NewDataFile, StatBound, TableInfo } from "./types.ts";
import { compareStatValues, formatStatValue, typeHasNan } from "./values.ts";

/** Absolute directory of a table's files. */
export const tableDirAbs = (ctx: Ctx, t: TableInfo) => (isAbsolute(t.dataDir) ? t.dataDir : `${ctx.dataPath}${t.dataDir}`);

/** Stored form of a file path: relative to the table directory when below it (path_is_relative), else absolute. */
function storedPath(ctx: Ctx, t: TableInfo, input: string): { path: string; relative: 0 | 1; absolute: string } {
  const absolute = normalize(isAbsolute(input) ? input : `${ctx.dataPath}${input}`);
  const dir = tableDirAbs(ctx, t);
  if (absolute.startsWith(dir) && absolute.length > dir.length) return { path: absolute.slice(dir.length), relative: 1, absolute };
  return { path: absolute, relative: 0, absolute };
}

const isCount = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

interface ColumnAgg {
  columnId: number;
  type: string;
  min: string | null;
  max: string | null;
  containsNull: boolean;
  containsNan: boolean;
}

interface TableAgg {
  records: number;
  bytes: number;
  rowIds: number;
  columns: Map<number, ColumnAgg>;
}

function validateFile(ctx: Ctx, t: TableInfo, f: NewDataFile, partitioned: string | undefined): void {
  const where = { table: `${t.schemaName}.${t.name}`, path: f.path };
  if (!isCount(f.recordCount) || !isCount(f.fileSizeBytes) || !isCount(f.footerSize)) {
    throw new AppError("VALIDATION", `data file ${f.path}: recordCount, fileSizeBytes and footerSize must be non-negative integers`, { details: where });
  }
  const names = new Set(t.columns.map((c) => c.name));
  for (const [name, s] of Object.entries(f.columnStats)) {
    if (!names.has(name)) throw new AppError("VALIDATION", `data file ${f.path}: stats for unknown column ${name}`, { details: where });
    if (!isCount(s.nullCount) || s.nullCount > f.recordCount) {
      throw new AppError("VALIDATION", `data file ${f.path}: column ${name} nullCount ${s.nullCount} is not within 0..${f.recordCount}`, { details: where });
    }
  }
  const keys = Object.keys(f.partitionValues ?? {});
  if (partitioned === undefined ? keys.length > 0 : keys.length !== 1 || keys[0] !== partitioned) {
    throw new AppError("VALIDATION", `data file ${f.path}: partition values ${JSON.stringify(f.partitionValues ?? {})} do not match the partitioning (${partitioned ?? "none"})`, {
      details: where,
    });
  }
  const size = statSync(storedPath(ctx, t, f.path).absolute, { throwIfNoEntry: false })?.size;
  if (size !== f.fileSizeBytes) {
    throw new AppError("VALIDATION", `data file ${f.path}: ${size === undefined ? "does not exist" : `is ${size} bytes, not ${f.fileSizeBytes}`}`, { details: where });
  }
}

function tableStatsRow(ctx: Ctx, tableId: number) {
  return ctx.db
    .query<{ record_count: number; next_row_id: number; file_size_bytes: number }, [number]>(
      "SELECT record_count, next_row_id, file_size_bytes FROM ducklake_table_stats WHERE table_id = ? ORDER BY rowid DESC LIMIT 1",
    )
    .get(tableId);
}

/** Registers `files` of table `t` in snapshot `d`: data_file, file_column_stats and partition rows. */
function insertFiles(ctx: Ctx, d: Draft, t: TableInfo, files: NewDataFile[], agg: TableAgg): void {
  const keys = partitionKeys(ctx, t.tableId, d.base.snapshot_id);
  if (keys.length > 1 || (keys[0] !== undefined && keys[0].transform !== "identity")) {
    throw new AppError("UNSUPPORTED", `table ${t.schemaName}.${t.name} has a partitioning this build does not write (only one identity column)`);
  }
  for (const f of files) validateFile(ctx, t, f, t.partitionBy);
  const insFile = ctx.db.prepare("INSERT INTO ducklake_data_file VALUES (?, ?, ?, NULL, NULL, ?, ?, 'parquet', ?, ?, ?, ?, ?, NULL, NULL, NULL)");
  const insStat = ctx.db.prepare("INSERT INTO ducklake_file_column_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)");
  const insPart = ctx.db.prepare("INSERT INTO ducklake_file_partition_value VALUES (?, ?, 0, ?)");
  for (const f of files) {
    const id = d.nextFileId++;
    const p = storedPath(ctx, t, f.path);
    insFile.run(id, t.tableId, d.snapshotId, p.path, p.relative, f.recordCount, f.fileSizeBytes, f.footerSize, agg.rowIds, keys[0]?.partitionId ?? null);
    agg.rowIds += f.recordCount;
    agg.records += f.recordCount;
    agg.bytes += f.fileSizeBytes;
    for (const c of t.columns) {
      const a = agg.columns.get(c.columnId) ?? { columnId: c.columnId, type: c.type, min: null, max: null, containsNull: false, containsNan: false };
      agg.columns.set(c.columnId, a);
      const s: NewColumnStats | undefined = f.columnStats[c.name];
      if (s === undefined) {
        // A column missing from the file reads as NULL.
        if (f.recordCount > 0) a.containsNull = true;
        continue;
      }
      const min = formatStatValue(c.type, s.min);
      const max = formatStatValue(c.type, s.max);
      const nan = typeHasNan(c.type) ? (s.containsNan ? 1 : 0) : null;
      insStat.run(id, t.tableId, c.columnId, s.sizeBytes ?? null, s.valueCount ?? f.recordCount - s.nullCount, s.nullCount, min, max, nan);
      if (s.nullCount > 0) a.containsNull = true;
      if (s.containsNan) a.containsNan = true;
      if (min !== null && (a.min === null || compareStatValues(c.type, min, a.min) < 0)) a.min = min;
      if (max !== null && (a.max === null || compareStatValues(c.type, max, a.max) > 0)) a.max = max;
    }
    const pv = t.partitionBy === undefined ? undefined : f.partitionValues?.[t.partitionBy];
    if (pv !== undefined) insPart.run(id, t.tableId, pv);
  }
}

/** Folds the new files into ducklake_table_stats and ducklake_table_column_stats. */
function updateTableStats(ctx: Ctx, tableId: number, agg: TableAgg, recordDelta: number, bytesDelta: number): void {
  const cur = tableStatsRow(ctx, tableId);
  if (cur === null) {
    ctx.db.run("INSERT INTO ducklake_table_stats VALUES (?, ?, ?, ?)", [tableId, Math.max(0, recordDelta), agg.rowIds, Math.max(0, bytesDelta)]);
  } else {
    ctx.db.run("UPDATE ducklake_table_stats SET record_count = max(0, record_count + ?), next_row_id = ?, file_size_bytes = max(0, file_size_bytes + ?) WHERE table_id = ?", [
      recordDelta,
      agg.rowIds,
      bytesDelta,
      tableId,
    ]);
  }
  const get = ctx.db.query<{ contains_null: number | null; contains_nan: number | null; min_value: string | null; max_value: string | null }, [number, number]>(
    "SELECT contains_null, contains_nan, min_value, max_value FROM ducklake_table_column_stats WHERE table_id = ? AND column_id = ? ORDER BY rowid DESC LIMIT 1",
  );
  for (const a of agg.columns.values()) {
    const old = get.get(tableId, a.columnId);
    const nanFlag = (prev: number | null | undefined) => (typeHasNan(a.type) ? (a.containsNan || prev === 1 ? 1 : 0) : null);
    if (old === null) {
      ctx.db.run("INSERT INTO ducklake_table_column_stats VALUES (?, ?, ?, ?, ?, ?, NULL)", [tableId, a.columnId, a.containsNull ? 1 : 0, nanFlag(null), a.min, a.max]);
      continue;
    }
    const min = old.min_value === null || (a.min !== null && compareStatValues(a.type, a.min, old.min_value) < 0) ? a.min : old.min_value;
    const max = old.max_value === null || (a.max !== null && compareStatValues(a.type, a.max, old.max_value) > 0) ? a.max : old.max_value;
    ctx.db.run("UPDATE ducklake_table_column_stats SET contains_null = ?, contains_nan = ?, min_value = ?, max_value = ? WHERE table_id = ? AND column_id = ?", [
      a.containsNull || old.contains_null === 1 ? 1 : 0,
      nanFlag(old.contains_nan),
      min ?? null,
      max ?? null,
      tableId,
      a.columnId,
    ]);
  }
}

function newAgg(ctx: Ctx, tableId: number): TableAgg {
  return { records: 0, bytes: 0, rowIds: tableStatsRow(ctx, tableId)?.next_row_id ?? 0, columns: new Map() };
}

/** Optional progress marker of the caller, stored in the same transaction as the files. */
export interface WriterWatermark {
  writerKey: string;
  watermark: number;
}

export function writerWatermark(ctx: Ctx, writerKey: string): number | null {
  // Created on the first writable open; a read-only open of an older file may not have it.
  const exists = ctx.db.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'svc_writer_watermark'").get();
  if (!exists?.n) return null;
  const r = ctx.db.query<{ watermark: number }, [string]>("SELECT watermark FROM svc_writer_watermark WHERE writer_key = ?").get(writerKey);
  return r?.watermark ?? null;
}

/** Marks alone (no files, no new snapshot), recorded at the current snapshot: see LakeCatalog.commitMarks. */
export function commitMarks(ctx: Ctx, marks: readonly WriterWatermark[]): void {
  if (marks.length === 0) return;
  writeTxn(ctx, () => {
    const snapshotId = draft(ctx).base.snapshot_id;
    for (const m of marks) ctx.db.run("INSERT OR REPLACE INTO svc_writer_watermark VALUES (?, ?, ?)", [m.writerKey, m.watermark, snapshotId]);
  });
}

/** One snapshot inserting files into one or more tables ("inserted_into_table:<id>" per table). */
export function commitInserts(ctx: Ctx, batches: ReadonlyArray<{ tableId: number; files: NewDataFile[] }>, marks?: WriterWatermark | readonly WriterWatermark[]): { snapshotId: number } {
  return writeTxn(ctx, () => {
    const work = batches.filter((b) => b.files.length > 0);
    if (work.length === 0) return { snapshotId: draft(ctx).base.snapshot_id };
    const d = draft(ctx);
    for (const b of work) {
      const t = getTableById(ctx, b.tableId, d.base.snapshot_id);
      const agg = newAgg(ctx, b.tableId);
      insertFiles(ctx, d, t, b.files, agg);
      updateTableStats(ctx, b.tableId, agg, agg.records, agg.bytes);
      d.changes.push(`inserted_into_table:${b.tableId}`);
    }
    const snapshotId = finish(ctx, d);
    settleDataFiles(
      ctx,
      work.flatMap((b) => b.files.map((f) => f.path)),
    );
    // Several marks per commit: a relay records its sender's position beside the spool's.
    for (const m of marks === undefined ? [] : "writerKey" in marks ? [marks] : marks) {
      ctx.db.run("INSERT OR REPLACE INTO svc_writer_watermark VALUES (?, ?, ?)", [m.writerKey, m.watermark, snapshotId]);
    }
    return { snapshotId };
  });
}

/** Live files of a table by id, checked to belong to it (for compaction and retention). */
function liveFileRows(ctx: Ctx, tableId: number, ids: number[]): FileRow[] {
  const rows = ctx.db.query<FileRow, [number]>("SELECT * FROM ducklake_data_file WHERE data_file_id = ?");
  return ids.map((id) => {
    const r = rows.get(id);
    if (r === null || r.table_id !== tableId) throw new AppError("NOT_FOUND", `data file ${id} is not a file of table ${tableId}`, { details: { dataFileId: id, tableId } });
    if (r.end_snapshot !== null) throw new AppError("CONFLICT", `data file ${id} was already removed at snapshot ${r.end_snapshot}`, { details: { dataFileId: id } });
    return r;
  });
}

function endFiles(ctx: Ctx, d: Draft, rows: FileRow[]): void {
  const end = ctx.db.prepare("UPDATE ducklake_data_file SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL");
  for (const r of rows) end.run(d.snapshotId, r.data_file_id);
}

/**
 * What the native compaction engine checks in its swap (docs/ARCHITECTURE.md "Compaction engines"): the
 * partition's live files are still exactly those it planned with, and the partition's live row
 * count before and after the swap equals the merged count plus the files it kept.
 */
export interface PartitionSwapGuard {
  /** The partition's value (ducklake_file_partition_value), null for an unpartitioned table. */
  partitionValue: string | null;
  /** Every live file of the partition when the merge was planned. */
  liveFileIds: number[];
}

/** Live files (id, record count) of one partition of a table at the latest snapshot. */
function livePartitionFiles(ctx: Ctx, tableId: number, partitionValue: string | null): Array<{ id: number; rows: number }> {
  const sql =
    partitionValue === null
      ? "SELECT f.data_file_id AS id, f.record_count AS rows FROM ducklake_data_file f WHERE f.table_id = ? AND f.end_snapshot IS NULL"
      : `SELECT f.data_file_id AS id, f.record_count AS rows FROM ducklake_data_file f JOIN ducklake_file_partition_value p
           ON p.data_file_id = f.data_file_id AND p.partition_key_index = 0 AND p.partition_value = ?
         WHERE f.table_id = ? AND f.end_snapshot IS NULL`;
  const args = partitionValue === null ? [tableId] : [partitionValue, tableId];
  return ctx.db.query<{ id: number; rows: number }, Array<string | number>>(sql).all(...args);
}

const conflict = (reason: "row_count" | "partition_changed", message: string, details: Record<string, unknown>) => new AppError("CONFLICT", message, { details: { reason, ...details } });

/**
 * Compaction swap (docs/ARCHITECTURE.md "Compaction engines"): ends `oldFileIds` and registers `newFiles` in one
 * snapshot ("merge_adjacent:<id>"). The record counts must match, else nothing changes (CONFLICT,
 * details.reason "row_count"); with a `guard`, also when the partition changed since the merge was
 * planned ("partition_changed") or its live row count after the swap differs from before ("row_count").
 * Merged rows get fresh row ids from ducklake_table_stats.next_row_id (we keep no row lineage).
 */
export function replaceDataFiles(ctx: Ctx, tableId: number, oldFileIds: number[], newFiles: NewDataFile[], guard?: PartitionSwapGuard): { snapshotId: number } {
  if (oldFileIds.length === 0 || newFiles.length === 0) throw new AppError("VALIDATION", "compaction needs old files and new files");
  if (new Set(oldFileIds).size !== oldFileIds.length) throw new AppError("VALIDATION", "compaction lists a data file twice");
  return writeTxn(ctx, () => {
    const d = draft(ctx);
    const t = getTableById(ctx, tableId, d.base.snapshot_id);
    const old = liveFileRows(ctx, tableId, oldFileIds);
    const deletes = ctx.db
      .query<{ n: number }, number[]>(`SELECT count(*) AS n FROM ducklake_delete_file WHERE table_id = ? AND end_snapshot IS NULL AND data_file_id IN (${oldFileIds.map(() => "?").join(",")})`)
      .get(tableId, ...oldFileIds);
    if ((deletes?.n ?? 0) > 0) throw new AppError("UNSUPPORTED", `table ${tableId}: files with row-level delete files are not compacted`);
    const oldCount = old.reduce((s, r) => s + r.record_count, 0);
    const newCount = newFiles.reduce((s, f) => s + f.recordCount, 0);
    let before = 0;
    if (guard) {
      const live = livePartitionFiles(ctx, tableId, guard.partitionValue);
      const planned = new Set(guard.liveFileIds);
      const replaced = new Set(oldFileIds);
      if (live.length !== planned.size || live.some((f) => !planned.has(f.id)) || oldFileIds.some((id) => !planned.has(id))) {
        throw conflict("partition_changed", `compaction of table ${tableId}: partition ${guard.partitionValue ?? "(none)"} changed since the merge was planned`, { tableId });
      }
      before = live.reduce((s, f) => s + f.rows, 0);
      const kept = live.filter((f) => !replaced.has(f.id)).reduce((s, f) => s + f.rows, 0);
      if (before !== newCount + kept) {
        throw conflict("row_count", `compaction of table ${tableId}: partition ${guard.partitionValue ?? "(none)"} holds ${before} live rows, the merge ${newCount} plus ${kept} kept`, {
          tableId,
          before,
          newCount,
          kept,
        });
      }
    } else if (oldCount !== newCount) {
      throw conflict("row_count", `compaction of table ${tableId}: merged files hold ${newCount} rows, the replaced files ${oldCount}`, { tableId, oldCount, newCount });
    }
    endFiles(ctx, d, old);
    const agg = newAgg(ctx, tableId);
    insertFiles(ctx, d, t, newFiles, agg);
    const oldBytes = old.reduce((s, r) => s + r.file_size_bytes, 0);
    updateTableStats(ctx, tableId, agg, 0, agg.bytes - oldBytes);
    if (guard) {
      // Read back what this transaction wrote: a file registered outside the partition (or twice)
      // would change the partition's live rows; the throw rolls the whole swap back.
      const after = livePartitionFiles(ctx, tableId, guard.partitionValue).reduce((s, f) => s + f.rows, 0);
      if (after !== before) {
        throw conflict("row_count", `compaction of table ${tableId}: partition ${guard.partitionValue ?? "(none)"} would hold ${after} live rows after the swap, ${before} before`, {
          tableId,
          before,
          after,
        });
      }
    }
    // The spec lists "compacted_table:<id>", but extension 1.5.5 neither writes nor parses it
    // (its snapshots() shows "{}"); it logs its own file merges as "merge_adjacent:<id>".
    d.changes.push(`merge_adjacent:${tableId}`);
    settleDataFiles(
      ctx,
      newFiles.map((f) => f.path),
    );
    return { snapshotId: finish(ctx, d) };
  });
}

/**
 * Retention: ends every live file of the table whose `column` maximum is below `cutoff`, in one
 * snapshot ("deleted_from_table:<id>", as the extension writes when a DELETE removes whole files).
 * Files whose range straddles the cutoff stay until the cutoff passes them (docs/ARCHITECTURE.md "Maintenance").
 */
export function retireFilesBefore(ctx: Ctx, tableId: number, column: string, cutoff: StatBound): { snapshotId: number | null; files: DataFileInfo[] } {
  return writeTxn(ctx, () => {
    const d = draft(ctx);
    const snap = d.base.snapshot_id;
    const t = getTableById(ctx, tableId, snap);
    const col = t.columns.find((c) => c.name === column);
    if (!col) throw new AppError("VALIDATION", `table ${t.schemaName}.${t.name} has no column ${column}`);
    const cut = formatStatValue(col.type, cutoff);
    if (cut === null) throw new AppError("VALIDATION", "retention cutoff is NaN");
    const candidates = ctx.db
      .query<{ data_file_id: number; max_value: string }, [number, number, number, number]>(
        `SELECT s.data_file_id, s.max_value FROM ducklake_file_column_stats s JOIN ducklake_data_file f ON f.data_file_id = s.data_file_id
         WHERE s.table_id = ? AND s.column_id = ? AND s.max_value IS NOT NULL AND f.table_id = ? AND f.end_snapshot IS NULL AND f.begin_snapshot <= ?`,
      )
      .all(tableId, col.columnId, tableId, snap);
    const ids = candidates.filter((c) => compareStatValues(col.type, c.max_value, cut) < 0).map((c) => c.data_file_id);
    if (ids.length === 0) return { snapshotId: null, files: [] };
    const files = loadFiles(ctx, t, liveFileRows(ctx, tableId, ids), snap, true);
    endFiles(ctx, d, liveFileRows(ctx, tableId, ids));
    const records = files.reduce((s, f) => s + f.recordCount, 0);
    const bytes = files.reduce((s, f) => s + f.fileSizeBytes, 0);
    ctx.db.run("UPDATE ducklake_table_stats SET record_count = max(0, record_count - ?), file_size_bytes = max(0, file_size_bytes - ?) WHERE table_id = ?", [records, bytes, tableId]);
    d.changes.push(`deleted_from_table:${tableId}`);
    const snapshotId = finish(ctx, d);
    return { snapshotId, files: files.map((f) => ({ ...f, endSnapshot: snapshotId })) };
  });
}
