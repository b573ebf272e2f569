import { fail, ok, type Result } from "../core/index.ts";
import { hepTableKey } from "../core/protocols.ts";
import { checkReadOnlySql, lexSql, literal } from "../lake/index.ts";
import type { NlFilters } from "./filters.ts";

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
const FORBIDDEN_PREFIXES = ["read_", "duckdb_", "pragma_", "parquet_", "pg_", "sqlite_", "ducklake_", "iceberg_", "delta_", "http", "glob", "query", "getenv"];

export type McpSqlReason = "empty" | "semicolon" | "comment" | "not_select" | "forbidden_identifier" | "table_not_allowed" | "lexical" | "guard";

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
    const reason: McpSqlReason = checked.reason === "table_not_allowed" || checked.reason === "bad_table_reference" || checked.reason === "file_as_table" ? "table_not_allowed" : "guard";
    return no(reason, reason === "table_not_allowed" ? `only ${MCP_TABLE} can be read: ${checked.detail ?? checked.reason}` : (checked.detail ?? checked.reason));
  }
  if (checked.value.tables.some((t) => t !== MCP_TABLE)) return no("table_not_allowed", `only ${MCP_TABLE} can be read`);
  return ok(checked.value.sql);
}

const exactOrLike = (column: string, values: string[]): string => `(${values.map((v) => `${column} ${v.includes("%") ? "LIKE" : "="} ${literal(v)}`).join(" OR ")})`;
const values = (v: string | undefined): string[] =>
  (v ?? "")
    .split(";")
    .map((x) => x.trim())
    .filter((x) => x !== "");

/**
 * `SELECT * FROM svc_lake.main.hep_proto_1_call WHERE … ORDER BY timestamp DESC LIMIT n` with the
 * conditions of the structured search (src/api/search/filters.ts: call_id matches session_id,
 * from_user caller, to_user callee, ip either address, response_code codes or classes such as
 * `4xx`, `%` a wildcard, `;` alternatives) over the same window.
 */
export function generateSql(f: NlFilters, window: { fromMs: number; toMs: number }, limit: number): string {
  const where = [`"timestamp" BETWEEN make_timestamp(${Math.trunc(window.fromMs) * 1000}) AND make_timestamp(${Math.trunc(window.toMs) * 1000})`];
  const methods = values(f.method).map((m) => m.toUpperCase());
  if (methods.length > 0) where.push(`method IN (${methods.map(literal).join(", ")})`);
  if (values(f.call_id).length > 0) where.push(exactOrLike("session_id", values(f.call_id)));
  if (values(f.from_user).length > 0) where.push(exactOrLike("caller", values(f.from_user)));
  if (values(f.to_user).length > 0) where.push(exactOrLike("callee", values(f.to_user)));
  for (const k of ["src_ip", "dst_ip"] as const) if (values(f[k]).length > 0) where.push(`${k} IN (${values(f[k]).map(literal).join(", ")})`);
  const ips = values(f.ip).map(literal).join(", ");
  if (ips !== "") where.push(`(src_ip IN (${ips}) OR dst_ip IN (${ips}))`);
  const codes = values(f.response_code).flatMap((c) => {
    if (/^[1-6]xx$/i.test(c)) return [`response_code BETWEEN ${Number(c[0]) * 100} AND ${Number(c[0]) * 100 + 99}`];
    return /^\d{1,3}$/.test(c) ? [`response_code = ${Number(c)}`] : [];
  });
  if (codes.length > 0) where.push(`(${codes.join(" OR ")})`);
  const cseq = values(f.cseq_method).map((m) => m.toUpperCase());
  if (cseq.length > 0) where.push(`cseq_method IN (${cseq.map(literal).join(", ")})`);
  // The call table keeps the User-Agent in data_extra (src/api/search/filters.ts reads it the same way).
  const agents = values(f.user_agent);
  if (agents.length > 0) where.push(`(${agents.map((a) => `contains(json_extract_string(data_extra, '$.user_agent'), ${literal(a)})`).join(" OR ")})`);
  return `SELECT * FROM ${MCP_TABLE} WHERE ${where.join(" AND ")} ORDER BY "timestamp" DESC LIMIT ${Math.trunc(limit)}`;
}
