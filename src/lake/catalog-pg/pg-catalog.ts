/**
 * A DuckLake catalog in PostgreSQL over Bun's built-in client (Bun.SQL), asynchronous: the
 * groundwork for `storage.lakehouse.catalog_type: postgres` (docs/DUCKLAKE.md "PostgreSQL catalog").
 * Several svc writers on different hosts commit into one catalog: every commit is one transaction
 * that first takes the advisory lock COMMIT_LOCK_KEY, so svc commits run one after the other, and
 * is run again (with back-off) when it fails with a retryable SQLSTATE (a race with a writer that
 * does not take the lock, such as the stock extension). At most 2 connections per instance.
 */
import { SQL, type TransactionSQL } from "bun";
import { resolve } from "node:path";
import { AppError, createLogger, type Logger, redactUrl } from "../../core/index.ts";

export { redactUrl };
import type { DataFileInfo, NewDataFile, SnapshotInfo, TableDef, TableInfo, WriterWatermark } from "../catalog/index.ts";
import { claimSnapshot, currentSnapshot, type Draft, draftSnapshot, finishSnapshot, num, type PgCtx, prepareCatalog } from "./pg-db.ts";
import { type RetryStats, toAppError, withRetry } from "./pg-errors.ts";
import { insertFiles, listFiles, validateFile } from "./pg-files.ts";
import { checkTableDef, ensureTableInTxn, getTable, getTableById } from "./pg-tables.ts";

export interface PgCatalogOptions {
  /** `postgres://user:password@host:port/database` */
  url: string;
  /** Directory the catalog's relative paths are below (the lake's data path). */
  dataPath: string;
  /** Create the DuckLake tables in an empty database (default true). */
  create?: boolean;
  /** Pool size, 1 or 2 (default 2): one for commits, one for reads. */
  maxConnections?: 1 | 2;
  /** Attempts of one commit before it fails with CONFLICT (default 20). */
  maxAttempts?: number;
  log?: Logger;
}

export class PgCatalog {
  readonly dataPath: string;
  /** Counters for metrics and tests: commits run again after a retryable SQLSTATE. */
  readonly stats: RetryStats = { retries: 0 };
  readonly #ctx: PgCtx;
  readonly #maxAttempts: number;

  private constructor(ctx: PgCtx, maxAttempts: number) {
    this.#ctx = ctx;
    this.dataPath = ctx.dataPath;
    this.#maxAttempts = maxAttempts;
  }

  static async open(opts: PgCatalogOptions): Promise<PgCatalog> {
    const where = redactUrl(opts.url);
    if (!/^postgres(ql)?:\/\//.test(opts.url)) throw new AppError("CONFIG_INVALID", `catalog URL ${where} is not a postgres:// URL`);
    const dataPath = resolve(opts.dataPath);
    const sql = new SQL(opts.url, { max: opts.maxConnections ?? 2, idleTimeout: 60, connectionTimeout: 10 });
    const ctx: PgCtx = { sql, dataPath: dataPath.endsWith("/") ? dataPath : `${dataPath}/`, where, log: opts.log ?? createLogger({ catalog: where }) };
    const cat = new PgCatalog(ctx, opts.maxAttempts ?? 20);
    try {
      await withRetry(`opening catalog ${where}`, cat.#maxAttempts, cat.stats, () => prepareCatalog(ctx, opts.create ?? true));
    } catch (e) {
      await sql.close({ timeout: 0 });
      throw e;
    }
    return cat;
  }

  async close(): Promise<void> {
    await this.#ctx.sql.close({ timeout: 5 });
  }

  async currentSnapshot(): Promise<SnapshotInfo> {
    return this.#read("reading the current snapshot", () => currentSnapshot(this.#ctx));
  }

  /** The live table `schema.name` at `snapshotId` (default the current one), or null. */
  async getTable(schema: string, name: string, snapshotId?: number): Promise<TableInfo | null> {
    return this.#read(`reading table ${schema}.${name}`, async () => getTable(this.#ctx.sql, schema, name, snapshotId ?? (await currentSnapshot(this.#ctx)).snapshotId));
  }

  /**
   * Returns the table, creating schema and table (and its partitioning) in one snapshot when
   * missing, or adding the columns of `def` it lacks; a column of another type is a CONFLICT.
   */
  async ensureTable(schema: string, def: TableDef): Promise<TableInfo> {
    checkTableDef(schema, def);
    return this.#commit(`creating table ${schema}.${def.name}`, async (tx, d) => {
      const { tableId, changed } = await ensureTableInTxn(tx, d, schema, def);
      const snap = changed ? await finishSnapshot(tx, d) : d.base.snapshotId;
      return getTableById(tx, tableId, snap);
    });
  }

  /**
   * One snapshot inserting files into one or more tables ("inserted_into_table:<id>" per table),
   * with the writer's watermark in the same transaction when given.
   */
  async commitInserts(batches: Array<{ tableId: number; files: NewDataFile[] }>, mark?: WriterWatermark): Promise<{ snapshotId: number }> {
    const work = batches.filter((b) => b.files.length > 0);
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
      if (mark) {
        await tx`INSERT INTO svc_writer_watermark VALUES (${mark.writerKey}, ${mark.watermark}, ${snapshotId})
          ON CONFLICT (writer_key) DO UPDATE SET watermark = EXCLUDED.watermark, snapshot_id = EXCLUDED.snapshot_id`;
      }
      return { snapshotId };
    });
  }

  async writerWatermark(writerKey: string): Promise<number | null> {
    return this.#read("reading a writer watermark", async () => {
      const [r] = await this.#ctx.sql`SELECT watermark FROM svc_writer_watermark WHERE writer_key = ${writerKey}`;
      return r === undefined ? null : num(r.watermark);
    });
  }

  /** Live data files of a table at `snapshotId` (default the current one), with stats. */
  async listFiles(tableId: number, snapshotId?: number): Promise<DataFileInfo[]> {
    return this.#read(`listing files of table ${tableId}`, () =>
      this.#ctx.sql.begin("isolation level repeatable read read only", async (tx) => {
        const snap = snapshotId ?? (await currentSnapshot(this.#ctx, tx)).snapshotId;
        return listFiles(this.#ctx, tx, await getTableById(tx, tableId, snap), snap);
      }),
    );
  }

  async #read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw toAppError(what, e);
    }
  }

  /** One transaction under the commit lock, run again on a retryable SQLSTATE; rolled back on every error. */
  async #commit<T>(what: string, fn: (tx: TransactionSQL, d: Draft) => Promise<T>): Promise<T> {
    return withRetry(what, this.#maxAttempts, this.stats, () => this.#ctx.sql.begin(async (tx) => fn(tx, await draftSnapshot(this.#ctx, tx))));
  }
}
