/**
 * The lake catalog: a DuckLake 1.0 catalog in a SQLite file, written by this program and readable
 * by a stock DuckDB (`ATTACH 'ducklake:sqlite:<file>' (DATA_PATH '<dir>')`). See docs/DUCKLAKE.md.
 * All methods are synchronous (bun:sqlite); every change is one SQLite transaction and one snapshot.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { AppError, createLogger, type Logger } from "../../core/index.ts";
import * as core from "./catalog-db.ts";
import { commitInserts, commitMarks, type WriterWatermark, writerWatermark } from "./data-files.ts";
import { type PartitionSwapGuard, replaceDataFiles, retireFilesBefore } from "./file-swap.ts";
import { listDataFiles, tableStats } from "./file-list.ts";
import { clearInflight, forgetInflight, inflightPaths, reserveDataFile } from "./inflight.ts";
import { acquireCatalogLock, type CatalogLock } from "./lock.ts";
import * as maint from "./maintenance.ts";
import { retireDataFiles } from "./retire.ts";
import { type SnapshotAnomalies, snapshotAnomalies } from "./snapshot-check.ts";
import * as tables from "./tables.ts";
import type {
  ColumnDef,
  DataFileInfo,
  IntegrityReport,
  ListFilesOptions,
  NewDataFile,
  RepairReport,
  ScheduledDeletion,
  SnapshotInfo,
  StatBound,
  TableDef,
  TableInfo,
  TableStats,
} from "./types.ts";

export interface OpenCatalogOptions {
  /** SQLite catalog file. */
  path: string;
  /** Directory of the Parquet files (stored as ducklake_metadata data_path when the catalog is new). */
  dataPath: string;
  /** Create the catalog when the file is missing or empty (default true; ignored when readOnly). */
  create?: boolean;
  /** Inspection only: no writer lock, no writes (CLI, query engine in another process). */
  readOnly?: boolean;
  log?: Logger;
}

export class Catalog {
  readonly path: string;
  readonly dataPath: string;
  readonly readOnly: boolean;
  #ctx: core.Ctx | null;
  #lock: CatalogLock | null;

  /** Use openCatalog(). */
  constructor(ctx: core.Ctx, lock: CatalogLock | null) {
    this.#ctx = ctx;
    this.#lock = lock;
    this.path = ctx.catalogPath;
    this.dataPath = ctx.dataPath;
    this.readOnly = ctx.readOnly;
  }

  get #c(): core.Ctx {
    if (this.#ctx === null) throw new AppError("UNAVAILABLE", `catalog ${this.path} is closed`);
    return this.#ctx;
  }

  #snap = () => core.currentSnapshot(this.#c).snapshotId;

  // ---- snapshots -------------------------------------------------------------------------------

