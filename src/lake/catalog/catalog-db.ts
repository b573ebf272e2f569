/**
 * The SQLite side of the catalog: opening (new files get the DuckLake 1.0 tables and initial rows the
 * extension writes), validation of existing files, and the snapshot bookkeeping every change goes
 * through (DuckLake spec "Queries" → Writing Data → Snapshot Creation).
 */
import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { AppError, errorMessage, VERSION, type Logger } from "../../core/index.ts";
import { DUCKLAKE_TABLES_DDL, DUCKLAKE_VERSION, REQUIRED_TABLES, SVC_DDL } from "./ddl.ts";
import type { SnapshotInfo } from "./types.ts";
import { formatTimestampMicros, parseTimestampMicros } from "./values.ts";

export interface Ctx {
  db: Database;
  /** Absolute, with a trailing slash. */
  dataPath: string;
  catalogPath: string;
  log: Logger;
  readOnly: boolean;
}

export const withSlash = (p: string) => (p.endsWith("/") ? p : `${p}/`);

/** Current wall clock in microseconds (sub-millisecond part from the monotonic clock). */
function nowMicros(): bigint {
  return BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000));
}

export const snapshotTimeText = (us: bigint) => formatTimestampMicros(us, true);

export function openDatabase(opts: {
  path: string;
  dataPath: string;
  create: boolean;
  readOnly: boolean;
  log: Logger;
}): Ctx {
  const catalogPath = resolve(opts.path);
  const isNew = !existsSync(catalogPath) || statSync(catalogPath).size === 0;
  if (isNew && (!opts.create || opts.readOnly)) {
    throw new AppError("NOT_FOUND", `catalog ${catalogPath} does not exist`, { details: { path: catalogPath } });
  }
  let db: Database;
  try {
    db = opts.readOnly
      ? new Database(catalogPath, { readonly: true })
      : new Database(catalogPath, { create: true, readwrite: true });
  } catch (e) {
    throw new AppError("CATALOG_CORRUPT", `cannot open catalog ${catalogPath}: ${errorMessage(e)}`, {
      cause: e,
      details: { path: catalogPath },
    });
  }
  const ctx: Ctx = {
    db,
    dataPath: withSlash(resolve(opts.dataPath)),
    catalogPath,
    log: opts.log,
    readOnly: opts.readOnly,
  };
  try {
    db.run("PRAGMA busy_timeout = 10000");
    if (!opts.readOnly) {
      // WAL: readers (query engine, CLI) never block the writer. FULL: a commit survives power loss.
      db.run("PRAGMA journal_mode = WAL");
      db.run("PRAGMA synchronous = FULL");
    }
    if (isNew) createCatalog(ctx);
    else validateCatalog(ctx);
    if (!opts.readOnly) for (const ddl of SVC_DDL) db.run(ddl);
  } catch (e) {
    db.close();
    if (e instanceof AppError) throw e;
    throw new AppError(
      "CATALOG_CORRUPT",
      `catalog ${catalogPath} is not a readable DuckLake catalog: ${errorMessage(e)}`,
      {
        cause: e,
        details: { path: catalogPath },
      },
    );
  }
  return ctx;
}

/** A new catalog: the tables and the rows the extension writes at creation (snapshot 0, schema main). */
function createCatalog(ctx: Ctx): void {
  const { db } = ctx;
  db.transaction(() => {
    for (const ddl of DUCKLAKE_TABLES_DDL) db.run(ddl);
    const meta = db.prepare("INSERT INTO ducklake_metadata (key, value, scope, scope_id) VALUES (?, ?, NULL, NULL)");
    meta.run("version", DUCKLAKE_VERSION);
    meta.run("created_by", `svc ${VERSION}`);
    meta.run("data_path", ctx.dataPath);
    meta.run("encrypted", "false");
    // We read rows only from Parquet files: keep other writers (the extension) from inlining rows
    // into catalog tables (DuckLake "Data Inlining"; ducklake_metadata key data_inlining_row_limit).
    meta.run("data_inlining_row_limit", "0");
    db.run("INSERT INTO ducklake_snapshot VALUES (0, ?, 0, 1, 0)", [snapshotTimeText(nowMicros())]);
    db.run(`INSERT INTO ducklake_snapshot_changes VALUES (0, 'created_schema:"main"', NULL, NULL, NULL)`);
    db.run("INSERT INTO ducklake_schema VALUES (0, ?, 0, NULL, 'main', 'main/', 1)", [crypto.randomUUID()]);
  }).immediate();
  ctx.log.info("created DuckLake catalog", {
    path: ctx.catalogPath,
    dataPath: ctx.dataPath,
    version: DUCKLAKE_VERSION,
  });
}

