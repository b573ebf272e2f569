import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../engine.ts";
import { crossCheckWithDuckDb, type ParseCheckReason } from "./parse-check.ts";
import { checkReadOnlySql } from "./sql-guard.ts";

/**
 * The cross-check of the read-only guard with DuckDB's own parse (json_serialize_sql), on a real,
 * locked-down engine with `svc_lake.main.hep_proto_1_call` as a table. Queries where a lexer and
 * DuckDB could disagree: what the guard accepts must meet DuckDB's parse and run; what a fooled
 * guard would let through (the text unchanged, with the tables it believed it read) is refused.
 */
const VIEW = "svc_lake.main.hep_proto_1_call";
const allowedTables = new Set([VIEW]);
let dir: string;
let engine: Engine;
const run = (sql: string, params: string[]) => engine.query(sql, params);
const cross = async (sql: string, tables: string[]) => {
  const r = await crossCheckWithDuckDb(run, sql, tables);
  return r.ok ? "ok" : `${r.reason}: ${r.detail}`;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-parse-check-"));
  engine = await Engine.open({
    threads: 1,
    memoryLimit: "256MB",
    tempDirectory: join(dir, "tmp"),
    allowedDirectories: [dir],
    queryConnections: 1,
  });
  await engine.ddl(`CREATE TABLE ${VIEW} AS SELECT 'call-' || i AS session_id, i AS n FROM range(3) t(i)`);
});
afterAll(() => {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("what the guard accepts meets DuckDB's parse and runs as checked", () => {
  test.each<[string, string[], Record<string, unknown>[]]>([
    ['SELECT count(*) AS c FROM svc_lake."main"."hep_proto_1_call"', [VIEW], [{ c: 3 }]],
    ["SELECT count(*) AS c FROM svc_lake/**/.main/* x */.hep_proto_1_call", [VIEW], [{ c: 3 }]],
    ['SELECT count(*) AS c FROM "svc_lake"."main".hep_proto_1_call -- the view', [VIEW], [{ c: 3 }]],
    // a CTE named like a view is the CTE, also when the name is quoted differently
    ["WITH hep_proto_1_call AS (SELECT 42 AS n) SELECT n FROM hep_proto_1_call", [], [{ n: 42 }]],
    ['WITH "HEP_PROTO_1_CALL" AS (SELECT 42 AS n) SELECT n FROM hep_proto_1_call', [], [{ n: 42 }]],
    // a nested CTE shadows the view inside its subquery only: outside it the view is read
    [
      "WITH a AS (WITH hep_proto_1_call AS (SELECT 42 AS n) SELECT n FROM hep_proto_1_call) SELECT a.n, count(*) AS c FROM a, hep_proto_1_call v GROUP BY a.n",
      [VIEW],
      [{ n: 42, c: 3 }],
    ],
    [
      "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 3) SELECT sum(i) AS s FROM r",
      [],
      [{ s: 6 }],
    ],
    [
      "SELECT count(*) AS c FROM hep_proto_1_call WHERE session_id IN (SELECT session_id FROM hep_proto_1_call WHERE n > 0)",
      [VIEW],
      [{ c: 2 }],
    ],
    ["SELECT count(*) AS c FROM range(5) r(i), unnest([1, 2]) u(x), json_each('{\"a\": 1}')", [], [{ c: 10 }]],
  ])("%s", async (sql, tables, rows) => {
    const g = checkReadOnlySql(sql, { allowedTables });
    if (!g.ok) throw new Error(`${g.reason}: ${g.detail}`);
    expect(g.value.tables).toEqual(tables);
    const wrapped = `SELECT * FROM (${g.value.sql}) AS svc_query LIMIT 10`;
    expect(await cross(wrapped, g.value.tables)).toBe("ok");
    expect((await engine.query(wrapped, undefined, { readOnly: true })).rows).toEqual(rows);
  });

  test("time travel clauses (ours, not DuckDB syntax) are parsed as reads of the same view", async () => {
    for (const clause of ["AT SNAPSHOT 2", "AT TIMESTAMP '2026-11-01 00:00:00'", "AT (VERSION => 2)"]) {
      const g = checkReadOnlySql(`SELECT * FROM hep_proto_1_call ${clause} old`, { allowedTables });
      if (!g.ok) throw new Error(`${g.reason}: ${g.detail}`);
      expect([clause, await cross(g.value.sql, g.value.tables)]).toEqual([clause, "ok"]);
      // a guard that missed the table behind the clause is caught
      expect(await cross(g.value.sql, [])).toContain(`"${VIEW}"`);
    }
  });
});

describe("what a fooled guard would let through is refused by DuckDB's parse", () => {
  // [the text as a lexer mistake would pass it on, the tables that guard believed it read, reason, named]
  test.each<[string, string[], ParseCheckReason, string]>([
    // a quoted identifier with dots is one name for DuckDB: a file or table called like that
    ['SELECT * FROM "svc_lake.main.hep_proto_1_call"', [VIEW], "parse_mismatch", '"svc_lake.main.hep_proto_1_call"'],
    // replacement scans: a string or quoted name read as a file
    ["SELECT * FROM 'hep.parquet'", [], "parse_mismatch", '"hep.parquet"'],
    [`SELECT * FROM ${VIEW}, "/etc/passwd.csv"`, [VIEW], "parse_mismatch", '"/etc/passwd.csv"'],
    // table and scalar functions that read files, wherever they hide
    [
      `SELECT * FROM ${VIEW} WHERE session_id IN (SELECT * FROM read_csv('/etc/passwd'))`,
      [VIEW],
      "forbidden_function",
      '"read_csv"',
    ],
    ["SELECT * FROM (SELECT * FROM (FROM read_text('/etc/hostname')))", [], "forbidden_function", '"read_text"'],
    [`SELECT (SELECT getenv('HOME')) FROM ${VIEW}`, [VIEW], "forbidden_function", '"getenv"'],
    [`SELECT * FROM ${VIEW}, system.main.range(3)`, [VIEW], "forbidden_function", '"range"'],
    // a name the guard did not qualify, a system view, another catalog
    ["SELECT * FROM hep_proto_1_call", [VIEW], "parse_mismatch", '"hep_proto_1_call"'],
    ["SELECT * FROM pg_catalog.pg_views", [], "parse_mismatch", '"pg_catalog.pg_views"'],
    ["SELECT * FROM memory.main.hep_proto_1_call", [VIEW], "parse_mismatch", '"memory.main.hep_proto_1_call"'],
    // scope: a CTE seen outside its subquery, a CTE name taken for the view (or the view for a CTE)
    ["WITH a AS (WITH v AS (SELECT 1) SELECT * FROM v) SELECT * FROM a, v", [], "parse_mismatch", '"v"'],
    [
      `WITH a AS (WITH "__svc_cte_v" AS (SELECT 1) FROM "__svc_cte_v") SELECT * FROM a, ${VIEW}`,
      [],
      "parse_mismatch",
      `"${VIEW}"`,
    ],
    // the other way round: the guard took for a table what DuckDB reads as a column or a CTE
    [`SELECT 1 AS hep_proto_1_call`, [VIEW], "parse_mismatch", `the guard read "${VIEW}"`],
    [
      `WITH hep_proto_1_call AS (SELECT 1) SELECT * FROM hep_proto_1_call`,
      [VIEW],
      "parse_mismatch",
      `the guard read "${VIEW}"`,
    ],
    // DESCRIBE/SHOW as a relation
    [`SELECT * FROM (DESCRIBE ${VIEW})`, [VIEW], "parse_mismatch", '"SHOW_REF"'],
    // what DuckDB does not parse as one query
    ['SELECT * FROM U&"\\0070g_views"', [], "syntax", "unicode"],
    ["SELECT 1; SELECT 2", [], "multiple_statements", "found 2"],
    ["COPY (SELECT 1) TO 'x.csv'", [], "not_a_query", "Only SELECT"],
  ])("%s", async (sql, tables, reason, named) => {
    const got = await cross(sql, tables);
    expect(got).toStartWith(`${reason}: `);
    expect(got).toContain(named);
    // the real guard refuses the text, or rewrites it into what DuckDB's parse agrees with
    const g = checkReadOnlySql(sql, { allowedTables });
    if (g.ok) expect(await cross(g.value.sql, g.value.tables)).toBe("ok");
  });

  test("the parse costs one statement on the engine and runs nothing: a COPY parsed is not executed", async () => {
    const target = join(dir, "parsed-not-run.csv");
    expect(await cross(`SELECT * FROM (COPY (SELECT 1) TO '${target}')`, [])).toStartWith("syntax: ");
    expect(await cross(`SELECT * FROM read_csv('${target}')`, [])).toStartWith("forbidden_function: ");
    expect(await Bun.file(target).exists()).toBe(false);
  });
});
