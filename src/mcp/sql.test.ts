import { describe, expect, test } from "bun:test";
import { isSqlStatement } from "./detect.ts";
import { generateSql, MCP_TABLE, validateMcpSql } from "./sql.ts";

describe("SQL validator (docs/MCP.md)", () => {
  test("generated SQL passes, a Call-ID holding forbidden words included", () => {
    const sql = generateSql(
      { method: "INVITE;BYE", call_id: "drop-table-insert@copy.attach", from_user: "al%" },
      { fromMs: 1, toMs: 2 },
      10,
    );
    expect(sql).toBe(
      `SELECT * FROM ${MCP_TABLE} WHERE "timestamp" BETWEEN make_timestamp(1000) AND make_timestamp(2000) AND method IN ('INVITE', 'BYE') AND (session_id = 'drop-table-insert@copy.attach') AND (caller LIKE 'al%') ORDER BY "timestamp" DESC LIMIT 10`,
    );
    expect(validateMcpSql(sql).ok).toBe(true);
  });

  test("codes, classes, the CSeq method, either address and the user agent pass the validator", () => {
    const sql = generateSql(
      { response_code: "4xx;486", cseq_method: "invite", ip: "10.0.0.1", user_agent: "Asterisk" },
      { fromMs: 1, toMs: 2 },
      5,
    );
    // The structured search's own conditions (src/api/search/filters.ts), its parameters as literals.
    expect(sql).toContain(
      `(src_ip = '10.0.0.1' OR dst_ip = '10.0.0.1') AND (response_code BETWEEN 400 AND 499 OR response_code = 486) AND cseq_method = 'INVITE'`,
    );
    expect(sql).toContain(`contains(json_extract_string(data_extra, '$.user_agent'), 'Asterisk')`);
    expect(validateMcpSql(sql).ok).toBe(true);
  });

  test("ten values or more: $1 never eats $10, quotes are doubled, and the statement runs as the search's", () => {
    const codes = Array.from({ length: 11 }, (_, i) => String(480 + i)).join(";");
    const sql = generateSql({ response_code: codes, from_user: "o'brien" }, { fromMs: 1, toMs: 2 }, 5);
    expect(sql).toContain("response_code IN (480, 481, 482, 483, 484, 485, 486, 487, 488, 489, 490)");
    expect(sql).toContain("caller = 'o''brien'");
    expect(sql).not.toMatch(/\$\d/);
    expect(validateMcpSql(sql).ok).toBe(true);
  });

  test.each([
    ["SELECT 1; SELECT 2", "semicolon"],
    [`SELECT * FROM ${MCP_TABLE} WHERE session_id = 'a;b'`, "semicolon"],
    [`SELECT * FROM ${MCP_TABLE} -- x`, "comment"],
    [`SELECT * /* x */ FROM ${MCP_TABLE}`, "comment"],
    ["VALUES (1)", "not_select"],
    ["FROM svc_lake.main.hep_proto_1_call", "not_select"],
    [`WITH x AS (DELETE FROM ${MCP_TABLE} RETURNING *) SELECT * FROM x`, "forbidden_identifier"],
    [`SELECT * FROM ${MCP_TABLE} WHERE "copy" = 1`, "forbidden_identifier"],
    ["SELECT * FROM read_csv('/etc/passwd')", "forbidden_identifier"],
    ["SELECT * FROM duckdb_settings()", "forbidden_identifier"],
    ["SELECT * FROM information_schema.tables", "forbidden_identifier"],
    ["SELECT * FROM svc_lake.main.hep_proto_5_default", "table_not_allowed"],
    ["SELECT * FROM svc_lake.other.hep_proto_1_call", "table_not_allowed"],
    ["SELECT * FROM 'file.csv'", "table_not_allowed"],
    ["SELECT ‘a’", "guard"],
  ])("%p → %p", (sql, reason) => {
    const v = validateMcpSql(sql);
    expect(v.ok ? "accepted" : v.reason).toBe(reason);
  });
});

describe("a SQL statement in the text", () => {
  test.each([
    ["SELECT * FROM x", true],
    ["sql: select 1", true],
    ["show tables", true],
    ["SHOW ALL TABLES", true],
    ["show all calls", false],
    ["show all busy calls today", false],
    ["SET threads = 1", true],
    ["LOAD httpfs", true],
    ["COPY (SELECT 1) TO 'x'", true],
    ["calls today; drop table x", true],
    ["INVITE from caller alice -- today", true],
    ["show sql INVITE from caller alice", false],
    ["call-id x' OR '1'='1", true],
    ["caller alice or 1=1", true],
    ['call-id "a" union all', true],
    ["caller='alice' and callee='bob'", false],
    ["show me the INVITEs of call-id 'abc'", false],
    ["from alice to bob today", false],
    ["call-id abc--def@host", false],
    ["update on registrations yesterday", false],
    ["UPDATE t SET a = 1", true],
    ["EXPLAIN SELECT 1", true],
    ["CHECKPOINT", true],
    ["BEGIN TRANSACTION", true],
    ["describe svc_lake.main.hep_proto_1_call", true],
    ["export database '/tmp/x'", true],
    ["explain the calls of yesterday", false],
    ["describe call-id abc@pbx", false],
    ["copy t to x", true],
  ])("%p → %p", (text, sql) => expect(isSqlStatement(text)).toBe(sql));
});
