/**
 * Time travel on our views (spec doc 2 "Time travel"; DuckLake `AT (VERSION => n)` syntax):
 *   <table> AT (VERSION => n) | AT (TIMESTAMP => '…') | AT SNAPSHOT n | AT TIMESTAMP '…'
 * DuckDB has no ducklake extension here, so the clause is rewritten into a subquery over the files
 * that were live at that snapshot. Strings, quoted identifiers and comments are skipped.
 */
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

export interface Token {
  text: string;
  start: number;
  end: number;
  /** `string` covers '…', E'…' (backslash escapes) and $tag$…$tag$; `param` is $1, $name or ?. */
  kind: "word" | "quoted" | "string" | "number" | "punct" | "param";
}

export interface LexResult {
  tokens: Token[];
  /** Unterminated string, quoted identifier or block comment: DuckDB would refuse the text too. */
  problem?: { at: number; message: string };
}

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v";
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isWordStart = (c: string | undefined) => c !== undefined && /[A-Za-z_]/.test(c);
const isWordPart = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_$]/.test(c);

/** End of a quoted run starting at `i` (the opening quote), `''`/`""` doubling; -1 if unterminated. */
function quotedEnd(sql: string, i: number, q: string, backslash: boolean): number {
  let j = i + 1;
  while (j < sql.length) {
    const c = sql[j]!;
    if (backslash && c === "\\") {
      j += 2;
      continue;
    }
    if (c === q) {
      if (sql[j + 1] === q) {
        j += 2;
        continue;
      }
      return j + 1;
    }
    j++;
  }
  return -1;
}

/**
 * DuckDB's lexer (the PostgreSQL scanner) as far as token boundaries go: `--` comments end at CR
 * or LF, block comments nest, E'' strings take backslash escapes, $tag$ strings, numbers as
 * digits[.digits][e[+-]digits] (so `1FROM` is `1` then `FROM`, as DuckDB reads it).
 */
export function lexSql(sql: string): LexResult {
  const tokens: Token[] = [];
  let problem: LexResult["problem"];
  const push = (kind: Token["kind"], start: number, end: number) => tokens.push({ text: sql.slice(start, end), start, end, kind });
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n" && sql[i] !== "\r") i++;
      continue;
    }
    if (c === "/" && sql[i + 1] === "*") {
      let depth = 0;
      let j = i;
      for (;;) {
        if (j >= sql.length) {
          problem ??= { at: i, message: "unterminated /* comment" };
          break;
        }
        if (sql[j] === "/" && sql[j + 1] === "*") {
          depth++;
          j += 2;
        } else if (sql[j] === "*" && sql[j + 1] === "/") {
          depth--;
          j += 2;
          if (depth === 0) break;
        } else j++;
      }
      i = j;
      continue;
    }
    const escaped = (c === "e" || c === "E") && sql[i + 1] === "'";
    if (c === "'" || c === '"' || escaped) {
      const q = escaped ? "'" : c;
      const open = escaped ? i + 1 : i;
      let end = quotedEnd(sql, open, q, escaped);
      if (end < 0) {
        problem ??= { at: i, message: `unterminated ${q === "'" ? "string literal" : "quoted identifier"}` };
        end = sql.length;
      }
      push(q === "'" ? "string" : "quoted", i, end);
      i = end;
      continue;
    }
    if (c === "$") {
      const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        const end = close < 0 ? sql.length : close + tag[0].length;
        if (close < 0) problem ??= { at: i, message: `unterminated ${tag[0]} string` };
        push("string", i, end);
        i = end;
        continue;
      }
      const p = /^\$(?:[0-9]+|[A-Za-z_][A-Za-z0-9_]*)/.exec(sql.slice(i, i + 66));
      if (p) {
        push("param", i, i + p[0].length);
        i += p[0].length;
        continue;
      }
    }
    if (c === "?") {
      push("param", i, i + 1);
      i++;
      continue;
    }
    if (isWordStart(c)) {
      let j = i + 1;
      while (isWordPart(sql[j])) j++;
      push("word", i, j);
      i = j;
      continue;
    }
    if (isDigit(c) || (c === "." && isDigit(sql[i + 1]))) {
      let j = i;
      const digits = () => {
        while (isDigit(sql[j]) || (sql[j] === "_" && isDigit(sql[j + 1]))) j++;
      };
      digits();
      if (sql[j] === "." && sql[j + 1] !== ".") {
        j++;
        digits();
      }
      if ((sql[j] === "e" || sql[j] === "E") && (isDigit(sql[j + 1]) || ((sql[j + 1] === "+" || sql[j + 1] === "-") && isDigit(sql[j + 2])))) {
        j += 2;
        digits();
      }
      push("number", i, j);
      i = j;
      continue;
    }
    const two = sql.slice(i, i + 2);
    if (two === "=>" || two === "::" || two === "<=" || two === ">=" || two === "<>" || two === "!=" || two === "||") {
      push("punct", i, i + 2);
      i += 2;
      continue;
    }
    // One UTF-16 unit; a non-ASCII character outside quotes is left for the caller to judge.
    push("punct", i, i + 1);
    i++;
  }
  return problem ? { tokens, problem } : { tokens };
}

export function tokenize(sql: string): Token[] {
  return lexSql(sql).tokens;
}

const unquote = (t: Token): string => (t.kind === "quoted" ? t.text.slice(1, -1).replaceAll('""', '"') : t.text);
const isName = (t: Token | undefined): t is Token => t !== undefined && (t.kind === "word" || t.kind === "quoted");
const upper = (t: Token | undefined) => (t && t.kind === "word" ? t.text.toUpperCase() : "");

const NOT_ALIAS = new Set([
  "WHERE", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "GROUP", "ORDER", "LIMIT", "OFFSET",
  "UNION", "EXCEPT", "INTERSECT", "HAVING", "WINDOW", "QUALIFY", "POSITIONAL", "ASOF", "ANTI", "SEMI", "LATERAL", "SAMPLE", "TABLESAMPLE",
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
