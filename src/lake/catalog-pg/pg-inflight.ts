/**
 * Files being written, shared by every writer of a PostgreSQL catalog (docs/DUCKLAKE.md "PostgreSQL
 * catalog", "In-flight files"): a writer reserves a new data file's path in `svc_inflight_file`
 * (with its owner and the server's time) before writing it, and the commit that registers the file
 * removes the row in the same transaction (pg-files.ts insertFiles). The start's orphan sweep of one
 * host deletes only its own leftovers (`ownInflightPaths`) and counts every other writer's
 * reservation as referenced (`otherInflightPaths`, folded into referencedPaths), so it never
 * deletes or sets aside a file another host is about to commit.
 */
import { createHash } from "node:crypto";
import type { Db } from "./pg-db.ts";

/**
 * The `application_name` of every connection of `owner` ("svc-" and 16 hex digits of md5(owner),
 * under PostgreSQL's 63 characters): pg_stat_activity shows it to every role, so the maintainer
 * tells a writer that is connected from one that is gone (`deadReservations`).
 */
export function ownerTag(owner: string): string {
  return `svc-${createHash("md5").update(owner).digest("hex").slice(0, 16)}`;
}
/** The same tag computed by the server (md5 of the UTF-8 text, lowercase hex). */
const OWNER_TAG_SQL = "'svc-' || left(md5(i.owner), 16)";

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
export async function inflightReservations(
  db: Db,
): Promise<Array<{ path: string; owner: string; reservedAtMs: number }>> {
  const rows: Array<{ path: string; owner: string; ms: string }> =
    await db`SELECT path, owner, (extract(epoch FROM reserved_at) * 1000)::bigint AS ms
    FROM svc_inflight_file ORDER BY reserved_at, path`;
  return rows.map((r) => ({ path: r.path, owner: r.owner, reservedAtMs: Number(r.ms) }));
}

/** Forgets the reservations of `owner` only: other writers may be writing right now. */
export async function clearInflight(db: Db, owner: string): Promise<number> {
  const r = await db`DELETE FROM svc_inflight_file WHERE owner = ${owner}`;
  return r.count;
}

/** Forgets `owner`'s reservations of `paths` only (the object-store sweep's); other writers' stay. */
export async function forgetOwnReservations(db: Db, owner: string, paths: readonly string[]): Promise<number> {
  if (paths.length === 0) return 0;
  const r = await db`DELETE FROM svc_inflight_file WHERE owner = ${owner} AND path = ANY(${[...paths]}::varchar[])`;
  return r.count;
}

/**
 * Reservations of other writers that are gone: older than `graceMs` (server clock), their owner has
 * no connection to the server (no session with its `ownerTag`) and reserved nothing within the
 * grace. A writer that died leaves them; its files were never committed (docs/DUCKLAKE.md
 * "In-flight files").
 */
export async function deadReservations(
  db: Db,
  owner: string,
  graceMs: number,
): Promise<Array<{ path: string; owner: string }>> {
  return await db.unsafe(
    `SELECT i.path, i.owner FROM svc_inflight_file i
      WHERE i.owner <> $1 AND i.reserved_at < clock_timestamp() - ($2::bigint * interval '1 millisecond')
        AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = ${OWNER_TAG_SQL})
        AND NOT EXISTS (SELECT 1 FROM svc_inflight_file j WHERE j.owner = i.owner AND j.reserved_at >= clock_timestamp() - ($2::bigint * interval '1 millisecond'))
      ORDER BY i.path`,
    [owner, graceMs],
  );
}

/** Forgets `paths` when still reserved by another owner and older than `graceMs` (a new reservation of a path stays). */
export async function forgetReservations(db: Db, owner: string, paths: string[], graceMs: number): Promise<number> {
  if (paths.length === 0) return 0;
  const r = await db`DELETE FROM svc_inflight_file WHERE path = ANY(${paths}::varchar[]) AND owner <> ${owner}
    AND reserved_at < clock_timestamp() - (${graceMs}::bigint * interval '1 millisecond')`;
  return r.count;
}
