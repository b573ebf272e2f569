/**
 * The PostgreSQL side of the catalog: creating (or adopting) the DuckLake tables, validating them,
 * and the snapshot bookkeeping every change goes through (DuckLake spec "Queries" → Writing Data →
 * Snapshot Creation), the same rows src/lake/catalog/catalog-db.ts writes into SQLite.
 */
import type { SQL, TransactionSQL } from "bun";
import { AppError, VERSION, type Logger } from "../../core/index.ts";
import { DUCKLAKE_VERSION, parseTimestampMicros, type SnapshotInfo, type WriterWatermark } from "../catalog/index.ts";
import { PG_DUCKLAKE_TABLES, PG_DUCKLAKE_TABLES_DDL, PG_SVC_DDL } from "./ddl.ts";

/** Any client: the pool or a transaction. */
export type Db = SQL | TransactionSQL;

export interface PgCtx {
  sql: SQL;
  /** Absolute, with a trailing slash. */
  dataPath: string;
  /** The URL without its password, for messages. */
  where: string;
  log: Logger;
}

/**
 * Key of the transaction-scoped advisory lock every svc commit takes first ("svcdlk" in ASCII), so
 * commits of svc writers on any host run one after the other (docs/DUCKLAKE.md "PostgreSQL catalog").
 */
export const COMMIT_LOCK_KEY = 0x737663646c6bn;

/** PostgreSQL returns BIGINT as text (beyond 2^53 it would not fit a number): ids and counts here do. */
export function num(v: unknown): number {
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isSafeInteger(n))
    throw new AppError("CATALOG_CORRUPT", `catalog value ${String(v)} is not an integer this build can hold`);
  return n;
}
export const numOrNull = (v: unknown) => (v === null || v === undefined ? null : num(v));

export async function lockCommits(tx: Db): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${COMMIT_LOCK_KEY.toString()}::bigint)`;
}

async function hasTable(db: Db, name: string): Promise<boolean> {
  const [r] = await db`SELECT to_regclass(${name}) IS NOT NULL AS present`;
  return r?.present === true;
}

/**
 * Makes the catalog usable: an empty database gets the DuckLake tables and the rows the extension
 * writes at creation (snapshot 0, schema main); a catalog the extension made is adopted as it is.
 * Runs under the commit lock, so hosts starting together create it once.
 */
export async function prepareCatalog(ctx: PgCtx, create: boolean): Promise<void> {
  await ctx.sql.begin(async (tx) => {
    await lockCommits(tx);
    if (!(await hasTable(tx, "ducklake_metadata"))) {
      if (!create)
        throw new AppError("NOT_FOUND", `catalog ${ctx.where} has no DuckLake tables`, {
          details: { catalog: ctx.where },
        });
      for (const ddl of PG_DUCKLAKE_TABLES_DDL) await tx.unsafe(ddl);
      const meta: Array<[string, string]> = [
        ["version", DUCKLAKE_VERSION],
        ["created_by", `svc ${VERSION}`],
        ["data_path", ctx.dataPath],
        ["encrypted", "false"],
        // We read rows only from Parquet files: keep other writers from inlining rows into catalog
        // tables (DuckLake "Data Inlining"), as the SQLite catalog does.
        ["data_inlining_row_limit", "0"],
      ];
      for (const [k, v] of meta) await tx`INSERT INTO ducklake_metadata VALUES (${k}, ${v}, NULL, NULL)`;
      await tx`INSERT INTO ducklake_snapshot VALUES (0, clock_timestamp(), 0, 1, 0)`;
      await tx`INSERT INTO ducklake_snapshot_changes VALUES (0, 'created_schema:"main"', NULL, NULL, NULL)`;
      await tx`INSERT INTO ducklake_schema VALUES (0, ${crypto.randomUUID()}::uuid, 0, NULL, 'main', 'main/', true)`;
      ctx.log.info("created DuckLake catalog in PostgreSQL", {
        catalog: ctx.where,
        dataPath: ctx.dataPath,
        version: DUCKLAKE_VERSION,
      });
    }
    await validateCatalog(ctx, tx);
    for (const ddl of PG_SVC_DDL) await tx.unsafe(ddl);
  });
}

async function validateCatalog(ctx: PgCtx, db: Db): Promise<void> {
  const rows: Array<{ name: string }> =
    await db`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`;
  const present = new Set(rows.map((r) => r.name));
  const missing = PG_DUCKLAKE_TABLES.filter((t) => !present.has(t));
  if (missing.length > 0)
    throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.where} lacks DuckLake tables: ${missing.join(", ")}`, {
      details: { missing },
    });
  const meta: Array<{ key: string; value: string }> =
    await db`SELECT key, value FROM ducklake_metadata WHERE scope IS NULL`;
  const get = (k: string) => meta.find((m) => m.key === k)?.value;
  const version = get("version");
  if (version !== DUCKLAKE_VERSION) {
    throw new AppError(
      "UNSUPPORTED",
      `catalog ${ctx.where} is DuckLake ${version ?? "(no version)"}; this build reads and writes DuckLake ${DUCKLAKE_VERSION}`,
      {
        details: { version, supported: DUCKLAKE_VERSION },
      },
    );
  }
  if (get("encrypted") === "true") throw new AppError("UNSUPPORTED", `catalog ${ctx.where} uses encrypted data files`);
}

