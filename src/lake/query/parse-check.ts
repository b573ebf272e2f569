import { fail, ok, type Result } from "../../core/index.ts";
import { ident } from "../sql.ts";
import { ALLOWED_TABLE_FUNCTIONS, isForbiddenFunction, show, type SqlRejectReason } from "./sql-policy.ts";
import { rewriteTimeTravel } from "./time-travel.ts";

/**
 * Cross-check of the read-only guard with DuckDB's own parser (docs/ARCHITECTURE.md "User SQL: the
 * read-only guard"). `json_serialize_sql` parses without binding or executing; every relation in
 * its tree must be one the guard resolved: a `svc_lake.<schema>.<table>` view of the guard's list,
 * a CTE declared around it, or an allowed generator function. A file name read as a table (a
 * replacement scan), a system view, a table function, `DESCRIBE`/`SHOW` or a forbidden function
 * found here, or a view the guard resolved that DuckDB does not read as a relation, means the
 * guard's lexer read the text differently from DuckDB: the query is refused.
 */
export type ParseCheckReason = SqlRejectReason | "syntax";

/** Runs one read on the engine (Lake.query): the parse is a plain SELECT with one parameter. */
export type RunSql = (sql: string, params: string[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** Relation kinds that only combine others (their children are checked). */
const COMPOSITE_REFS = new Set(["JOIN", "SUBQUERY", "EMPTY", "EXPRESSION_LIST", "PIVOT"]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v.toLowerCase() : "");

/**
 * The text DuckDB is asked to parse: the statement that will run, with each time-travel clause
 * (`AT SNAPSHOT n` is ours, not DuckDB syntax) replaced by a read of the same view, as
 * Lake.query replaces it by that view's files at the snapshot.
 */
export function parseText(sql: string): string {
  return rewriteTimeTravel(sql, (ref) => `SELECT * FROM svc_lake.${ident(ref.schema ?? "main")}.${ident(ref.table)}`);
}

/** Asks DuckDB for its parse of `sql` and checks it against the guard's tables (CheckedSql.tables). */
export async function crossCheckWithDuckDb(
  run: RunSql,
  sql: string,
  guardTables: readonly string[],
): Promise<Result<void, ParseCheckReason>> {
  const r = await run("SELECT CAST(json_serialize_sql(CAST(? AS VARCHAR)) AS VARCHAR) AS j", [parseText(sql)]);
  const text = r.rows[0]?.j;
  if (typeof text !== "string") return fail("parse_mismatch", "DuckDB returned no parse for the statement");
  return checkParsed(JSON.parse(text) as unknown, new Set(guardTables));
}

/** Checks the output of `json_serialize_sql` against the guard's tables. */
export function checkParsed(parsed: unknown, guardTables: ReadonlySet<string>): Result<void, ParseCheckReason> {
  if (!isObj(parsed)) return fail("parse_mismatch", "DuckDB's parse is not an object");
  if (parsed.error === true) {
    if (parsed.error_type === "parser")
      return fail("syntax", `Parser Error: ${String(parsed.error_message ?? "syntax error")}`);
    return fail(
      "not_a_query",
      `DuckDB does not read the statement as one query: ${String(parsed.error_message ?? parsed.error_type)}`,
    );
  }
  const statements = parsed.statements;
  if (!Array.isArray(statements) || statements.length !== 1) {
    return fail(
      "multiple_statements",
      `exactly one statement is allowed; DuckDB's parse found ${Array.isArray(statements) ? statements.length : 0}`,
    );
  }
  const read = new Set<string>();
  const walked = walk(statements[0], new Set(), guardTables, read);
  if (!walked.ok) return walked;
  // The other way round: a view the guard resolved stands where DuckDB reads a relation.
  const unread = [...guardTables].find((t) => !read.has(t));
  if (unread)
    return fail(
      "parse_mismatch",
      `the guard read ${show(unread)} as a table, DuckDB's parse does not; write it in FROM or JOIN`,
    );
  return ok(undefined);
}

function walk(
  node: unknown,
  scope: ReadonlySet<string>,
  guardTables: ReadonlySet<string>,
  read: Set<string>,
): Result<void, ParseCheckReason> {
  if (Array.isArray(node)) {
    for (const n of node) {
      const r = walk(n, scope, guardTables, read);
      if (!r.ok) return r;
    }
    return ok(undefined);
  }
  if (!isObj(node)) return ok(undefined);
  let inner = scope;
  const ctes = isObj(node.cte_map) && Array.isArray(node.cte_map.map) ? node.cte_map.map : [];
  const recursive = node.type === "RECURSIVE_CTE_NODE" ? str(node.cte_name) : "";
  if (ctes.length > 0 || recursive) {
    inner = new Set([
      ...scope,
      ...ctes.map((c) => (isObj(c) ? str(c.key) : "")).filter((k) => k !== ""),
      ...(recursive ? [recursive] : []),
    ]);
  }
  const own = checkNode(node, inner, guardTables, read);
  if (!own.ok) return own;
  for (const v of Object.values(node)) {
    const r = walk(v, inner, guardTables, read);
    if (!r.ok) return r;
  }
  return ok(undefined);
}

/** A relation (TableRef) of DuckDB's tree: it has an alias and a sample, and is not an expression or query node. */
const isTableRef = (n: Obj): boolean =>
  typeof n.type === "string" && "alias" in n && "sample" in n && !("class" in n) && !n.type.endsWith("_NODE");

function checkNode(
  n: Obj,
  scope: ReadonlySet<string>,
  guardTables: ReadonlySet<string>,
  read: Set<string>,
): Result<void, ParseCheckReason> {
  if (n.class === "FUNCTION" && isForbiddenFunction(str(n.function_name))) {
    return fail("forbidden_function", `DuckDB's parse calls ${show(str(n.function_name))}, which is not allowed`);
  }
  if (!isTableRef(n)) return ok(undefined);
  if (n.type === "BASE_TABLE") {
    const [catalog, schema, table] = [str(n.catalog_name), str(n.schema_name), str(n.table_name)];
    if (!catalog && !schema && scope.has(table)) return ok(undefined);
    if (catalog === "svc_lake" && schema && guardTables.has(`svc_lake.${schema}.${table}`)) {
      read.add(`svc_lake.${schema}.${table}`);
      return ok(undefined);
    }
    const named = [catalog, schema, table].filter((p) => p !== "").join(".");
    return fail(
      "parse_mismatch",
      `DuckDB's parse reads the relation ${show(named)} (a table, view or file name), which the guard did not resolve to a lake table; only svc_lake.<schema>.<table> can be read`,
    );
  }
  if (n.type === "TABLE_FUNCTION") {
    const fn = isObj(n.function) ? n.function : {};
    const name = str(fn.function_name);
    const qualified = str(fn.catalog) !== "" || (str(fn.schema) !== "" && str(fn.schema) !== "main");
    if (qualified || isForbiddenFunction(name) || !ALLOWED_TABLE_FUNCTIONS.has(name)) {
      return fail(
        "forbidden_function",
        `DuckDB's parse reads the table function ${show(name)}; allowed in FROM: ${[...ALLOWED_TABLE_FUNCTIONS].join(", ")}`,
      );
    }
    return ok(undefined);
  }
  if (COMPOSITE_REFS.has(n.type as string)) return ok(undefined);
  return fail(
    "parse_mismatch",
    `DuckDB's parse reads a relation of kind ${show(String(n.type))} (DESCRIBE, SHOW and the like are not allowed)`,
  );
}
