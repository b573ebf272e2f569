/**
 * A DuckLake catalog in PostgreSQL over Bun's built-in client (Bun.SQL), asynchronous: the
 * groundwork for `storage.lakehouse.catalog_type: postgres` (docs/DUCKLAKE.md "PostgreSQL catalog").
 * It implements the lake's catalog port (src/lake/catalog-port.ts, AsyncLakeCatalog) with the
 * semantics of the SQLite catalog (src/lake/catalog). Several svc writers on different hosts commit
 * into one catalog: every change is one transaction that first takes the advisory lock
 * COMMIT_LOCK_KEY, so svc commits run one after the other, and is run again (with back-off) when it
 * fails with a retryable SQLSTATE (a race with a writer that does not take the lock, such as the
 * stock extension). At most 2 connections per instance.
 */
import type { TransactionSQL } from "bun";
import { AppError, type ColumnType, redactUrl, testPause } from "../../core/index.ts";
import {
  type ColumnInfo,
  type DataFileInfo,
  type NewDataFile,
  newDataFilePath,
  type PartitionSwapGuard,
  type SnapshotInfo,
  type StatBound,
  type TableDef,
  type TableInfo,
  type WriterWatermark,
} from "../catalog/index.ts";
import type { AsyncLakeCatalog, ListDataFilesOptions, LiveDataFile } from "../catalog-port.ts";
import { toLiveDataFile } from "../catalog-port.ts";
import {
  claimSnapshot,
  currentSnapshot,
  type Draft,
  draftSnapshot,
  finishSnapshot,
  getSnapshot,
  type Marks,
  markList,
  num,
  type PgCtx,
  snapshotAt,
  upsertWriterMarks,
} from "./pg-db.ts";
import { type RetryStats, toAppError, withRetry } from "./pg-errors.ts";
import { connectCatalog, type PgCatalogOptions, scrubbed } from "./pg-connect.ts";
import { listFiles, type PgListOptions } from "./pg-file-list.ts";
import { insertFiles, validateFile } from "./pg-files.ts";
import { MaintainerLock } from "./maintainer-lock.ts";
import * as inflight from "./pg-inflight.ts";
import { checkSwap, replaceInTxn, retireInTxn } from "./pg-swap.ts";
import { checkTableDef, ensureTableInTxn, getTable, getTableById, listTables, schemaName } from "./pg-tables.ts";
import * as upkeep from "./pg-upkeep.ts";

export { redactUrl };

/** A table as this catalog answers it: the SQLite catalog's TableInfo, which is also the port's. */
export interface PgTableInfo extends TableInfo {
  // Types of tables other programs made pass through as their DuckLake text, as the SQLite adapter does.
  columns: Array<ColumnInfo & { type: ColumnType }>;
}
const asPort = (t: TableInfo) => t as PgTableInfo;

export class PgCatalog implements AsyncLakeCatalog {
  readonly dataPath: string;
  readonly owner: string;
  /** Counters for metrics and tests: commits run again after a retryable SQLSTATE. */
  readonly stats: RetryStats;
  readonly #ctx: PgCtx;
  readonly #maxAttempts: number;
  /** Tables by id for newDataFilePath (a table's directory and partitioning never change). */
  readonly #tables = new Map<number, TableInfo>();
  readonly #locks: MaintainerLock[] = [];

  readonly #url: string;
  readonly #poolSize: number;

  private constructor(
    ctx: PgCtx,
    stats: RetryStats,
    maxAttempts: number,
    owner: string,
    url: string,
    poolSize: number,
  ) {
    this.#ctx = ctx;
    this.stats = stats;
    this.#url = url;
    this.#poolSize = poolSize;
    this.dataPath = ctx.dataPath;
    this.#maxAttempts = maxAttempts;
    this.owner = owner;
  }

  /**
   * Connects, creates the DuckLake tables in an empty database (`create`), checks them. Errors name
   * CATALOG_URL_KEY and the URL without its password (docs/DUCKLAKE.md "PostgreSQL catalog").
   */
  static async open(opts: PgCatalogOptions): Promise<PgCatalog> {
    const stats: RetryStats = { retries: 0 };
    const maxAttempts = opts.maxAttempts ?? 20;
    const { ctx, owner } = await connectCatalog(opts, maxAttempts, stats);
    return new PgCatalog(ctx, stats, maxAttempts, owner, opts.url, opts.maxConnections ?? 2);
  }