interface SnapshotRow {
  snapshot_id: string;
  /** UTC text "YYYY-MM-DD HH:MM:SS[.ffffff]+00" whatever the session's TimeZone. */
  snapshot_time: string;
  schema_version: string;
  next_catalog_id: string;
  next_file_id: string;
  changes_made: string | null;
}

const SNAPSHOT_SELECT = `SELECT s.snapshot_id, (s.snapshot_time AT TIME ZONE 'UTC')::text || '+00' AS snapshot_time, s.schema_version,
    s.next_catalog_id, s.next_file_id, c.changes_made
  FROM ducklake_snapshot s LEFT JOIN ducklake_snapshot_changes c ON c.snapshot_id = s.snapshot_id`;

export async function latestSnapshotRow(db: Db): Promise<SnapshotRow | null> {
  const [r] = await db.unsafe(`${SNAPSHOT_SELECT} ORDER BY s.snapshot_id DESC LIMIT 1`);
  return (r as SnapshotRow | undefined) ?? null;
}

export async function getSnapshot(db: Db, snapshotId: number): Promise<SnapshotInfo | null> {
  const [r] = await db.unsafe(`${SNAPSHOT_SELECT} WHERE s.snapshot_id = $1`, [snapshotId]);
  return r === undefined ? null : toSnapshotInfo(r as SnapshotRow);
}

/**
 * Latest snapshot taken at or before `timestampMs` (the whole millisecond included), or null when the
 * catalog is younger. snapshot_time is a TIMESTAMPTZ here, so the server compares; the newest row
 * at or before wins, as in the SQLite catalog (src/lake/catalog/catalog-db.ts snapshotAt).
 */
export async function snapshotAt(db: Db, timestampMs: number): Promise<SnapshotInfo | null> {
  const us = BigInt(Math.floor(timestampMs)) * 1000n + 999n;
  const [r] = await db.unsafe(
    `${SNAPSHOT_SELECT} WHERE s.snapshot_time <= to_timestamp(0) + ($1::bigint * interval '1 microsecond') ORDER BY s.snapshot_id DESC LIMIT 1`,
    [us.toString()],
  );
  return r === undefined ? null : toSnapshotInfo(r as SnapshotRow);
}

export function toSnapshotInfo(r: SnapshotRow): SnapshotInfo {
  const us = parseTimestampMicros(r.snapshot_time);
  return {
    snapshotId: num(r.snapshot_id),
    time: r.snapshot_time,
    timeMs: us === null ? Number.NaN : Number(us / 1000n),
    schemaVersion: num(r.schema_version),
    nextCatalogId: num(r.next_catalog_id),
    nextFileId: num(r.next_file_id),
    changes: r.changes_made,
  };
}

