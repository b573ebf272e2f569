import { fail, ok, type Result } from "../core/index.ts";
import { hepTableKey } from "../core/protocols.ts";
import { checkReadOnlySql, lexSql, literal } from "../lake/index.ts";
import { buildWhere } from "../api/index.ts";
import { hepTableDef } from "../ingest/index.ts";
import { FILTER_TEXT_KEYS, type NlFilters } from "./filters.ts";

/**
 * SQL of `svc_query_sql` / `POST /mcp/query` mode sql (docs/MCP.md "Modes"): built
 * here from the filters only (the model's text never becomes SQL), then checked by the validator
 * below and, when it runs, once more by the product's read-only guard (src/lake/query/sql-guard.ts).
 */
export const MCP_TABLE = `svc_lake.${hepTableKey(1, "call")}`;

/** Identifier tokens refused outside string literals (docs/MCP.md "SQL validator" list plus the guard's read-only set). */
const FORBIDDEN = new Set(
  (
    "insert update delete drop alter truncate copy attach detach call create grant revoke load pragma merge install export import " +
    "set reset checkpoint vacuum use begin commit rollback abort transaction execute prepare deallocate explain analyze describe show summarize force " +
    "information_schema pg_catalog sqlite_master sqlite_schema"
  ).split(" "),
);
/** Function or name prefixes that read files, the network, the catalog or system views. */
const FORBIDDEN_PREFIXES = [
  "read_",
  "duckdb_",
  "pragma_",
  "parquet_",
  "pg_",
  "sqlite_",
  "ducklake_",
  "iceberg_",
  "delta_",
  "http",
  "glob",
  "query",
  "getenv",
];

export type McpSqlReason =
  | "empty"
  | "semicolon"
  | "comment"
  | "not_select"
  | "forbidden_identifier"
  | "table_not_allowed"
  | "lexical"
  | "guard";

/**
 * The tool server's validator (docs/MCP.md "SQL validator"): one SELECT or WITH, no semicolon
 * anywhere, no comment, no forbidden identifier outside string literals (a Call-ID holding such a
 * word is a literal and passes), and no table but MCP_TABLE. Returns the statement to run.
 */
export function validateMcpSql(sql: string): Result<string, McpSqlReason> {
  const no = (reason: McpSqlReason, message: string) => fail(reason, message);
  if (sql.trim() === "") return no("empty", "no SQL statement");
  if (sql.includes(";")) return no("semicolon", "semicolons are not allowed (one statement, no terminator)");
  const lexed = lexSql(sql);
  if (lexed.problem) return no("lexical", `${lexed.problem.message} at offset ${lexed.problem.at}`);
  const toks = lexed.tokens;
  // The lexer drops comments; whatever sits between tokens must be blank.
  let prev = 0;
  for (const t of [...toks, { start: sql.length, end: sql.length }]) {
    if (sql.slice(prev, t.start).trim() !== "") return no("comment", `comments are not allowed (at offset ${prev})`);
    prev = t.end;
  }
  const first = toks[0];
  if (first?.kind !== "word" || !["select", "with"].includes(first.text.toLowerCase())) {
    return no("not_select", `only SELECT or WITH is allowed; found ${JSON.stringify(first?.text ?? "")}`);
  }
  for (const t of toks) {
    if (t.kind !== "word" && t.kind !== "quoted") continue;
    const name = (t.kind === "quoted" ? t.text.slice(1, -1) : t.text).toLowerCase();
    if (FORBIDDEN.has(name) || FORBIDDEN_PREFIXES.some((p) => name.startsWith(p))) {
      return no("forbidden_identifier", `${JSON.stringify(name)} is not allowed (at offset ${t.start})`);
    }
  }
  const checked = checkReadOnlySql(sql, { allowedTables: new Set([MCP_TABLE]) });
  if (!checked.ok) {
    const reason: McpSqlReason =
      checked.reason === "table_not_allowed" ||
      checked.reason === "bad_table_reference" ||
      checked.reason === "file_as_table"
        ? "table_not_allowed"
        : "guard";
    return no(
      reason,
      reason === "table_not_allowed"
        ? `only ${MCP_TABLE} can be read: ${checked.detail ?? checked.reason}`
        : (checked.detail ?? checked.reason),
    );
  }
  if (checked.value.tables.some((t) => t !== MCP_TABLE))
    return no("table_not_allowed", `only ${MCP_TABLE} can be read`);
  return ok(checked.value.sql);
}

/** The call table's columns, as the search reads them (a column it lacks is read from data_extra). */
const CALL_COLUMNS: ReadonlySet<string> = new Set(hepTableDef(1, "call").columns.map((c) => c.name));

/**
 * The search's bound parameters (`$1`, `$2`…) written as literals: the SQL is shown to the user
 * and run as it reads. The builder's SQL holds no `$` followed by a digit anywhere else (its JSON
 * paths are `'$.name'`), and the longest numbers are replaced first so `$1` never eats `$10`.
 */
function inline(sql: string, params: ReadonlyArray<string | number>): string {
  return sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const v = params[Number(n) - 1];
    if (v === undefined) throw new Error(`SQL parameter $${n} has no value`);
    return typeof v === "number" ? String(v) : literal(v);
  });
}

/**
 * `SELECT * FROM svc_lake.main.hep_proto_1_call WHERE … ORDER BY timestamp DESC LIMIT n` with the
 * conditions of the structured search itself (src/api/search/filters.ts `buildWhere`: call_id
 * matches session_id, from_user caller, to_user callee, ip either address, response_code codes or
 * classes such as `4xx`, `%` a wildcard, `;` alternatives) over the same window, so the two modes
 * cannot ask different questions.
 */
export function generateSql(f: NlFilters, window: { fromMs: number; toMs: number }, limit: number): string {
  const filter: Record<string, string> = {};
  for (const k of FILTER_TEXT_KEYS) if (f[k] !== undefined && f[k] !== "") filter[k] = f[k]!;
  const where = buildWhere({
    protoType: 1,
    eventType: "call",
    filter,
    virtualFields: new Map(),
    columns: CALL_COLUMNS,
  });
  const time = `"timestamp" BETWEEN make_timestamp(${Math.trunc(window.fromMs) * 1000}) AND make_timestamp(${Math.trunc(window.toMs) * 1000})`;
  const conditions = where.applied.length > 0 ? `${time} AND ${inline(where.sql, where.params)}` : time;
  return `SELECT * FROM ${MCP_TABLE} WHERE ${conditions} ORDER BY "timestamp" DESC LIMIT ${Math.trunc(limit)}`;
}
