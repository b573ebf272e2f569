import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { loadDuckDb } from "./duckdb.ts";
import { jsonRows } from "./result-json.ts";
import { readStreamed, runSingleSelect, type QueryResult } from "./result-stream.ts";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AppError, errorMessage } from "../core/index.ts";
import type { EngineOptions, QueryOptions, SqlParams } from "./engine-options.ts";

export {
  type EngineOptions,
  engineOptions,
  type QueryOptions,
  type SqlEngineOptions,
  type SqlParams,
} from "./engine-options.ts";
export type { QueryResult } from "./result-stream.ts";

/** DuckDB's "Out of Memory Error". */
export const isOutOfMemory = (e: unknown) => /out of memory/i.test(errorMessage(e));

const DEFAULT_HINT =
  "select fewer or shorter columns (e.g. left(payload, 200)), aggregate, narrow the WHERE clause or send a lower limit";

/** Late materialisation for LIMIT ≤ this many rows on the default query connections. */
const LATE_MATERIALIZATION_ROWS = 1000;
/** DuckDB's default: the eager connections keep it, so a LIMIT 100 is never late-materialised. */
const EAGER_MATERIALIZATION_ROWS = 50;

/**
 * Which tuning key DuckDB refused ("Failed to set config" names none): each is tried alone on a
 * throw-away instance. Returns "tuning.<key> <value>: " or "".
 */
async function refusedSetting(
  settings: Array<[key: string, setting: string, value: string]>,
  section: string,
): Promise<string> {
  for (const [key, setting, value] of settings) {
    try {
      (await (await loadDuckDb()).DuckDBInstance.create(":memory:", { [setting]: value })).closeSync();
    } catch {
      return `tuning.${key} ${JSON.stringify(value)} (${section}) is refused by DuckDB: `;
    }
  }
  return "";
}

/** The pools of query connections: searches (late/eager materialisation) and user SQL. */
type PoolKind = "late" | "eager" | "sql";
interface Pool {
  idle: DuckDBConnection[];
  waiters: Array<(c: DuckDBConnection) => void>;
}

/**
 * One long-lived DuckDB instance per process (docs/PLATFORM.md "DuckDB offline", "Locking DuckDB
 * down for user SQL"): offline (never autoload/autoinstall), UTC, file access limited to the lake's
 * directories, configuration locked so user SQL cannot loosen it. `svc_lake` is an in-memory database holding the buffer
 * tables (`mem_<table>`) and the views that resolve `svc_lake.main.<table>` to Parquet + buffer.
 */
