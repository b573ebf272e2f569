import { fail, ok, type Result } from "../../core/index.ts";
import { ident } from "../sql.ts";
import { lexSql, type Token } from "./time-travel.ts";

/**
 * Read-only check of user SQL (spec doc 1 `POST /query`, doc 2 `POST /statistics/query` `raw`,
 * doc 3 "SQL validator (server side)"). The DuckDB instance is already locked to the lake's
 * directories (docs/PLATFORM.md "Locking DuckDB down for user SQL"), but `COPY … TO` inside them and
 * `query('…')` still work, so user SQL must be exactly one query that reads lake tables only.
 *
 * Token based, with DuckDB's own token boundaries (see `lexSql`): strings, quoted identifiers and
 * comments never hide or produce keywords. The checked statement is also rewritten so that what
 * runs is what was checked: comments become one space, every table reference is fully qualified
 * (`svc_lake."main"."t"`), and CTE names get a private prefix (`"__svc_cte_x" AS "x"`), so a
 * reference the guard took for a CTE can only bind to that CTE or fail, never to a system view.
 * Everything the checker does not understand is refused rather than guessed.
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
  | "bad_table_reference";

export interface SqlGuardOptions {
  /** Fully qualified lower-case names (`svc_lake.<schema>.<table>`) user SQL may read. */
  allowedTables: ReadonlySet<string>;
}

export interface CheckedSql {
  /** The statement to run: comments removed, trailing `;` dropped, references qualified. */
  sql: string;
  /** Lake tables it reads, fully qualified and lower case. */
  tables: string[];
}

/** Statements and clauses that are never part of a read (doc 3 list plus DuckDB's own). */
const FORBIDDEN_KEYWORDS = new Set(
  (
    "INSERT UPDATE DELETE DROP ALTER TRUNCATE COPY ATTACH DETACH CALL CREATE GRANT REVOKE LOAD PRAGMA MERGE INSTALL " +
    "EXPORT IMPORT SET RESET CHECKPOINT VACUUM USE BEGIN COMMIT ROLLBACK ABORT TRANSACTION EXECUTE PREPARE DEALLOCATE " +
    "EXPLAIN ANALYZE DESCRIBE SHOW SUMMARIZE FORCE"
  ).split(" "),
);

/** Functions that read files or the network, run SQL, reveal settings/paths or change state. */
const FORBIDDEN_FUNCTIONS = new Set([
  "glob", "query", "query_table", "sniff_csv", "getenv", "current_setting", "json_execute_serialized_sql", "which_secret",
  "checkpoint", "force_checkpoint", "sql_auto_complete", "check_peg_parser", "truncate_duckdb_logs", "write_log",
  "load_aws_credentials", "col_description", "obj_description", "shobj_description", "summary",
]);
const FORBIDDEN_PREFIXES = ["read_", "parquet_", "duckdb_", "pragma_", "pg_", "iceberg_", "delta_", "ducklake_", "sqlite_", "postgres_", "mysql_", "http", "arrow_", "enable_", "disable_"];
const isForbiddenFunction = (name: string): boolean =>
  FORBIDDEN_FUNCTIONS.has(name) || name.endsWith("_scan") || FORBIDDEN_PREFIXES.some((p) => name.startsWith(p));

/** The only table functions allowed in FROM: generators over values, nothing that names a table or file. */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(["range", "generate_series", "unnest", "json_each", "json_tree"]);

