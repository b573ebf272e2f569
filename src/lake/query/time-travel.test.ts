import { describe, expect, test } from "bun:test";
import { findTimeTravel, rewriteTimeTravel } from "./time-travel.ts";

describe("time travel clause detection", () => {
  test.each([
    [
      "SELECT * FROM svc_lake.main.hep_proto_1_call AT (VERSION => 3)",
      "hep_proto_1_call",
      "main",
      "version",
      "3",
      false,
    ],
    [
      "SELECT * FROM main.t AT (TIMESTAMP => '2026-11-22 10:00:00') x WHERE 1",
      "t",
      "main",
      "timestamp",
      "2026-11-22 10:00:00",
      true,
    ],
    ["select count(*) from t at snapshot 7 where a = 1", "t", undefined, "version", "7", false],
    [
      'SELECT * FROM "svc_lake"."main"."t" AT TIMESTAMP \'2026-01-01\' AS old JOIN u ON true',
      "t",
      "main",
      "timestamp",
      "2026-01-01",
      true,
    ],
  ])("%s", (sql, table, schema, kind, value, hasAlias) => {
    const [ref] = findTimeTravel(sql);
    expect(ref).toMatchObject({ table, schema, kind, value, hasAlias });
  });

  test("ignores AT inside strings and comments", () => {
    expect(findTimeTravel("SELECT 'x AT (VERSION => 3)' FROM t -- t AT SNAPSHOT 3\n")).toEqual([]);
  });

  test("rewrite keeps the rest of the statement and adds an alias only when none follows", () => {
    const out = rewriteTimeTravel("SELECT a FROM t AT (VERSION => 2) WHERE a > 1", () => "SELECT 1 AS a");
    expect(out).toBe('SELECT a FROM (SELECT 1 AS a) AS "t" WHERE a > 1');
    const out2 = rewriteTimeTravel("SELECT x.a FROM t AT SNAPSHOT 2 x", () => "SELECT 1 AS a");
    expect(out2).toBe("SELECT x.a FROM (SELECT 1 AS a) x");
  });
});
