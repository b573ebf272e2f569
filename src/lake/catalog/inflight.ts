/**
 * Files being written (docs/OPERATIONS.md "Orphans at start and the quarantine"): the writer and
 * compaction reserve a new data file's path in `svc_inflight_file` before they write it, and the
 * commit that registers the file removes the row in the same transaction. After a crash, a file on
 * disk that no catalog row references but that this table lists is the writer's own leftover and the
 * start may delete it; any other unreferenced file is not known to be garbage (a restore or rebuild
 * left it out) and is set aside instead.
 */
import type { Database } from "bun:sqlite";
import { type Ctx, writeTxn } from "./catalog-db.ts";

const TABLE = "svc_inflight_file";

const hasTable = (db: Database) =>
  (db
    .query<{ n: number }, []>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '${TABLE}'`)
    .get()?.n ?? 0) > 0;

/**
 * Records `relPath` (relative to the data path) as being written. Without an fsync of its own
 * (synchronous NORMAL for this one transaction; the next commit's fsync covers it): a row lost in a
 * power cut only means its file is set aside at the next start instead of deleted.
 */
export function reserveDataFile(ctx: Ctx, relPath: string, nowMs = Date.now()): void {
  ctx.db.run("PRAGMA synchronous = NORMAL");
  try {
    writeTxn(ctx, () => ctx.db.run(`INSERT OR REPLACE INTO ${TABLE} VALUES (?, ?)`, [relPath, nowMs]));
  } finally {
    ctx.db.run("PRAGMA synchronous = FULL");
  }
}

/** Inside a commit's transaction: the files it registers are no longer in flight. */
export function settleDataFiles(ctx: Ctx, relPaths: string[]): void {
  const del = ctx.db.prepare(`DELETE FROM ${TABLE} WHERE path = ?`);
  for (const p of relPaths) del.run(p);
}

/** The reserved paths, relative to the data path. */
export function inflightPaths(ctx: Ctx): Set<string> {
  if (!hasTable(ctx.db)) return new Set();
  return new Set(
    ctx.db
      .query<{ path: string }, []>(`SELECT path FROM ${TABLE}`)
      .all()
      .map((r) => r.path),
  );
}

/** Forgets every reservation (at start, once the leftovers are handled: nothing is in flight then). */
export function clearInflight(ctx: Ctx): number {
  return writeTxn(ctx, () => ctx.db.run(`DELETE FROM ${TABLE}`).changes);
}

/** Forgets the reservations of `relPaths` (their objects are deleted or were never uploaded). */
export function forgetInflight(ctx: Ctx, relPaths: readonly string[]): number {
  if (relPaths.length === 0 || !hasTable(ctx.db)) return 0;
  return writeTxn(ctx, () => {
    const del = ctx.db.prepare(`DELETE FROM ${TABLE} WHERE path = ?`);
    let n = 0;
    for (const p of relPaths) n += del.run(p).changes;
    return n;
  });
}

/**
 * Removes the reservations from a copy of the catalog (a backup, a restore): in the copy they would
 * name files that the catalog it was copied from went on to commit, and that a start from the copy
 * must not delete.
 */
export function dropInflightRows(db: Database): void {
  if (hasTable(db)) db.run(`DELETE FROM ${TABLE}`);
}
