/**
 * Ending given live data files in one snapshot, for the catalog rebuild (docs/OPERATIONS.md):
 * files that were compacted into a newer file are registered and then retired, so the catalog
 * knows every file on disk and the normal snapshot expiry deletes them later. The snapshot is
 * logged as "merge_adjacent:<id>", what the extension writes for its own merges.
 */
import { AppError } from "../../core/index.ts";
import { type Ctx, draft, finish, writeTxn } from "./catalog-db.ts";

export function retireDataFiles(ctx: Ctx, tableId: number, fileIds: number[]): { snapshotId: number | null } {
  if (fileIds.length === 0) return { snapshotId: null };
  return writeTxn(ctx, () => {
    const d = draft(ctx);
    const get = ctx.db.query<
      { table_id: number; end_snapshot: number | null; record_count: number; file_size_bytes: number },
      [number]
    >("SELECT table_id, end_snapshot, record_count, file_size_bytes FROM ducklake_data_file WHERE data_file_id = ?");
    const end = ctx.db.prepare("UPDATE ducklake_data_file SET end_snapshot = ? WHERE data_file_id = ?");
    let records = 0;
    let bytes = 0;
    for (const id of fileIds) {
      const r = get.get(id);
      if (r === null || r.table_id !== tableId || r.end_snapshot !== null) {
        throw new AppError("CONFLICT", `data file ${id} is not a live file of table ${tableId}`, {
          details: { dataFileId: id, tableId },
        });
      }
      end.run(d.snapshotId, id);
      records += r.record_count;
      bytes += r.file_size_bytes;
    }
    ctx.db.run(
      "UPDATE ducklake_table_stats SET record_count = max(0, record_count - ?), file_size_bytes = max(0, file_size_bytes - ?) WHERE table_id = ?",
      [records, bytes, tableId],
    );
    d.changes.push(`merge_adjacent:${tableId}`);
    return { snapshotId: finish(ctx, d) };
  });
}
