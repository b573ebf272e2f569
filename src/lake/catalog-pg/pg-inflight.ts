/**
 * Files being written, shared by every writer of a PostgreSQL catalog (docs/DUCKLAKE.md "PostgreSQL
 * catalog", "In-flight files"): a writer reserves a new data file's path in `svc_inflight_file`
 * (with its owner and the server's time) before writing it, and the commit that registers the file
 * removes the row in the same transaction (pg-files.ts insertFiles). The start's orphan sweep of one
 * host deletes only its own leftovers (`ownInflightPaths`) and counts every other writer's
 * reservation as referenced (`otherInflightPaths`, folded into referencedPaths), so it never
 * deletes or sets aside a file another host is about to commit.
 */
import type { Db } from "./pg-db.ts";

/** Records `relPath` (relative to the data path) as being written by `owner`. One statement, no lock. */
export async function reserveDataFile(db: Db, owner: string, relPath: string): Promise<void> {
  await db`INSERT INTO svc_inflight_file VALUES (${relPath}, ${owner}, clock_timestamp())
    ON CONFLICT (path) DO UPDATE SET owner = EXCLUDED.owner, reserved_at = EXCLUDED.reserved_at`;
}

/** Paths reserved by `owner` and not committed, relative to the data path. */
export async function ownInflightPaths(db: Db, owner: string): Promise<Set<string>> {
  const rows: Array<{ path: string }> = await db`SELECT path FROM svc_inflight_file WHERE owner = ${owner}`;
  return new Set(rows.map((r) => r.path));
}

/** Paths other writers reserved and did not commit (yet), relative to the data path. */
export async function otherInflightPaths(db: Db, owner: string): Promise<Set<string>> {
  const rows: Array<{ path: string }> = await db`SELECT path FROM svc_inflight_file WHERE owner <> ${owner}`;
  return new Set(rows.map((r) => r.path));
}

/** Every reservation with its owner and time (for operators and tests). */
export async function inflightReservations(db: Db): Promise<Array<{ path: string; owner: string; reservedAtMs: number }>> {
  const rows: Array<{ path: string; owner: string; ms: string }> = await db`SELECT path, owner, (extract(epoch FROM reserved_at) * 1000)::bigint AS ms
    FROM svc_inflight_file ORDER BY reserved_at, path`;
  return rows.map((r) => ({ path: r.path, owner: r.owner, reservedAtMs: Number(r.ms) }));
}

/** Forgets the reservations of `owner` only: other writers may be writing right now. */
export async function clearInflight(db: Db, owner: string): Promise<number> {
  const r = await db`DELETE FROM svc_inflight_file WHERE owner = ${owner}`;
  return r.count;
}