export async function currentSnapshot(ctx: PgCtx, db: Db = ctx.sql): Promise<SnapshotInfo> {
  const r = await latestSnapshotRow(db);
  if (r === null) throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.where} has no snapshot`);
  return toSnapshotInfo(r);
}

/** A snapshot being built inside a commit transaction; `finishSnapshot` writes its rows. */
export interface Draft {
  snapshotId: number;
  nextCatalogId: number;
  nextFileId: number;
  changes: string[];
  schemaChangedTables: Set<number>;
  schemaChanged: boolean;
  /** Whether the ducklake_snapshot row is inserted already (`claimSnapshot`). */
  claimed: boolean;
  readonly base: SnapshotInfo;
}

/** Takes the commit lock, then reads the latest snapshot (read committed: after the lock, so fresh). */
export async function draftSnapshot(ctx: PgCtx, tx: TransactionSQL): Promise<Draft> {
  await lockCommits(tx);
  const base = await currentSnapshot(ctx, tx);
  return {
    snapshotId: base.snapshotId + 1,
    nextCatalogId: base.nextCatalogId,
    nextFileId: base.nextFileId,
    changes: [],
    schemaChangedTables: new Set(),
    schemaChanged: false,
    claimed: false,
    base,
  };
}

/**
 * Inserts the snapshot row before any other write of the commit, as the extension does: a writer
 * without our lock that took the same snapshot id then blocks on the primary key before either
 * holds a row the other updates (ducklake_table_stats), and the loser gets 23505, not a deadlock
 * (docs/DUCKLAKE.md "PostgreSQL catalog"). The time is the server's clock, one clock for writers
 * on every host, and never earlier than the previous snapshot; the counters are set by `finishSnapshot`.
 */
export async function claimSnapshot(tx: TransactionSQL, d: Draft): Promise<void> {
  if (d.claimed) return;
  await tx`INSERT INTO ducklake_snapshot VALUES (${d.snapshotId},
    GREATEST(clock_timestamp(), (SELECT snapshot_time + interval '1 microsecond' FROM ducklake_snapshot WHERE snapshot_id = ${d.base.snapshotId})),
    ${d.base.schemaVersion}, ${d.base.nextCatalogId}, ${d.base.nextFileId})`;
  d.claimed = true;
}

/** Writes the rest of the snapshot: its counters, snapshot_changes, schema_versions. */
export async function finishSnapshot(tx: TransactionSQL, d: Draft): Promise<number> {
  await claimSnapshot(tx, d);
  const schemaVersion = d.schemaChanged ? d.base.schemaVersion + 1 : d.base.schemaVersion;
  await tx`UPDATE ducklake_snapshot SET schema_version = ${schemaVersion}, next_catalog_id = ${d.nextCatalogId}, next_file_id = ${d.nextFileId}
    WHERE snapshot_id = ${d.snapshotId}`;
  await tx`INSERT INTO ducklake_snapshot_changes VALUES (${d.snapshotId}, ${d.changes.join(",")}, NULL, NULL, NULL)`;
  for (const tableId of d.schemaChangedTables)
    await tx`INSERT INTO ducklake_schema_versions VALUES (${d.snapshotId}, ${schemaVersion}, ${tableId})`;
  return d.snapshotId;
}

/** `begin_snapshot <= s AND (end_snapshot IS NULL OR end_snapshot > s)` for alias `a`, `s` as $1. */
export const liveAt = (a: string, p = "$1") =>
  `${a}.begin_snapshot <= ${p} AND (${a}.end_snapshot IS NULL OR ${a}.end_snapshot > ${p})`;

/** The writer's spool marks: one, or several recorded in the same transaction. */
export type Marks = WriterWatermark | ReadonlyArray<WriterWatermark>;
export const markList = (m: Marks | undefined): ReadonlyArray<WriterWatermark> =>
  m === undefined ? [] : "writerKey" in m ? [m] : m;

/** Writer marks (svc_writer_watermark) recorded at `snapshotId`, inside the caller's transaction. */
export async function upsertWriterMarks(
  tx: TransactionSQL,
  marks: ReadonlyArray<{ writerKey: string; watermark: number }>,
  snapshotId: number,
): Promise<void> {
  for (const m of marks) {
    await tx`INSERT INTO svc_writer_watermark VALUES (${m.writerKey}, ${m.watermark}, ${snapshotId})
      ON CONFLICT (writer_key) DO UPDATE SET watermark = EXCLUDED.watermark, snapshot_id = EXCLUDED.snapshot_id`;
  }
}
