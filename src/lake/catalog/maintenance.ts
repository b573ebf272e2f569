/**
 * Catalog upkeep: expiring snapshots into ducklake_files_scheduled_for_deletion (DuckLake "Expire
 * Snapshots" / "Cleanup of Files"), paths for orphan cleanup, online backups (<catalog>.bak-<time>,
 * docs/ARCHITECTURE.md "Maintenance"), duplicate-row repair and integrity checks (docs/OPERATIONS.md "Automatic repair at start").
 */
import { Database } from "bun:sqlite";
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { AppError } from "../../core/index.ts";
import { type Ctx, snapshotTimeText, writeTxn } from "./catalog-db.ts";
import { dropInflightRows } from "./inflight.ts";
import type { IntegrityReport, RepairReport, ScheduledDeletion } from "./types.ts";
import { parseTimestampMicros } from "./values.ts";

/** Directory of every table that ever existed (its newest row), for resolving stored file paths. */
function tableDirs(ctx: Ctx): Map<number, string> {
  const rows = ctx.db
    .query<
      { table_id: number; t_path: string | null; t_rel: number | null; s_path: string | null; s_rel: number | null },
      []
    >(
      `SELECT t.table_id, t.path AS t_path, t.path_is_relative AS t_rel, s.path AS s_path, s.path_is_relative AS s_rel
       FROM ducklake_table t LEFT JOIN ducklake_schema s ON s.schema_id = t.schema_id ORDER BY t.begin_snapshot, t.rowid`,
    )
    .all();
  const out = new Map<number, string>();
  for (const r of rows) {
    const dir = r.t_rel === 0 ? (r.t_path ?? "") : `${r.s_path ?? ""}${r.t_path ?? ""}`;
    out.set(r.table_id, isAbsolute(dir) ? dir : `${ctx.dataPath}${dir}`);
  }
  return out;
}

const absoluteOf = (ctx: Ctx, dirs: Map<number, string>, tableId: number, path: string, rel: number | null) =>
  rel === 0 || isAbsolute(path) ? path : `${dirs.get(tableId) ?? ctx.dataPath}${path}`;

const relativeToData = (ctx: Ctx, abs: string) =>
  abs.startsWith(ctx.dataPath) ? { path: abs.slice(ctx.dataPath.length), rel: 1 } : { path: abs, rel: 0 };

/**
 * Removes snapshots older than `olderThanMs` (never the newest), then moves every file no remaining
 * snapshot can see (end_snapshot <= oldest kept) to ducklake_files_scheduled_for_deletion with its
 * path relative to the data path, as the extension does. Time travel before the cut is gone after.
 */
