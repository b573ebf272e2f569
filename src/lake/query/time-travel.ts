/**
 * Time travel on our views (docs/ARCHITECTURE.md "Query path"; DuckLake `AT (VERSION => n)` syntax):
 *   <table> AT (VERSION => n) | AT (TIMESTAMP => '…') | AT SNAPSHOT n | AT TIMESTAMP '…'
 * DuckDB has no ducklake extension here, so the clause is rewritten into a subquery over the files
 * that were live at that snapshot. Strings, quoted identifiers and comments are skipped (the
 * tokens come from lexer.ts, the lexer the SQL guard uses too).
 */
import { isName, tokenize, unquote, upper, type Token } from "./lexer.ts";

export interface TimeTravelRef {
  /** Start and end offsets in the SQL of `<table> AT …`. */
  start: number;
  end: number;
  table: string;
  schema: string | undefined;
  kind: "version" | "timestamp";
  value: string;
  /** True when an alias follows, so the rewrite must not add one. */
  hasAlias: boolean;
}

const NOT_ALIAS = new Set([
  "WHERE",
  "JOIN",
  "INNER",
  "LEFT",
  "RIGHT",
  "FULL",
  "CROSS",
  "NATURAL",
  "ON",
  "USING",
  "GROUP",
  "ORDER",
  "LIMIT",
  "OFFSET",
  "UNION",
  "EXCEPT",
  "INTERSECT",
  "HAVING",
  "WINDOW",
  "QUALIFY",
  "POSITIONAL",
  "ASOF",
  "ANTI",
  "SEMI",
  "LATERAL",
  "SAMPLE",
  "TABLESAMPLE",
]);

export function findTimeTravel(sql: string): TimeTravelRef[] {
  const t = tokenize(sql);
  const refs: TimeTravelRef[] = [];
  for (let i = 0; i < t.length; i++) {
    if (upper(t[i]) !== "AT") continue;
    // table reference before AT: name (. name)*
    let j = i - 1;
    if (!isName(t[j])) continue;
    const names = [unquote(t[j]!)];
    let startTok = j;
    while (t[j - 1]?.text === "." && isName(t[j - 2])) {
      names.unshift(unquote(t[j - 2]!));
      j -= 2;
      startTok = j;
    }
    let kind: "version" | "timestamp";
    let valueTok: Token | undefined;
    let endTok: number;
    if (t[i + 1]?.text === "(") {
      const k = upper(t[i + 2]);
      if ((k !== "VERSION" && k !== "TIMESTAMP") || t[i + 3]?.text !== "=>") continue;
      kind = k === "VERSION" ? "version" : "timestamp";
      valueTok = t[i + 4];
      if (t[i + 5]?.text !== ")") continue;
      endTok = i + 5;
    } else {
      const k = upper(t[i + 1]);
      if (k !== "SNAPSHOT" && k !== "TIMESTAMP" && k !== "VERSION") continue;
      kind = k === "TIMESTAMP" ? "timestamp" : "version";
      valueTok = t[i + 2];
      endTok = i + 2;
    }
    if (!valueTok || (valueTok.kind !== "number" && valueTok.kind !== "string")) continue;
    const value = valueTok.kind === "string" ? valueTok.text.slice(1, -1).replaceAll("''", "'") : valueTok.text;
    const next = t[endTok + 1];
    const hasAlias = upper(next) === "AS" || (isName(next) && !NOT_ALIAS.has(upper(next)));
    const table = names[names.length - 1]!;
    const schema = names.length >= 2 ? names[names.length - 2] : undefined;
    refs.push({ start: t[startTok]!.start, end: t[endTok]!.end, table, schema, kind, value, hasAlias });
  }
  return refs;
}

/**
 * rewriteTimeTravel with an asynchronous `resolve` (the catalog port answers promises): each
 * reference is resolved in order first, then the SQL is rewritten in one pass.
 */
export async function rewriteTimeTravelAsync(
  sql: string,
  resolve: (ref: TimeTravelRef) => Promise<string>,
): Promise<string> {
  const refs = findTimeTravel(sql);
  if (refs.length === 0) return sql;
  const bodies = new Map<number, string>();
  for (const ref of refs) bodies.set(ref.start, await resolve(ref));
  return rewriteTimeTravel(sql, (ref) => bodies.get(ref.start)!);
}

/** Replaces every time-travel reference using `resolve` (which returns a subquery body). */
export function rewriteTimeTravel(sql: string, resolve: (ref: TimeTravelRef) => string): string {
  const refs = findTimeTravel(sql);
  let out = sql;
  for (const r of refs.reverse()) {
    const sub = `(${resolve(r)})${r.hasAlias ? "" : ` AS "${r.table.replaceAll('"', '""')}"`}`;
    out = out.slice(0, r.start) + sub + out.slice(r.end);
  }
  return out;
}
