/**
 * Compaction swaps and retention in a PostgreSQL catalog: the rows src/lake/catalog/file-swap.ts
 * writes into SQLite for replaceDataFiles ("merge_adjacent:<id>") and retireFilesBefore
 * ("deleted_from_table:<id>"), inside a commit transaction of pg-catalog.ts (lock held, `d` drafted).
 */
import type { TransactionSQL } from "bun";
import { AppError } from "../../core/index.ts";
import {
  compareStatValues,
  formatStatValue,
  type NewDataFile,
  type PartitionSwapGuard,
  type StatBound,
  type TableInfo,
} from "../catalog/index.ts";
import { claimSnapshot, type Draft, finishSnapshot, num, type PgCtx } from "./pg-db.ts";
import { FILE_COLUMNS, type FileRow } from "./pg-file-list.ts";
import { insertFiles, validateFile } from "./pg-files.ts";

/** Live files of a table by id, checked to belong to it (for compaction and retention). */
async function liveFileRows(tx: TransactionSQL, tableId: number, ids: number[]): Promise<FileRow[]> {
  const rows = (await tx.unsafe(
    `SELECT ${FILE_COLUMNS} FROM ducklake_data_file f WHERE f.data_file_id = ANY($1::bigint[])`,
    [ids],
  )) as FileRow[];
  const byId = new Map(rows.map((r) => [num(r.data_file_id), r]));
  return ids.map((id) => {
    const r = byId.get(id);
    if (r === undefined || num(r.table_id) !== tableId)
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

async function endFiles(tx: TransactionSQL, d: Draft, ids: number[]): Promise<void> {
  await tx`UPDATE ducklake_data_file SET end_snapshot = ${d.snapshotId} WHERE data_file_id = ANY(${ids}::bigint[]) AND end_snapshot IS NULL`;
}

/** Live files (id, record count) of one partition of a table at the latest snapshot. */
async function livePartitionFiles(
  tx: TransactionSQL,
  tableId: number,
  partitionValue: string | null,
): Promise<Array<{ id: number; rows: number }>> {
  const rows: Array<{ id: string; rows: string }> =
    partitionValue === null
      ? await tx`SELECT f.data_file_id AS id, f.record_count AS rows FROM ducklake_data_file f WHERE f.table_id = ${tableId} AND f.end_snapshot IS NULL`
      : await tx`SELECT f.data_file_id AS id, f.record_count AS rows FROM ducklake_data_file f JOIN ducklake_file_partition_value p
          ON p.data_file_id = f.data_file_id AND p.partition_key_index = 0 AND p.partition_value = ${partitionValue}
          WHERE f.table_id = ${tableId} AND f.end_snapshot IS NULL`;
  return rows.map((r) => ({ id: num(r.id), rows: num(r.rows) }));
}

const conflict = (reason: "row_count" | "partition_changed", message: string, details: Record<string, unknown>) =>
  new AppError("CONFLICT", message, { details: { reason, ...details } });

/** Checks before any transaction, as the SQLite catalog. */
export function checkSwap(oldFileIds: number[], newFiles: NewDataFile[]): void {
  if (oldFileIds.length === 0 || newFiles.length === 0)
    throw new AppError("VALIDATION", "compaction needs old files and new files");
  if (new Set(oldFileIds).size !== oldFileIds.length)
    throw new AppError("VALIDATION", "compaction lists a data file twice");
}

/**
 * Compaction swap: ends `oldFileIds` and registers `newFiles` in one snapshot. Record counts must
 * match, else CONFLICT (details.reason "row_count") and nothing changes; with a `guard`, also when
 * the partition's live files are no longer those planned ("partition_changed") or its live row count
 * after the swap would differ from before. Same rules as src/lake/catalog/file-swap.ts.
 */
export async function replaceInTxn(
  ctx: PgCtx,
  tx: TransactionSQL,
  d: Draft,
  t: TableInfo,
  oldFileIds: number[],
  newFiles: NewDataFile[],
  guard?: PartitionSwapGuard,
): Promise<number> {
  const tableId = t.tableId;
  const old = await liveFileRows(tx, tableId, oldFileIds);
  const [del] =
    await tx`SELECT count(*)::int AS n FROM ducklake_delete_file WHERE table_id = ${tableId} AND end_snapshot IS NULL AND data_file_id = ANY(${oldFileIds}::bigint[])`;
  if ((del?.n ?? 0) > 0)
    throw new AppError("UNSUPPORTED", `table ${tableId}: files with row-level delete files are not compacted`);
  const oldCount = old.reduce((s, r) => s + num(r.record_count), 0);
  const newCount = newFiles.reduce((s, f) => s + f.recordCount, 0);
  let before = 0;
  const part = guard?.partitionValue ?? "(none)";
  if (guard) {
    const live = await livePartitionFiles(tx, tableId, guard.partitionValue);
    const planned = new Set(guard.liveFileIds);
    const replaced = new Set(oldFileIds);
    if (
      live.length !== planned.size ||
      live.some((f) => !planned.has(f.id)) ||
      oldFileIds.some((id) => !planned.has(id))
    ) {
      throw conflict(
        "partition_changed",
        `compaction of table ${tableId}: partition ${part} changed since the merge was planned`,
        { tableId },
      );
    }
    before = live.reduce((s, f) => s + f.rows, 0);
    const kept = live.filter((f) => !replaced.has(f.id)).reduce((s, f) => s + f.rows, 0);
    if (before !== newCount + kept) {
      throw conflict(
        "row_count",
        `compaction of table ${tableId}: partition ${part} holds ${before} live rows, the merge ${newCount} plus ${kept} kept`,
        { tableId, before, newCount, kept },
      );
    }
  } else if (oldCount !== newCount) {
    throw conflict(
      "row_count",
      `compaction of table ${tableId}: merged files hold ${newCount} rows, the replaced files ${oldCount}`,
      { tableId, oldCount, newCount },
    );
  }
  for (const f of newFiles) validateFile(ctx, t, f);
  await claimSnapshot(tx, d);
  await endFiles(tx, d, oldFileIds);
  const oldBytes = old.reduce((s, r) => s + num(r.file_size_bytes), 0);
  await insertFiles(ctx, tx, d, t, newFiles, { records: oldCount, bytes: oldBytes });
  if (guard) {
    // Read back what this transaction wrote: a file registered outside the partition (or twice)
    // would change its live rows; the throw rolls the whole swap back.
    const after = (await livePartitionFiles(tx, tableId, guard.partitionValue)).reduce((s, f) => s + f.rows, 0);
    if (after !== before) {
      throw conflict(
        "row_count",
        `compaction of table ${tableId}: partition ${part} would hold ${after} live rows after the swap, ${before} before`,
        { tableId, before, after },
      );
    }
  }
  // Extension 1.5.5 logs its own file merges as "merge_adjacent:<id>" (docs/DUCKLAKE.md "Maintenance semantics").
  d.changes.push(`merge_adjacent:${tableId}`);
  return finishSnapshot(tx, d);
}

/**
 * Retention: ends every live file of the table whose `column` maximum is below `cutoff`, in one
 * snapshot ("deleted_from_table:<id>"); no snapshot when none qualifies.
 */
export async function retireInTxn(
  tx: TransactionSQL,
  d: Draft,
  t: TableInfo,
  column: string,
  cutoff: StatBound,
): Promise<{ snapshotId: number | null; files: number }> {
  const col = t.columns.find((c) => c.name === column);
  if (!col) throw new AppError("VALIDATION", `table ${t.schemaName}.${t.name} has no column ${column}`);
  const cut = formatStatValue(col.type, cutoff);
  if (cut === null) throw new AppError("VALIDATION", "retention cutoff is NaN");
  const candidates: Array<{ id: string; max_value: string }> =
    await tx`SELECT s.data_file_id AS id, s.max_value FROM ducklake_file_column_stats s
    JOIN ducklake_data_file f ON f.data_file_id = s.data_file_id
    WHERE s.table_id = ${t.tableId} AND s.column_id = ${col.columnId} AND s.max_value IS NOT NULL AND f.table_id = ${t.tableId}
      AND f.end_snapshot IS NULL AND f.begin_snapshot <= ${d.base.snapshotId}`;
  const ids = candidates.filter((c) => compareStatValues(col.type, c.max_value, cut) < 0).map((c) => num(c.id));
  if (ids.length === 0) return { snapshotId: null, files: 0 };
  await claimSnapshot(tx, d);
  const rows = await liveFileRows(tx, t.tableId, ids);
  await endFiles(tx, d, ids);
  const records = rows.reduce((s, r) => s + num(r.record_count), 0);
  const bytes = rows.reduce((s, r) => s + num(r.file_size_bytes), 0);
  await tx`UPDATE ducklake_table_stats SET record_count = GREATEST(0, record_count - ${records}), file_size_bytes = GREATEST(0, file_size_bytes - ${bytes})
    WHERE table_id = ${t.tableId}`;
  d.changes.push(`deleted_from_table:${t.tableId}`);
  return { snapshotId: await finishSnapshot(tx, d), files: ids.length };
}
