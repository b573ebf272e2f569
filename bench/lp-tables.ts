/**
 * Line-protocol table creation as tables accumulate (docs/BENCHMARKS.md "Line protocol: many tables"): the real appliance in this process
 * (loopback listeners, receiver on), new tables created one write each over HTTP in batches of
 * 100, and after each batch the latency of `POST /api/v4/query` over one table and of a write to an
 * existing table.
 *   bun bench/lp-tables.ts --tables 500 [--batch 100] [--max-tables 100000] [--all 1]
 * Prints one JSON line per batch: tables so far, seconds for the batch, ms per table, query p50/max
 * and an existing-table write. `--max-tables` sets ingest.line_protocol.max_tables (default 1000:
 * the cap answers beyond it). `--all 1`: after each batch one request with a point for every table
 * so far, as a Telegraf interval would send (every table then has rows to flush).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../src/auth/index.ts";
import { configureLogging, createLogger } from "../src/core/index.ts";
import { startAppliance } from "../src/main.ts";
import { testConfig } from "../test/appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const total = Number(args.get("tables") ?? "500");
const batch = Number(args.get("batch") ?? "100");
const maxTables = args.get("max-tables");
const all = args.get("all") === "1";
const PASSWORD = "lp-tables-bench-password";
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-lp-tables-"));

configureLogging({ level: "error" });
const lp: Record<string, unknown> = { enable: true, listen: "127.0.0.1:0" };
if (maxTables !== undefined) lp.max_tables = Number(maxTables);
const app = await startAppliance(
  testConfig(dir, {
    log: { level: "error" },
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    ingest: { line_protocol: lp },
    storage: { lakehouse: { flush_interval_sec: 10 } },
  }),
  createLogger({ bench: "lp-tables" }),
);
try {
  const lpUrl = app.lineProtocol!.url();
  const api = `${app.coordinatorUrl}/api/v4`;
  const login = await fetch(`${api}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const T0 = Math.floor(Date.now() / 1000);
  /** False when the table cap refused the point (400, table_limit). */
  const write = async (table: string, i: number): Promise<boolean> => {
    const r = await fetch(`${lpUrl}/write?db=bench&precision=s`, {
      method: "POST",
      body: `${table},host=h${i % 7},dc=eu v=${i}i,w=${i / 3},ok=true,msg="m${i}" ${T0 + i}`,
    });
    const text = await r.text();
    if (r.status === 400 && text.includes("table_limit")) return false;
    if (r.status !== 204) throw new Error(`write ${table}: ${r.status} ${text}`);
    return true;
  };
  let refused = 0;
  const query = async () => {
    const t = performance.now();
    const r = await fetch(`${api}/query`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ sql: "SELECT count(*) AS n FROM svc_lake.bench.t0" }),
    });
    if (r.status !== 200) throw new Error(`query: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
    return performance.now() - t;
  };
  for (let done = 0; done < total; ) {
    const t = performance.now();
    for (let k = 0; k < batch && done < total; k++, done++) if (!(await write(`t${done}`, done))) refused++;
    const secs = (performance.now() - t) / 1000;
    let allMs: number | undefined;
    let flushMs: number | undefined;
    if (all) {
      const body = Array.from(
        { length: done - refused },
        (_, i) => `t${i},host=h${i % 7},dc=eu v=${i}i,w=${i / 3},ok=true,msg="m${i}" ${T0 + done + i}`,
      ).join("\n");
      const a = performance.now();
      const r = await fetch(`${lpUrl}/write?db=bench&precision=s`, { method: "POST", body });
      if (r.status !== 204) throw new Error(`write all: ${r.status} ${await r.text()}`);
      allMs = performance.now() - a;
      const f = performance.now();
      await app.lake!.flush();
      flushMs = performance.now() - f;
    }
    const q: number[] = [];
    for (let k = 0; k < 5; k++) q.push(await query());
    q.sort((a, b) => a - b);
    const w = performance.now();
    await write("t0", done);
    const existing = performance.now() - w;
    console.log(
      JSON.stringify({
        tables: done - refused,
        ...(refused > 0 ? { refused_by_cap: refused } : {}),
        batch_s: Number(secs.toFixed(2)),
        ms_per_table: Number(((secs * 1000) / batch).toFixed(1)),
        query_p50_ms: Number(q[2]!.toFixed(1)),
        query_max_ms: Number(q[4]!.toFixed(1)),
        existing_write_ms: Number(existing.toFixed(1)),
        ...(allMs !== undefined
          ? { write_all_tables_ms: Math.round(allMs), flush_all_tables_ms: Math.round(flushMs ?? 0) }
          : {}),
        rss_mb: Math.round(process.memoryUsage().rss / 1e6),
      }),
    );
  }
} finally {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
}
