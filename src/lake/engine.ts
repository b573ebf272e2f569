import { DuckDBInstance, DuckDBTypeId, StatementType, type DuckDBConnection, type DuckDBResultReader, type DuckDBValue } from "@duckdb/node-api";
import { mkdirSync } from "node:fs";
import { AppError, errorMessage } from "../core/index.ts";

/**
 * One long-lived DuckDB instance per process (PLATFORM-NOTES "Locking DuckDB down"): offline
 * (never autoload/autoinstall), UTC, file access limited to the lake's directories, configuration
 * locked so user SQL cannot loosen it. `svc_lake` is an in-memory database holding the buffer
 * tables (`mem_<table>`) and the views that resolve `svc_lake.main.<table>` to Parquet + buffer.
 */
export interface EngineOptions {
  threads: number;
  memoryLimit: string;
  tempDirectory: string;
  /** Directories DuckDB may read and write (data path, spool, temp). Trailing slash added. */
  allowedDirectories: string[];
  /** Query connections kept open for concurrent searches. */
  queryConnections?: number;
}

export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;

export interface QueryResult {
  columns: string[];
  /** DuckDB type of each column (`VARCHAR`, `TIMESTAMP`, `BIGINT[]`…). */
  types: string[];
  rows: Record<string, unknown>[];
}

export interface QueryOptions {
  timeoutMs?: number;
  /**
   * User SQL (POST /query): DuckDB's own parser must find exactly one statement and it must be a
   * SELECT, checked before anything runs. Backs up the token check of src/lake/query/sql-guard.ts.
   */
  readOnly?: boolean;
}

export class Engine {
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiters: Array<(c: DuckDBConnection) => void> = [];
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    /** The writer's connection: INSERT from spool, COPY to Parquet, view DDL. */
    readonly writer: DuckDBConnection,
    /** Long maintenance work (compaction) that must not hold up the writer. */
    readonly background: DuckDBConnection,
    private readonly ddlCon: DuckDBConnection,
    queryCons: DuckDBConnection[],
  ) {
    this.idle.push(...queryCons);
  }

  static async open(opts: EngineOptions): Promise<Engine> {
    mkdirSync(opts.tempDirectory, { recursive: true });
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(":memory:", {
        threads: String(opts.threads),
        memory_limit: opts.memoryLimit,
        temp_directory: opts.tempDirectory,
        autoinstall_known_extensions: "false",
        autoload_known_extensions: "false",
      });
    } catch (e) {
      throw new AppError("CONFIG_INVALID", `cannot start the query engine: ${errorMessage(e)}`, { cause: e });
    }
    const writer = await instance.connect();
    const dirs = opts.allowedDirectories.map((d) => (d.endsWith("/") ? d : d + "/"));
    // GLOBAL: in DuckDB 1.5 a plain SET is a session setting of this one connection, and
    // lock_configuration below stops the query connections from setting it themselves — without
    // GLOBAL they would run on the host's time zone, re-parse every Parquet footer per query and
    // never late-materialise a LIMIT (docs/BENCHMARKS.md "Search", item 1).
    const setup = [
      "SET GLOBAL TimeZone = 'UTC'",
      "SET GLOBAL preserve_insertion_order = false",
      // A LIMIT 100 with payload is 7-12x slower at the default of 50 (PLATFORM-NOTES "Reading").
      "SET GLOBAL late_materialization_max_rows = 1000",
      "SET GLOBAL parquet_metadata_cache = true",
      "ATTACH ':memory:' AS svc_lake",
      `SET GLOBAL allowed_directories = [${dirs.map((d) => `'${d.replaceAll("'", "''")}'`).join(", ")}]`,
      "SET GLOBAL enable_external_access = false",
      "SET GLOBAL lock_configuration = true",
    ];
    for (const sql of setup) {
      try {
        await writer.run(sql);
      } catch (e) {
        throw new AppError("CONFIG_INVALID", `query engine setup failed at "${sql}": ${errorMessage(e)}`, { cause: e });
      }
    }
    const queryCons: DuckDBConnection[] = [];
    for (let i = 0; i < (opts.queryConnections ?? 4); i++) queryCons.push(await instance.connect());
    return new Engine(instance, writer, await instance.connect(), await instance.connect(), queryCons);
  }

  private acquire(): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new AppError("UNAVAILABLE", "query engine is closed"));
    const c = this.idle.pop();
    if (c) return Promise.resolve(c);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(c: DuckDBConnection): void {
    const w = this.waiters.shift();
    if (w) w(c);
    else this.idle.push(c);
  }

  /**
   * Runs one statement on a query connection; interrupted after `timeoutMs` (TIMEOUT error).
   * Values come back JSON-friendly (BIGINT as number when safe, timestamps as ISO strings).
   */
  async query(sql: string, params?: SqlParams, opts: QueryOptions = {}): Promise<QueryResult> {
    const con = await this.acquire();
    let timedOut = false;
    const timer =
      opts.timeoutMs && opts.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            con.interrupt();
          }, opts.timeoutMs)
        : undefined;
    try {
      const reader = opts.readOnly ? await runSingleSelect(con, sql) : await con.runAndReadAll(sql, params);
      return { columns: reader.columnNames(), types: reader.columnTypes().map((t) => t.toString()), rows: jsonRows(reader) };
    } catch (e) {
      if (e instanceof AppError) throw e;
      if (timedOut) throw new AppError("TIMEOUT", `query exceeded ${opts.timeoutMs} ms and was cancelled`, { cause: e });
      throw new AppError("QUERY_FAILED", errorMessage(e), { cause: e, details: { sql: sql.length > 2000 ? sql.slice(0, 2000) + "…" : sql } });
    } finally {
      if (timer) clearTimeout(timer);
      this.release(con);
    }
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
    for (const c of this.idle) c.closeSync();
    this.idle.length = 0;
    this.background.closeSync();
    this.ddlCon.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}

async function runSingleSelect(con: DuckDBConnection, sql: string): Promise<DuckDBResultReader> {
  const statements = await con.extractStatements(sql);
  if (statements.count !== 1) throw new AppError("SQL_FORBIDDEN", `exactly one statement is allowed; DuckDB found ${statements.count}`);
  const prepared = await statements.prepare(0);
  try {
    if (prepared.statementType !== StatementType.SELECT) throw new AppError("SQL_FORBIDDEN", "only a SELECT statement is allowed");
    return await prepared.runAndReadAll();
  } finally {
    prepared.destroySync();
  }
}

const WIDE_INTS = new Set<number>([DuckDBTypeId.BIGINT, DuckDBTypeId.UBIGINT, DuckDBTypeId.HUGEINT, DuckDBTypeId.UHUGEINT]);

/** getRowObjectsJson renders 64-bit integers as strings; numbers are friendlier when they fit. */
function jsonRows(reader: DuckDBResultReader): Record<string, unknown>[] {
  const rows = reader.getRowObjectsJson() as Record<string, unknown>[];
  const names = reader.columnNames();
  const wide = reader
    .columnTypes()
    .map((t, i) => (WIDE_INTS.has(t.typeId) ? names[i] : undefined))
    .filter((n): n is string => n !== undefined);
  if (wide.length === 0) return rows;
  for (const row of rows) {
    for (const k of wide) {
      const v = row[k];
      if (typeof v === "string") {
        const n = Number(v);
        if (Number.isSafeInteger(n)) row[k] = n;
      }
    }
  }
  return rows;
}
