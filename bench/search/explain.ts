/**
 * Where the time of one search goes: the real SearchService / TransactionService on the Lake
 * (no HTTP), with every SQL statement they send timed and, with --analyze, profiled by
 * EXPLAIN ANALYZE (the SQL is exactly what src/api/search generates: the Lake's query() is wrapped,
 * nothing is rebuilt here). For Call-ID lookups it also counts what the Parquet statistics and
 * bloom filters can skip: files after the catalog's time pruning, row groups whose session_id
 * min/max hold the value, row groups the bloom filter cannot exclude.
 *
 * With --replay every statement is also run on a second, plain DuckDB instance whose settings are
 * what src/lake/engine.ts means to give its query connections (parquet_metadata_cache,
 * late_materialization_max_rows 1000, UTC, set GLOBAL) — a measuring device for the report, it
 * imports DuckDB directly for that reason only.
 *
 * Per run it also prints what the point-lookup pruning (src/lake/bloom-index.ts) looked at and
 * dropped, what the lookups by page read (src/lake/page-match.ts) and the time spent in the Lake's
 * methods outside DuckDB (scan plan, lookups by page, row fetch).
 *
 *   bun bench/search/explain.ts --dir /work/bench-data/search --query callid|from_user|from_user_7d|newest|newest_7d|newest_past|tx [--strategy newest] [--warm true]
 *     [--lazy-payload false] [--analyze] [--replay [--what-if-session-only]] [--repeat 3]
 * Run it while no appliance is using the lake (it takes the catalog lock).
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { engineTuning, lakeConfig } from "../../src/config/index.ts";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { Lake, type QueryOptions, type QueryResult, type SqlParams } from "../../src/lake/index.ts";
import { hepTableDef } from "../../src/ingest/hep/tables.ts";
import { createSettingsModule } from "../../src/settings/index.ts";
import { searchServices } from "../../src/api/search/index.ts";
import { testConfig } from "../../test/appliance.ts";
import { flags, loadAverage, readManifest } from "./manifest.ts";

const DAY_MS = 86_400_000;
const f = flags(process.argv.slice(2));
const dir = f.get("dir");
if (!dir) throw new Error("--dir is required");
const which = f.get("query") ?? "callid";
const analyze = f.get("analyze") === "true";
const replay = f.get("replay") === "true";
/** Replay only: drop the `OR cid IN (…)` branch of the call view's statements (what pushdown would gain). */
const sessionOnly = f.get("what-if-session-only") === "true";
const repeat = Number(f.get("repeat") ?? 3);
const manifest = readManifest(dir);
const startMs = Math.floor(manifest.startUs / 1000);
const endMs = Math.ceil(manifest.endUs / 1000);

interface Trace {
  sql: string;
  params: SqlParams | undefined;
  ms: number;
  replayMs?: number;
  replayPlan?: string;
  rows: number;
  plan?: string;
}
let traces: Trace[] = [];
let profiling = false;

/** Time spent outside DuckDB per run, by Lake method (the scan plan, lookups by page, row fetch). */
let spans = new Map<string, { ms: number; calls: number }>();
function span<T>(name: string, t0: number, v: T): T {
  const s = spans.get(name) ?? { ms: 0, calls: 0 };
  s.ms += performance.now() - t0;
  s.calls++;
  spans.set(name, s);
  return v;
}

/** The Lake with every statement timed (and profiled on request). */
class TracingLake extends Lake {
  override async scanPlan(...a: Parameters<Lake["scanPlan"]>): ReturnType<Lake["scanPlan"]> {
    const t = performance.now();
    return span("scanPlan", t, await super.scanPlan(...a));
  }
  override lookupGroups(...a: Parameters<Lake["lookupGroups"]>): ReturnType<Lake["lookupGroups"]> {
    return span("lookupGroups", performance.now(), super.lookupGroups(...a));
  }
  override matchRows(...a: Parameters<Lake["matchRows"]>): ReturnType<Lake["matchRows"]> {
    return span("matchRows", performance.now(), super.matchRows(...a));
  }
  override rowsByPage(...a: Parameters<Lake["rowsByPage"]>): ReturnType<Lake["rowsByPage"]> {
    const t = performance.now();
    return span(a[3] ? `rowsByPage(${a[3].join(",")})` : "rowsByPage(all)", t, super.rowsByPage(...a));
  }

