import { DuckDBInstance, StatementType, type DuckDBConnection, type DuckDBResult, type DuckDBValue } from "@duckdb/node-api";
import { chunkJsonFloor, jsonRows, rowObjects, widenInts } from "./result-json.ts";
import { mkdirSync } from "node:fs";
import { AppError, errorMessage } from "../core/index.ts";

/**
 * One long-lived DuckDB instance per process (docs/PLATFORM.md "DuckDB offline", "Locking DuckDB
 * down for user SQL"): offline (never autoload/autoinstall), UTC, file access limited to the lake's
 * directories, configuration locked so user SQL cannot loosen it. `svc_lake` is an in-memory database holding the buffer
 * tables (`mem_<table>`) and the views that resolve `svc_lake.main.<table>` to Parquet + buffer.
 */
export interface EngineOptions {
  threads: number;
  memoryLimit: string;
  tempDirectory: string;
  /** Directories DuckDB may read and write (data path, spool, temp). Trailing slash added. */
  allowedDirectories: string[];
  /** Query connections kept open for concurrent searches (as many again without late materialization). */
  queryConnections?: number;
}

export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;

export interface QueryResult {
  columns: string[];
  /** DuckDB type of each column (`VARCHAR`, `TIMESTAMP`, `BIGINT[]`…). */
  types: string[];
  rows: Record<string, unknown>[];
  /** JSON size of the rows, when measured (maxResultBytes or readOnly). */
  bytes?: number;
}

export interface QueryOptions {
  timeoutMs?: number;
  /**
   * User SQL (POST /query): DuckDB's own parser must find exactly one statement and it must be a
   * SELECT, checked before anything runs. Backs up the token check of src/lake/query/sql-guard.ts.
   */
  readOnly?: boolean;
  /**
   * The result is streamed from DuckDB chunk by chunk (≈ 2048 rows) and the query fails with
   * PAYLOAD_TOO_LARGE as soon as the JSON of the rows read so far passes this many bytes, so a
   * huge result is never materialised, neither in DuckDB nor in JS (docs/ARCHITECTURE.md
   * "Query path"). Without it (and without readOnly) the result is read whole.
   */
  maxResultBytes?: number;
  /** How the caller's user can narrow the query, appended to the PAYLOAD_TOO_LARGE message. */
  narrowHint?: string;
  /**
   * false: run on a connection where DuckDB does not late-materialise a LIMIT (its
   * `late_materialization_max_rows` at the default of 50). Late materialisation sorts row ids
   * first and then re-reads the winning rows; that is cheap when the winners sit together (the
   * newest rows, one Call-ID) and costs a second scan of every file when a selective filter on
   * another column spreads them over the whole range (docs/BENCHMARKS.md "Search").
   */
  lateMaterialization?: boolean;
}

const DEFAULT_HINT = "select fewer or shorter columns (e.g. left(payload, 200)), aggregate, narrow the WHERE clause or send a lower limit";

/** Late materialisation for LIMIT ≤ this many rows on the default query connections. */
const LATE_MATERIALIZATION_ROWS = 1000;
/** DuckDB's default: the eager connections keep it, so a LIMIT 100 is never late-materialised. */
const EAGER_MATERIALIZATION_ROWS = 50;

/**
 * Which tuning key DuckDB refused ("Failed to set config" names none): each is tried alone on a
 * throw-away instance. Returns "tuning.<key> <value>: " or "".
 */
async function refusedSetting(opts: EngineOptions): Promise<string> {
  const settings: Array<[string, string]> = [
    ["threads", String(opts.threads)],
    ["memory_limit", opts.memoryLimit],
    ["temp_directory", opts.tempDirectory],
  ];
  for (const [key, value] of settings) {
    try {
      (await DuckDBInstance.create(":memory:", { [key]: value })).closeSync();
    } catch {
      return `tuning.${key} ${JSON.stringify(value)} (storage.lakehouse or node.lakehouse) is refused by DuckDB: `;
    }
  }
  return "";
}

export class Engine {
  private readonly pools: Record<"late" | "eager", { idle: DuckDBConnection[]; waiters: Array<(c: DuckDBConnection) => void> }> = {
    late: { idle: [], waiters: [] },
    eager: { idle: [], waiters: [] },
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
  ) {
    this.pools.late.idle.push(...queryCons);
    this.pools.eager.idle.push(...eagerCons);
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
      throw new AppError("CONFIG_INVALID", `cannot start the query engine: ${await refusedSetting(opts)}${errorMessage(e)}`, { cause: e });
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
    for (const sql of setup) await run(writer, sql);
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
    return new Engine(instance, writer, background, ddl, queryCons, eagerCons);
  }

