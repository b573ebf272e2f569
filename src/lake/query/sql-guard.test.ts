import { describe, expect, test } from "bun:test";
import { checkReadOnlySql, type SqlRejectReason } from "./sql-guard.ts";

const LAKE = ["hep_proto_1_call", "hep_proto_1_registration", "hep_proto_1_default", "hep_proto_5_default"];
const allowedTables = new Set(LAKE.flatMap((t) => [`svc_lake.main.${t}`, `svc_lake.main.mem_${t}`]));
const check = (sql: string) => checkReadOnlySql(sql, { allowedTables });

describe("checkReadOnlySql rejects bypass attempts", () => {
  test.each<[string, SqlRejectReason, string]>([
    // file and network reading functions, wherever they hide
    ["SELECT * FROM read_csv('/etc/passwd')", "forbidden_function", "read_csv"],
    ["SELECT * FROM read_csv_auto('/etc/passwd')", "forbidden_function", "read_csv_auto"],
    ["SELECT * FROM read_parquet('/var/lib/x.parquet')", "forbidden_function", "read_parquet"],
    ["SELECT * FROM parquet_scan('/x.parquet')", "forbidden_function", "parquet_scan"],
    ["SELECT * FROM read_json_auto('/x.json')", "forbidden_function", "read_json_auto"],
    ["SELECT * FROM read_text('/etc/hostname')", "forbidden_function", "read_text"],
    ["SELECT * FROM read_blob('/etc/hostname')", "forbidden_function", "read_blob"],
    ["SELECT * FROM glob('/*')", "forbidden_function", "glob"],
    ["FROM glob('/*')", "forbidden_function", "glob"],
    ["SELECT * FROM sniff_csv('/etc/passwd')", "forbidden_function", "sniff_csv"],
    ["SELECT * FROM parquet_metadata('/x.parquet')", "forbidden_function", "parquet_metadata"],
    ["SELECT * FROM iceberg_scan('s3://b/t')", "forbidden_function", "iceberg_scan"],
    ["SELECT * FROM sqlite_scan('/x.db', 't')", "forbidden_function", "sqlite_scan"],
    ["SELECT http_get('http://example.net/')", "forbidden_function", "http_get"],
    ["SELECT 'a' || read_text('/etc/hostname')", "forbidden_function", "read_text"],
    ["SELECT \"read_text\"('/etc/hostname')", "forbidden_function", "read_text"],
    ["SELECT * FROM system.main.read_text('/etc/hostname')", "forbidden_function", "read_text"],
    ["SELECT * FROM hep_proto_1_call c, LATERAL read_text(c.payload)", "forbidden_function", "read_text"],
    ["WITH x AS (SELECT * FROM read_text('/etc/hostname')) SELECT * FROM x", "forbidden_function", "read_text"],
    [
      "SELECT * FROM hep_proto_1_call WHERE session_id IN (FROM read_csv('/etc/passwd'))",
      "forbidden_function",
      "read_csv",
    ],
    // dynamic SQL, settings, environment, catalog internals, state changes
    ["SELECT * FROM query('SELECT 1')", "forbidden_function", "query"],
    ["SELECT * FROM query_table('hep_proto_1_call')", "forbidden_function", "query_table"],
    [
      "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
      "forbidden_function",
      "json_execute_serialized_sql",
    ],
    ["SELECT current_setting('allowed_directories')", "forbidden_function", "current_setting"],
    ["SELECT * FROM duckdb_settings()", "forbidden_function", "duckdb_settings"],
    ["SELECT getenv('HOME')", "forbidden_function", "getenv"],
    ["SELECT main.getenv('HOME')", "forbidden_function", "getenv"],
    ["SELECT pg_get_viewdef('hep_proto_1_call')", "forbidden_function", "pg_get_viewdef"],
    ["SELECT * FROM checkpoint()", "forbidden_keyword", "CHECKPOINT"],
    ["SELECT write_log('x')", "forbidden_function", "write_log"],
    ["SELECT * FROM histogram(hep_proto_1_call, method)", "forbidden_function", "histogram"],
    // a string, dollar string or escape string as a table is a file read
    ["SELECT * FROM '/etc/passwd'", "file_as_table", "/etc/passwd"],
    ["SELECT * FROM 'x.parquet'", "file_as_table", "x.parquet"],
    ["SELECT * FROM hep_proto_1_call, '/etc/passwd'", "file_as_table", "/etc/passwd"],
    ["SELECT * FROM hep_proto_1_call JOIN $$/etc/passwd$$ ON true", "file_as_table", "/etc/passwd"],
    ["SELECT * FROM E'/etc/passwd'", "file_as_table", "/etc/passwd"],
    // other statements
    ["ATTACH ':memory:' AS x", "not_a_query", "ATTACH"],
    ["COPY (SELECT 1) TO '/tmp/x.csv'", "not_a_query", "COPY"],
    ["PRAGMA database_list", "not_a_query", "PRAGMA"],
    ["SET enable_external_access = true", "not_a_query", "SET"],
    ["INSTALL httpfs", "not_a_query", "INSTALL"],
    ["LOAD httpfs", "not_a_query", "LOAD"],
    ["USE svc_lake", "not_a_query", "USE"],
    ["CALL pragma_version()", "not_a_query", "CALL"],
    ["EXPLAIN SELECT 1", "not_a_query", "EXPLAIN"],
    ["/* just a comment */ COPY (SELECT 1) TO 'x.csv'", "not_a_query", "COPY"],
    ["-- comment\nDELETE FROM hep_proto_1_call", "not_a_query", "DELETE"],
    ["SELECT * FROM (DESCRIBE hep_proto_1_call)", "forbidden_keyword", "DESCRIBE"],
    ["SELECT * FROM (SHOW TABLES)", "forbidden_keyword", "SHOW"],
    ["SELECT * FROM (SUMMARIZE hep_proto_1_call)", "forbidden_keyword", "SUMMARIZE"],
    ["(SELECT 1) UNION (COPY x TO 'y')", "forbidden_keyword", "COPY"],
    // more than one statement, and comment/string tricks around the separator
    ["SELECT 1; DROP VIEW svc_lake.main.hep_proto_1_call", "multiple_statements", ";"],
    ["SELECT 1; SELECT 2", "multiple_statements", ";"],
    ["SELECT 1 /* ; */ ; COPY x TO 'y'", "multiple_statements", ";"],
    ["SELECT 1;;", "multiple_statements", ";"],
    ["SELECT 1) ; DROP VIEW x; SELECT (1", "multiple_statements", ";"],
    ["SELECT 1) UNION (SELECT 2", "unbalanced", ")"],
    ["SELECT [1, 2)", "unbalanced", ")"],
    // DuckDB ends a -- comment at CR; E'' takes backslash escapes; $$ strings hide quotes
    ["SELECT 1 -- hidden?\rUNION ALL SELECT * FROM read_text('/etc/passwd')", "forbidden_function", "read_text"],
    ["SELECT E'\\'', x FROM read_text('/etc/passwd')", "forbidden_function", "read_text"],
    ["SELECT $$ ' $$, content FROM read_text('/etc/passwd') -- '", "forbidden_function", "read_text"],
    ["SELECT $t$ it's $t$ AS a, * FROM read_blob('/etc/shadow')", "forbidden_function", "read_blob"],
    // tables that are not lake tables
    ['SELECT * FROM "/etc/passwd"', "table_not_allowed", "/etc/passwd"],
    ["SELECT * FROM pg_views", "table_not_allowed", "pg_views"],
    ["SELECT * FROM information_schema.tables", "table_not_allowed", "information_schema.tables"],
    ["SELECT * FROM memory.main.x", "table_not_allowed", "memory.main.x"],
    ["SELECT * FROM svc_lake.other.hep_proto_1_call", "table_not_allowed", "svc_lake.other.hep_proto_1_call"],
    ["SELECT * FROM svc_lake.main.mem_hep_proto_1_call__g1", "table_not_allowed", "buffer generation"],
    ['SELECT * FROM "SVC_LAKE"."MAIN"."MEM_HEP_PROTO_1_CALL__G2"', "table_not_allowed", "buffer generation"],
    ["SELECT * FROM (pg_views JOIN hep_proto_1_call ON true)", "table_not_allowed", "pg_views"],
    ["SELECT ARRAY(FROM pg_views)", "table_not_allowed", "pg_views"],
    ["SELECT * FROM (TABLE pg_views)", "table_not_allowed", "pg_views"],
    ["SELECT * FROM hep_proto_1_call UNION ALL FROM pg_views", "table_not_allowed", "pg_views"],
    [
      "SELECT * FROM hep_proto_1_call a JOIN hep_proto_1_call b ON a.uuid = b.uuid, pg_tables",
      "table_not_allowed",
      "pg_tables",
    ],
    ["WITH x AS (SELECT 1) SELECT * FROM x, information_schema.views", "table_not_allowed", "information_schema.views"],
    // a CTE cannot lend its name to a system view: not in its own body, not before it is declared
    ["WITH pg_views AS (SELECT * FROM pg_views) SELECT * FROM pg_views", "table_not_allowed", "pg_views"],
    ["WITH a AS (SELECT * FROM pg_views), pg_views AS (SELECT 1) SELECT * FROM a", "table_not_allowed", "pg_views"],
    // lexical tricks
    ["SELECT * FROM hep_proto_1_call WHERE session_id = $1", "parameter", "$1"],
    ["SELECT * FROM hep_proto_1_call WHERE session_id = ?", "parameter", "?"],
    ["SELECT 1\u0000; DROP VIEW x", "lexical", "control character"],
    ["SELECT\u00a0* FROM read_text('/etc/passwd')", "lexical", "U+00a0"],
    ["SELECT 1 -- \u2028 nothing to see", "lexical", "U+2028"],
    ["SELECT * FROM hep_proto_1_call WHERE caller = 'x", "lexical", "unterminated string"],
    ["SELECT 1 /* never closed", "lexical", "unterminated /*"],
    ["", "empty", "no SQL"],
    ["  -- only a comment\n", "empty", "no SQL"],
  ])("%s → %s", (sql, reason, named) => {
    const r = check(sql);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toBe(reason);
    expect(r.detail ?? "").toContain(named);
  });
});