export class Engine {
  private readonly pools: Record<PoolKind, Pool> = {
    late: { idle: [], waiters: [] },
    eager: { idle: [], waiters: [] },
    sql: { idle: [], waiters: [] },
  };
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    /** The writer's connection: INSERT from spool, COPY to Parquet, view DDL. */
    readonly writer: DuckDBConnection,
    /** Long maintenance work (compaction) that must not hold up the writer. */
    readonly background: DuckDBConnection,
    private readonly ddlCon: DuckDBConnection,
    queryCons: DuckDBConnection[],
    eagerCons: DuckDBConnection[],
    /** The user-SQL instance and its DDL connection (the same views as the main one). */
    private readonly sqlSide:
      | { instance: DuckDBInstance; ddl: DuckDBConnection; cons: DuckDBConnection[]; memoryLimit: string }
      | undefined,
    private readonly memoryLimit: string,
  ) {
    this.pools.late.idle.push(...queryCons);
    this.pools.eager.idle.push(...eagerCons);
    if (sqlSide) this.pools.sql.idle.push(...sqlSide.cons);
  }

  static async open(opts: EngineOptions): Promise<Engine> {
    mkdirSync(opts.tempDirectory, { recursive: true });
    // Outside the try: a driver that cannot load is not a refused tuning key (src/lake/duckdb.ts).
    const duckdb = await loadDuckDb();
    let instance: DuckDBInstance;
    try {
      instance = await duckdb.DuckDBInstance.create(":memory:", {
        threads: String(opts.threads),
        memory_limit: opts.memoryLimit,
        temp_directory: opts.tempDirectory,
        autoinstall_known_extensions: "false",
        autoload_known_extensions: "false",
      });
    } catch (e) {
      const which = await refusedSetting(
        [
          ["threads", "threads", String(opts.threads)],
          ["memory_limit", "memory_limit", opts.memoryLimit],
          ["temp_directory", "temp_directory", opts.tempDirectory],
        ],
        "storage.lakehouse or node.lakehouse",
      );
      throw new AppError("CONFIG_INVALID", `cannot start the query engine: ${which}${errorMessage(e)}`, { cause: e });
    }
    let sqlInstance: DuckDBInstance | undefined;
    if (opts.sql) {
      const s = opts.sql;
      const spill = join(opts.tempDirectory, "sql");
      // Ours alone: spill files a killed process left behind go (DuckDB removes its own on a clean close).
      rmSync(spill, { recursive: true, force: true });
      mkdirSync(spill, { recursive: true });
      try {
        sqlInstance = await duckdb.DuckDBInstance.create(":memory:", {
          threads: String(s.threads),
          memory_limit: s.memoryLimit,
          temp_directory: spill,
          max_temp_directory_size: s.maxTempDirectorySize,
          autoinstall_known_extensions: "false",
          autoload_known_extensions: "false",
        });
      } catch (e) {
        instance.closeSync();
        const which = await refusedSetting(
          [
            ["sql_threads", "threads", String(s.threads)],
            ["sql_memory_limit", "memory_limit", s.memoryLimit],
            ["sql_max_temp_directory_size", "max_temp_directory_size", s.maxTempDirectorySize],
          ],
          "storage.lakehouse",
        );
        throw new AppError("CONFIG_INVALID", `cannot start the user-SQL engine: ${which}${errorMessage(e)}`, {
          cause: e,
        });
      }
    }
    const dirs = opts.allowedDirectories.map((d) => (d.endsWith("/") ? d : d + "/"));
    // GLOBAL: in DuckDB 1.5 a plain SET is a session setting of this one connection, and
    // lock_configuration below stops the query connections from setting it themselves — without
    // GLOBAL they would run on the host's time zone, re-parse every Parquet footer per query and
    // never late-materialise a LIMIT (docs/BENCHMARKS.md "Search", item 1).
    const setup = (dirs: string[]) => [
      "SET GLOBAL TimeZone = 'UTC'",
      "SET GLOBAL preserve_insertion_order = false",
      // A LIMIT 100 with payload is 7-12x slower at the default of 50 (docs/PLATFORM.md "Reading Parquet").
      `SET GLOBAL late_materialization_max_rows = ${LATE_MATERIALIZATION_ROWS}`,
      "SET GLOBAL parquet_metadata_cache = true",
      "ATTACH ':memory:' AS svc_lake",
      `SET GLOBAL allowed_directories = [${dirs.map((d) => `'${d.replaceAll("'", "''")}'`).join(", ")}]`,
      "SET GLOBAL enable_external_access = false",
    ];
    const run = async (con: DuckDBConnection, sql: string) => {
      try {
        await con.run(sql);
      } catch (e) {
        throw new AppError("CONFIG_INVALID", `query engine setup failed at "${sql}": ${errorMessage(e)}`, { cause: e });
      }
    };
    const writer = await instance.connect();
    for (const sql of setup(dirs)) await run(writer, sql);
    const n = opts.queryConnections ?? 4;
    const queryCons: DuckDBConnection[] = [];
    const eagerCons: DuckDBConnection[] = [];
    // A streamed result (user SQL) buffers ahead up to streaming_buffer_size, counted without the
    // strings' contents: at the default 976 KiB DuckDB ran ≈ 30 chunks ahead, ≈ 270 MB for rows
    // of 6 KB. 16 KB is about one chunk (docs/BENCHMARKS.md "Memory limits"). A session setting.
    const streamBuffer = "SET streaming_buffer_size = '16KB'";
    for (let i = 0; i < n; i++) {
      const con = await instance.connect();
      await run(con, streamBuffer);
      queryCons.push(con);
    }
    for (let i = 0; i < n; i++) {
      const con = await instance.connect();
      await run(con, streamBuffer);
      // A session setting, made before the lock below freezes every setting.
      await run(con, `SET late_materialization_max_rows = ${EAGER_MATERIALIZATION_ROWS}`);
      eagerCons.push(con);
    }
    const background = await instance.connect();
    const ddl = await instance.connect();
    await run(writer, "SET GLOBAL lock_configuration = true");
    let sqlSide:
      | { instance: DuckDBInstance; ddl: DuckDBConnection; cons: DuckDBConnection[]; memoryLimit: string }
      | undefined;
    if (sqlInstance && opts.sql) {
      // The same lock-down and views as the main instance; only its spill directory is its own.
      const sqlDdl = await sqlInstance.connect();
      for (const sql of setup(dirs)) await run(sqlDdl, sql);
      const cons: DuckDBConnection[] = [];
      for (let i = 0; i < (opts.sql.connections ?? 4); i++) {
        const con = await sqlInstance.connect();
        await run(con, streamBuffer);
        cons.push(con);
      }
      await run(sqlDdl, "SET GLOBAL lock_configuration = true");
      sqlSide = { instance: sqlInstance, ddl: sqlDdl, cons, memoryLimit: opts.sql.memoryLimit };
    }
    return new Engine(instance, writer, background, ddl, queryCons, eagerCons, sqlSide, opts.memoryLimit);
  }

  private acquire(kind: PoolKind): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new AppError("UNAVAILABLE", "query engine is closed"));
    const pool = this.pools[kind];
    const c = pool.idle.pop();
    if (c) return Promise.resolve(c);
    return new Promise((resolve) => pool.waiters.push(resolve));
  }

  private release(kind: PoolKind, c: DuckDBConnection): void {
    const pool = this.pools[kind];
    const w = pool.waiters.shift();
    if (w) w(c);
    else pool.idle.push(c);
  }

  /**
   * Runs one statement on a query connection; interrupted after `timeoutMs` (TIMEOUT error).
   * Values come back JSON-friendly (BIGINT as number when safe, timestamps as ISO strings).
   */
  async query(sql: string, params?: SqlParams, opts: QueryOptions = {}): Promise<QueryResult> {
    const kind: PoolKind =
      opts.readOnly && this.sqlSide ? "sql" : opts.lateMaterialization === false ? "eager" : "late";
    const con = await this.acquire(kind);
    let timedOut = false;
    const timer =
      opts.timeoutMs && opts.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            con.interrupt();
          }, opts.timeoutMs)
        : undefined;
    try {
      const budget = {
        maxBytes: opts.maxResultBytes ?? Number.POSITIVE_INFINITY,
        hint: opts.narrowHint ?? DEFAULT_HINT,
      };
      if (opts.readOnly) return await runSingleSelect(con, sql, budget);
      if (opts.maxResultBytes !== undefined) return await readStreamed(await con.stream(sql, params), budget);
      const reader = await con.runAndReadAll(sql, params);
      return {
        columns: reader.columnNames(),
        types: reader.columnTypes().map((t) => t.toString()),
        rows: jsonRows(reader),
      };
    } catch (e) {
      if (e instanceof AppError) throw e;
      if (timedOut)
        throw new AppError(
          "TIMEOUT",
          `query exceeded ${opts.timeoutMs} ms and was cancelled; narrow the time range or filter, or raise coordinator.query_timeout_sec`,
          { cause: e },
        );
      if (isOutOfMemory(e)) throw this.outOfMemory(kind, e);
      throw new AppError("QUERY_FAILED", errorMessage(e), {
        cause: e,
        details: { sql: sql.length > 2000 ? sql.slice(0, 2000) + "…" : sql },
      });
    } finally {
      if (timer) clearTimeout(timer);
      this.release(kind, con);
    }
  }

  /**
   * A query that needs more memory than its engine's cap: the client's query is too big, so a 413
   * that names the cap and how to narrow it, never DuckDB's text (docs/OPERATIONS.md "Engine tuning").
   */
  private outOfMemory(kind: PoolKind, cause: unknown): AppError {
    const [key, limit] =
      kind === "sql" && this.sqlSide
        ? ["storage.lakehouse.tuning.sql_memory_limit", this.sqlSide.memoryLimit]
        : ["storage.lakehouse.tuning.memory_limit", this.memoryLimit];
    return new AppError(
      "PAYLOAD_TOO_LARGE",
      `the query needs more memory than ${key} (${limit}) allows; aggregate fewer rows or shorter values (string_agg and list aggregates hold every value in memory), narrow the WHERE clause or select fewer columns`,
      { cause, details: { reason: "memory_limit", memory_limit: limit } },
    );
  }

  /** Writer-side statement (serialised by the caller). */
  async run(sql: string, params?: SqlParams): Promise<void> {
    await this.writer.run(sql, params);
  }

  async readAll(sql: string, params?: SqlParams): Promise<Record<string, unknown>[]> {
    return jsonRows(await this.writer.runAndReadAll(sql, params));
  }

  /** View DDL, on its own connection so a refresh never waits behind a flush's COPY. */
  async ddl(sql: string): Promise<void> {
    await this.ddlCon.run(sql);
    if (this.sqlSide) await this.sqlSide.ddl.run(sql);
  }

  /**
   * Statements of the DDL connection in one transaction, rolled back on any error (docs/ARCHITECTURE.md
   * "Transactions"): a failed statement leaves a DuckDB transaction aborted, and on a shared
   * connection every later statement would then fail with "Current transaction is aborted".
   * Every multi-statement change in src/lake goes through here, never through a `BEGIN …` string.
   */
  async transaction(statements: readonly string[]): Promise<void> {
    await runInTransaction(this.ddlCon, statements);
    // Views only read files, so the user-SQL instance takes the same statements; should they fail
    // there, the caller's retry (ViewRefresher) re-creates them on both.
    if (this.sqlSide) await runInTransaction(this.sqlSide.ddl, statements);
  }

  async runBackground(sql: string): Promise<void> {
    await this.background.run(sql);
  }

  async readBackground(sql: string): Promise<Record<string, unknown>[]> {
    return jsonRows(await this.background.runAndReadAll(sql));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pool of Object.values(this.pools)) {
      for (const c of pool.idle) c.closeSync();
      pool.idle.length = 0;
    }
    this.background.closeSync();
    this.ddlCon.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
    if (this.sqlSide) {
      this.sqlSide.ddl.closeSync();
      this.sqlSide.instance.closeSync();
    }
  }
}

/** BEGIN, the statements, COMMIT; ROLLBACK when any of them (or the COMMIT) fails, then rethrow. */
export async function runInTransaction(
  con: Pick<DuckDBConnection, "run">,
  statements: readonly string[],
): Promise<void> {
  await con.run("BEGIN TRANSACTION");
  try {
    for (const sql of statements) await con.run(sql);
    await con.run("COMMIT");
  } catch (e) {
    try {
      await con.run("ROLLBACK");
    } catch {
      // A failed COMMIT has already ended the transaction; nothing is left to roll back.
    }
    throw e;
  }
}
