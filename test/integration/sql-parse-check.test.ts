/**
 * POST /query's second line of defence (docs/ARCHITECTURE.md "User SQL: the read-only guard"):
 * before user SQL runs, DuckDB's own parse of the statement must name only relations the token
 * guard resolved. A service whose guard is fooled (it passes the text on unchanged, as a lexer
 * mistake would) still refuses file reads, system views and DESCRIBE with a 4xx naming them, and
 * nothing runs; a sound query over the real appliance's lake is answered as before.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SqlQueryService } from "../../src/api/index.ts";
import { sha256Hex } from "../../src/auth/index.ts";
import { AppError, MetricsRegistry, ok, type Result } from "../../src/core/index.ts";
import type { CheckedSql, SqlRejectReason } from "../../src/lake/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, type TempDir } from "../harness.ts";

const VIEW = "svc_lake.main.hep_proto_1_call";
const PASSWORD = "parse-check-password";

/** The product's service with a guard that understood nothing: every text passes, reading `tables`. */
class FooledGuardService extends SqlQueryService {
  tables: string[] = [];
  protected override check(sql: string): Result<CheckedSql, SqlRejectReason> {
    return ok({ sql, tables: this.tables });
  }
}

let dir: TempDir;
let a: TestAppliance;
let fooled: FooledGuardService;
let metrics: MetricsRegistry;
let csv = "";

beforeAll(async () => {
  dir = tempDir();
  a = await startTestAppliance(dir.path, { coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } } });
  metrics = new MetricsRegistry();
  fooled = new FooledGuardService(
    a.app.lake!,
    { maxTimeoutSec: 5, maxResultBytes: 1 << 20, privatePaths: [a.app.lake!.dataPathResolved()] },
    metrics,
  );
  // A file inside the lake's own directory: DuckDB's lock lets the engine read it, so only the checks stand between it and user SQL.
  csv = join(a.app.lake!.dataPathResolved(), "secret.csv");
  writeFileSync(csv, "secret\ntop-secret-value\n");
}, 30_000);

afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

async function refusal(sql: string, tables: string[]): Promise<[string, string, unknown, string]> {
  fooled.tables = tables;
  try {
    const r = await fooled.run({ sql });
    return [sql, "answered", null, JSON.stringify(r.data.rows)];
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return [sql, e.code, e.details?.reason, e.message];
  }
}

describe("a fooled guard: DuckDB's parse refuses what it let through", () => {
  test.each<[string, string[], string, string]>([
    [`SELECT * FROM read_csv('<csv>')`, [], "forbidden_function", '"read_csv"'],
    [
      `SELECT count(*) AS n FROM ${VIEW} WHERE session_id IN (SELECT * FROM read_csv('<csv>'))`,
      [VIEW],
      "forbidden_function",
      '"read_csv"',
    ],
    [`SELECT * FROM '<csv>'`, [], "parse_mismatch", "secret.csv"],
    [`SELECT * FROM "<csv>"`, [VIEW], "parse_mismatch", "secret.csv"],
    ["SELECT * FROM pg_catalog.pg_views", [], "parse_mismatch", '"pg_catalog.pg_views"'],
    [`WITH hep_proto_1_call AS (SELECT 1) SELECT * FROM ${VIEW}`, [], "parse_mismatch", `"${VIEW}"`],
    [`SELECT * FROM (DESCRIBE ${VIEW})`, [VIEW], "parse_mismatch", '"SHOW_REF"'],
  ])("%s", async (text, tables, reason, named) => {
    const sql = text.replaceAll("<csv>", csv);
    const [, code, got, message] = await refusal(sql, tables);
    expect([code, got]).toEqual(["SQL_FORBIDDEN", reason]);
    expect(message).toContain(named);
    expect(message).not.toContain("top-secret-value");
  });

  test("refusals are counted by reason; what the guard and DuckDB agree on runs", async () => {
    expect(metrics.render()).toMatch(/svc_sql_rejected_total\{reason="parse_mismatch"\} [1-9]/);
    expect(metrics.render()).toMatch(/svc_sql_rejected_total\{reason="forbidden_function"\} [1-9]/);
    fooled.tables = [VIEW];
    const r = await fooled.run({ sql: `SELECT count(*) AS n FROM ${VIEW}` });
    expect(r.data.rows).toEqual([{ n: 0 }]);
  });
});

describe("POST /query through the appliance", () => {
  test("a CTE named like a view is the CTE; a syntax error is a 400 SQL_INVALID with DuckDB's words", async () => {
    const base = `${a.app.coordinatorUrl}/api/v4`;
    const login = await fetch(`${base}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    });
    const { token } = (await login.json()) as { token: string };
    const query = async (sql: string) => {
      const res = await fetch(`${base}/query`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ sql }),
      });
      return {
        status: res.status,
        body: (await res.json()) as {
          data?: { rows: unknown[] };
          error?: string;
          message?: string;
          meta?: { tables: string[] };
        },
      };
    };
    const cte = await query("WITH hep_proto_1_call AS (SELECT 42 AS n) SELECT n FROM hep_proto_1_call");
    expect([cte.status, cte.body.data?.rows, cte.body.meta?.tables]).toEqual([200, [{ n: 42 }], []]);
    const syntax = await query("SELECT (1 + ) AS x FROM hep_proto_1_call");
    expect([syntax.status, syntax.body.error]).toEqual([400, "SQL_INVALID"]);
    expect(syntax.body.message).toContain("syntax error");
  });
});