describe("checkReadOnlySql accepts analytical SQL", () => {
  test.each<[string, string[]]>([
    ["SELECT count(*) FROM hep_proto_1_call", ["svc_lake.main.hep_proto_1_call"]],
    [
      "SELECT method, count(*) AS n FROM svc_lake.main.hep_proto_1_call GROUP BY method ORDER BY n DESC",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "SELECT session_id, row_number() OVER (PARTITION BY session_id ORDER BY timestamp) AS rn FROM main.hep_proto_1_call QUALIFY rn = 1",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "WITH calls AS (SELECT session_id, min(timestamp) AS t0 FROM hep_proto_1_call GROUP BY 1) SELECT * FROM calls ORDER BY t0 DESC LIMIT 10",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "SELECT c.session_id, r.payload FROM hep_proto_1_call c LEFT JOIN hep_proto_5_default r ON r.session_id = c.session_id, hep_proto_1_registration g WHERE g.aor = c.caller",
      ["svc_lake.main.hep_proto_1_call", "svc_lake.main.hep_proto_1_registration", "svc_lake.main.hep_proto_5_default"],
    ],
    [
      "SELECT json_extract(data_extra, '$.to_tag') AS tag, data_extra->>'$.from_tag' AS ft FROM hep_proto_1_call",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "SELECT date_trunc('minute', timestamp) AS m, count(*) FROM hep_proto_1_call GROUP BY ALL ORDER BY m",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "SELECT * FROM hep_proto_1_call WHERE regexp_matches(caller, '^al') AND timestamp > now() - INTERVAL 1 HOUR",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "SELECT count(*) FILTER (WHERE method = 'INVITE') AS invites, count(*) FILTER (WHERE response_code >= 400) AS failures FROM hep_proto_1_call",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    ["SELECT count(*) FROM hep_proto_1_call AT (VERSION => 3)", ["svc_lake.main.hep_proto_1_call"]],
    [
      "SELECT * FROM hep_proto_1_call AT (TIMESTAMP => '2026-01-01 00:00:00') old LIMIT 1",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    ["SELECT * FROM svc_lake.main.hep_proto_1_call AT SNAPSHOT 2", ["svc_lake.main.hep_proto_1_call"]],
    ["SELECT * FROM hep_proto_1_call WHERE session_id = 'drop table x; -- /* */'", ["svc_lake.main.hep_proto_1_call"]],
    [
      "SELECT * FROM hep_proto_1_call WHERE session_id IN ('insert-update-delete@host', 'copy;attach')",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    ["SELECT 'COPY (SELECT 1) TO ''x''' AS s, $$read_text('/etc/passwd')$$ AS d, E'it\\'s' AS e", []],
    ["FROM hep_proto_1_call SELECT method LIMIT 5", ["svc_lake.main.hep_proto_1_call"]],
    [
      "SELECT extract(year FROM timestamp) AS y, substring(caller FROM 1 FOR 3) AS p FROM hep_proto_1_call",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    ["SELECT * FROM hep_proto_1_call WHERE caller IS NOT DISTINCT FROM callee", ["svc_lake.main.hep_proto_1_call"]],
    ["SELECT i FROM range(10) r(i) WHERE i % 2 = 0", []],
    ["SELECT * FROM generate_series(TIMESTAMP '2026-01-01', TIMESTAMP '2026-01-02', INTERVAL 1 HOUR)", []],
    ["SELECT unnest(string_split(caller, '@')) AS part FROM hep_proto_1_call", ["svc_lake.main.hep_proto_1_call"]],
    ["WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT sum(n) FROM r", []],
    [
      "SELECT * FROM mem_hep_proto_1_call UNION ALL SELECT * FROM hep_proto_1_call",
      ["svc_lake.main.hep_proto_1_call", "svc_lake.main.mem_hep_proto_1_call"],
    ],
    [
      "SELECT count(*) FROM hep_proto_1_call a JOIN hep_proto_1_call b USING (session_id)",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    ["VALUES (1, 'a'), (2, 'b')", []],
    ['SELECT "set", "load" FROM (SELECT 1 AS "set", 2 AS "load")', []],
    [
      "SELECT s.method, l.x FROM (SELECT * FROM hep_proto_1_call) s, LATERAL (SELECT s.method AS x) l",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    [
      "SELECT histogram(method), list(method ORDER BY timestamp), approx_quantile(response_code, 0.5) FROM hep_proto_1_call",
      ["svc_lake.main.hep_proto_1_call"],
    ],
    ["SELECT * FROM json_each('{\"a\": 1}')", []],
    ["SELECT x FROM (SELECT [1, 2, 3] AS l, {'k': 1} AS s) t, unnest(t.l) AS u(x)", []],
    ["(SELECT 1 AS a) UNION (SELECT 2)", []],
    [
      "SELECT * FROM hep_proto_1_call AS t WHERE EXISTS (SELECT 1 FROM hep_proto_5_default r WHERE r.session_id = t.session_id)",
      ["svc_lake.main.hep_proto_1_call", "svc_lake.main.hep_proto_5_default"],
    ],
    ["SELECT 1 /* nested /* comment */ still comment; DROP */ AS one;", []],
    ["select CaLLer from HEP_PROTO_1_CALL limit 1", ["svc_lake.main.hep_proto_1_call"]],
    [
      "SELECT * FROM hep_proto_1_call ASOF JOIN hep_proto_5_default r ON hep_proto_1_call.session_id = r.session_id AND hep_proto_1_call.timestamp >= r.timestamp",
      ["svc_lake.main.hep_proto_1_call", "svc_lake.main.hep_proto_5_default"],
    ],
    ["SELECT timestamp AT TIME ZONE 'Europe/Paris' AS local FROM hep_proto_1_call", ["svc_lake.main.hep_proto_1_call"]],
  ])("%s", (sql, tables) => {
    const r = check(sql);
    if (!r.ok) throw new Error(`${r.reason}: ${r.detail}`);
    expect(r.value.tables).toEqual(tables);
  });
});

describe("checkReadOnlySql output", () => {
  test("qualifies lake tables, drops comments and the trailing semicolon, keeps strings as written", () => {
    const r = check("SELECT /* c */ caller -- x\nFROM hep_proto_1_call WHERE session_id = 'a -- b /* c */' ;");
    expect(r.ok && r.value.sql).toBe(
      `SELECT caller FROM svc_lake."main"."hep_proto_1_call" WHERE session_id = 'a -- b /* c */'`,
    );
  });

  test("CTE names get a private prefix; references keep the user's name as alias", () => {
    const r = check("WITH x AS (SELECT 1 AS a) SELECT x.a FROM x, x AS y");
    expect(r.ok && r.value.sql).toBe(
      `WITH "__svc_cte_x" AS (SELECT 1 AS a) SELECT x.a FROM "__svc_cte_x" AS "x", "__svc_cte_x" AS y`,
    );
  });

  test("time travel clauses stay right after the qualified table", () => {
    const r = check("SELECT * FROM main.hep_proto_1_call AT (VERSION => 2)");
    expect(r.ok && r.value.sql).toBe(`SELECT * FROM svc_lake."main"."hep_proto_1_call" AT (VERSION => 2)`);
  });

  test("a table of another schema is allowed when listed", () => {
    const r = checkReadOnlySql("SELECT * FROM telegraf.cpu", { allowedTables: new Set(["svc_lake.telegraf.cpu"]) });
    expect(r.ok && r.value).toEqual({
      sql: `SELECT * FROM svc_lake."telegraf"."cpu"`,
      tables: ["svc_lake.telegraf.cpu"],
    });
  });

  test("a forbidden word used as a column must be quoted, and the message says so", () => {
    const r = check("SELECT load FROM hep_proto_1_call");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.detail).toContain('quote it as "load"');
  });
});
