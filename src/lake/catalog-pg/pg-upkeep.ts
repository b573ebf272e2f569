/**
 * Catalog upkeep in PostgreSQL, as src/lake/catalog/maintenance.ts does in SQLite: expiring
 * snapshots into ducklake_files_scheduled_for_deletion (DuckLake "Expire Snapshots" / "Cleanup of
 * Files"), the paths orphan clean-up must keep, the duplicate-snapshot check of native compaction and
 * rows inlined by another writer.
 */
import type { TransactionSQL } from "bun";
import { isAbsolute } from "node:path";
import { AppError } from "../../core/index.ts";
import { type Db, num, type PgCtx } from "./pg-db.ts";
import { otherInflightPaths } from "./pg-inflight.ts";

/** Directory of every table that ever existed (its newest row), absolute, for resolving stored file paths. */
async function tableDirs(ctx: PgCtx, db: Db): Promise<Map<number, string>> {
  const rows: Array<{ table_id: string; t_path: string | null; t_rel: boolean | null; s_path: string | null }> =
    await db`SELECT t.table_id, t.path AS t_path, t.path_is_relative AS t_rel, s.path AS s_path
      FROM ducklake_table t LEFT JOIN ducklake_schema s ON s.schema_id = t.schema_id ORDER BY t.begin_snapshot`;
  const out = new Map<number, string>();
  for (const r of rows) {
    const dir = r.t_rel === false ? (r.t_path ?? "") : `${r.s_path ?? ""}${r.t_path ?? ""}`;
    out.set(num(r.table_id), isAbsolute(dir) ? dir : `${ctx.dataPath}${dir}`);
  }
  return out;
}

const absoluteOf = (ctx: PgCtx, dirs: Map<number, string>, tableId: number, path: string, rel: boolean | null) =>
  rel === false || isAbsolute(path) ? path : `${dirs.get(tableId) ?? ctx.dataPath}${path}`;

const relativeToData = (ctx: PgCtx, abs: string) =>
  abs.startsWith(ctx.dataPath) ? { path: abs.slice(ctx.dataPath.length), rel: true } : { path: abs, rel: false };

/**
 * Inside a transaction holding the commit lock: removes snapshots older than `olderThanMs` (never
 * the newest), then moves every file no remaining snapshot sees (end_snapshot <= oldest kept) to
 * ducklake_files_scheduled_for_deletion, path relative to the data path, as the extension does.
 */
