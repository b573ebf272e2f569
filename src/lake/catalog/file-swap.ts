/**
 * Compaction swaps and retention: the snapshots that end data files (ducklake_data_file.end_snapshot)
 * and fold the change into the table statistics. Registering files and folding their statistics is
 * src/lake/catalog/data-files.ts; each public function here is one snapshot in one SQLite transaction.
 */
import { AppError } from "../../core/index.ts";
import { type Ctx, type Draft, draft, finish, writeTxn } from "./catalog-db.ts";
import { insertFiles, newAgg, updateTableStats } from "./data-files.ts";
import { type FileRow, loadFiles } from "./file-list.ts";
import { settleDataFiles } from "./inflight.ts";
import { getTableById } from "./tables.ts";
import type { DataFileInfo, NewDataFile, StatBound } from "./types.ts";
import { compareStatValues, formatStatValue } from "./values.ts";

/** Live files of a table by id, checked to belong to it (for compaction and retention). */
function liveFileRows(ctx: Ctx, tableId: number, ids: number[]): FileRow[] {
  const rows = ctx.db.query<FileRow, [number]>("SELECT * FROM ducklake_data_file WHERE data_file_id = ?");
  return ids.map((id) => {
    const r = rows.get(id);
    if (r === null || r.table_id !== tableId)
      throw new AppError("NOT_FOUND", `data file ${id} is not a file of table ${tableId}`, {
        details: { dataFileId: id, tableId },
      });
    if (r.end_snapshot !== null)
      throw new AppError("CONFLICT", `data file ${id} was already removed at snapshot ${r.end_snapshot}`, {
        details: { dataFileId: id },
      });
    return r;
  });
}

function endFiles(ctx: Ctx, d: Draft, rows: FileRow[]): void {
  const end = ctx.db.prepare(
    "UPDATE ducklake_data_file SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL",
  );
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
function livePartitionFiles(
  ctx: Ctx,
  tableId: number,
  partitionValue: string | null,
): Array<{ id: number; rows: number }> {
  const sql =
    partitionValue === null
      ? "SELECT f.data_file_id AS id, f.record_count AS rows FROM ducklake_data_file f WHERE f.table_id = ? AND f.end_snapshot IS NULL"
      : `SELECT f.data_file_id AS id, f.record_count AS rows FROM ducklake_data_file f JOIN ducklake_file_partition_value p
           ON p.data_file_id = f.data_file_id AND p.partition_key_index = 0 AND p.partition_value = ?
         WHERE f.table_id = ? AND f.end_snapshot IS NULL`;
  const args = partitionValue === null ? [tableId] : [partitionValue, tableId];
  return ctx.db.query<{ id: number; rows: number }, Array<string | number>>(sql).all(...args);
}

const conflict = (reason: "row_count" | "partition_changed", message: string, details: Record<string, unknown>) =>
  new AppError("CONFLICT", message, { details: { reason, ...details } });

/**
 * Compaction swap (docs/ARCHITECTURE.md "Compaction engines"): ends `oldFileIds` and registers `newFiles` in one
 * snapshot ("merge_adjacent:<id>"). The record counts must match, else nothing changes (CONFLICT,
 * details.reason "row_count"); with a `guard`, also when the partition changed since the merge was
 * planned ("partition_changed") or its live row count after the swap differs from before ("row_count").
 * Merged rows get fresh row ids from ducklake_table_stats.next_row_id (we keep no row lineage).
 */
export function replaceDataFiles(
  ctx: Ctx,
  tableId: number,
  oldFileIds: number[],
  newFiles: NewDataFile[],
  guard?: PartitionSwapGuard,
): { snapshotId: number } {
  if (oldFileIds.length === 0 || newFiles.length === 0)
    throw new AppError("VALIDATION", "compaction needs old files and new files");
  if (new Set(oldFileIds).size !== oldFileIds.length)
    throw new AppError("VALIDATION", "compaction lists a data file twice");
  return writeTxn(ctx, () => {
    const d = draft(ctx);
    const t = getTableById(ctx, tableId, d.base.snapshot_id);
    const old = liveFileRows(ctx, tableId, oldFileIds);
    const deletes = ctx.db
      .query<{ n: number }, number[]>(
        `SELECT count(*) AS n FROM ducklake_delete_file WHERE table_id = ? AND end_snapshot IS NULL AND data_file_id IN (${oldFileIds.map(() => "?").join(",")})`,
      )
      .get(tableId, ...oldFileIds);
    if ((deletes?.n ?? 0) > 0)
      throw new AppError("UNSUPPORTED", `table ${tableId}: files with row-level delete files are not compacted`);
    const oldCount = old.reduce((s, r) => s + r.record_count, 0);
    const newCount = newFiles.reduce((s, f) => s + f.recordCount, 0);
    let before = 0;
    if (guard) {
      const live = livePartitionFiles(ctx, tableId, guard.partitionValue);
      const planned = new Set(guard.liveFileIds);
      const replaced = new Set(oldFileIds);
      if (
        live.length !== planned.size ||
        live.some((f) => !planned.has(f.id)) ||
        oldFileIds.some((id) => !planned.has(id))
      ) {
        throw conflict(
          "partition_changed",
          `compaction of table ${tableId}: partition ${guard.partitionValue ?? "(none)"} changed since the merge was planned`,
          { tableId },
        );
      }
      before = live.reduce((s, f) => s + f.rows, 0);
      const kept = live.filter((f) => !replaced.has(f.id)).reduce((s, f) => s + f.rows, 0);
      if (before !== newCount + kept) {
        throw conflict(
          "row_count",
          `compaction of table ${tableId}: partition ${guard.partitionValue ?? "(none)"} holds ${before} live rows, the merge ${newCount} plus ${kept} kept`,
          {
            tableId,
            before,
            newCount,
            kept,
          },
        );
      }
    } else if (oldCount !== newCount) {
      throw conflict(
        "row_count",
        `compaction of table ${tableId}: merged files hold ${newCount} rows, the replaced files ${oldCount}`,
        { tableId, oldCount, newCount },
      );
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
        throw conflict(
          "row_count",
          `compaction of table ${tableId}: partition ${guard.partitionValue ?? "(none)"} would hold ${after} live rows after the swap, ${before} before`,
          {
            tableId,
            before,
            after,
          },
        );
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
export function retireFilesBefore(
  ctx: Ctx,
  tableId: number,
  column: string,
  cutoff: StatBound,
): { snapshotId: number | null; files: DataFileInfo[] } {
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
    ctx.db.run(
      "UPDATE ducklake_table_stats SET record_count = max(0, record_count - ?), file_size_bytes = max(0, file_size_bytes - ?) WHERE table_id = ?",
      [records, bytes, tableId],
    );
    d.changes.push(`deleted_from_table:${tableId}`);
    const snapshotId = finish(ctx, d);
    return { snapshotId, files: files.map((f) => ({ ...f, endSnapshot: snapshotId })) };
  });
}