  override async query(sql: string, params?: SqlParams, opts: QueryOptions = {}): Promise<QueryResult> {
    const t = performance.now();
    const r = await super.query(sql, params, opts);
    const trace: Trace = { sql, params, ms: performance.now() - t, rows: r.rows.length };
    if (profiling && analyze)
      trace.plan = String(
        (await super.query(`EXPLAIN ANALYZE ${sql}`, params, opts)).rows.map((x) => x.explain_value).join("\n"),
      );
    traces.push(trace);
    return r;
  }
}

/**
 * EXPLAIN ANALYZE boxes → one line per operator: name, rows, seconds, files read (the file name
 * lists and projections are dropped).
 */
function compactPlan(plan: string): string {
  const body = plan.slice(plan.indexOf("Total Time"));
  const cells = body.split("\n").map((l) => l.replace(/[│┌┐└┘─┬┴├┤]/g, " ").trim());
  const out: string[] = [`    ${cells[0]}`];
  let op: string[] = [];
  for (const c of cells.slice(1)) {
    if (/^[A-Z][A-Z_ ]+$/.test(c) && !/^(Top|Order By|Projections|Filters|Function|Filename)/.test(c)) {
      if (op.length) out.push(`    ${op.join(" | ")}`);
      op = [c];
    } else if (/rows$|^\d+\.\d+s$|Total Files Read|^Function:|^[A-Z_]+$/.test(c)) op.push(c);
  }
  if (op.length) out.push(`    ${op.join(" | ")}`);
  return out.join("\n");
}

/** File lists make the SQL unreadable: `read_parquet([…])` → `read_parquet(<N files>)`. */
const shorten = (sql: string) =>
  sql
    .replace(/read_parquet\(\[([^\]]*)\]\)/g, (_m, list: string) => `read_parquet(<${list.split(",").length} files>)`)
    .replace(/read_csv\([^)]*\)/g, "read_csv(<spool>)");

const config = testConfig(dir, {
  storage: {
    lakehouse: {
      search: { lake_topn_strategy: f.get("strategy") ?? "newest", lazy_payload: f.get("lazy-payload") !== "false" },
      compaction: { enable: false },
      retention: { days: 0 },
    },
  },
});
const logger = createLogger({ test: true });
const lake = new TracingLake({ config: lakeConfig(config), logger, metrics: new MetricsRegistry() });
await lake.start();
for (const kind of ["call", "registration", "default"] as const) await lake.defineTable(hepTableDef(1, kind));
if (f.get("warm") === "true") {
  // What the appliance does once started (src/lake/lookup-warm.ts): time and heap it takes.
  Bun.gc(true);
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const files = await lake.warmLookups();
  const ms = performance.now() - t0;
  Bun.gc(true);
  const mb = (process.memoryUsage().heapUsed - heap0) / 1e6;
  console.log(`warm-up: ${files} files in ${ms.toFixed(0)} ms, heap +${mb.toFixed(1)} MB`);
}
const { store: settings, module: settingsModule } = createSettingsModule(
  { path: config.coordinator.settings_db_path, games: false },
  logger,
);
await settingsModule.start();
const { search, transactions } = searchServices({ lake, settings, config });