function validateCatalog(ctx: Ctx): void {
  const { db } = ctx;
  const present = new Set(
    db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name),
  );
  const missing = REQUIRED_TABLES.filter((t) => !present.has(t));
  if (missing.length > 0) {
    throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.catalogPath} lacks DuckLake tables: ${missing.join(", ")}`, {
      details: { missing },
    });
  }
  const meta = new Map(
    db
      .query<{ key: string; value: string }, []>("SELECT key, value FROM ducklake_metadata WHERE scope IS NULL")
      .all()
      .map((r) => [r.key, r.value]),
  );
  const version = meta.get("version");
  if (version === undefined)
    throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.catalogPath} has no DuckLake version in ducklake_metadata`);
  if (version !== DUCKLAKE_VERSION) {
    throw new AppError(
      "UNSUPPORTED",
      `catalog ${ctx.catalogPath} is DuckLake ${version}; this build reads and writes DuckLake ${DUCKLAKE_VERSION}`,
      {
        details: { version, supported: DUCKLAKE_VERSION },
      },
    );
  }
  if (meta.get("encrypted") === "true")
    throw new AppError("UNSUPPORTED", `catalog ${ctx.catalogPath} uses encrypted data files`);
  const stored = meta.get("data_path");
  if (stored !== undefined && withSlash(resolve(stored)) !== ctx.dataPath) {
    // Like the extension's DATA_PATH override: the configured path wins (the lake may have moved).
    ctx.log.warn("catalog data_path differs from the configured data path; using the configured one", {
      stored,
      configured: ctx.dataPath,
    });
  }
  if (latestSnapshotRow(ctx) === null)
    throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.catalogPath} has no snapshot`);
}

interface SnapshotRow {
  snapshot_id: number;
  snapshot_time: string;
  schema_version: number;
  next_catalog_id: number;
  next_file_id: number;
  changes_made: string | null;
}

const SNAPSHOT_SELECT = `SELECT s.snapshot_id, s.snapshot_time, s.schema_version, s.next_catalog_id, s.next_file_id, c.changes_made
  FROM ducklake_snapshot s LEFT JOIN ducklake_snapshot_changes c ON c.snapshot_id = s.snapshot_id`;

export function latestSnapshotRow(ctx: Ctx): SnapshotRow | null {
  return ctx.db.query<SnapshotRow, []>(`${SNAPSHOT_SELECT} ORDER BY s.snapshot_id DESC LIMIT 1`).get();
}

export function toSnapshotInfo(r: SnapshotRow): SnapshotInfo {
  const us = parseTimestampMicros(r.snapshot_time);
  return {
    snapshotId: r.snapshot_id,
    time: r.snapshot_time,
    timeMs: us === null ? NaN : Number(us / 1000n),
    schemaVersion: r.schema_version,
    nextCatalogId: r.next_catalog_id,
    nextFileId: r.next_file_id,
    changes: r.changes_made,
  };
}

export function currentSnapshot(ctx: Ctx): SnapshotInfo {
  const r = latestSnapshotRow(ctx);
  if (r === null) throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.catalogPath} has no snapshot`);
  return toSnapshotInfo(r);
}

