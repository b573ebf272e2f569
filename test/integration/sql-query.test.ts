/**
 * Read-only SQL over the lake through the real appliance (docs/API.md "User SQL", `POST /query`,
 * `POST /statistics/query`): SIP over UDP into the lake, then legitimate analytical SQL returns the
 * rows, every bypass attempt is a 400 that reads or writes nothing, the time-out is a 422 after
 * which the engine still answers, and time travel works through the API. Never a 500.
 */
import type { udp } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite, register, request, response } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";

const ADMIN_PASSWORD = "sql-admin-password";
/** coordinator.query.max_result_bytes of this appliance: 1 MiB. */
const MAX_RESULT_BYTES = 1 << 20;
const T0 = Date.now() * 1000 - 120_000_000; // two minutes ago, µs

let dir: TempDir;
let a: TestAppliance;
let token = "";
let sender: udp.Socket<"buffer"> | undefined;
/** Snapshot after call A was committed to Parquet (call B comes later). */
let firstSnapshot = 0;
const statuses: number[] = [];
const bodies: string[] = [];

interface Reply {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

async function call(method: string, path: string, body?: unknown, auth: string | null = token): Promise<Reply> {
  const res = await fetch(`${a.app.coordinatorUrl}/api/v4${path}`, {
    method,
    headers: {
      ...(auth ? { authorization: `Bearer ${auth}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  statuses.push(res.status);
  bodies.push(text);
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, text };
}

type Rows = Array<Record<string, unknown>>;
const rowsOf = (r: Reply): Rows => (r.body.data as { rows: Rows }).rows;
const metaOf = (r: Reply) =>
  r.body.meta as {
    row_count: number;
    truncated: boolean;
    limit: number;
    elapsed_ms: number;
    snapshot_id: number;
    tables: string[];
  };

async function sql(text: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  return await call("POST", "/query", { sql: text, ...extra });
}

function hep(payload: string, i: number, o: { src?: string; dst?: string } = {}) {
  return encodeHep3({
    ipFamily: 4,
    ipProtocol: 17,
    srcIp: o.src ?? "10.0.0.1",
    dstIp: o.dst ?? "10.0.0.2",
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: T0 + i * 1000,
    protoType: 1,
    captureId: 2001,
    nodeName: "edge-1",
    payload,
  });
}

async function countWhere(table: string, where: string): Promise<number> {
  await a.app.lake!.sync();
  const r = await a.app.lake!.query(`SELECT count(*) AS n FROM svc_lake.main.${table} WHERE ${where}`);
  return Number(r.rows[0]?.n ?? 0);
}

const callA = { callId: "sqlcall-a@test", from: "alice", to: "bob", fromTag: "fa", toTag: "ta" };
const callB = { callId: "sqlcall-b@test", from: "carol", to: "dave", fromTag: "fb", toTag: "tb" };

beforeAll(async () => {
  dir = tempDir();
  a = await startTestAppliance(dir.path, {
    coordinator: {
      auth: { admin_password_hash: sha256Hex(ADMIN_PASSWORD) },
      query_timeout_sec: 2,
      query: { max_result_bytes: MAX_RESULT_BYTES },
    },
    storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000 } },
  });
  const login = await call("POST", "/auth/sessions", { username: "admin", password: ADMIN_PASSWORD }, null);
  expect(login.status).toBe(201);
  token = String(login.body.token);

  const sock = await Bun.udpSocket({});
  sender = sock;
  const port = a.app.ingest!.listeners.udp!.port();
  const send = (payload: string, i: number, o?: { src?: string; dst?: string }) =>
    sock.send(hep(payload, i, o), port, "127.0.0.1");
  // Call A (7 messages), a REGISTER and an OPTIONS; then committed to Parquet: the first snapshot.
  send(invite(callA), 0);
  send(response(100, "Trying", "INVITE", callA), 1, { src: "10.0.0.2", dst: "10.0.0.1" });
  send(response(180, "Ringing", "INVITE", callA), 2, { src: "10.0.0.2", dst: "10.0.0.1" });
  send(response(200, "OK", "INVITE", callA), 3, { src: "10.0.0.2", dst: "10.0.0.1" });
  send(request("ACK", { ...callA, cseq: 1 }), 4);
  send(request("BYE", { ...callA, cseq: 2 }), 5);
  send(response(200, "OK", "BYE", { ...callA, cseq: 2 }), 6, { src: "10.0.0.2", dst: "10.0.0.1" });
  send(register({ callId: "sqlreg-1@test", user: "alice", expires: 600 }), 7, { src: "10.0.0.9" });
  send(request("OPTIONS", { callId: "sqlopt-1@test", from: "mon", to: "srv" }), 8);
  await waitFor("call A, REGISTER and OPTIONS stored", async () => {
    const n =
      (await countWhere("hep_proto_1_call", "session_id = 'sqlcall-a@test'")) +
      (await countWhere("hep_proto_1_registration", "true")) +
      (await countWhere("hep_proto_1_default", "true"));
    return n === 9;
  });
  await a.app.lake!.flush();
  firstSnapshot = await a.app.lake!.snapshotId();
  // Call B: INVITE rejected with 486, committed in a later snapshot.
  send(invite({ ...callB, srcIp: "10.0.0.3" }), 10, { src: "10.0.0.3" });
  send(response(486, "Busy Here", "INVITE", callB), 11, { src: "10.0.0.2", dst: "10.0.0.3" });
  send(request("ACK", { ...callB, cseq: 1 }), 12, { src: "10.0.0.3" });
  await waitFor(
    "call B stored",
    async () => (await countWhere("hep_proto_1_call", "session_id = 'sqlcall-b@test'")) === 3,
  );
  await a.app.lake!.flush();
}, 30_000);

afterAll(async () => {
  sender?.close();
  await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

describe("POST /query: legitimate analytical SQL", () => {
  test("aggregates, FILTER, json_extract and ORDER BY return the ingested rows with column types", async () => {
    const r = await sql(
      `SELECT session_id, count(*) AS messages, count(*) FILTER (WHERE method = 'INVITE') AS invites,
              max(response_code) AS final_code, any_value(json_extract_string(data_extra, '$.to_tag')) FILTER (WHERE response_code = 200) AS to_tag
       FROM hep_proto_1_call GROUP BY session_id ORDER BY session_id;`,
    );
    expect(r.status).toBe(200);
    expect(rowsOf(r)).toEqual([
      { session_id: "sqlcall-a@test", messages: 7, invites: 1, final_code: 200, to_tag: "ta" },
      { session_id: "sqlcall-b@test", messages: 3, invites: 1, final_code: 486, to_tag: null },
    ]);
    const data = r.body.data as { columns: Array<{ name: string; type: string }> };
    expect(data.columns).toEqual([
      { name: "session_id", type: "VARCHAR" },
      { name: "messages", type: "BIGINT" },
      { name: "invites", type: "BIGINT" },
      { name: "final_code", type: "INTEGER" },
      { name: "to_tag", type: "VARCHAR" },
    ]);
    expect(metaOf(r)).toMatchObject({
      row_count: 2,
      truncated: false,
      limit: 1000,
      tables: ["svc_lake.main.hep_proto_1_call"],
    });
    expect(metaOf(r).snapshot_id).toBeGreaterThan(firstSnapshot);
  });

  test("CTE, window function, join of two HEP tables, date_trunc, regexp_matches", async () => {
    const r = await sql(`
      -- first message of every call, joined to the caller's registration
      WITH ordered AS (
        SELECT session_id, caller, method, timestamp,
               row_number() OVER (PARTITION BY session_id ORDER BY timestamp) AS rn
        FROM svc_lake.main.hep_proto_1_call
      )
      SELECT o.session_id, o.method, g.expires, date_trunc('minute', o.timestamp) <= o.timestamp AS truncated_ok
      FROM ordered o JOIN main.hep_proto_1_registration g ON g.caller = o.caller
      WHERE o.rn = 1 AND regexp_matches(o.session_id, '^sqlcall-[ab]@')`);
    expect(r.status).toBe(200);
    expect(rowsOf(r)).toEqual([{ session_id: "sqlcall-a@test", method: "INVITE", expires: 600, truncated_ok: true }]);
    expect(metaOf(r).tables).toEqual(["svc_lake.main.hep_proto_1_call", "svc_lake.main.hep_proto_1_registration"]);
  });

  test("FROM-first, VALUES, range(), string literals holding SQL keywords, mem_ buffer view", async () => {
    const fromFirst = await sql("FROM hep_proto_1_default SELECT session_id, method");
    expect(rowsOf(fromFirst)).toEqual([{ session_id: "sqlopt-1@test", method: "OPTIONS" }]);
    const values = await sql("VALUES (1, 'a'), (2, 'b')");
    expect(rowsOf(values)).toEqual([
      { col0: 1, col1: "a" },
      { col0: 2, col1: "b" },
    ]);
    const words = await sql(
      `SELECT count(*) AS n FROM hep_proto_1_call WHERE session_id IN ('drop table x; --', 'sqlcall-a@test', $$COPY (SELECT 1) TO 'x'$$)`,
    );
    expect(rowsOf(words)).toEqual([{ n: 7 }]);
    const gen = await sql("SELECT sum(i) AS s FROM range(10) r(i)");
    expect(rowsOf(gen)).toEqual([{ s: 45 }]);
    // everything was flushed in beforeAll, so the buffer view is empty but readable
    const mem = await sql("SELECT count(*) AS n FROM mem_hep_proto_1_call");
    expect(mem.status).toBe(200);
    expect(rowsOf(mem)).toEqual([{ n: 0 }]);
  });

  test("the raw and query members are aliases of sql; POST /statistics/query validates the same way", async () => {
    const viaQuery = await call("POST", "/query", { query: "SELECT 1 AS one" });
    expect(rowsOf(viaQuery)).toEqual([{ one: 1 }]);
    const stats = await call("POST", "/statistics/query", {
      raw: "SELECT method, count(*) AS n FROM hep_proto_1_call WHERE method IS NOT NULL GROUP BY ALL ORDER BY n DESC, method",
    });
    expect(stats.status).toBe(200);
    expect(rowsOf(stats)).toEqual([
      { method: "ACK", n: 2 },
      { method: "INVITE", n: 2 },
      { method: "BYE", n: 1 },
    ]);
    const refused = await call("POST", "/statistics/query", { raw: "SELECT * FROM read_csv('/etc/passwd')" });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: "SQL_FORBIDDEN", reason: "forbidden_function" });
    const missing = await call("POST", "/statistics/query", {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("raw");
  });

  test("the row limit is applied around the statement and reported as truncated", async () => {
    const r = await sql("SELECT i FROM range(5000) r(i) ORDER BY i DESC", { limit: 10 });
    expect(rowsOf(r).map((x) => x.i)).toEqual([4999, 4998, 4997, 4996, 4995, 4994, 4993, 4992, 4991, 4990]);
    expect(metaOf(r)).toMatchObject({ row_count: 10, truncated: true, limit: 10 });
    const exact = await sql("SELECT i FROM range(10) r(i)", { limit: 10 });
    expect(metaOf(exact)).toMatchObject({ row_count: 10, truncated: false });
    const capped = await sql("SELECT i FROM range(60000) r(i)", { limit: 1_000_000 });
    expect(metaOf(capped)).toMatchObject({ row_count: 50_000, truncated: true, limit: 50_000 });
  });

  test("a result over coordinator.query.max_result_bytes is a 413 saying the limit and how to narrow it; one under it is complete and exact", async () => {
    // ≈ 1 KiB of JSON per row: 5000 rows are ≈ 5 MiB, over the 1 MiB budget of this appliance.
    const big = await sql("SELECT i, repeat('x', 1000) AS pad FROM range(5000) r(i)", { limit: 50_000 });
    expect(big.status).toBe(413);
    expect(big.body.error).toBe("PAYLOAD_TOO_LARGE");
    expect(String(big.body.message)).toContain(`coordinator.query.max_result_bytes (${MAX_RESULT_BYTES} bytes`);
    expect(String(big.body.message)).toMatch(/fewer or shorter columns.*narrow the WHERE/);
    expect(big.body).toMatchObject({ reason: "max_result_bytes", max_result_bytes: MAX_RESULT_BYTES });
    // Streamed: reading stopped at the chunk that passed the budget, not after the whole result.
    expect(Number(big.body.rows_read)).toBeLessThan(5000);
    // One value over the budget is refused from DuckDB's string lengths, before it is converted.
    const one = await sql("SELECT repeat('y', 5000000) AS big");
    expect(one.status).toBe(413);
    expect(one.body).toMatchObject({ error: "PAYLOAD_TOO_LARGE", rows_read: 1 });
    // 900 rows ≈ 0.9 MiB: under the budget, every row, in order, unchanged.
    const fits = await sql("SELECT i, repeat('x', 1000) AS pad FROM range(900) r(i) ORDER BY i", { limit: 50_000 });
    expect(fits.status).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(rowsOf(fits)))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(rowsOf(fits)).toEqual(Array.from({ length: 900 }, (_x, i) => ({ i, pad: "x".repeat(1000) })));
    expect(metaOf(fits)).toMatchObject({ row_count: 900, truncated: false });
    // The connection the refused query ran on serves the next ones.
    for (let k = 0; k < 10; k++) expect(rowsOf(await sql("SELECT 42 AS n"))).toEqual([{ n: 42 }]);
  });

  test("time travel: AT (VERSION => n) reads the snapshot before call B", async () => {
    const now = await sql("SELECT count(*) AS n FROM hep_proto_1_call");
    expect(rowsOf(now)).toEqual([{ n: 10 }]);
    const before = await sql(
      `SELECT count(*) AS n, count(DISTINCT session_id) AS calls FROM hep_proto_1_call AT (VERSION => ${firstSnapshot})`,
    );
    expect(before.status).toBe(200);
    expect(rowsOf(before)).toEqual([{ n: 7, calls: 1 }]);
    const snap = await sql(
      `SELECT session_id FROM svc_lake.main.hep_proto_1_call AT SNAPSHOT ${firstSnapshot} WHERE method = 'INVITE'`,
    );
    expect(rowsOf(snap)).toEqual([{ session_id: "sqlcall-a@test" }]);
    const future = await sql(`SELECT count(*) FROM hep_proto_1_call AT (VERSION => ${firstSnapshot + 1000})`);
    expect(future.status).toBe(404);
  });

  test("any logged-in user may query; without a credential it is a 401", async () => {
    const created = await call("POST", "/users", { username: "analyst", password: "analyst-password" });
    expect(created.status).toBe(201);
    const login = await call("POST", "/auth/sessions", { username: "analyst", password: "analyst-password" }, null);
    const r = await call(
      "POST",
      "/query",
      { sql: "SELECT count(*) AS n FROM hep_proto_1_registration" },
      String(login.body.token),
    );
    expect(r.status).toBe(200);
    expect(rowsOf(r)).toEqual([{ n: 1 }]);
    expect((await call("POST", "/query", { sql: "SELECT 1" }, null)).status).toBe(401);
  });
});

describe("POST /query: the guard's rewritten SQL is what DuckDB runs", () => {
  // Every query the guard accepts must also be valid DuckDB after its rewrite (qualified tables,
  // private CTE names, comments dropped) and inside the LIMIT wrapper.
  test.each([
    "SELECT * FROM hep_proto_1_call WHERE timestamp > now() - INTERVAL '1 day' ORDER BY timestamp DESC LIMIT 100",
    "SELECT session_id, row_number() OVER (PARTITION BY session_id ORDER BY timestamp) AS rn FROM main.hep_proto_1_call QUALIFY rn = 1",
    "WITH calls AS (SELECT session_id, min(timestamp) AS t0 FROM hep_proto_1_call GROUP BY 1) SELECT calls.session_id, * FROM calls ORDER BY t0 DESC LIMIT 10",
    "SELECT c.session_id, r.payload FROM hep_proto_1_call c LEFT JOIN hep_proto_5_default r ON r.session_id = c.session_id, hep_proto_1_registration g WHERE g.aor LIKE '%' || c.caller || '%'",
    "SELECT json_extract(data_extra, '$.to_tag') AS tag, data_extra->>'$.from_tag' AS ft FROM hep_proto_1_call",
    "SELECT date_trunc('minute', timestamp) AS m, count(*) FROM hep_proto_1_call GROUP BY ALL ORDER BY m",
    "SELECT count(*) FILTER (WHERE method = 'INVITE') AS invites, count(*) FILTER (WHERE response_code >= 400) AS failures FROM hep_proto_1_call",
    "SELECT * FROM hep_proto_1_call AT (TIMESTAMP => '2100-01-01 00:00:00') old LIMIT 1",
    "SELECT extract(year FROM timestamp) AS y, substring(caller FROM 1 FOR 3) AS p FROM hep_proto_1_call",
    "SELECT * FROM hep_proto_1_call WHERE caller IS NOT DISTINCT FROM callee",
    "SELECT unnest(string_split(session_id, '@')) AS part FROM hep_proto_1_call",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT sum(n) FROM r",
    "SELECT * FROM mem_hep_proto_1_call UNION ALL SELECT * FROM hep_proto_1_call",
    "SELECT count(*) FROM hep_proto_1_call a JOIN hep_proto_1_call b USING (session_id)",
    "SELECT s.method, l.x FROM (SELECT * FROM hep_proto_1_call) s, LATERAL (SELECT s.method AS x) l",
    "SELECT histogram(method), list(method ORDER BY timestamp), approx_quantile(response_code, 0.5) FROM hep_proto_1_call",
    "SELECT * FROM json_each('{\"a\": 1}')",
    "(SELECT 1 AS a) UNION (SELECT 2)",
    "SELECT * FROM hep_proto_1_call AS t WHERE EXISTS (SELECT 1 FROM hep_proto_1_call r WHERE r.session_id = t.session_id AND r.response_code = 486)",
    "SELECT 1 /* nested /* comment */ still comment; DROP */ AS one;",
    "select CaLLer from HEP_PROTO_1_CALL limit 1",
    "SELECT timestamp AT TIME ZONE 'Europe/Paris' AS local FROM hep_proto_1_call",
    'WITH "Calls" AS (SELECT * FROM hep_proto_1_call) SELECT "Calls".method FROM "Calls" WHERE "Calls".method IS NOT NULL',
    "SELECT * FROM (FROM hep_proto_1_call) UNION ALL FROM hep_proto_1_call",
    "SELECT * FROM hep_proto_1_call PIVOT (count(*) FOR method IN ('INVITE', 'BYE') GROUP BY session_id)",
    "SELECT x FROM (SELECT [1, 2, 3] AS l, {'k': 1} AS s) t, unnest(t.l) AS u(x)",
  ])("%s", async (text) => {
    const r = await sql(text);
    expect([r.status, r.body.error ?? null, r.body.message ?? null]).toEqual([200, null, null]);
  });
});

describe("POST /query: errors", () => {
  test("mistakes in user SQL are 400 SQL_INVALID with DuckDB's message, paths redacted", async () => {
    const col = await sql("SELECT no_such_column FROM hep_proto_1_call");
    expect(col.status).toBe(400);
    expect(col.body.error).toBe("SQL_INVALID");
    expect(String(col.body.message)).toContain("no_such_column");
    const syntax = await sql("SELECT (1 + ) AS x");
    expect(syntax.status).toBe(400);
    expect(syntax.body.error).toBe("SQL_INVALID");
    // time travel is rewritten to the Parquet file list: the error must not show where the lake lives
    const tt = await sql(`SELECT nope FROM hep_proto_1_call AT (VERSION => ${firstSnapshot})`);
    expect(tt.status).toBe(400);
    expect(tt.text).not.toContain(dir.path);
    const cast = await sql("SELECT 'abc'::INTEGER");
    expect(cast.status).toBe(400);
    expect(cast.body.error).toBe("SQL_INVALID");
  });

  test("a query over the time-out is a 422 (the client narrows it, not a server fault), capped by coordinator.query_timeout_sec, and the engine still answers", async () => {
    const heavy = "SELECT count(*) FROM range(1000000000000) r(i) WHERE i % 7 = 3";
    const t0 = performance.now();
    const r = await sql(heavy, { timeout_sec: 0.3 });
    expect(r.status).toBe(422);
    expect(r.body.message).toContain("coordinator.query_timeout_sec");
    expect(r.body.error).toBe("TIMEOUT");
    expect(performance.now() - t0).toBeLessThan(1900);
    // timeout_sec above coordinator.query_timeout_sec (2 s here) is cut down to it
    const capped = await sql(heavy, { timeout_sec: 600 });
    expect(capped.status).toBe(422);
    const after = await sql("SELECT 42 AS answer");
    expect(rowsOf(after)).toEqual([{ answer: 42 }]);
  }, 10_000);
});

describe("POST /query: bypass attempts are refused and nothing leaks", () => {
  const dataDirCopy = () => join(a.app.lake!.dataPathResolved(), "pwned.csv");
  const cases = (): Array<[string, string]> => [
    ["SELECT * FROM read_csv('/etc/passwd')", "forbidden_function"],
    ["SELECT * FROM read_csv_auto('/etc/passwd', header = false)", "forbidden_function"],
    ["SELECT * FROM '/etc/passwd'", "file_as_table"],
    ['SELECT * FROM "/etc/passwd"', "table_not_allowed"],
    ["SELECT * FROM hep_proto_1_call, '/etc/passwd'", "file_as_table"],
    ["ATTACH ':memory:' AS x", "not_a_query"],
    [`COPY (SELECT 1) TO '${dataDirCopy()}'`, "not_a_query"],
    [`SELECT 1; COPY (SELECT 1) TO '${dataDirCopy()}'`, "multiple_statements"],
    [`EXPORT DATABASE '${a.app.lake!.dataPathResolved()}/export'`, "not_a_query"],
    ["SELECT 1; DROP VIEW svc_lake.main.hep_proto_1_call", "multiple_statements"],
    ["WITH x AS (SELECT * FROM read_text('/etc/hostname')) SELECT * FROM x", "forbidden_function"],
    ["SELECT * FROM query('SELECT 1')", "forbidden_function"],
    [`SELECT * FROM query('COPY (SELECT 1) TO ''${dataDirCopy()}''')`, "forbidden_function"],
    ["SELECT current_setting('allowed_directories')", "forbidden_function"],
    ["SELECT * FROM duckdb_settings()", "forbidden_function"],
    ["PRAGMA database_list", "not_a_query"],
    ["SET enable_external_access = true", "not_a_query"],
    ["/* harmless */ SET lock_configuration = false", "not_a_query"],
    ["SELECT 1 /* ; */ ; DROP VIEW svc_lake.main.hep_proto_1_call", "multiple_statements"],
    ["SELECT 1 -- comment\rUNION ALL SELECT content FROM read_text('/etc/passwd')", "forbidden_function"],
    ["SELECT $$ ' $$ AS a, content FROM read_text('/etc/passwd') -- '", "forbidden_function"],
    ["SELECT E'\\'' AS a, content FROM read_text('/etc/passwd') -- '", "forbidden_function"],
    ["SELECT getenv('HOME')", "forbidden_function"],
    ["FROM glob('/*')", "forbidden_function"],
    ["SELECT * FROM svc_lake.main.mem_hep_proto_1_call__g1", "table_not_allowed"],
    ["SELECT * FROM pg_views", "table_not_allowed"],
    ["SELECT definition FROM (WITH pg_views AS (SELECT 1) SELECT * FROM pg_views) a, pg_views b", "table_not_allowed"],
    ["WITH pg_views AS (SELECT * FROM pg_views) SELECT * FROM pg_views", "table_not_allowed"],
    ["SELECT * FROM information_schema.views", "table_not_allowed"],
    ["SELECT pg_get_viewdef('svc_lake.main.hep_proto_1_call')", "forbidden_function"],
    ["SELECT * FROM (DESCRIBE hep_proto_1_call)", "forbidden_keyword"],
    ["SELECT * FROM (SHOW ALL TABLES)", "forbidden_keyword"],
    ["EXPLAIN SELECT * FROM hep_proto_1_call", "not_a_query"],
    ["SELECT 1) UNION (SELECT 2", "unbalanced"],
    ["SELECT\u00a0* FROM read_text('/etc/passwd')", "lexical"],
    ["INSTALL httpfs", "not_a_query"],
    ["LOAD httpfs", "not_a_query"],
    ["SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))", "forbidden_function"],
    ["CALL enable_logging()", "not_a_query"],
  ];

  test("each attempt is a 400 SQL_FORBIDDEN naming the reason", async () => {
    const got: Array<[string, number, unknown]> = [];
    for (const [text, reason] of cases()) {
      const r = await sql(text);
      got.push([text, r.status, r.body.reason]);
      expect([text, r.status, r.body.error, r.body.reason]).toEqual([text, 400, "SQL_FORBIDDEN", reason]);
    }
    expect(got.length).toBeGreaterThanOrEqual(35);
  });

  test("nothing was written, no setting changed, no file content or path came back, never a 500", async () => {
    expect(existsSync(dataDirCopy())).toBe(false);
    expect(existsSync(join(a.app.lake!.dataPathResolved(), "export"))).toBe(false);
    const written = readdirSync(a.app.lake!.dataPathResolved(), { recursive: true }).map(String);
    expect(written.filter((f) => /pwned|export/.test(f))).toEqual([]);
    expect(written.filter((f) => f.endsWith(".parquet")).length).toBeGreaterThan(0);
    // the views are still there and the lock still holds
    expect(rowsOf(await sql("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call"))).toEqual([{ n: 10 }]);
    await expect(a.app.lake!.query("SELECT * FROM read_text('/etc/hostname')")).rejects.toThrow(
      /Permission|disabled|not allowed/i,
    );
    const all = bodies.join("\n");
    expect(all).not.toContain("root:x:0:0");
    if (existsSync("/etc/hostname")) {
      const host = readFileSync("/etc/hostname", "utf8").trim();
      if (host.length >= 8) expect(all).not.toContain(host);
    }
    expect(all).not.toContain('allowed_directories":');
    for (const b of bodies) if (!b.includes("pwned") && !b.includes("/export")) expect(b).not.toContain(dir.path);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(a.app.metrics.render()).toMatch(/svc_sql_rejected_total\{reason="forbidden_function"\} [1-9]/);
  });
});

describe("the engine's parser check stands behind the guard", () => {
  test("readOnly lets DuckDB's parser refuse several statements or a non-SELECT, before anything runs", async () => {
    const lake = a.app.lake!;
    const target = join(lake.dataPathResolved(), "engine-pwned.csv");
    await expect(
      lake.query(`SELECT 1; COPY (SELECT 1) TO '${target}'`, undefined, { readOnly: true }),
    ).rejects.toMatchObject({ code: "SQL_FORBIDDEN" });
    await expect(lake.query(`COPY (SELECT 1) TO '${target}'`, undefined, { readOnly: true })).rejects.toMatchObject({
      code: "SQL_FORBIDDEN",
    });
    await expect(lake.query("SET search_path = 'memory'", undefined, { readOnly: true })).rejects.toMatchObject({
      code: "SQL_FORBIDDEN",
    });
    expect(existsSync(target)).toBe(false);
    expect((await lake.query("SELECT 7 AS n", undefined, { readOnly: true })).rows).toEqual([{ n: 7 }]);
    // without readOnly the same multi-statement text runs: the check above is what stops it
    await lake.query(`SELECT 1; COPY (SELECT 1) TO '${target}'`);
    expect(existsSync(target)).toBe(true);
    rmSync(target);
  });
});

describe("statistics discovery", () => {
  test("databases, measurements and metrics list the lake's schemas, tables and typed columns", async () => {
    const dbs = await call("GET", "/statistics/databases");
    expect(dbs.status).toBe(200);
    const items = (dbs.body.data as { items: Array<{ name: string; measurements: number }> }).items;
    expect(items.map((d) => d.name)).toEqual(["main"]);
    expect(items[0]!.measurements).toBeGreaterThanOrEqual(3);

    const ms = await call("GET", "/statistics/measurements?db=main");
    const tables = (ms.body.data as { items: Array<Record<string, unknown>> }).items;
    const names = tables.map((t) => t.name as string);
    expect(names).toContain("hep_proto_1_call");
    expect(names).toContain("hep_proto_1_registration");
    expect(names.filter((n) => n.startsWith("mem_") || /__g\d+$/.test(n))).toEqual([]);
    expect(names).toEqual([...names].sort());
    expect(tables.find((t) => t.name === "hep_proto_1_call")).toMatchObject({
      qualified_name: "svc_lake.main.hep_proto_1_call",
      time_column: "timestamp",
      committed_rows: 10,
    });

    const metrics = await call("GET", "/statistics/metrics?db=main");
    const cols = (
      metrics.body.data as { items: Array<{ measurement: string; columns: Array<{ name: string; type: string }> }> }
    ).items;
    const callCols = cols.find((c) => c.measurement === "hep_proto_1_call")!.columns;
    expect(callCols).toContainEqual({ name: "session_id", type: "VARCHAR" });
    expect(callCols).toContainEqual({ name: "timestamp", type: "TIMESTAMP" });
    expect(callCols).toContainEqual({ name: "response_code", type: "INTEGER" });
    // every listed column is really selectable through POST /query
    const probe = await sql(`SELECT ${callCols.map((c) => `"${c.name}"`).join(", ")} FROM hep_proto_1_call LIMIT 1`);
    expect(probe.status).toBe(200);
    expect((probe.body.data as { columns: Array<{ name: string; type: string }> }).columns).toEqual(callCols);
  });

  test("unknown database is a 404, a missing db parameter a 400, no credential a 401", async () => {
    expect((await call("GET", "/statistics/measurements?db=nope")).status).toBe(404);
    expect((await call("GET", "/statistics/metrics?db=nope")).status).toBe(404);
    expect((await call("GET", "/statistics/measurements")).status).toBe(400);
    expect((await call("GET", "/statistics/databases", undefined, null)).status).toBe(401);
  });
});
