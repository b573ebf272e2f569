import { describe, expect, test } from "bun:test";
import { lexSql, lexUserSql, nameOf, unquote } from "./lexer.ts";

const kinds = (sql: string) => lexSql(sql).tokens.map((t) => `${t.kind}:${t.text}`);

describe("lexer: DuckDB's token boundaries", () => {
  test.each<[string, string[]]>([
    ["SELECT 1FROM t", ["word:SELECT", "number:1", "word:FROM", "word:t"]],
    ["a -- x\rb", ["word:a", "word:b"]],
    ["a /* 1 /* 2 */ still */ b", ["word:a", "word:b"]],
    ["E'it\\'s' x", ["string:E'it\\'s'", "word:x"]],
    ["'it''s' x", ["string:'it''s'", "word:x"]],
    ["$t$ a ' b $t$ c", ["string:$t$ a ' b $t$", "word:c"]],
    ['"a""b"."c.d"', ['quoted:"a""b"', "punct:.", 'quoted:"c.d"']],
    ["svc_lake/**/.main", ["word:svc_lake", "punct:.", "word:main"]],
    ["$1 ? $name", ["param:$1", "param:?", "param:$name"]],
    ["x::INT => 1.5e3 <> 2", ["word:x", "punct:::", "word:INT", "punct:=>", "number:1.5e3", "punct:<>", "number:2"]],
    ['U&"d\\0061ta"', ["word:U", "punct:&", 'quoted:"d\\0061ta"']],
  ])("%s", (sql, expected) => {
    expect(kinds(sql)).toEqual(expected);
  });

  test("an unterminated string, identifier or comment is a problem at its start", () => {
    expect(lexSql("SELECT 'x").problem).toEqual({ at: 7, message: "unterminated string literal" });
    expect(lexSql('SELECT "x').problem).toEqual({ at: 7, message: "unterminated quoted identifier" });
    expect(lexSql("SELECT /* x").problem).toEqual({ at: 7, message: "unterminated /* comment" });
  });

  test("names: quotes removed and doubled quotes undone; lookup names in lower case", () => {
    const [a, b] = lexSql('"Mixed""Case" Word').tokens;
    expect([unquote(a!), nameOf(a!), unquote(b!), nameOf(b!)]).toEqual(['Mixed"Case', 'mixed"case', "Word", "word"]);
  });
});

describe("lexUserSql: what DuckDB could read differently is refused", () => {
  test.each<[string, string, string]>([
    ["NUL", "SELECT 1\u0000", "control character U+0000 at offset 8"],
    ["no-break space between words", "SELECT\u00a0*", "non-ASCII character U+00a0 at offset 6 outside a string"],
    ["line separator in a comment", "SELECT 1 -- \u2028", "non-ASCII character U+2028 at offset 12 outside a string"],
    ["unterminated string", "SELECT 'x", "unterminated string literal at offset 7"],
  ])("%s", (_label, sql, message) => {
    const r = lexUserSql(sql);
    expect(r.ok ? "accepted" : `${r.reason}: ${r.detail}`).toStartWith(`lexical: ${message}`);
  });

  test("non-ASCII inside a string or quoted identifier is data", () => {
    const r = lexUserSql(`SELECT 'é' AS "ü"`);
    expect(r.ok && r.value.map((t) => t.kind)).toEqual(["word", "string", "word", "quoted"]);
  });
});