/** The replay instance: engine.ts's intended settings, applied to every connection (GLOBAL). */
let replayCon: DuckDBConnection | undefined;
if (replay) {
  const inst = await DuckDBInstance.create(":memory:", {
    threads: String(engineTuning(config).threads),
    memory_limit: config.storage.lakehouse.tuning.memory_limit,
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  replayCon = await inst.connect();
  for (const sql of [
    "SET GLOBAL TimeZone = 'UTC'",
    "SET GLOBAL preserve_insertion_order = false",
    "SET GLOBAL late_materialization_max_rows = 1000",
    "SET GLOBAL parquet_metadata_cache = true",
  ])
    await replayCon.run(sql);
}
async function replayMs(tr: Trace): Promise<number> {
  const con = replayCon!;
  const params = tr.params as Parameters<DuckDBConnection["runAndReadAll"]>[1];
  const sql = sessionOnly ? tr.sql.replace(/ OR cid IN \([^)]*\)/g, "") : tr.sql;
  await con.runAndReadAll(sql, params); // warm the metadata cache like a long-running process
  const t = performance.now();
  await con.runAndReadAll(sql, params);
  const ms = performance.now() - t;
  if (analyze)
    tr.replayPlan = (await con.runAndReadAll(`EXPLAIN ANALYZE ${sql}`, params))
      .getRowObjectsJson()
      .map((x) => String(x.explain_value))
      .join("\n");
  return ms;
}

const samples = manifest.samples;
const twoLeg = samples.filter((s) => s.legs === 2);
const pick = <T>(xs: readonly T[], i: number): T => xs[(i * 7919) % xs.length]!;

async function once(i: number): Promise<string> {
  switch (which) {
    case "callid": {
      const s = pick(samples, i);
      await search.run({
        protoType: 1,
        eventType: "call",
        filter: { call_id: s.callId },
        fromMs: startMs,
        toMs: endMs,
        limit: 100,
      });
      return s.callId;
    }
    case "from_user": {
      const s = pick(samples, i);
      await search.run({
        protoType: 1,
        eventType: "call",
        filter: { from_user: s.caller },
        fromMs: endMs - DAY_MS,
        toMs: endMs,
        limit: 100,
      });
      return s.caller;
    }
    case "from_user_7d": {
      const s = pick(samples, i);
      await search.run({
        protoType: 1,
        eventType: "call",
        filter: { from_user: s.caller },
        fromMs: startMs,
        toMs: endMs,
        limit: 100,
      });
      return s.caller;
    }
    case "newest":
      await search.run({
        protoType: 1,
        eventType: "call",
        filter: {},
        fromMs: endMs - DAY_MS,
        toMs: endMs,
        limit: 100,
      });
      return "last 24 h";
    case "newest_7d":
      await search.run({
        protoType: 1,
        eventType: "call",
        filter: {},
        fromMs: startMs,
        toMs: endMs,
        limit: 100,
      });
      return "the whole 7 days";
    case "newest_past": {
      // 24 h ending at a time between one and six days before the newest data.
      const to = endMs - DAY_MS - ((i * 7919) % 5) * DAY_MS - ((i * 104729) % DAY_MS);
      await search.run({ protoType: 1, eventType: "call", filter: {}, fromMs: to - DAY_MS, toMs: to, limit: 100 });
      return `24 h ending ${new Date(to).toISOString()}`;
    }
    case "tx": {
      const s = pick(twoLeg, i);
      const t = Math.floor(s.t0Us / 1000);
      const from = Math.max(startMs, Math.min(t - DAY_MS / 2, endMs - DAY_MS));
      await transactions.messages({
        sessionIds: [s.callId],
        protoType: 1,
        eventType: "call",
        fromMs: from,
        toMs: from + DAY_MS,
        excludeIps: [],
        username: "admin",
      });
      return s.callId;
    }
    default:
      throw new Error(`--query ${which}: callid, from_user, from_user_7d, newest, newest_past or tx`);
  }
}

/** Catalog pruning, min/max and bloom filter reach for one Call-ID over the week. */
async function callIdReach(callId: string): Promise<void> {
  const key = "main.hep_proto_1_call";
  const all = await lake.files(key);
  const scan = await lake.scanSql(key, { fromUs: startMs * 1000, toUs: endMs * 1000 });
  const files = [...scan.matchAll(/'([^']+\.parquet)'/g)].map((m) => m[1]!);
  const list = files.map((p) => `'${p}'`).join(", ");
  const r = (
    await lake.query(
      `WITH mm AS (SELECT file_name, row_group_id, stats_min_value <= $1 AND stats_max_value >= $1 AS hit FROM parquet_metadata([${list}]) WHERE path_in_schema = 'session_id'),
            bf AS (SELECT file_name, row_group_id, NOT bloom_filter_excludes AS hit FROM parquet_bloom_probe([${list}], 'session_id', $1))
       SELECT count(*) AS row_groups, count(*) FILTER (WHERE mm.hit) AS minmax, count(*) FILTER (WHERE bf.hit) AS bloom,
              count(*) FILTER (WHERE mm.hit AND bf.hit) AS both, count(DISTINCT mm.file_name) FILTER (WHERE mm.hit AND bf.hit) AS files_left
       FROM mm JOIN bf USING (file_name, row_group_id)`,
      [callId],
    )
  ).rows[0]!;
  console.log(
    `reach of ${callId}: ${all.length} live files, ${files.length} after the catalog's time pruning; ${r.row_groups} row groups; ` +
      `session_id min/max keep ${r.minmax}, the bloom filters keep ${r.bloom}, both together ${r.both} (in ${r.files_left} files)`,
  );
}

for (let i = 0; i < repeat; i++) {
  traces = [];
  spans = new Map();
  const matched0 = lake.matchStats();
  profiling = i === repeat - 1;
  const load = loadAverage();
  const lookups0 = lake.lookupStats();
  const t = performance.now();
  const target = await once(i);
  const total = performance.now() - t;
  const lookups1 = lake.lookupStats();
  if (replay && profiling) for (const tr of traces) tr.replayMs = await replayMs(tr);
  const replayed =
    traces.every((t) => t.replayMs !== undefined) && replay && profiling
      ? `; replayed with the intended settings: ${traces.reduce((a, t) => a + (t.replayMs ?? 0), 0).toFixed(0)} ms`
      : "";
  console.log(
    `\n#${i + 1} ${which} ${target}: ${total.toFixed(0)} ms in ${traces.length} statements (load ${load})${replayed}`,
  );
  if (lookups0 && lookups1 && lookups1.files > lookups0.files)
    console.log(
      `  lookup pruning: ${lookups1.files - lookups0.files} files looked at, ${lookups1.filesDropped - lookups0.filesDropped} dropped; ${lookups1.rowGroups - lookups0.rowGroups} row groups checked, ${lookups1.bloomReads - lookups0.bloomReads} bloom filters read from disk`,
    );
  const matched1 = lake.matchStats();
  if (matched0 && matched1 && matched1.files > matched0.files)
    console.log(
      `  lookups by page: ${matched1.files - matched0.files} files, ${matched1.groups - matched0.groups} row groups, ${matched1.pages - matched0.pages} pages read, ${matched1.refused - matched0.refused} files refused`,
    );
  if (spans.size > 0)
    console.log(`  outside DuckDB: ${[...spans].map(([n, s]) => `${n} ${s.ms.toFixed(1)} ms/${s.calls}`).join(", ")}`);
  for (const tr of traces) {
    const again = tr.replayMs === undefined ? "" : ` (intended settings: ${tr.replayMs.toFixed(1)} ms)`;
    console.log(`  ${tr.ms.toFixed(1).padStart(8)} ms${again}  ${tr.rows} rows  ${shorten(tr.sql).slice(0, 400)}`);
    if (tr.plan) console.log(compactPlan(tr.plan));
    if (tr.replayPlan) console.log(`   with the intended settings:\n${compactPlan(tr.replayPlan)}`);
  }
  if (which === "callid" && profiling) await callIdReach(target);
}
await lake.stop();
await settingsModule.stop();
