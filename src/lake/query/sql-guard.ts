import { fail, ok, type Result } from "../../core/index.ts";
import { ident } from "../sql.ts";
import { lexUserSql, nameOf, isName } from "./lexer.ts";
import { isQueryStart, walkScopes } from "./scope.ts";
import { CTE_PREFIX, FORBIDDEN_KEYWORDS, isForbiddenFunction, show, type SqlRejectReason } from "./sql-policy.ts";
import { resolveTableRef, type Edit } from "./table-resolution.ts";

export { ALLOWED_TABLE_FUNCTIONS, type SqlRejectReason } from "./sql-policy.ts";

/**
 * Read-only check of user SQL (`POST /query`, `POST /statistics/query` `raw`,
 * docs/MCP.md "SQL validator"; docs/ARCHITECTURE.md "User SQL: the read-only guard"). The
 * DuckDB instance is already locked to the lake's directories (docs/PLATFORM.md "Locking DuckDB
 * down for user SQL"), but `COPY … TO` inside them and
 * `query('…')` still work, so user SQL must be exactly one query that reads lake tables only.
 *
 * Layers: lexer.ts (DuckDB's token boundaries: strings, quoted identifiers and comments never hide
 * or produce keywords), scope.ts (where a relation stands, which CTEs are visible there),
 * table-resolution.ts (what each relation is). The checked statement is rewritten so that what
 * runs is what was checked: comments become one space, every table reference is fully qualified
 * (`svc_lake."main"."t"`), and CTE names get a private prefix (`"__svc_cte_x" AS "x"`), so a
 * reference the guard took for a CTE can only bind to that CTE or fail, never to a system view.
 * Before it runs, parse-check.ts compares this with DuckDB's own parse. Everything the checker
 * does not understand is refused rather than guessed.
 */
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

export function checkReadOnlySql(sql: string, opts: SqlGuardOptions): Result<CheckedSql, SqlRejectReason> {
  const lexed = lexUserSql(sql);
  if (!lexed.ok) return lexed;
  const toks = lexed.value;

  if (toks.at(-1)?.text === ";") toks.pop();
  if (toks.length === 0) return fail("empty", "no SQL statement");
  const semi = toks.find((t) => t.text === ";");
  if (semi) return fail("multiple_statements", `only one statement is allowed (";" at offset ${semi.start})`);
  const param = toks.find((t) => t.kind === "param");
  if (param) return fail("parameter", `parameters are not supported (${show(param.text)} at offset ${param.start})`);
  const lead = toks.find((t) => t.text !== "(");
  if (!lead || !isQueryStart(lead)) {
    return fail(
      "not_a_query",
      `only SELECT, WITH, FROM or VALUES queries are allowed; found ${show(lead?.text ?? "(")}`,
    );
  }

  const edits: Edit[] = [];
  const tables = new Set<string>();
  const walked = walkScopes(toks, {
    token(i, word, atTable) {
      const t = toks[i]!;
      if (word && FORBIDDEN_KEYWORDS.has(word)) {
        return fail(
          "forbidden_keyword",
          `${word} is not allowed in a read-only query (at offset ${t.start}; quote it as "${t.text.toLowerCase()}" if it is a column)`,
        );
      }
      if (!atTable && isName(t) && toks[i + 1]?.text === "(" && isForbiddenFunction(nameOf(t))) {
        return fail("forbidden_function", `function ${show(nameOf(t))} is not allowed (at offset ${t.start})`);
      }
      return ok(undefined);
    },
    table(i, isCte) {
      const r = resolveTableRef(sql, toks, i, isCte, opts.allowedTables);
      if (!r.ok) return r;
      if (r.value.table) tables.add(r.value.table);
      if (r.value.edit) edits.push(r.value.edit);
      return ok(r.value.last);
    },
    cteName(i, name) {
      edits.push({ start: toks[i]!.start, end: toks[i]!.end, text: ident(CTE_PREFIX + name) });
    },
  });
  if (!walked.ok) return walked;

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