export function getSnapshot(ctx: Ctx, snapshotId: number): SnapshotInfo | null {
  const r = ctx.db.query<SnapshotRow, [number]>(`${SNAPSHOT_SELECT} WHERE s.snapshot_id = ?`).get(snapshotId);
  return r === null ? null : toSnapshotInfo(r);
}

/** Latest snapshot taken at or before `timestampMs`, or null when the catalog is younger. */
export function snapshotAt(ctx: Ctx, timestampMs: number): SnapshotInfo | null {
  const target = BigInt(Math.floor(timestampMs)) * 1000n + 999n;
  // snapshot_time only grows with snapshot_id (draft() keeps it monotonic), but other writers store
  // times as text that need parsing, so walk back from the newest in pages.
  const page = ctx.db.query<SnapshotRow, [number]>(
    `${SNAPSHOT_SELECT} WHERE s.snapshot_id < ? ORDER BY s.snapshot_id DESC LIMIT 256`,
  );
  let before = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const rows = page.all(before);
    if (rows.length === 0) return null;
    for (const r of rows) {
      const us = parseTimestampMicros(r.snapshot_time);
      if (us !== null && us <= target) return toSnapshotInfo(r);
      before = r.snapshot_id;
    }
  }
}

/** A snapshot being built inside a write transaction; `finish` writes its rows. */
export interface Draft {
  snapshotId: number;
  nextCatalogId: number;
  nextFileId: number;
  changes: string[];
  /** Tables whose schema changed (ducklake_schema_versions rows); a schema change bumps schema_version. */
  schemaChangedTables: Set<number>;
  schemaChanged: boolean;
  readonly base: SnapshotRow;
}

export function draft(ctx: Ctx): Draft {
  if (ctx.readOnly) throw new AppError("FORBIDDEN", `catalog ${ctx.catalogPath} is open read-only`);
  const base = latestSnapshotRow(ctx);
  if (base === null) throw new AppError("CATALOG_CORRUPT", `catalog ${ctx.catalogPath} has no snapshot`);
  return {
    snapshotId: base.snapshot_id + 1,
    nextCatalogId: base.next_catalog_id,
    nextFileId: base.next_file_id,
    changes: [],
    schemaChangedTables: new Set(),
    schemaChanged: false,
    base,
  };
}

export function finish(ctx: Ctx, d: Draft): number {
  const schemaVersion = d.schemaChanged ? d.base.schema_version + 1 : d.base.schema_version;
  // snapshot_time never goes backwards, so "latest snapshot at or before T" stays well defined.
  const prev = parseTimestampMicros(d.base.snapshot_time) ?? 0n;
  const now = nowMicros();
  const time = now > prev ? now : prev + 1n;
  ctx.db.run("INSERT INTO ducklake_snapshot VALUES (?, ?, ?, ?, ?)", [
    d.snapshotId,
    snapshotTimeText(time),
    schemaVersion,
    d.nextCatalogId,
    d.nextFileId,
  ]);
  ctx.db.run("INSERT INTO ducklake_snapshot_changes VALUES (?, ?, NULL, NULL, NULL)", [
    d.snapshotId,
    d.changes.join(","),
  ]);
  if (d.schemaChanged) {
    for (const tableId of d.schemaChangedTables) {
      ctx.db.run("INSERT INTO ducklake_schema_versions VALUES (?, ?, ?)", [d.snapshotId, schemaVersion, tableId]);
    }
  }
  return d.snapshotId;
}

/** Runs `fn` in one IMMEDIATE transaction (write lock taken up front) and rolls back on any throw. */
export function writeTxn<T>(ctx: Ctx, fn: () => T): T {
  if (ctx.readOnly) throw new AppError("FORBIDDEN", `catalog ${ctx.catalogPath} is open read-only`);
  return ctx.db.transaction(fn).immediate();
}

/** `begin_snapshot <= s AND (end_snapshot IS NULL OR end_snapshot > s)` for alias `a` (DuckLake "Queries"). */
export const liveAt = (a: string) =>
  `${a}.begin_snapshot <= $snap AND (${a}.end_snapshot IS NULL OR ${a}.end_snapshot > $snap)`;