const FIRST_KEYWORDS = new Set(["SELECT", "WITH", "FROM", "VALUES"]);
/** Words that start a query where a table could stand: `FROM (SELECT …)`, `(TABLE t)`, `(PIVOT t …)`. */
const QUERY_STARTERS = new Set([...FIRST_KEYWORDS, "TABLE", "PIVOT", "UNPIVOT"]);
/** Words after which FROM is not a clause but no table can follow a name either. */
const CLAUSE_ENDS_FROM = new Set(["WHERE", "GROUP", "HAVING", "QUALIFY", "WINDOW", "ORDER", "LIMIT", "OFFSET", "FETCH", "RETURNING"]);
/** Words after a table reference that are not an alias. */
const NOT_ALIAS = new Set(
  (
    "WHERE JOIN INNER LEFT RIGHT FULL OUTER CROSS NATURAL ON USING GROUP ORDER LIMIT OFFSET UNION EXCEPT INTERSECT HAVING " +
    "WINDOW QUALIFY POSITIONAL ASOF ANTI SEMI LATERAL SAMPLE TABLESAMPLE AT PIVOT UNPIVOT SELECT FROM FETCH RETURNING"
  ).split(" "),
);
const CTE_PREFIX = "__svc_cte_";
const CLOSER: Record<string, string> = { "(": ")", "[": "]", "{": "}" };

interface Frame {
  closer: string;
  /** A SELECT/WITH/set operation was seen here, so FROM starts a FROM clause (not `extract(x FROM y)`). */
  query: boolean;
  /** Inside a FROM clause: a comma introduces another table reference. */
  fromList: boolean;
  first: boolean;
  ctes: Set<string>;
  with?: { phase: "name" | "afterName" | "afterAs" | "afterBody"; recursive: boolean; name: string };
  /** Registers a CTE name once its body has been read (non-recursive CTEs cannot see themselves). */
  onClose?: () => void;
}

const isName = (t: Token | undefined): boolean => t !== undefined && (t.kind === "word" || t.kind === "quoted");
const nameOf = (t: Token): string => (t.kind === "quoted" ? t.text.slice(1, -1).replaceAll('""', '"') : t.text).toLowerCase();
const upper = (t: Token | undefined): string => (t?.kind === "word" ? t.text.toUpperCase() : "");
const show = (s: string): string => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);

