import { describe, expect, test } from "bun:test";
import { ok } from "../../core/index.ts";
import { lexSql, nameOf } from "./lexer.ts";
import { walkScopes } from "./scope.ts";

/** Every table position as `name` or `name=cte`, the CTE declarations and the tokens seen at a table position. */
function walk(sql: string) {
  const toks = lexSql(sql).tokens;
  const tables: string[] = [];
  const ctes: string[] = [];
  const atTable: string[] = [];
  const r = walkScopes(toks, {
    token: (i, _word, at) => {
      if (at) atTable.push(toks[i]!.text);
      return ok(undefined);
    },
    table: (i, isCte) => {
      let j = i;
      while (toks[j + 1]?.text === "." && toks[j + 2]) j += 2;
      const name = toks
        .slice(i, j + 1)
        .map((t) => (t.text === "." ? "." : nameOf(t)))
        .join("");
      tables.push(isCte(name) ? `${name}=cte` : name);
      return ok(j);
    },
    cteName: (_i, name) => ctes.push(name),
  });
  return { ok: r.ok, reason: r.ok ? undefined : r.reason, tables, ctes, atTable };
}

describe("scope: where a relation stands", () => {
  test.each<[string, string[]]>([
    ["SELECT * FROM a, b JOIN c ON x = 1 WHERE y IN (SELECT 1 FROM d) ORDER BY e", ["a", "b", "c", "d"]],
    ["SELECT extract(year FROM ts), substring(s FROM 1 FOR 2) FROM t WHERE a IS DISTINCT FROM b", ["t"]],
    ["FROM a SELECT x UNION ALL FROM b", ["a", "b"]],
    ["SELECT * FROM (a JOIN b ON true), LATERAL (SELECT 1) l, (TABLE c)", ["a", "b", "c"]],
    ["SELECT ARRAY(FROM a), {'k': (FROM b)}, [x FOR x IN (FROM c)]", ["a", "b", "c"]],
    ["SELECT * FROM svc_lake.main.t x, u AS y WHERE x.a = y.a GROUP BY 1", ["svc_lake.main.t", "u"]],
    ["SELECT * FROM t PIVOT (count(*) FOR m IN ('a')) UNPIVOT (v FOR k IN (a, b))", ["t"]],
  ])("%s", (sql, tables) => {
    expect(walk(sql).tables).toEqual(tables);
  });

  test("the token at a table position is flagged, so a function there is judged as a relation", () => {
    expect(walk("SELECT read_text('x') FROM read_csv('y')").atTable).toEqual(["read_csv"]);
  });

  test("a missing table or an unbalanced bracket is refused", () => {
    expect(walk("SELECT * FROM").reason).toBe("bad_table_reference");
    expect(walk("SELECT * FROM 'f.parquet'").reason).toBe("file_as_table");
    expect(walk("SELECT (1").reason).toBe("unbalanced");
    expect(walk("SELECT [1)").reason).toBe("unbalanced");
  });
});

describe("scope: which names are CTEs", () => {
  test.each<[string, string[], string[]]>([
    // a non-recursive CTE does not see itself; the query after it does
    ["WITH x AS (SELECT * FROM x) SELECT * FROM x", ["x", "x=cte"], ["x"]],
    // a later CTE sees an earlier one, not the other way round
    ["WITH a AS (FROM b), b AS (FROM a) FROM b", ["b", "a=cte", "b=cte"], ["a", "b"]],
    // a nested WITH is visible inside its subquery only
    ["WITH a AS (WITH v AS (SELECT 1) SELECT * FROM v) SELECT * FROM a, v", ["v=cte", "a=cte", "v"], ["a", "v"]],
    ["SELECT * FROM (WITH v AS (SELECT 1) FROM v) s, v", ["v=cte", "v"], ["v"]],
    // and in every subquery below it
    ["SELECT * FROM (WITH v AS (SELECT 1) SELECT * FROM (SELECT * FROM (FROM v))) s", ["v=cte"], ["v"]],
    // a recursive CTE sees itself
    ["WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r", ["r=cte", "r=cte"], ["r"]],
    // a CTE named like a view shadows it in the query, quoted or not
    [
      'WITH "Hep_Proto_1_Call" AS (SELECT 1) SELECT * FROM hep_proto_1_call',
      ["hep_proto_1_call=cte"],
      ["hep_proto_1_call"],
    ],
    [
      "WITH x AS MATERIALIZED (SELECT 1), y(a) AS NOT MATERIALIZED (SELECT 2) FROM x, y",
      ["x=cte", "y=cte"],
      ["x", "y"],
    ],
  ])("%s", (sql, tables, ctes) => {
    const w = walk(sql);
    expect([w.tables, w.ctes]).toEqual([tables, ctes]);
  });
});
