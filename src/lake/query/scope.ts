import { fail, ok, type Result } from "../../core/index.ts";
import { isName, nameOf, upper, type Token } from "./lexer.ts";
import { show, type SqlRejectReason } from "./sql-policy.ts";

/**
 * Scope of the read-only guard (docs/ARCHITECTURE.md "User SQL: the read-only guard"): one pass
 * over the tokens that tracks brackets, subqueries, FROM lists and WITH clauses, and so knows
 * (1) where a relation stands (after FROM, JOIN, TABLE, a comma of a FROM list, LATERAL, an opening
 * bracket there) and (2) which CTE names are visible at that point: a CTE is visible in the
 * query that declares it and below, after its own body (a recursive CTE inside its body too).
 * What stands at a table position is decided by the caller (table-resolution.ts).
 */
export interface ScopeHooks {
  /** Every token, first; `atTable` when it stands where a relation goes. A failure stops the walk. */
  token(i: number, word: string, atTable: boolean): Result<void, SqlRejectReason>;
  /** A name at a table position; returns the index of the reference's last token. */
  table(i: number, isCte: (name: string) => boolean): Result<number, SqlRejectReason>;
  /** The name of a CTE being declared, at toks[i]. */
  cteName(i: number, name: string): void;
}

const FIRST_KEYWORDS = new Set(["SELECT", "WITH", "FROM", "VALUES"]);
/** Words that start a query where a table could stand: `FROM (SELECT …)`, `(TABLE t)`, `(PIVOT t …)`. */
const QUERY_STARTERS = new Set([...FIRST_KEYWORDS, "TABLE", "PIVOT", "UNPIVOT"]);
/** Words after which FROM is not a clause but no table can follow a name either. */
const CLAUSE_ENDS_FROM = new Set([
  "WHERE",
  "GROUP",
  "HAVING",
  "QUALIFY",
  "WINDOW",
  "ORDER",
  "LIMIT",
  "OFFSET",
  "FETCH",
  "RETURNING",
]);
const CLOSER: Record<string, string> = { "(": ")", "[": "]", "{": "}" };

/** The statement must start (after opening brackets) with one of these. */
export const isQueryStart = (t: Token | undefined): boolean => FIRST_KEYWORDS.has(upper(t));

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

const frame = (closer: string): Frame => ({ closer, query: false, fromList: false, first: true, ctes: new Set() });

export function walkScopes(toks: readonly Token[], hooks: ScopeHooks): Result<void, SqlRejectReason> {
  const stack: Frame[] = [frame("")];
  const isCte = (name: string) => stack.some((f) => f.ctes.has(name));
  let tablePos = false;

  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const f = stack.at(-1)!;
    const wasFirst = f.first;
    f.first = false;
    const afterDot = toks[i - 1]?.text === ".";
    const word = t.kind === "word" && !afterDot ? t.text.toUpperCase() : "";
    const checked = hooks.token(i, word, tablePos && !QUERY_STARTERS.has(word));
    if (!checked.ok) return checked;

    if (tablePos && !QUERY_STARTERS.has(word)) {
      tablePos = false;
      if (word === "LATERAL") {
        tablePos = true;
        continue;
      }
      if (t.text === "(") {
        stack.push(frame(")"));
        tablePos = true; // `(a JOIN b ON …)` or a subquery: the first token inside decides
        continue;
      }
      if (isName(t)) {
        if (wasFirst && f.closer === ")") {
          f.query = true;
          f.fromList = true;
        }
        const r = hooks.table(i, isCte);
        if (!r.ok) return r;
        i = r.value;
        continue;
      }
      if (t.kind === "string")
        return fail(
          "file_as_table",
          `a string cannot be a table (${show(t.text)} at offset ${t.start}); files are not readable`,
        );
      return fail("bad_table_reference", `expected a table name at offset ${t.start}, found ${show(t.text)}`);
    }
    tablePos = false;

    if (t.text in CLOSER) {
      const w = f.with;
      const inner = frame(CLOSER[t.text]!);
      if (w?.phase === "afterAs") {
        const name = w.name;
        inner.onClose = () => f.ctes.add(name);
        w.phase = "afterBody";
      } else if (w?.phase === "afterBody") f.with = undefined; // `WITH … (SELECT …)`
      stack.push(inner);
      continue;
    }
    if (t.text === ")" || t.text === "]" || t.text === "}") {
      if (stack.length === 1 || f.closer !== t.text)
        return fail("unbalanced", `unbalanced ${show(t.text)} at offset ${t.start}`);
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
        hooks.cteName(i, w.name);
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
  return ok(undefined);
}
