/**
 * What `meta.pagination.total` adds to a search (docs/BENCHMARKS.md "What the total costs"; docs/ARCHITECTURE.md "Totals and
 * paging of the search lists"): cut searches (newest 100) in-process on a lake made by
 * generate.ts. The count's own statements are timed where they run (every `Lake.query` is timed
 * and the `SELECT count(*)` ones are the count's), next to the whole search; the difference of two
 * whole searches with and without the count drowned in the row query's spread. Every answer is
 * checked: the total against one plain `COUNT(*)` of the window (unfiltered: equal; filtered: equal
 * up to count_cap, else the cap with total_exact false), and the rows equal to the same search run
 * without the count (`SearchRequest.count: false`).
 *
 *   bun bench/search/count.ts --dir /work/bench-data/search [--iterations 30] [--seed 1]
 *
 * Prints a markdown table (p50/p95 of the search and of its count). The appliance's lake
 * settings are run.ts's (production search defaults, no compaction or retention while measuring).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SearchService } from "../../src/api/index.ts";
import type { SearchRequest } from "../../src/api/search/service.ts";
import { createLogger } from "../../src/core/index.ts";
import { startAppliance } from "../../src/main.ts";
import { createSettingsModule } from "../../src/settings/index.ts";
import { testConfig } from "../../test/appliance.ts";
import { flags, loadAverage, readManifest } from "./manifest.ts";
import { summarize } from "./stats.ts";
import { seeded } from "../../test/fixtures/seeded.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const f = flags(process.argv.slice(2));
const dir = f.get("dir");
if (!dir) throw new Error("--dir is required");
const iterations = Number(f.get("iterations") ?? 30);
const manifest = readManifest(dir);
const startMs = Math.floor(manifest.startUs / 1000);
const endMs = Math.ceil(manifest.endUs / 1000);
const random = seeded(Number(f.get("seed") ?? 1));
const sample = () => manifest.samples[Math.floor(random() * manifest.samples.length)]!;

const config = testConfig(dir, {
  log: { level: "warn" },
  storage: {
    lakehouse: {
      flush_interval_sec: 30,
      tuning: { threads: 2, memory_limit: "4GB" },
      compaction: { enable: false },
      retention: { days: 0 },
    },
  },
});
const logger = createLogger({ test: true });
const app = await startAppliance(config, logger);
// The search's own settings store (mappings seeded as in the appliance), outside the data set.
const settings = createSettingsModule(
  { path: join(mkdtempSync(join(tmpdir(), "svc-count-bench-")), "settings.db"), games: false },
  logger,
);
await settings.module.start();
const lake = app.lake!;
/** Wall time of the count statements of the search running now. */
let countMs = 0;
const query = lake.query.bind(lake);
lake.query = async (sql, params, opts) => {
  const t = performance.now();
  try {
    return await query(sql, params, opts);
  } finally {
    if (sql.startsWith("SELECT count(*) AS n FROM (")) countMs += performance.now() - t;
  }
};
const search = new SearchService(
  lake,
  settings.store,
  config.storage.lakehouse.search,
  config.coordinator.query_timeout_sec * 1000,
);

interface Scenario {
  name: string;
  filter: () => Record<string, unknown>;
  window: () => { fromMs: number; toMs: number };
  /** The reference count's WHERE beyond the window, with its parameters from $3. */
  where: (filter: Record<string, unknown>) => { sql: string; params: string[] };
}
const none = () => ({ sql: "true", params: [] });
const scenarios: Scenario[] = [
  {
    name: "no filter, last 24 h",
    filter: () => ({}),
    window: () => ({ fromMs: endMs - DAY_MS, toMs: endMs }),
    where: none,
  },
  {
    name: "no filter, 24 h ending earlier",
    filter: () => ({}),
    window: () => {
      const to = endMs - HOUR_MS - Math.floor(random() * (endMs - startMs - DAY_MS - HOUR_MS));
      return { fromMs: to - DAY_MS, toMs: to };
    },
    where: none,
  },
  { name: "no filter, 7 days", filter: () => ({}), window: () => ({ fromMs: startMs, toMs: endMs }), where: none },
  {
    name: "method INVITE, last 24 h (capped)",
    filter: () => ({ method: "INVITE" }),
    window: () => ({ fromMs: endMs - DAY_MS, toMs: endMs }),
    where: () => ({ sql: "method = $3", params: ["INVITE"] }),
  },
  {
    name: "from_user, 7 days",
    filter: () => ({ from_user: sample().caller }),
    window: () => ({ fromMs: startMs, toMs: endMs }),
    where: (fl) => ({ sql: "caller = $3", params: [String(fl.from_user)] }),
  },
];

async function referenceCount(
  w: { fromMs: number; toMs: number },
  where: { sql: string; params: string[] },
): Promise<number> {
  const r = await lake.query(
    `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE "timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT) AND ${where.sql}`,
    [w.fromMs * 1000, w.toMs * 1000, ...where.params],
  );
  return Number(r.rows[0]!.n);
}

const rows: string[] = [
  "| search (newest 100) | whole search p50 / p95 ms | its count p50 / p95 ms | wrong answers | load |",
  "|---|---|---|---|---|",
];
const cap = config.storage.lakehouse.search.count_cap;
try {
  for (const sc of scenarios) {
    const whole: number[] = [];
    const counts: number[] = [];
    const errors: string[] = [];
    const loads = [loadAverage()];
    for (let i = 0; i <= iterations; i++) {
      const filter = sc.filter();
      const req: SearchRequest = { protoType: 1, eventType: "call", filter, ...sc.window(), limit: 100 };
      // The first round warms the caches and is not timed.
      countMs = 0;
      const t = performance.now();
      const a = await search.run(req);
      if (i > 0) whole.push(performance.now() - t), counts.push(countMs);
      const b = await search.run({ ...req, count: false });
      if (JSON.stringify(a.items.map((x) => x.uuid)) !== JSON.stringify(b.items.map((x) => x.uuid)))
        errors.push("rows differ with and without the count");
      const want = await referenceCount(req, sc.where(filter));
      const filtered = Object.keys(filter).length > 0;
      const ok = !a.hasMore
        ? a.total === want && a.totalExact
        : filtered && want > cap
          ? a.total === cap && !a.totalExact
          : a.total === want && a.totalExact;
      if (!ok) errors.push(`total ${a.total} (exact ${a.totalExact}), COUNT(*) ${want}`);
      loads.push(loadAverage());
    }
    const w = summarize(whole);
    const c = summarize(counts);
    rows.push(
      `| ${sc.name} | ${w.p50.toFixed(0)} / ${w.p95.toFixed(0)} | ${c.p50.toFixed(0)} / ${c.p95.toFixed(0)} | ${errors.length} | ${Math.max(...loads).toFixed(1)} |`,
    );
    if (errors.length) console.error(`${sc.name}: ${errors.slice(0, 3).join("; ")}`);
  }
} finally {
  await settings.module.stop();
  await app.stop();
}
console.log(rows.join("\n"));
