import { fail, ok, type Result } from "../../core/index.ts";
import { ident } from "../sql.ts";
import { isName, nameOf, upper, type Token } from "./lexer.ts";
import { ALLOWED_TABLE_FUNCTIONS, CTE_PREFIX, isForbiddenFunction, show, type SqlRejectReason } from "./sql-policy.ts";

/**
 * Table resolution of the read-only guard (docs/ARCHITECTURE.md "User SQL: the read-only guard"):
 * what a name at a table position (scope.ts finds those) reads. A CTE in scope, an allowed table
 * function, or one of the `svc_lake.<schema>.<table>` views listed as allowed; every other
 * relation is refused. Each resolved name is rewritten to what it resolved to, so DuckDB cannot
 * bind it to something else: `svc_lake."main"."t"` for a view, `"__svc_cte_x" AS "x"` for a CTE.
 */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export interface Resolved {
  /** Index of the reference's last token. */
  last: number;
  /** `svc_lake.<schema>.<table>`, lower case, when the name is a lake view. */
  table?: string;
  edit?: Edit;
}

/** Words after a table reference that are not an alias. */
const NOT_ALIAS = new Set(
  (
    "WHERE JOIN INNER LEFT RIGHT FULL OUTER CROSS NATURAL ON USING GROUP ORDER LIMIT OFFSET UNION EXCEPT INTERSECT HAVING " +
    "WINDOW QUALIFY POSITIONAL ASOF ANTI SEMI LATERAL SAMPLE TABLESAMPLE AT PIVOT UNPIVOT SELECT FROM FETCH RETURNING"
  ).split(" "),
);

/**
 * The table reference starting at toks[i] (a name): `a`, `a.b`, `a.b.c` or a function call.
 * `isCte` says whether a one-part name is a CTE visible at this point (scope.ts).
 */
export function resolveTableRef(
  sql: string,
  toks: readonly Token[],
  i: number,
  isCte: (name: string) => boolean,
  allowedTables: ReadonlySet<string>,
): Result<Resolved, SqlRejectReason> {
  const parts = [nameOf(toks[i]!)];
  let j = i;
  while (toks[j + 1]?.text === "." && isName(toks[j + 2])) {
    parts.push(nameOf(toks[j + 2]!));
    j += 2;
  }
  const written = sql.slice(toks[i]!.start, toks[j]!.end);
  const span = { start: toks[i]!.start, end: toks[j]!.end };
  const next = toks[j + 1];
  if (next?.text === "(") {
    const fn = parts.at(-1)!;
    if (parts.length > 1 || isForbiddenFunction(fn) || !ALLOWED_TABLE_FUNCTIONS.has(fn)) {
      return fail(
        "forbidden_function",
        `table function ${show(written)} is not allowed in FROM (allowed: ${[...ALLOWED_TABLE_FUNCTIONS].join(", ")})`,
      );
    }
    return ok({ last: j });
  }
  if (parts.length === 1 && isCte(parts[0]!)) {
    const hasAlias =
      upper(next) === "AS" || next?.kind === "quoted" || (next?.kind === "word" && !NOT_ALIAS.has(upper(next)));
    return ok({
      last: j,
      edit: { ...span, text: ident(CTE_PREFIX + parts[0]) + (hasAlias ? "" : ` AS ${ident(parts[0]!)}`) },
    });
  }
  const qualified = qualify(parts);
  if (!qualified)
    return fail("table_not_allowed", `${show(written)} is not a svc_lake table (write svc_lake.<schema>.<table>)`);
  const [schema, table] = qualified;
  if (/__g\d+$/.test(table))
    return fail(
      "table_not_allowed",
      `${show(written)} is an internal buffer generation; read svc_lake.${schema}.${table.replace(/__g\d+$/, "")} instead`,
    );
  const full = `svc_lake.${schema}.${table}`;
  if (!allowedTables.has(full))
    return fail("table_not_allowed", `${show(written)} is not a lake table (see GET /statistics/measurements)`);
  return ok({ last: j, table: full, edit: { ...span, text: `svc_lake.${ident(schema)}.${ident(table)}` } });
}

/** `[schema, table]` of a name that can only mean a svc_lake view: `t`, `s.t`, `svc_lake.t`, `svc_lake.s.t`. */
function qualify(parts: readonly string[]): [string, string] | undefined {
  if (parts.length === 1) return ["main", parts[0]!];
  if (parts.length === 2) return parts[0] === "svc_lake" ? ["main", parts[1]!] : [parts[0]!, parts[1]!];
  if (parts.length === 3 && parts[0] === "svc_lake") return [parts[1]!, parts[2]!];
  return undefined;
}