  currentSnapshot(): SnapshotInfo {
    return core.currentSnapshot(this.#c);
  }

  getSnapshot(snapshotId: number): SnapshotInfo | null {
    return core.getSnapshot(this.#c, snapshotId);
  }

  /** Latest snapshot at or before `timestampMs` (for `AT TIMESTAMP`), or null when none is that old. */
  snapshotAt(timestampMs: number): SnapshotInfo | null {
    return core.snapshotAt(this.#c, timestampMs);
  }

  // ---- schemas and tables ----------------------------------------------------------------------

  ensureSchema(name: string): number {
    return tables.ensureSchema(this.#c, name, this.#snap);
  }

  ensureTable(schema: string, def: TableDef): TableInfo {
    return tables.ensureTable(this.#c, schema, def, this.#snap);
  }

  addColumns(tableId: number, cols: ColumnDef[]): TableInfo {
    return tables.addColumns(this.#c, tableId, cols, this.#snap);
  }

  listTables(opts: { snapshotId?: number } = {}): TableInfo[] {
    return tables.listTables(this.#c, opts.snapshotId ?? this.#snap());
  }

  getTable(schema: string, name: string, opts: { snapshotId?: number } = {}): TableInfo | null {
    return tables.getTable(this.#c, schema, name, opts.snapshotId ?? this.#snap());
  }

  /** How the catalog spells schema `name` (case-insensitive), or undefined when there is none. */
  schemaName(name: string, opts: { snapshotId?: number } = {}): string | undefined {
    return tables.schemaName(this.#c, name, opts.snapshotId ?? this.#snap());
  }

  getTableById(tableId: number, opts: { snapshotId?: number } = {}): TableInfo {
    return tables.getTableById(this.#c, tableId, opts.snapshotId ?? this.#snap());
  }

  // ---- data files ------------------------------------------------------------------------------

  /**
   * Registers Parquet files already written below the data path, in one new snapshot (one SQLite
   * transaction, together with each of `marks`). No files: nothing is written and the current
   * snapshot id is returned. Files must exist with the stated size (VALIDATION otherwise).
   */
  commitDataFiles(
    tableId: number,
    files: NewDataFile[],
    marks?: WriterWatermark | readonly WriterWatermark[],
  ): { snapshotId: number } {
    return commitInserts(this.#c, [{ tableId, files }], marks);
  }

  /** Like commitDataFiles for several tables at once: one snapshot for a whole flush. */
  commitBatch(
    batches: ReadonlyArray<{ tableId: number; files: NewDataFile[] }>,
    marks?: WriterWatermark | readonly WriterWatermark[],
  ): { snapshotId: number } {
    return commitInserts(this.#c, batches, marks);
  }

  /** Writer marks alone, at the current snapshot (the forward receiver's positions over refused batches). */
  commitMarks(marks: readonly WriterWatermark[]): void {
    commitMarks(this.#c, marks);
  }

  /** The watermark last committed with `writerKey`, or null. */
  writerWatermark(writerKey: string): number | null {
    return writerWatermark(this.#c, writerKey);
  }

  /**
   * Live files of a table at a snapshot (default current), with stats (`stats`: true = every column,
   * a list = those columns, false = none), optionally pruned by one column's [min, max] overlap.
   */
  listDataFiles(tableId: number, opts: ListFilesOptions & { stats?: boolean | string[] } = {}): DataFileInfo[] {
    return listDataFiles(this.#c, tableId, opts.snapshotId ?? this.#snap(), opts);
  }

  tableStats(tableId: number): TableStats {
    return tableStats(this.#c, tableId, this.#snap());
  }

  // ---- maintenance -----------------------------------------------------------------------------

  /** Compaction swap in one snapshot; throws CONFLICT (nothing changed) when record counts differ or the guarded partition changed. */
  replaceDataFiles(
    tableId: number,
    oldFileIds: number[],
    newFiles: NewDataFile[],
    guard?: PartitionSwapGuard,
  ): { snapshotId: number } {
    return replaceDataFiles(this.#c, tableId, oldFileIds, newFiles, guard);
  }

  /** Duplicate snapshot rows (native compaction's post-cycle check). */
  snapshotAnomalies(): SnapshotAnomalies {
    return snapshotAnomalies(this.#c);
  }

  /** Retention: ends the files whose `column` maximum is below `cutoff`; snapshotId null when none. */
  retireFilesBefore(
    tableId: number,
    column: string,
    cutoff: StatBound,
  ): { snapshotId: number | null; files: DataFileInfo[] } {
    return retireFilesBefore(this.#c, tableId, column, cutoff);
  }

  /** Ends the given live files in one snapshot (catalog rebuild: superseded copies); snapshotId null when none. */
  retireDataFiles(tableId: number, fileIds: number[]): { snapshotId: number | null } {
    return retireDataFiles(this.#c, tableId, fileIds);
  }

  /** Drops snapshots older than the time and schedules the files no remaining snapshot sees. */
  expireSnapshots(olderThanMs: number): { expiredSnapshots: number; scheduledFiles: number } {
    return maint.expireSnapshots(this.#c, olderThanMs);
  }

  listScheduledDeletions(): ScheduledDeletion[] {
    return maint.listScheduledDeletions(this.#c);
  }

  /** Call after deleting scheduled files from disk. */
  forgetFiles(dataFileIds: number[]): number {
    return maint.forgetFiles(this.#c, dataFileIds);
  }

  /**
   * Records a data file about to be written (path relative to the data path) until the commit that
   * registers it: what the start may delete after a crash (docs/OPERATIONS.md "Orphans at start and
   * the quarantine").
   */
  reserveDataFile(relPath: string): void {
    reserveDataFile(this.#c, relPath);
  }

  /** Files reserved and not committed (relative to the data path). */
  inflightPaths(): Set<string> {
    return inflightPaths(this.#c);
  }

  /** Forgets the reservations (at start, after the leftovers are handled). */
  clearInflight(): number {
    return clearInflight(this.#c);
  }

  /** Forgets the reservations of `relPaths` (the object-store sweep's, docs/STORAGE.md "Orphans in the store"). */
  forgetInflight(relPaths: readonly string[]): number {
    return forgetInflight(this.#c, relPaths);
  }

  /** Absolute paths of every file the catalog references (for orphan cleanup). */
  referencedPaths(): Set<string> {
    return maint.referencedPaths(this.#c);
  }

  /** Tables with rows inlined into the catalog by another writer (compaction skips such catalogs). */
  listInlinedData(): Array<{ tableId: number; tableName: string; schemaVersion: number; liveRows: number }> {
    return maint.listInlinedData(this.#c);
  }

  backup(destPath?: string): string {
    return maint.backup(this.#c, destPath);
  }

  listBackups(): string[] {
    return maint.listBackups(this.#c);
  }

  pruneBackups(keep: number): string[] {
    return maint.pruneBackups(this.#c, keep);
  }

  /** Duplicated rows per DuckLake table (what repair() would remove), without changing anything. */
  duplicateRows(): Record<string, number> {
    return maint.duplicateRows(this.#c);
  }

  repair(): RepairReport {
    return maint.repair(this.#c);
  }

  integrityCheck(): IntegrityReport {
    return maint.integrityCheck(this.#c);
  }

  /** Closes the database and releases the writer lock. Idempotent. */
  close(): void {
    const ctx = this.#ctx;
    if (ctx === null) return;
    this.#ctx = null;
    try {
      if (!ctx.readOnly) ctx.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // a busy reader keeps the WAL; it is checkpointed on a later open
    }
    ctx.db.close();
    this.#lock?.release();
    this.#lock = null;
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens (or creates) the catalog. Writers take `<catalog>.lock` first: CATALOG_LOCKED when another
 * live process holds it. Errors: NOT_FOUND (missing, create false), CATALOG_CORRUPT (not a DuckLake
 * catalog), UNSUPPORTED (another DuckLake version, encrypted).
 */
export function openCatalog(opts: OpenCatalogOptions): Catalog {
  const log = opts.log ?? createLogger({ module: "catalog" });
  const readOnly = opts.readOnly ?? false;
  if (!readOnly && opts.create !== false) mkdirSync(dirname(resolve(opts.path)), { recursive: true });
  const lock = readOnly ? null : acquireCatalogLock(resolve(opts.path), log);
  try {
    const ctx = core.openDatabase({
      path: opts.path,
      dataPath: opts.dataPath,
      create: opts.create ?? true,
      readOnly,
      log,
    });
    return new Catalog(ctx, lock);
  } catch (e) {
    lock?.release();
    throw e;
  }
}