  private acquire(kind: "late" | "eager"): Promise<DuckDBConnection> {
    if (this.closed) return Promise.reject(new AppError("UNAVAILABLE", "query engine is closed"));
    const pool = this.pools[kind];
    const c = pool.idle.pop();
    if (c) return Promise.resolve(c);
    return new Promise((resolve) => pool.waiters.push(resolve));
  }

  private release(kind: "late" | "eager", c: DuckDBConnection): void {
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
    const kind = opts.lateMaterialization === false ? "eager" : "late";
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
      const budget = { maxBytes: opts.maxResultBytes ?? Number.POSITIVE_INFINITY, hint: opts.narrowHint ?? DEFAULT_HINT };
      if (opts.readOnly) return await runSingleSelect(con, sql, budget);
      if (opts.maxResultBytes !== undefined) return await readStreamed(await con.stream(sql, params), budget);
      const reader = await con.runAndReadAll(sql, params);
      return { columns: reader.columnNames(), types: reader.columnTypes().map((t) => t.toString()), rows: jsonRows(reader) };
    } catch (e) {
      if (e instanceof AppError) throw e;
      if (timedOut) throw new AppError("TIMEOUT", `query exceeded ${opts.timeoutMs} ms and was cancelled; narrow the time range or filter, or raise coordinator.query_timeout_sec`, { cause: e });
      throw new AppError("QUERY_FAILED", errorMessage(e), { cause: e, details: { sql: sql.length > 2000 ? sql.slice(0, 2000) + "…" : sql } });
    } finally {
      if (timer) clearTimeout(timer);
      this.release(kind, con);
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

  /**
   * Statements of the DDL connection in one transaction, rolled back on any error (docs/ARCHITECTURE.md
   * "Transactions"): a failed statement leaves a DuckDB transaction aborted, and on a shared
   * connection every later statement would then fail with "Current transaction is aborted".
   * Every multi-statement change in src/lake goes through here, never through a `BEGIN …` string.
   */
  async transaction(statements: readonly string[]): Promise<void> {
    await runInTransaction(this.ddlCon, statements);
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
  }
}

/** BEGIN, the statements, COMMIT; ROLLBACK when any of them (or the COMMIT) fails, then rethrow. */
export async function runInTransaction(con: Pick<DuckDBConnection, "run">, statements: readonly string[]): Promise<void> {
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

async function runSingleSelect(con: DuckDBConnection, sql: string, budget: ResultBudget): Promise<QueryResult> {
  const statements = await con.extractStatements(sql);
  if (statements.count !== 1) throw new AppError("SQL_FORBIDDEN", `exactly one statement is allowed; DuckDB found ${statements.count}`);
  const prepared = await statements.prepare(0);
  try {
    if (prepared.statementType !== StatementType.SELECT) throw new AppError("SQL_FORBIDDEN", "only a SELECT statement is allowed");
    return await readStreamed(await prepared.stream(), budget);
  } finally {
    prepared.destroySync();
  }
}

interface ResultBudget {
  maxBytes: number;
  hint: string;
}

/**
 * Rows of a streamed result, chunk by chunk, refused with PAYLOAD_TOO_LARGE as soon as their JSON
 * passes the budget. DuckDB produces the next chunk only when it is fetched, so stopping here
 * also stops the query's work and memory.
 */
async function readStreamed(result: DuckDBResult, budget: ResultBudget): Promise<QueryResult> {
  const types = result.columnTypes();
  const names = result.deduplicatedColumnNames();
  const rows: Record<string, unknown>[] = [];
  let bytes = 0;
  const tooLarge = (read: number) =>
    new AppError("PAYLOAD_TOO_LARGE", `the result passed coordinator.query.max_result_bytes (${budget.maxBytes} bytes of JSON) after ${read} rows; ${budget.hint}`, {
      details: { reason: "max_result_bytes", max_result_bytes: budget.maxBytes, rows_read: read },
    });
  for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    // First a floor of the chunk's JSON from DuckDB's own vectors (string lengths, list sizes),
    // before any value becomes a JS value: one 300 MB string, or one list of 10^9 elements (a
    // 23 GB JS array: the process was OOM-killed), is refused without converting it.
    if (bytes + chunkJsonFloor(chunk, budget.maxBytes - bytes + 1) > budget.maxBytes) throw tooLarge(rows.length + chunk.rowCount);
    const part = widenInts(rowObjects(chunk, names), names, types);
    // The JSON text the client will receive for these rows (UTF-8), the budget's unit.
    bytes += Buffer.byteLength(JSON.stringify(part));
    if (bytes > budget.maxBytes) throw tooLarge(rows.length + part.length);
    for (const r of part) rows.push(r);
  }
  return { columns: result.columnNames(), types: types.map((t) => t.toString()), rows, bytes };
}