export function expireSnapshots(ctx: Ctx, olderThanMs: number): { expiredSnapshots: number; scheduledFiles: number } {
  return writeTxn(ctx, () => {
    const all = ctx.db
      .query<{ snapshot_id: number; snapshot_time: string }, []>(
        "SELECT snapshot_id, snapshot_time FROM ducklake_snapshot ORDER BY snapshot_id",
      )
      .all();
    const latest = all.at(-1);
    if (latest === undefined) throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.catalogPath} has no snapshot`);
    const cutoff = BigInt(Math.floor(olderThanMs)) * 1000n;
    const expired = all
      .filter((s) => s.snapshot_id !== latest.snapshot_id && (parseTimestampMicros(s.snapshot_time) ?? cutoff) < cutoff)
      .map((s) => s.snapshot_id);
    if (expired.length === 0) return { expiredSnapshots: 0, scheduledFiles: 0 };
    const expiredSet = new Set(expired);
    const oldestKept = all.find((s) => !expiredSet.has(s.snapshot_id))!.snapshot_id;
    const dirs = tableDirs(ctx);
    const now = snapshotTimeText(BigInt(Date.now()) * 1000n);
    const schedule = ctx.db.prepare("INSERT INTO ducklake_files_scheduled_for_deletion VALUES (?, ?, ?, ?)");
    let scheduled = 0;
    for (const kind of [
      { table: "ducklake_data_file", id: "data_file_id" },
      { table: "ducklake_delete_file", id: "delete_file_id" },
    ]) {
      const gone = ctx.db
        .query<{ id: number; table_id: number; path: string; path_is_relative: number | null }, [number]>(
          `SELECT ${kind.id} AS id, table_id, path, path_is_relative FROM ${kind.table} WHERE end_snapshot IS NOT NULL AND end_snapshot <= ?`,
        )
        .all(oldestKept);
      for (const f of gone) {
        const r = relativeToData(ctx, absoluteOf(ctx, dirs, f.table_id, f.path, f.path_is_relative));
        schedule.run(f.id, r.path, r.rel, now);
        ctx.db.run(`DELETE FROM ${kind.table} WHERE ${kind.id} = ?`, [f.id]);
        if (kind.id === "data_file_id") {
          ctx.db.run("DELETE FROM ducklake_file_column_stats WHERE data_file_id = ?", [f.id]);
          ctx.db.run("DELETE FROM ducklake_file_partition_value WHERE data_file_id = ?", [f.id]);
        }
        scheduled++;
      }
    }
    const del = ctx.db.prepare("DELETE FROM ducklake_snapshot WHERE snapshot_id = ?");
    const delChanges = ctx.db.prepare("DELETE FROM ducklake_snapshot_changes WHERE snapshot_id = ?");
    for (const id of expired) {
      del.run(id);
      delChanges.run(id);
    }
    ctx.log.info("expired catalog snapshots", { expired: expired.length, scheduledFiles: scheduled, oldestKept });
    return { expiredSnapshots: expired.length, scheduledFiles: scheduled };
  });
}

export function listScheduledDeletions(ctx: Ctx): ScheduledDeletion[] {
  return ctx.db
    .query<{ data_file_id: number; path: string; path_is_relative: number | null; schedule_start: string }, []>(
      "SELECT data_file_id, path, path_is_relative, schedule_start FROM ducklake_files_scheduled_for_deletion ORDER BY data_file_id",
    )
    .all()
    .map((r) => ({
      dataFileId: r.data_file_id,
      path: r.path,
      absolutePath: r.path_is_relative === 0 || isAbsolute(r.path) ? r.path : `${ctx.dataPath}${r.path}`,
      scheduledAt: r.schedule_start,
    }));
}

/** Drops scheduled-deletion rows once the caller has deleted the files. */
export function forgetFiles(ctx: Ctx, dataFileIds: number[]): number {
  return writeTxn(ctx, () => {
    const del = ctx.db.prepare("DELETE FROM ducklake_files_scheduled_for_deletion WHERE data_file_id = ?");
    return dataFileIds.reduce((n, id) => n + del.run(id).changes, 0);
  });
}

/** Absolute paths of every file the catalog knows (any snapshot, delete files and scheduled ones included). */
export function referencedPaths(ctx: Ctx): Set<string> {
  const dirs = tableDirs(ctx);
  const out = new Set<string>();
  for (const table of ["ducklake_data_file", "ducklake_delete_file"]) {
    for (const f of ctx.db
      .query<{ table_id: number; path: string; path_is_relative: number | null }, []>(
        `SELECT table_id, path, path_is_relative FROM ${table}`,
      )
      .all()) {
      out.add(absoluteOf(ctx, dirs, f.table_id, f.path, f.path_is_relative));
    }
  }
  for (const s of listScheduledDeletions(ctx)) out.add(s.absolutePath);
  return out;
}

const BACKUP_MARK = ".bak-";

export function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
export const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, "").replace(".", "");

/**
 * Consistent online copy: VACUUM INTO reads the catalog in one read transaction (a WAL snapshot, so
 * a writer committing meanwhile is neither blocked nor half-copied; docs/OPERATIONS.md "Catalog
 * backups"), written aside, without the in-flight reservations (inflight.ts), fsynced, then
 * renamed; default `<catalog>.bak-<UTC time>`.
 */
export function backup(ctx: Ctx, destPath?: string): string {
  const dest = destPath ?? `${ctx.catalogPath}${BACKUP_MARK}${stamp(new Date())}`;
  const tmp = `${dest}.tmp-${process.pid}`;
  rmSync(tmp, { force: true });
  try {
    ctx.db.run("VACUUM INTO ?", [tmp]);
    // Reservations of files being written are the live catalog's business only (inflight.ts).
    const copy = new Database(tmp, { readwrite: true });
    try {
      dropInflightRows(copy);
    } finally {
      copy.close();
    }
    fsyncPath(tmp);
    renameSync(tmp, dest);
    fsyncPath(dirname(dest));
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new AppError("INTERNAL", `catalog backup to ${dest} failed`, { cause: e, details: { dest } });
  }
  ctx.log.info("catalog backed up", { dest });
  return dest;
}

/** Backups of this catalog (`<catalog>.bak-*`), newest first. */
export function listBackups(ctx: Ctx): string[] {
  const dir = dirname(ctx.catalogPath);
  const prefix = basename(ctx.catalogPath) + BACKUP_MARK;
  return readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && !n.includes(".tmp-"))
    .sort()
    .reverse()
    .map((n) => join(dir, n));
}

/** Keeps the newest `keep` backups and deletes the rest; returns the deleted paths. */
export function pruneBackups(ctx: Ctx, keep: number): string[] {
  const doomed = listBackups(ctx).slice(Math.max(0, keep));
  for (const p of doomed) rmSync(p, { force: true });
  return doomed;
}

/** Key columns that identify one logical row; duplicates keep the row inserted last (highest rowid). */
const DEDUP_KEYS: Array<[string, string]> = [
  ["ducklake_metadata", `"key", "scope", scope_id`],
  ["ducklake_snapshot", "snapshot_id"],
  ["ducklake_snapshot_changes", "snapshot_id"],
  ["ducklake_schema", "schema_id"],
  ["ducklake_table", "table_id, begin_snapshot"],
  ["ducklake_column", "table_id, column_id, begin_snapshot"],
  ["ducklake_data_file", "data_file_id"],
  ["ducklake_file_column_stats", "data_file_id, column_id"],
  ["ducklake_file_partition_value", "data_file_id, partition_key_index"],
  ["ducklake_partition_info", "partition_id"],
  ["ducklake_partition_column", "partition_id, partition_key_index"],
  ["ducklake_table_stats", "table_id"],
  ["ducklake_table_column_stats", "table_id, column_id"],
  ["ducklake_schema_versions", "begin_snapshot, table_id"],
];

/** Live rows of the same table or schema id: the older one is a leftover of an interrupted writer. */
const twoLive = (table: string, id: string) =>
  `end_snapshot IS NULL AND EXISTS (SELECT 1 FROM ${table} n WHERE n.${id} = ${table}.${id} AND n.end_snapshot IS NULL
     AND (n.begin_snapshot > ${table}.begin_snapshot OR (n.begin_snapshot = ${table}.begin_snapshot AND n.rowid > ${table}.rowid)))`;
const LIVE_KEYS = [
  ["ducklake_table", "table_id"],
  ["ducklake_schema", "schema_id"],
] as const;

/** Rows repair() would remove, per table (read only; empty when the catalog is clean). */
export function duplicateRows(ctx: Ctx): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (table: string, n: number | undefined) => {
    if (n) out[table] = (out[table] ?? 0) + n;
  };
  for (const [table, keys] of DEDUP_KEYS) {
    add(
      table,
      ctx.db
        .query<{ n: number }, []>(
          `SELECT coalesce(sum(c - 1), 0) AS n FROM (SELECT count(*) AS c FROM ${table} GROUP BY ${keys} HAVING count(*) > 1)`,
        )
        .get()?.n,
    );
  }
  for (const [table, id] of LIVE_KEYS) {
    // Counted on the rows left after the key dedup above, as repair() does.
    add(
      table,
      ctx.db
        .query<{ n: number }, []>(
          `SELECT count(*) AS n FROM ${table} WHERE rowid IN (SELECT max(rowid) FROM ${table} GROUP BY ${DEDUP_KEYS.find((k) => k[0] === table)![1]}) AND ${twoLive(table, id)}`,
        )
        .get()?.n,
    );
  }
  return out;
}

/** Lossless repair of duplicate rows (docs/OPERATIONS.md "Automatic repair at start"): keeps the most recent of each. */
export function repair(ctx: Ctx): RepairReport {
  return writeTxn(ctx, () => {
    const removed: Record<string, number> = {};
    const count = (table: string, n: number) => {
      if (n > 0) removed[table] = (removed[table] ?? 0) + n;
    };
    for (const [table, keys] of DEDUP_KEYS) {
      count(
        table,
        ctx.db.run(`DELETE FROM ${table} WHERE rowid NOT IN (SELECT max(rowid) FROM ${table} GROUP BY ${keys})`)
          .changes,
      );
    }
    // Two live rows of one table (or schema): the older one is a leftover of an interrupted writer.
    for (const [table, id] of LIVE_KEYS)
      count(table, ctx.db.run(`DELETE FROM ${table} WHERE ${twoLive(table, id)}`).changes);
    return { removed };
  });
}

export function integrityCheck(ctx: Ctx): IntegrityReport {
  const problems: string[] = [];
  const one = <T>(sql: string) => ctx.db.query<T, []>(sql).get();
  for (const r of ctx.db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all()) {
    if (r.integrity_check !== "ok") problems.push(`sqlite: ${r.integrity_check}`);
  }
  for (const [table, keys] of DEDUP_KEYS) {
    const dup = one<{ n: number }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${table} GROUP BY ${keys} HAVING count(*) > 1)`,
    );
    if ((dup?.n ?? 0) > 0) problems.push(`${table}: ${dup?.n} duplicated keys (${keys})`);
  }
  const live = one<{ n: number }>(
    "SELECT count(*) AS n FROM (SELECT 1 FROM ducklake_table WHERE end_snapshot IS NULL GROUP BY table_id HAVING count(*) > 1)",
  );
  if ((live?.n ?? 0) > 0) problems.push(`ducklake_table: ${live?.n} tables with more than one live row`);
  const latest = one<{ snapshot_id: number; next_catalog_id: number; next_file_id: number }>(
    "SELECT snapshot_id, next_catalog_id, next_file_id FROM ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1",
  );
  if (latest === null) return { ok: false, problems: [...problems, "no snapshot"] };
  const maxFile = one<{ m: number | null }>(
    "SELECT max(m) AS m FROM (SELECT max(data_file_id) AS m FROM ducklake_data_file UNION ALL SELECT max(delete_file_id) FROM ducklake_delete_file)",
  );
  if (maxFile?.m != null && maxFile.m >= latest.next_file_id)
    problems.push(`file id ${maxFile.m} >= next_file_id ${latest.next_file_id}`);
  const maxCat = one<{ m: number | null }>(
    "SELECT max(m) AS m FROM (SELECT max(schema_id) AS m FROM ducklake_schema UNION ALL SELECT max(table_id) FROM ducklake_table UNION ALL SELECT max(partition_id) FROM ducklake_partition_info)",
  );
  if (maxCat?.m != null && maxCat.m >= latest.next_catalog_id)
    problems.push(`catalog id ${maxCat.m} >= next_catalog_id ${latest.next_catalog_id}`);
  const future = one<{ n: number }>(
    `SELECT count(*) AS n FROM ducklake_data_file WHERE begin_snapshot > ${latest.snapshot_id} OR end_snapshot <= begin_snapshot`,
  );
  if ((future?.n ?? 0) > 0) problems.push(`${future?.n} data files with impossible snapshot ranges`);
  const orphans = one<{ n: number }>(
    "SELECT count(*) AS n FROM ducklake_data_file f WHERE NOT EXISTS (SELECT 1 FROM ducklake_table t WHERE t.table_id = f.table_id)",
  );
  if ((orphans?.n ?? 0) > 0) problems.push(`${orphans?.n} data files of unknown tables`);
  return { ok: problems.length === 0, problems };
}

/** Tables holding rows inlined in the catalog by another writer (not visible through Parquet files). */
export function listInlinedData(
  ctx: Ctx,
): Array<{ tableId: number; tableName: string; schemaVersion: number; liveRows: number }> {
  return ctx.db
    .query<{ table_id: number; table_name: string; schema_version: number }, []>(
      "SELECT table_id, table_name, schema_version FROM ducklake_inlined_data_tables",
    )
    .all()
    .map((r) => {
      const n = ctx.db
        .query<{ n: number }, []>(
          `SELECT count(*) AS n FROM "${r.table_name.replaceAll('"', '""')}" WHERE end_snapshot IS NULL`,
        )
        .get();
      return { tableId: r.table_id, tableName: r.table_name, schemaVersion: r.schema_version, liveRows: n?.n ?? 0 };
    });
}
