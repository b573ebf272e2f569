/**
 * Peak RSS of two things wide rows make big (docs/BENCHMARKS.md "Query and compaction memory"):
 *  - query: `SELECT string_agg(payload, '') FROM ce_hep` through POST /query over 120 000 rows
 *    with a 2 KB header each, the engine caps at their defaults (tuning.memory_limit 4GB);
 *  - compaction: the same 120 000 rows in 8 flush files, maintenance cycles at the default
 *    compaction.memory_limit (224MB) until nothing changes (at most 5).
 * The appliance (or the lake) runs in this process; peak RSS is VmHWM, reset before each case
 * (/proc/self/clear_refs). The script only uses keys every version has, so it runs unchanged on
 * an older checkout for the "before" figures.
 * Run: ./node_modules/.bin/bun bench/wide-rows-memory.ts [query|compaction|both]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { sha256Hex } from "../src/auth/index.ts";
import type { Lake } from "../src/lake/index.ts";
import { startTestAppliance } from "../test/appliance.ts";
import { tempDir } from "../test/harness.ts";
import { DEF, day, KEY, metricValue, openLake, pad } from "../test/integration/compaction-helpers.ts";

const mode = process.argv[2] ?? "both";
const ROWS = 120_000;
const FILES = 8;
const HEADER = `X-Long-Header: ${"h".repeat(2000)}`;
const PASSWORD = "bench-wide-rows-password";

const kb = (field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
const mib = (n: number) => Math.round(n);

async function writeRows(lake: Lake): Promise<void> {
  const t0 = day(-1).at(1);
  for (let f = 0, i = 0; f < FILES; f++) {
    for (let r = 0; r < ROWS / FILES; r++, i++)
      lake
        .row(KEY)!
        .time(t0 + i)
        .str(`call-${i % 997}`)
        .str(`${HEADER}|${i}|${pad(i, 4)}`)
        .end();
    await lake.sync();
    await lake.flush();
  }
}

async function benchQuery(): Promise<void> {
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    storage: {
      lakehouse: {
        flush_interval_sec: 3600,
        batch_size: 1_000_000,
        compaction: { enable: false },
        tuning: { threads: 2, memory_limit: "4GB" },
      },
    },
  });
  const lake = a.app.lake!;
  await lake.defineTable(DEF);
  await writeRows(lake);
  const base = `${a.app.coordinatorUrl}/api/v4`;
  const login = await fetch(`${base}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const post = async (sql: string) => {
    const r = await fetch(`${base}/query`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ sql }),
    });
    return { status: r.status, body: (await r.text()).slice(0, 240) };
  };
  for (const sql of ["SELECT string_agg(payload, '') AS s FROM ce_hep", "SELECT count(*) AS n FROM ce_hep"]) {
    Bun.gc(true);
    const idle = kb("VmRSS");
    writeFileSync("/proc/self/clear_refs", "5");
    const t0 = performance.now();
    const r = await post(sql);
    const ms = Math.round(performance.now() - t0);
    console.log(
      JSON.stringify({
        case: "query",
        sql,
        status: r.status,
        answer: r.body,
        ms,
        rss_before_mib: mib(idle),
        rss_peak_mib: mib(kb("VmHWM")),
        rss_after_mib: mib(kb("VmRSS")),
      }),
    );
  }
}

async function benchCompaction(): Promise<void> {
  await using dir = tempDir();
  {
    await using h = await openLake(dir.path, { enable: false });
    await writeRows(h.lake);
  }
  await using h = await openLake(dir.path, { min_age_sec: 0 });
  Bun.gc(true);
  const idle = kb("VmRSS");
  writeFileSync("/proc/self/clear_refs", "5");
  const t0 = performance.now();
  const cycles: Array<{ merged: number; files: number }> = [];
  for (let c = 0; c < 5; c++) {
    const r = await h.lake.maintain();
    cycles.push({ merged: r.merged, files: (await h.lake.files(KEY)).length });
    if (c > 0 && r.merged === 0) break;
  }
  const rows = Number((await h.lake.query(`SELECT count(*) AS n FROM svc_lake.main.ce_hep`)).rows[0]!.n);
  console.log(
    JSON.stringify({
      case: "compaction",
      cycles,
      rows,
      ms: Math.round(performance.now() - t0),
      rollbacks: metricValue(h.metrics, "svc_lake_compaction_rollbacks_total"),
      oom_splits: metricValue(h.metrics, "svc_lake_compaction_oom_splits_total"),
      merges: metricValue(h.metrics, "svc_lake_compaction_merges_total"),
      rss_idle_mib: mib(idle),
      rss_peak_mib: mib(kb("VmHWM")),
    }),
  );
}

if (mode === "query" || mode === "both") await benchQuery();
if (mode === "compaction" || mode === "both") await benchCompaction();