  /** Gives up the maintainer lock when held, then closes the pool. */
  async close(): Promise<void> {
    for (const l of this.#locks) await l.release();
    await this.#ctx.sql.close({ timeout: 5 });
  }

  // ---- snapshots -------------------------------------------------------------------------------

  async currentSnapshot(): Promise<SnapshotInfo> {
    return this.#read("reading the current snapshot", () => currentSnapshot(this.#ctx));
  }

  async currentSnapshotId(): Promise<number> {
    return (await this.currentSnapshot()).snapshotId;
  }

  /** Latest snapshot at or before `timestampMs` (for `AT TIMESTAMP`), or undefined when none is that old. */
  async snapshotAt(timestampMs: number): Promise<number | undefined> {
    return this.#read(
      "finding a snapshot by time",
      async () => (await snapshotAt(this.#ctx.sql, timestampMs))?.snapshotId,
    );
  }

  async snapshotTimeMs(snapshotId: number): Promise<number | undefined> {
    return this.#read("reading a snapshot", async () => (await getSnapshot(this.#ctx.sql, snapshotId))?.timeMs);
  }

  // ---- schemas and tables ----------------------------------------------------------------------

  async listTables(snapshotId?: number): Promise<PgTableInfo[]> {
    return this.#read("listing tables", async () =>
      (await listTables(this.#ctx.sql, snapshotId ?? (await this.#snap()))).map(asPort),
    );
  }

  /** The live table `schema.name` (case-insensitive) at `snapshotId` (default the current one). */
  async getTable(schema: string, name: string, snapshotId?: number): Promise<PgTableInfo | undefined> {
    return this.#read(`reading table ${schema}.${name}`, async () => {
      const t = await getTable(this.#ctx.sql, schema, name, snapshotId ?? (await this.#snap()));
      return t === null ? undefined : asPort(t);
    });
  }

  async tableById(tableId: number, snapshotId?: number): Promise<PgTableInfo> {
    return this.#read(`reading table ${tableId}`, async () =>
      asPort(await getTableById(this.#ctx.sql, tableId, snapshotId ?? (await this.#snap()))),
    );
  }

  async schemaName(name: string): Promise<string | undefined> {
    return this.#read(`reading schema ${name}`, async () => schemaName(this.#ctx.sql, name, await this.#snap()));
  }

  /**
   * Returns the table, creating schema and table (and its partitioning) in one snapshot when
   * missing, or adding the columns of `def` it lacks; a column of another type is a CONFLICT.
   */
  async ensureTable(schema: string, def: TableDef): Promise<PgTableInfo> {
    checkTableDef(schema, def);
    const t = await this.#commit(`creating table ${schema}.${def.name}`, async (tx, d) => {
      const { tableId, changed } = await ensureTableInTxn(tx, d, schema, def);
      const snap = changed ? await finishSnapshot(tx, d) : d.base.snapshotId;
      return getTableById(tx, tableId, snap);
    });
    this.#tables.set(t.tableId, t);
    return asPort(t);
  }

  // ---- data files ------------------------------------------------------------------------------

  /** One snapshot with the files, and the writers' spool marks (one or several) in the same transaction. */
  async commitDataFiles(tableId: number, files: NewDataFile[], writers?: Marks): Promise<{ snapshotId: number }> {
    return this.commitInserts([{ tableId, files }], writers);
  }

  /**
   * One snapshot inserting files into one or more tables ("inserted_into_table:<id>" per table),
   * with the writers' marks in the same transaction. No files: no snapshot, marks unchanged.
   */
  async commitInserts(
    batches: ReadonlyArray<{ tableId: number; files: NewDataFile[] }>,
    marks?: Marks,
  ): Promise<{ snapshotId: number }> {
    const work = batches.filter((b) => b.files.length > 0);
    const list = markList(marks);
    return this.#commit("committing data files", async (tx, d) => {
      if (work.length === 0) return { snapshotId: d.base.snapshotId };
      const tables = [];
      for (const b of work) {
        const t = await getTableById(tx, b.tableId, d.base.snapshotId);
        for (const f of b.files) validateFile(this.#ctx, t, f);
        tables.push(t);
      }
      await claimSnapshot(tx, d);
      for (const [i, b] of work.entries()) {
        const t = tables[i];
        if (t === undefined) continue;
        await insertFiles(this.#ctx, tx, d, t, b.files);
        d.changes.push(`inserted_into_table:${b.tableId}`);
      }
      const snapshotId = await finishSnapshot(tx, d);
      await upsertWriterMarks(tx, list, snapshotId);
      await testPause("commit:before-commit");
      return { snapshotId };
    });
  }

  /** Writer marks alone, no snapshot: recorded at the current one (LakeCatalog.commitMarks). */
  async commitMarks(marks: ReadonlyArray<WriterWatermark>): Promise<void> {
    if (marks.length > 0)
      await this.#commit("committing writer marks", (tx, d) => upsertWriterMarks(tx, marks, d.base.snapshotId));
  }

  /** The watermark last committed with `writerKey`, 0 when none. */
  async writerWatermark(writerKey: string): Promise<number> {
    return this.#read("reading a writer watermark", async () => {
      const [r] = await this.#ctx.sql`SELECT watermark FROM svc_writer_watermark WHERE writer_key = ${writerKey}`;
      return r === undefined ? 0 : num(r.watermark);
    });
  }

  /** A new data file's path (relative to the data path), reserved as in flight for this owner until its commit. */
  async newDataFilePath(tableId: number, partitionValue?: string): Promise<string> {
    return this.#read("reserving a data file path", async () => {
      let t = this.#tables.get(tableId);
      if (t === undefined) {
        t = await getTableById(this.#ctx.sql, tableId, await this.#snap());
        this.#tables.set(tableId, t);
      }
      const path = newDataFilePath(t, partitionValue);
      await inflight.reserveDataFile(this.#ctx.sql, this.owner, path);
      return path;
    });
  }

  /** This owner's reservations not committed (relative to the data path): its own leftovers at start. */
  async inflightPaths(): Promise<Set<string>> {
    return this.#read("reading in-flight files", () => inflight.ownInflightPaths(this.#ctx.sql, this.owner));
  }
  /** Forgets this owner's reservations only; other writers' stay. */
  async clearInflight(): Promise<number> {
    return this.#read("clearing in-flight files", () => inflight.clearInflight(this.#ctx.sql, this.owner));
  }
  /** Forgets this owner's reservations of `paths`; another writer's reservation of a path stays. */
  async forgetInflight(paths: readonly string[]): Promise<number> {
    return this.#read("clearing in-flight files", () =>
      inflight.forgetOwnReservations(this.#ctx.sql, this.owner, paths),
    );
  }

  /**
   * Other writers' reservations older than `graceMs` whose writer is gone (no connection, nothing
   * reserved within the grace): paths relative to the data path, for the maintainer to delete.
   */
  async deadReservations(graceMs: number): Promise<string[]> {
    return this.#read("reading in-flight files", async () =>
      (await inflight.deadReservations(this.#ctx.sql, this.owner, graceMs)).map((r) => r.path),
    );
  }

  /** Forgets reservations `deadReservations` answered (still older than `graceMs` and not this owner's). */
  async forgetReservations(paths: string[], graceMs: number): Promise<number> {
    return this.#read("clearing in-flight files", () =>
      inflight.forgetReservations(this.#ctx.sql, this.owner, paths, graceMs),
    );
  }

  /** Every writer's reservations, with owner and time. */
  async inflightReservations(): Promise<Array<{ path: string; owner: string; reservedAtMs: number }>> {
    return this.#read("reading in-flight files", () => inflight.inflightReservations(this.#ctx.sql));
  }

  /** Live files at `snapshotId` (default current) in the port's shape; see listFiles. */
  async listDataFiles(tableId: number, opts: ListDataFilesOptions = {}): Promise<LiveDataFile[]> {
    const { statsColumns, ...rest } = opts;
    const files = await this.listFiles(tableId, { ...rest, stats: statsColumns ?? true });
    return files.map(toLiveDataFile);
  }

  /**
   * Live data files of a table at `snapshotId` (default the current one), with stats, optionally
   * pruned by one column's [min, max] overlap; read in one REPEATABLE READ transaction.
   */
  async listFiles(tableId: number, opts: PgListOptions & { snapshotId?: number } = {}): Promise<DataFileInfo[]> {
    return this.#read(`listing files of table ${tableId}`, () =>
      this.#ctx.sql.begin("isolation level repeatable read read only", async (tx) => {
        const snap = opts.snapshotId ?? (await currentSnapshot(this.#ctx, tx)).snapshotId;
        return listFiles(this.#ctx, tx, await getTableById(tx, tableId, snap), snap, opts);
      }),
    );
  }

  // ---- maintenance -----------------------------------------------------------------------------

  /** Compaction swap in one snapshot; CONFLICT (nothing changed) when record counts differ or the guarded partition changed. */
  async replaceDataFiles(
    tableId: number,
    oldFileIds: number[],
    newFiles: NewDataFile[],
    guard?: PartitionSwapGuard,
  ): Promise<{ snapshotId: number }> {
    checkSwap(oldFileIds, newFiles);
    return this.#commit(`compacting table ${tableId}`, async (tx, d) => {
      const t = await getTableById(tx, tableId, d.base.snapshotId);
      return { snapshotId: await replaceInTxn(this.#ctx, tx, d, t, oldFileIds, newFiles, guard) };
    });
  }

  /** Retention: ends the files whose `column` maximum is below `cutoff`; snapshotId null when none. */
  async retireFilesBefore(
    tableId: number,
    column: string,
    cutoff: StatBound,
  ): Promise<{ snapshotId: number | null; files: number }> {
    return this.#commit(`retiring files of table ${tableId}`, async (tx, d) =>
      retireInTxn(tx, d, await getTableById(tx, tableId, d.base.snapshotId), column, cutoff),
    );
  }

  /** Drops snapshots older than the time (under the commit lock) and schedules the files no remaining snapshot sees. */
  async expireSnapshots(olderThanMs: number): Promise<{ expiredSnapshots: number; scheduledFiles: number }> {
    return this.#commit("expiring snapshots", (tx) => upkeep.expireInTxn(this.#ctx, tx, olderThanMs));
  }

  async listScheduledDeletions(): Promise<Array<{ dataFileId: number; absolutePath: string }>> {
    return this.#read("listing scheduled deletions", async () =>
      (await upkeep.listScheduledDeletions(this.#ctx, this.#ctx.sql)).map((d) => ({
        dataFileId: d.dataFileId,
        absolutePath: d.absolutePath,
      })),
    );
  }

  /** Call after deleting scheduled files from disk. */
  async forgetFiles(dataFileIds: number[]): Promise<number> {
    return this.#read("forgetting deleted files", () => upkeep.forgetFiles(this.#ctx.sql, dataFileIds));
  }

  /** Absolute paths orphan clean-up keeps: every file the catalog knows, and every other writer's reservation. */
  async referencedPaths(): Promise<Set<string>> {
    return this.#read("listing referenced files", () =>
      this.#ctx.sql.begin("isolation level repeatable read read only", (tx) =>
        upkeep.referencedPaths(this.#ctx, tx, this.owner),
      ),
    );
  }

  async snapshotAnomalies(): Promise<{ duplicateRows: number; latestRows: number }> {
    return this.#read("checking snapshots", () => upkeep.snapshotAnomalies(this.#ctx.sql));
  }

  async hasInlinedRows(): Promise<boolean> {
    return this.#read("checking inlined rows", () => upkeep.hasInlinedRows(this.#ctx.sql));
  }

  /**
   * The lake's maintainer election over this catalog's pool (maintainer-lock.ts): while held, the
   * lock takes one of the pool's 2 connections, so commits and reads share the other.
   */
  maintainerLock(): MaintainerLock {
    if (this.#poolSize < 2)
      throw new AppError(
        "CONFIG_INVALID",
        `catalog ${this.#ctx.where}: the maintainer lock needs a pool of 2 connections (maxConnections 1 given)`,
      );
    const lock = new MaintainerLock(this.#ctx.sql, this.#ctx.log);
    this.#locks.push(lock);
    return lock;
  }

  // ---- internals -------------------------------------------------------------------------------

  async #snap(): Promise<number> {
    return (await currentSnapshot(this.#ctx)).snapshotId;
  }

  async #read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw scrubbed(toAppError(what, e), this.#url);
    }
  }

  /** One transaction under the commit lock, run again on a retryable SQLSTATE; rolled back on every error. */
  async #commit<T>(what: string, fn: (tx: TransactionSQL, d: Draft) => Promise<T>): Promise<T> {
    try {
      return await withRetry(what, this.#maxAttempts, this.stats, () =>
        this.#ctx.sql.begin(async (tx) => fn(tx, await draftSnapshot(this.#ctx, tx))),
      );
    } catch (e) {
      throw scrubbed(toAppError(what, e), this.#url);
    }
  }
}
