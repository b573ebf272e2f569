/**
 * What the query engine (src/lake/engine.ts) is opened with, from the lake's tuning keys, and what
 * one query asks of it.
 */
import type { DuckDBValue } from "@duckdb/node-api";
import type { EngineTuning } from "../config/index.ts";

export interface EngineOptions {
  threads: number;
  memoryLimit: string;
  tempDirectory: string;
  /** Directories DuckDB may read and write (data path, spool, temp). Trailing slash added. */
  allowedDirectories: string[];
  /** Query connections kept open for concurrent searches (as many again without late materialization). */
  queryConnections?: number;
  /**
   * The engine of user SQL (`readOnly` queries): a second DuckDB instance with its own memory cap,
   * threads and spill directory (`<tempDirectory>/sql`), holding the same views
   * (docs/ARCHITECTURE.md "Query memory"). Without it user SQL runs on the main instance.
   */
  sql?: SqlEngineOptions;
}

export interface SqlEngineOptions {
  memoryLimit: string;
  threads: number;
  maxTempDirectorySize: string;
  /** Connections for concurrent user queries (default 4). */
  connections?: number;
}

/** The engine options of the lake's tuning keys (docs/OPERATIONS.md "Engine tuning"). */
export function engineOptions(t: EngineTuning, tempDirectory: string, allowedDirectories: string[]): EngineOptions {
  return {
    threads: t.threads,
    memoryLimit: t.memory_limit,
    tempDirectory,
    allowedDirectories,
    sql: {
      memoryLimit: t.sql_memory_limit,
      threads: t.sql_threads,
      maxTempDirectorySize: t.sql_max_temp_directory_size,
    },
  };
}

export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;

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