export function checkReadOnlySql(sql: string, opts: SqlGuardOptions): Result<CheckedSql, SqlRejectReason> {
  // NUL ends the C string DuckDB parses; other control characters have no business in a query.
  const ctl = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.exec(sql);
  if (ctl) return fail("lexical", `control character U+${ctl[0].charCodeAt(0).toString(16).padStart(4, "0")} at offset ${ctl.index}`);
  const lexed = lexSql(sql);
  if (lexed.problem) return fail("lexical", `${lexed.problem.message} at offset ${lexed.problem.at}`);
  const toks = lexed.tokens;

  // DuckDB turns some Unicode spaces into blanks before lexing; outside quotes (comments included)
  // we accept ASCII only, so no character is a separator for DuckDB and part of a word for us.
  const quotedSpans = toks.filter((t) => t.kind === "string" || t.kind === "quoted");
  let q = 0;
  for (const m of sql.matchAll(/[^\x00-\x7f]/g)) {
    while (quotedSpans[q] && quotedSpans[q]!.end <= m.index) q++;
    const span = quotedSpans[q];
    if (!span || span.start > m.index) {
      return fail("lexical", `non-ASCII character U+${m[0].charCodeAt(0).toString(16).padStart(4, "0")} at offset ${m.index} outside a string literal or quoted identifier`);
    }
  }

  if (toks.at(-1)?.text === ";") toks.pop();
  if (toks.length === 0) return fail("empty", "no SQL statement");
  const semi = toks.find((t) => t.text === ";");
  if (semi) return fail("multiple_statements", `only one statement is allowed (";" at offset ${semi.start})`);
  const param = toks.find((t) => t.kind === "param");
  if (param) return fail("parameter", `parameters are not supported (${show(param.text)} at offset ${param.start})`);
  const lead = toks.find((t) => t.text !== "(");
  if (!lead || !FIRST_KEYWORDS.has(upper(lead))) {
    return fail("not_a_query", `only SELECT, WITH, FROM or VALUES queries are allowed; found ${show(lead?.text ?? "(")}`);
  }

  const stack: Frame[] = [{ closer: "", query: false, fromList: false, first: true, ctes: new Set() }];
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const tables = new Set<string>();
  const inScope = (name: string) => stack.some((f) => f.ctes.has(name));
  let tablePos = false;

  /** A table reference at toks[i]; returns the index of its last token. */
  const tableRef = (i: number): Result<number, SqlRejectReason> => {
    const parts = [nameOf(toks[i]!)];
    let j = i;
    while (toks[j + 1]?.text === "." && isName(toks[j + 2])) {
      parts.push(nameOf(toks[j + 2]!));
      j += 2;
    }
    const written = sql.slice(toks[i]!.start, toks[j]!.end);
    const next = toks[j + 1];
    if (next?.text === "(") {
      const fn = parts.at(-1)!;
      if (parts.length > 1 || isForbiddenFunction(fn) || !ALLOWED_TABLE_FUNCTIONS.has(fn)) {
        return fail("forbidden_function", `table function ${show(written)} is not allowed in FROM (allowed: ${[...ALLOWED_TABLE_FUNCTIONS].join(", ")})`);
      }
      return ok(j);
    }
    if (parts.length === 1 && inScope(parts[0]!)) {
      const hasAlias = upper(next) === "AS" || next?.kind === "quoted" || (next?.kind === "word" && !NOT_ALIAS.has(upper(next)));
      edits.push({ start: toks[i]!.start, end: toks[j]!.end, text: ident(CTE_PREFIX + parts[0]) + (hasAlias ? "" : ` AS ${ident(parts[0]!)}`) });
      return ok(j);
    }
    let schema: string;
    let table: string;
    if (parts.length === 1) [schema, table] = ["main", parts[0]!];
    else if (parts.length === 2) [schema, table] = parts[0] === "svc_lake" ? ["main", parts[1]!] : [parts[0]!, parts[1]!];
    else if (parts.length === 3 && parts[0] === "svc_lake") [schema, table] = [parts[1]!, parts[2]!];
    else return fail("table_not_allowed", `${show(written)} is not a svc_lake table (write svc_lake.<schema>.<table>)`);
    if (/__g\d+$/.test(table)) return fail("table_not_allowed", `${show(written)} is an internal buffer generation; read svc_lake.${schema}.${table.replace(/__g\d+$/, "")} instead`);
    const full = `svc_lake.${schema}.${table}`;
    if (!opts.allowedTables.has(full)) return fail("table_not_allowed", `${show(written)} is not a lake table (see GET /statistics/measurements)`);
    tables.add(full);
    edits.push({ start: toks[i]!.start, end: toks[j]!.end, text: `svc_lake.${ident(schema)}.${ident(table)}` });
    return ok(j);
  };

  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const f = stack.at(-1)!;
    const wasFirst = f.first;
    f.first = false;
    const afterDot = toks[i - 1]?.text === ".";
    const word = t.kind === "word" && !afterDot ? t.text.toUpperCase() : "";
    if (word && FORBIDDEN_KEYWORDS.has(word)) {
      return fail("forbidden_keyword", `${word} is not allowed in a read-only query (at offset ${t.start}; quote it as "${t.text.toLowerCase()}" if it is a column)`);
    }

    if (tablePos && !QUERY_STARTERS.has(word)) {
      tablePos = false;
      if (word === "LATERAL") {
        tablePos = true;
        continue;
      }
      if (t.text === "(") {
        stack.push({ closer: ")", query: false, fromList: false, first: true, ctes: new Set() });
        tablePos = true; // `(a JOIN b ON …)` or a subquery: the first token inside decides
        continue;
      }
      if (isName(t)) {
        if (wasFirst && f.closer === ")") {
          f.query = true;
          f.fromList = true;
        }
        const r = tableRef(i);
        if (!r.ok) return r;
        i = r.value;
        continue;
      }
      if (t.kind === "string") return fail("file_as_table", `a string cannot be a table (${show(t.text)} at offset ${t.start}); files are not readable`);
      return fail("bad_table_reference", `expected a table name at offset ${t.start}, found ${show(t.text)}`);
    }
    tablePos = false;

    if (isName(t) && toks[i + 1]?.text === "(" && isForbiddenFunction(nameOf(t))) {
      return fail("forbidden_function", `function ${show(nameOf(t))} is not allowed (at offset ${t.start})`);
    }

    if (t.text in CLOSER) {
      const w = f.with;
      const frame: Frame = { closer: CLOSER[t.text]!, query: false, fromList: false, first: true, ctes: new Set() };
      if (w?.phase === "afterAs") {
        const name = w.name;
        frame.onClose = () => f.ctes.add(name);
        w.phase = "afterBody";
      } else if (w?.phase === "afterBody") f.with = undefined; // `WITH … (SELECT …)`
      stack.push(frame);
      continue;
    }
    if (t.text === ")" || t.text === "]" || t.text === "}") {
      if (stack.length === 1 || f.closer !== t.text) return fail("unbalanced", `unbalanced ${show(t.text)} at offset ${t.start}`);
      stack.pop();
      f.onClose?.();
      continue;
    }
    if (t.text === ",") {
      if (f.with?.phase === "afterBody") f.with.phase = "name";
      else if (f.fromList) tablePos = true;
      continue;
    }

    if (f.with && (f.with.phase === "name" || f.with.phase === "afterName" || f.with.phase === "afterAs")) {
      const w = f.with;
      if (w.phase === "name" && word === "RECURSIVE") {
        w.recursive = true;
        continue;
      }
      if (w.phase === "name" && isName(t)) {
        w.name = nameOf(t);
        w.phase = "afterName";
        if (w.recursive) f.ctes.add(w.name);
        edits.push({ start: t.start, end: t.end, text: ident(CTE_PREFIX + w.name) });
        continue;
      }
      if (w.phase === "afterName" && word === "AS") w.phase = "afterAs";
      continue;
    }

    switch (word) {
      case "SELECT":
      case "VALUES":
        f.query = true;
        f.fromList = false;
        f.with = undefined;
        break;
      case "WITH":
        f.query = true;
        f.with = { phase: "name", recursive: false, name: "" };
        break;
      case "UNION":
      case "EXCEPT":
      case "INTERSECT":
        f.query = true;
        f.fromList = false;
        break;
      case "FROM":
        // `a IS [NOT] DISTINCT FROM b` compares; `extract(year FROM ts)` is an argument.
        if ((f.query || wasFirst) && upper(toks[i - 1]) !== "DISTINCT") {
          f.query = true;
          f.fromList = true;
          f.with = undefined;
          tablePos = true;
        }
        break;
      case "JOIN":
      case "TABLE":
        tablePos = true;
        break;
      case "PIVOT":
      case "UNPIVOT":
        if (toks[i + 1]?.text !== "(") tablePos = true;
        break;
      default:
        if (CLAUSE_ENDS_FROM.has(word)) f.fromList = false;
    }
  }
  if (tablePos) return fail("bad_table_reference", "a table name is missing at the end");
  if (stack.length !== 1) return fail("unbalanced", `missing ${show(stack.at(-1)!.closer)}`);

  // Rebuild: tokens as written (or as rewritten), any gap (blanks, comments) as one space.
  let out = "";
  let e = 0;
  let prevEnd = -1;
  edits.sort((a, b) => a.start - b.start);
  for (const t of toks) {
    if (t.start < prevEnd) continue;
    if (out !== "" && t.start > prevEnd) out += " ";
    const edit = edits[e];
    if (edit && edit.start === t.start) {
      out += edit.text;
      prevEnd = edit.end;
      e++;
    } else {
      out += t.text;
      prevEnd = t.end;
    }
  }
  return ok({ sql: out, tables: [...tables].sort() });
}
