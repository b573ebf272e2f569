/**
 * Cost of the read-only SQL checks per user query (docs/ARCHITECTURE.md "User SQL: the read-only
 * guard"): the token guard alone, the cross-check with DuckDB's parse (one `json_serialize_sql` on
 * a query connection), and, for scale, running the same statement over a one-row table.
 * Run: ./node_modules/.bin/bun bench/sql-guard.ts [seconds per measurement, default 2]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../src/lake/engine.ts";
import { crossCheckWithDuckDb } from "../src/lake/query/parse-check.ts";
import { checkReadOnlySql } from "../src/lake/query/sql-guard.ts";

const seconds = Number(process.argv[2] ?? 2);
const allowedTables = new Set(["svc_lake.main.hep_proto_1_call"]);
const QUERIES: Record<string, string> = {
  simple: "SELECT method, count(*) AS n FROM hep_proto_1_call GROUP BY method ORDER BY n DESC",
  cteJoin:
    "WITH calls AS (SELECT session_id, min(timestamp) AS t0 FROM hep_proto_1_call GROUP BY 1) " +
    "SELECT c.session_id, count(*) AS n FROM calls c JOIN hep_proto_1_call h USING (session_id) WHERE h.response_code >= 400 GROUP BY 1 ORDER BY 2 DESC LIMIT 10",
};

async function perOp(fn: () => unknown): Promise<number> {
  for (let i = 0; i < 50; i++) await fn();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await fn();
    n++;
  }
  return (performance.now() - t0) / n;
}

const dir = mkdtempSync(join(tmpdir(), "svc-bench-sql-guard-"));
const engine = await Engine.open({
  threads: 1,
  memoryLimit: "256MB",
  tempDirectory: join(dir, "tmp"),
  allowedDirectories: [dir],
  queryConnections: 1,
});
try {
  await engine.ddl(
    "CREATE TABLE svc_lake.main.hep_proto_1_call AS SELECT 'a@x' AS session_id, 'INVITE' AS method, 486 AS response_code, now() AS timestamp",
  );
  const run = (sql: string, params: string[]) => engine.query(sql, params);
  for (const [name, sql] of Object.entries(QUERIES)) {
    const checked = checkReadOnlySql(sql, { allowedTables });
    if (!checked.ok) throw new Error(`${name}: ${checked.detail}`);
    const wrapped = `SELECT * FROM (${checked.value.sql}) AS svc_query LIMIT 1001`;
    const guard = await perOp(() => checkReadOnlySql(sql, { allowedTables }));
    const parse = await perOp(() => crossCheckWithDuckDb(run, wrapped, checked.value.tables));
    const exec = await perOp(() => engine.query(wrapped, undefined, { readOnly: true }));
    console.log(
      `${name.padEnd(8)} guard ${(guard * 1000).toFixed(0)} µs  DuckDB parse cross-check ${(parse * 1000).toFixed(0)} µs  run over 1 row ${(exec * 1000).toFixed(0)} µs`,
    );
  }
} finally {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
}
