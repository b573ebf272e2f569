/**
 * What user SQL may name (docs/ARCHITECTURE.md "User SQL: the read-only guard"): the keyword and
 * function lists shared by the token guard (sql-guard.ts, table-resolution.ts) and the check of
 * DuckDB's own parse (parse-check.ts).
 */
export type SqlRejectReason =
  | "empty"
  | "lexical"
  | "multiple_statements"
  | "parameter"
  | "unbalanced"
  | "not_a_query"
  | "forbidden_keyword"
  | "forbidden_function"
  | "file_as_table"
  | "table_not_allowed"
  | "bad_table_reference"
  /** DuckDB's parse names a relation the guard did not resolve (parse-check.ts). */
  | "parse_mismatch";

/** Statements and clauses that are never part of a read (docs/MCP.md "SQL validator" list plus DuckDB's own). */
export const FORBIDDEN_KEYWORDS: ReadonlySet<string> = new Set(
  (
    "INSERT UPDATE DELETE DROP ALTER TRUNCATE COPY ATTACH DETACH CALL CREATE GRANT REVOKE LOAD PRAGMA MERGE INSTALL " +
    "EXPORT IMPORT SET RESET CHECKPOINT VACUUM USE BEGIN COMMIT ROLLBACK ABORT TRANSACTION EXECUTE PREPARE DEALLOCATE " +
    "EXPLAIN ANALYZE DESCRIBE SHOW SUMMARIZE FORCE"
  ).split(" "),
);

/** Functions that read files or the network, run SQL, reveal settings/paths or change state. */
const FORBIDDEN_FUNCTIONS = new Set([
  "glob",
  "query",
  "query_table",
  "sniff_csv",
  "getenv",
  "current_setting",
  "json_execute_serialized_sql",
  "which_secret",
  "checkpoint",
  "force_checkpoint",
  "sql_auto_complete",
  "check_peg_parser",
  "truncate_duckdb_logs",
  "write_log",
  "load_aws_credentials",
  "col_description",
  "obj_description",
  "shobj_description",
  "summary",
]);
const FORBIDDEN_PREFIXES = [
  "read_",
  "parquet_",
  "duckdb_",
  "pragma_",
  "pg_",
  "iceberg_",
  "delta_",
  "ducklake_",
  "sqlite_",
  "postgres_",
  "mysql_",
  "http",
  "arrow_",
  "enable_",
  "disable_",
];

/** `name` lower case. */
export const isForbiddenFunction = (name: string): boolean =>
  FORBIDDEN_FUNCTIONS.has(name) || name.endsWith("_scan") || FORBIDDEN_PREFIXES.some((p) => name.startsWith(p));

/** The only table functions allowed in FROM: generators over values, nothing that names a table or file. */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  "range",
  "generate_series",
  "unnest",
  "json_each",
  "json_tree",
]);

/** Prefix of CTE names in the statement that runs (sql-guard.ts): no system view carries it. */
export const CTE_PREFIX = "__svc_cte_";

export const show = (s: string): string => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