export async function expireInTxn(
  ctx: PgCtx,
  tx: TransactionSQL,
  olderThanMs: number,
): Promise<{ expiredSnapshots: number; scheduledFiles: number }> {
  const cutoffUs = (BigInt(Math.floor(olderThanMs)) * 1000n).toString();
  const [latest] = await tx`SELECT max(snapshot_id) AS id FROM ducklake_snapshot`;
  if (latest?.id === null || latest?.id === undefined)
    throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.where} has no snapshot`);
  const top = num(latest.id);
  const expired: Array<{ id: string }> = await tx`SELECT snapshot_id AS id FROM ducklake_snapshot
    WHERE snapshot_id <> ${top} AND snapshot_time < to_timestamp(0) + (${cutoffUs}::bigint * interval '1 microsecond') ORDER BY snapshot_id`;
  if (expired.length === 0) return { expiredSnapshots: 0, scheduledFiles: 0 };
  const ids = expired.map((e) => num(e.id));
  const [kept] =
    await tx`SELECT min(snapshot_id) AS id FROM ducklake_snapshot WHERE NOT (snapshot_id = ANY(${ids}::bigint[]))`;
  const oldestKept = num(kept?.id);
  const dirs = await tableDirs(ctx, tx);
  let scheduled = 0;
  for (const kind of [
    { table: "ducklake_data_file", id: "data_file_id" },
    { table: "ducklake_delete_file", id: "delete_file_id" },
  ]) {
    const gone = (await tx.unsafe(
      `SELECT ${kind.id} AS id, table_id, path, path_is_relative FROM ${kind.table} WHERE end_snapshot IS NOT NULL AND end_snapshot <= $1`,
      [oldestKept],
    )) as Array<{
      id: string;
      table_id: string;
      path: string;
      path_is_relative: boolean | null;
    }>;
    if (gone.length === 0) continue;
    for (const f of gone) {
      const r = relativeToData(ctx, absoluteOf(ctx, dirs, num(f.table_id), f.path, f.path_is_relative));
      await tx`INSERT INTO ducklake_files_scheduled_for_deletion VALUES (${num(f.id)}, ${r.path}, ${r.rel}, clock_timestamp())`;
    }
    const goneIds = gone.map((f) => num(f.id));
    await tx.unsafe(`DELETE FROM ${kind.table} WHERE ${kind.id} = ANY($1::bigint[])`, [goneIds]);
    if (kind.id === "data_file_id") {
      await tx`DELETE FROM ducklake_file_column_stats WHERE data_file_id = ANY(${goneIds}::bigint[])`;
      await tx`DELETE FROM ducklake_file_partition_value WHERE data_file_id = ANY(${goneIds}::bigint[])`;
    }
    scheduled += gone.length;
  }
  await tx`DELETE FROM ducklake_snapshot WHERE snapshot_id = ANY(${ids}::bigint[])`;
  await tx`DELETE FROM ducklake_snapshot_changes WHERE snapshot_id = ANY(${ids}::bigint[])`;
  ctx.log.info("expired catalog snapshots", { expired: ids.length, scheduledFiles: scheduled, oldestKept });
  return { expiredSnapshots: ids.length, scheduledFiles: scheduled };
}

export async function listScheduledDeletions(
  ctx: PgCtx,
  db: Db,
): Promise<Array<{ dataFileId: number; path: string; absolutePath: string }>> {
  const rows: Array<{ data_file_id: string; path: string; path_is_relative: boolean | null }> =
    await db`SELECT data_file_id, path, path_is_relative FROM ducklake_files_scheduled_for_deletion ORDER BY data_file_id`;
  return rows.map((r) => ({
    dataFileId: num(r.data_file_id),
    path: r.path,
    absolutePath: r.path_is_relative === false || isAbsolute(r.path) ? r.path : `${ctx.dataPath}${r.path}`,
  }));
}

/** Drops scheduled-deletion rows once the caller has deleted the files. */
export async function forgetFiles(db: Db, dataFileIds: number[]): Promise<number> {
  if (dataFileIds.length === 0) return 0;
  const r =
    await db`DELETE FROM ducklake_files_scheduled_for_deletion WHERE data_file_id = ANY(${dataFileIds}::bigint[])`;
  return r.count;
}

/**
 * Absolute paths the orphan clean-up must keep: every file the catalog knows (any snapshot, delete
 * files and scheduled ones included) and every file another writer reserved and has not committed
 * yet (pg-inflight.ts), so a sweep on one host never removes what another is about to commit.
 */
export async function referencedPaths(ctx: PgCtx, db: Db, owner: string): Promise<Set<string>> {
  const dirs = await tableDirs(ctx, db);
  const out = new Set<string>();
  for (const table of ["ducklake_data_file", "ducklake_delete_file"]) {
    const rows = (await db.unsafe(`SELECT table_id, path, path_is_relative FROM ${table}`)) as Array<{
      table_id: string;
      path: string;
      path_is_relative: boolean | null;
    }>;
    for (const f of rows) out.add(absoluteOf(ctx, dirs, num(f.table_id), f.path, f.path_is_relative));
  }
  for (const s of await listScheduledDeletions(ctx, db)) out.add(s.absolutePath);
  for (const p of await otherInflightPaths(db, owner)) out.add(`${ctx.dataPath}${p}`);
  return out;
}

/** Rows beyond the first per snapshot id, and rows carrying the highest id (1 in a sound catalog). */
export async function snapshotAnomalies(db: Db): Promise<{ duplicateRows: number; latestRows: number }> {
  const [r] = await db`SELECT (SELECT count(*) - count(DISTINCT snapshot_id) FROM ducklake_snapshot)::int AS dup,
    (SELECT count(*) FROM ducklake_snapshot WHERE snapshot_id = (SELECT max(snapshot_id) FROM ducklake_snapshot))::int AS latest`;
  return { duplicateRows: r?.dup ?? 0, latestRows: r?.latest ?? 0 };
}

/** Whether another writer inlined live rows into catalog tables (DuckLake "Data Inlining"). */
export async function hasInlinedRows(db: Db): Promise<boolean> {
  const tables: Array<{ table_name: string }> =
    await db`SELECT table_name FROM ducklake_inlined_data_tables WHERE to_regclass(quote_ident(table_name)) IS NOT NULL`;
  for (const t of tables) {
    const [r] = await db.unsafe(
      `SELECT EXISTS (SELECT 1 FROM "${t.table_name.replaceAll('"', '""')}" WHERE end_snapshot IS NULL) AS any`,
    );
    if ((r as { any: boolean } | undefined)?.any === true) return true;
  }
  return false;
}
