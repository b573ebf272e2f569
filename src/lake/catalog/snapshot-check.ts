/**
 * The native compaction engine's post-cycle check (docs/ARCHITECTURE.md "Compaction engines"): more
 * than one row for the latest snapshot, or duplicate snapshot ids anywhere, mean a second writer or
 * a damaged catalog; the engine then switches itself off until restart. Our DDL makes snapshot_id
 * the primary key, but catalogs made by other tools (or older versions) may lack it.
 */
import type { Ctx } from "./catalog-db.ts";

export interface SnapshotAnomalies {
  /** Rows beyond the first per snapshot id. */
  duplicateRows: number;
  /** Rows carrying the highest snapshot id (1 in a sound catalog). */
  latestRows: number;
}

export function snapshotAnomalies(ctx: Ctx): SnapshotAnomalies {
  const r = ctx.db
    .query<{ dup: number; latest: number }, []>(
      `SELECT (SELECT count(*) - count(DISTINCT snapshot_id) FROM ducklake_snapshot) AS dup,
              (SELECT count(*) FROM ducklake_snapshot WHERE snapshot_id = (SELECT max(snapshot_id) FROM ducklake_snapshot)) AS latest`,
    )
    .get();
  return { duplicateRows: r?.dup ?? 0, latestRows: r?.latest ?? 0 };
}
