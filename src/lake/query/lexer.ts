import { fail, ok, type Result } from "../../core/index.ts";

/**
 * The one SQL lexer of src/lake/query (docs/ARCHITECTURE.md "User SQL: the read-only guard"):
 * token boundaries as DuckDB draws them, shared by the read-only guard (sql-guard.ts) and the
 * time-travel rewrite (time-travel.ts). Comments and blanks produce no token.
 */
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
  const push = (kind: Token["kind"], start: number, end: number) =>
    tokens.push({ text: sql.slice(start, end), start, end, kind });
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
      if (
        (sql[j] === "e" || sql[j] === "E") &&
        (isDigit(sql[j + 1]) || ((sql[j + 1] === "+" || sql[j + 1] === "-") && isDigit(sql[j + 2])))
      ) {
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

export const isName = (t: Token | undefined): boolean => t !== undefined && (t.kind === "word" || t.kind === "quoted");
/** The name as written: a quoted identifier without its quotes (`""` undoubled), a word as is. */
export const unquote = (t: Token): string => (t.kind === "quoted" ? t.text.slice(1, -1).replaceAll('""', '"') : t.text);
/** DuckDB folds unquoted and quoted identifiers alike for lookup: names compare in lower case. */
export const nameOf = (t: Token): string => unquote(t).toLowerCase();
/** A keyword candidate: the upper-case text of a word token, "" for every other token. */
export const upper = (t: Token | undefined): string => (t?.kind === "word" ? t.text.toUpperCase() : "");

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(4, "0");

/**
 * Tokens of user SQL, refusing what DuckDB and this lexer could read differently: control
 * characters (NUL ends the C string DuckDB parses), non-ASCII outside quotes (DuckDB turns some
 * Unicode spaces into blanks before lexing, so one character could be a separator for DuckDB and
 * part of a word here; comments included) and unterminated strings, identifiers or comments.
 */
export function lexUserSql(sql: string): Result<Token[], "lexical"> {
  const ctl = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.exec(sql);
  if (ctl) return fail("lexical", `control character U+${hex(ctl[0])} at offset ${ctl.index}`);
  const lexed = lexSql(sql);
  if (lexed.problem) return fail("lexical", `${lexed.problem.message} at offset ${lexed.problem.at}`);
  const toks = lexed.tokens;
  const quotedSpans = toks.filter((t) => t.kind === "string" || t.kind === "quoted");
  let q = 0;
  for (const m of sql.matchAll(/[^\x00-\x7f]/g)) {
    while (quotedSpans[q] && quotedSpans[q]!.end <= m.index) q++;
    const span = quotedSpans[q];
    if (!span || span.start > m.index) {
      return fail(
        "lexical",
        `non-ASCII character U+${hex(m[0])} at offset ${m.index} outside a string literal or quoted identifier`,
      );
    }
  }
  return ok(toks);
}
