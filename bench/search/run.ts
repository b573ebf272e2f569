/**
 * Search benchmark (docs/BENCHMARKS.md "Search over 7 days / 100 M rows"): the real appliance (`src/main.ts serve`, a child process) on
 * a lake made by generate.ts, timed end to end over HTTP from this process:
 *   - exact Call-ID over the whole week           POST /api/v4/transactions/search  filter.call_id
 *   - from_user over 24 h and over the week        filter.from_user
 *   - newest 100 in a 24 h window, no filter       each storage.lakehouse.search.lake_topn_strategy,
 *     ending at the newest data ("now") and ending at a random earlier time, and over the 7 days
 *     (newest and from_user: also with `full` for comparison)
 *   - the call view of a 2-leg call                POST /api/v4/transactions/messages (24 h, week)
 * Per scenario: a fresh process answers the first query (cold; with --evict the data files are
 * also dropped from the OS page cache first, posix_fadvise DONTNEED, in a separate fresh start),
 * then, once its lookup index warm-up after start has ended (src/lake/lookup-warm.ts), --iterations
 * queries with random targets (warm). Every answer is checked (item counts,
 * Call-IDs, order; newest 100 row by row against one plain ordered SQL statement), so a fast
 * wrong answer cannot pass.
 *
 *   bun bench/search/run.ts --dir /work/bench-data/search [--iterations 50] [--evict] [--only callid_7d,tx_2leg_24h] [--seed 1]
 *     [--lazy-payload false]   (storage.lakehouse.search.lazy_payload; default true as in production)
 *     [--cache-files true]     (read main.hep_proto_1_call's files right before each scenario's warm
 *                               iterations: appliance.ts cacheTableFiles)
 *
 * Prints a markdown table and writes <dir>/results-<time>.json. The machine is shared: the load
 * average is sampled every second during each scenario and reported with it.
 */
import { join } from "node:path";
import {
  type Api,
  type Appliance,
  cpuMs,
  cacheTableFiles,
  evictPageCache,
  machineBusyMs,
  startAppliance,
  type Strategy,
} from "./appliance.ts";
import { flags, loadAverage, readManifest, type Manifest, type SampleCall } from "./manifest.ts";
import { summarize, type Summary } from "./stats.ts";
import { seeded } from "../../test/fixtures/seeded.ts";
import { MAX_SPAN_US } from "./dataset.ts";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const f = flags(process.argv.slice(2));
const dir = f.get("dir");
if (!dir) throw new Error("--dir is required");
const iterations = Number(f.get("iterations") ?? 50);
const evict = f.get("evict") === "true";
const only = f.get("only")?.split(",");
const lazyPayload = f.get("lazy-payload") !== "false";
const cacheFiles = f.get("cache-files") === "true";
const manifest = readManifest(dir);
const startMs = Math.floor(manifest.startUs / 1000);
const endMs = Math.ceil(manifest.endUs / 1000);

/** The same --seed picks the same targets. */
const random = seeded(Number(f.get("seed") ?? 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const twoLeg = manifest.samples.filter((s) => s.legs === 2);

/**
 * One query: returns why the answer is wrong, undefined when it is right, or a check that needs
 * more requests (run after the clock stops).
 */
type Query = (api: Api) => Promise<string | undefined | (() => Promise<string | undefined>)>;

interface Scenario {
  name: string;
  what: string;
  strategy: Strategy;
  next: () => Query;
}

const search =
  (filter: Record<string, unknown>, fromMs: number, toMs: number, limit = 100) =>
  (api: Api) =>
    api.post("/transactions/search", {
      filter: { proto_type: 1, event_type: "call", ...filter },
      param: { limit },
      timestamp: { from: fromMs, to: toMs },
    });

const failure = (r: Awaited<ReturnType<Api["post"]>>) =>
  r.status === 200 ? undefined : `HTTP ${r.status} ${r.json.error ?? ""} ${r.json.message ?? ""}`.trim();

/** A call still running at the end of the data set has only its first messages (dataset.ts Slice). */
const stillRunning = (s: SampleCall) => s.t0Us > manifest.endUs - MAX_SPAN_US;

function callIdQuery(s: SampleCall): Query {
  return async (api) => {
    const r = await search({ call_id: s.callId }, startMs, endMs)(api);
    const items = r.json.data?.items ?? [];
    const want = s.answered ? 7 : 5;
    const running = stillRunning(s);
    const ok = running ? items.length >= 1 && items.length <= want : items.length === want;
    return (
      failure(r) ??
      (!ok || items.some((i) => i.sid !== s.callId)
        ? `call ${s.callId}: ${items.length} rows, want ${running ? `1..${want} (still running at the end)` : want}`
        : undefined)
    );
  };
}

function fromUserQuery(s: SampleCall, fromMs: number, toMs: number): Query {
  return async (api) => {
    const r = await search({ from_user: s.caller }, fromMs, toMs)(api);
    const items = r.json.data?.items ?? [];
    return (
      failure(r) ??
      (items.length === 0 || items.some((i) => i.caller !== s.caller)
        ? `from_user ${s.caller}: ${items.length} rows or wrong caller`
        : undefined)
    );
  };
}

function newestQuery(toMs: number, windowMs = DAY_MS): Query {
  return async (api) => {
    const fromMs = toMs - windowMs;
    const r = await search({}, fromMs, toMs)(api);
    const items = r.json.data?.items ?? [];
    const ts = items.map((i) => Number(i.timestamp_us));
    const sorted = ts.every((t, i) => i === 0 || t <= ts[i - 1]!);
    const inWindow = ts.every((t) => t <= toMs * 1000 && t >= fromMs * 1000);
    const error =
      failure(r) ??
      (items.length !== 100 || !sorted || !inWindow
        ? `newest: ${items.length} rows, sorted ${sorted}, in window ${inWindow}`
        : undefined);
    return (
      error ??
      (async () => {
        // Untimed: the exact newest 100 from one plain ordered statement over the table's view
        // (what `full` runs), ties broken by uuid as the search breaks them; compared row by row.
        const ref = await api.post("/query", {
          sql: `SELECT epoch_us(timestamp) AS ts, uuid FROM svc_lake.main.hep_proto_1_call WHERE timestamp BETWEEN make_timestamp(${fromMs * 1000}) AND make_timestamp(${toMs * 1000}) ORDER BY timestamp DESC, uuid DESC LIMIT 100`,
          limit: 100,
        });
        if (ref.status !== 200) return `reference query: ${failure(ref)}`;
        const want = ((ref.json.data as { rows?: Array<{ ts: number; uuid: string }> } | undefined)?.rows ?? []).map(
          (x) => `${Number(x.ts)}|${x.uuid}`,
        );
        const got = items.map((i) => `${Number(i.timestamp_us)}|${i.uuid}`);
        const same = want.length === got.length && want.every((w, i) => w === got[i]);
        return same
          ? undefined
          : `newest is not exact: oldest returned ${new Date(Math.min(...ts) / 1000).toISOString()}, oldest of the true newest 100 ${new Date(Math.min(...want.map((w) => Number(w.split("|")[0]))) / 1000).toISOString()}`;
      })
    );
  };
}

function txQuery(s: SampleCall, fromMs: number, toMs: number): Query {
  return async (api) => {
    const r = await api.post("/transactions/messages", {
      session_id: s.callId,
      proto_type: 1,
      event_type: "call",
      timestamp: { from: fromMs, to: toMs },
    });
    const items = r.json.data?.items ?? [];
    const sessions = new Set(r.json.data?.sessions ?? []);
    const want = 2 * (s.answered ? 7 : 5);
    const running = stillRunning(s);
    const ok =
      sessions.size === 2 &&
      sessions.has(s.callId) &&
      sessions.has(`${s.callId}_b2b-1`) &&
      (running ? items.length >= 2 && items.length <= want : items.length === want);
    return (
      failure(r) ??
      (ok
        ? undefined
        : `tx ${s.callId}: ${items.length} rows (want ${running ? `2..${want}, still running at the end` : want}), sessions ${[...sessions].join(" ")}`)
    );
  };
}

/** A 24 h window around the call, inside the data set (what the UI sends after a 24 h search). */
const dayAround = (s: SampleCall) => {
  const t = Math.floor(s.t0Us / 1000);
  const from = Math.max(startMs, Math.min(t - 12 * HOUR_MS, endMs - DAY_MS));
  return { from, to: from + DAY_MS };
};
/** Window ends between one hour before the newest data and one day after the oldest. */
const pastEnd = () => endMs - HOUR_MS - Math.floor(random() * Math.max(0, endMs - startMs - DAY_MS - HOUR_MS));

/** Calls that began in the last 24 h: their caller has rows in that window by construction. */
const lastDay = manifest.samples.filter((s) => s.t0Us / 1000 >= endMs - DAY_MS && s.t0Us / 1000 < endMs);

const scenarios: Scenario[] = [
  {
    name: "callid_7d",
    what: "exact Call-ID, 7 days",
    strategy: "newest",
    next: () => callIdQuery(pick(manifest.samples)),
  },
  ...(["newest", "full"] as const).flatMap((st) => [
    {
      name: `from_user_24h${st === "newest" ? "" : `_${st}`}`,
      what: `from_user, last 24 h (${st})`,
      strategy: st,
      next: () => fromUserQuery(pick(lastDay.length ? lastDay : manifest.samples), endMs - DAY_MS, endMs),
    },
    {
      name: `from_user_7d${st === "newest" ? "" : `_${st}`}`,
      what: `from_user, 7 days (${st})`,
      strategy: st,
      next: () => fromUserQuery(pick(manifest.samples), startMs, endMs),
    },
  ]),
  ...(["newest", "stream", "chunked", "full"] as const).flatMap((st) => [
    {
      name: `newest_24h_now_${st}`,
      what: `newest 100, last 24 h (${st})`,
      strategy: st,
      next: () => newestQuery(endMs),
    },
    {
      name: `newest_24h_past_${st}`,
      what: `newest 100, 24 h ending at a random earlier time (${st})`,
      strategy: st,
      next: () => newestQuery(pastEnd()),
    },
    {
      name: `newest_7d_${st}`,
      what: `newest 100, the whole 7 days (${st})`,
      strategy: st,
      next: () => newestQuery(endMs, endMs - startMs),
    },
  ]),
  {
    name: "tx_2leg_24h",
    what: "call view of a 2-leg call, 24 h window",
    strategy: "newest",
    next: () => {
      const s = pick(twoLeg);
      const w = dayAround(s);
      return txQuery(s, w.from, w.to);
    },
  },
  {
    name: "tx_2leg_7d",
    what: "call view of a 2-leg call, 7-day window",
    strategy: "newest",
    next: () => txQuery(pick(twoLeg), startMs, endMs),
  },
];

/** Wall time of one query, and the appliance's CPU time during it (checks run after both stop). */
async function timed(a: Appliance, q: Query): Promise<{ ms: number; cpuMs: number; error: string | undefined }> {
  const c = cpuMs(a.pid);
  const t = performance.now();
  const out = await q(a.api);
  const ms = performance.now() - t;
  const used = cpuMs(a.pid) - c;
  return { ms, cpuMs: used, error: typeof out === "function" ? await out() : out };
}

interface Result {
  name: string;
  what: string;
  coldDiskMs: number | null;
  coldProcessMs: number;
  warm: Summary;
  serverCpuMsPerQuery: number;
  load: { start: number; max: number; mean: number };
  /** CPU cores used by other processes (machine busy time minus the appliance and this runner). */
  otherCores: number;
  errors: string[];
}

const results: Result[] = [];
for (const sc of scenarios) {
  if (only && !only.includes(sc.name)) continue;
  const errors: string[] = [];
  const note = (e: string | undefined) => e && errors.push(e);
  let coldDiskMs: number | null = null;
  if (evict) {
    const a = await startAppliance(dir, sc.strategy, lazyPayload);
    evictPageCache(dir);
    const c = await timed(a, sc.next());
    note(c.error);
    coldDiskMs = c.ms;
    await a.stop();
  }
  const a = await startAppliance(dir, sc.strategy, lazyPayload);
  const loads = [loadAverage()];
  const sampler = setInterval(() => loads.push(loadAverage()), 1000);
  const cold = await timed(a, sc.next());
  note(cold.error);
  await a.warmed();
  if (cacheFiles) cacheTableFiles(dir, "main.hep_proto_1_call");
  const cpu0 = cpuMs(a.pid);
  const own0 = cpuMs(process.pid);
  const busy0 = machineBusyMs();
  const wall0 = performance.now();
  const warm: number[] = [];
  let queryCpuMs = 0;
  for (let i = 0; i < iterations; i++) {
    const w = await timed(a, sc.next());
    note(w.error);
    warm.push(w.ms);
    queryCpuMs += w.cpuMs;
  }
  const serverCpuMs = cpuMs(a.pid) - cpu0;
  const serverCpuMsPerQuery = queryCpuMs / iterations;
  const otherCores =
    Math.max(0, machineBusyMs() - busy0 - serverCpuMs - (cpuMs(process.pid) - own0)) / (performance.now() - wall0);
  clearInterval(sampler);
  loads.push(loadAverage());
  await a.stop();
  const r: Result = {
    name: sc.name,
    what: sc.what,
    coldDiskMs,
    coldProcessMs: cold.ms,
    warm: summarize(warm),
    serverCpuMsPerQuery,
    load: { start: loads[0]!, max: Math.max(...loads), mean: loads.reduce((x, y) => x + y, 0) / loads.length },
    otherCores,
    errors,
  };
  results.push(r);
  const ms = (x: number | null) => (x === null ? "-" : x.toFixed(0));
  console.log(
    `${sc.name}: p50 ${ms(r.warm.p50)} ms, p95 ${ms(r.warm.p95)}, max ${ms(r.warm.max)}, cold ${ms(r.coldProcessMs)} (disk-cold ${ms(r.coldDiskMs)}), ` +
      `server CPU ${r.serverCpuMsPerQuery.toFixed(0)} ms/query, other processes ${r.otherCores.toFixed(2)} cores, load ${r.load.start}→max ${r.load.max}, wrong answers ${errors.length}${errors.length ? `: ${errors.slice(0, 3).join(" | ")}` : ""}`,
  );
}

const rows = manifest.tables.reduce((x, t) => x + t.rows, 0);
console.log(
  `\nData set: ${rows} rows over ${manifest.days} days (${manifest.tables.map((t) => `${t.table} ${t.rows} rows / ${t.files} files`).join(", ")})`,
);
console.log(
  `| query | n | p50 ms | p95 ms | max ms | cold (process) ms | cold (disk) ms | server CPU ms/query | other processes (cores) | load 1-min start / max | wrong answers |`,
);
console.log(`|---|---|---|---|---|---|---|---|---|---|---|`);
for (const r of results) {
  console.log(
    `| ${r.what} | ${r.warm.n} | ${r.warm.p50.toFixed(0)} | ${r.warm.p95.toFixed(0)} | ${r.warm.max.toFixed(0)} | ${r.coldProcessMs.toFixed(0)} | ${r.coldDiskMs === null ? "-" : r.coldDiskMs.toFixed(0)} | ${r.serverCpuMsPerQuery.toFixed(0)} | ${r.otherCores.toFixed(2)} | ${r.load.start.toFixed(2)} / ${r.load.max.toFixed(2)} | ${r.errors.length} |`,
  );
}
const out = join(dir, `results-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
await Bun.write(
  out,
  JSON.stringify(
    {
      manifest: { ...manifest, samples: manifest.samples.length } satisfies Omit<Manifest, "samples"> & {
        samples: number;
      },
      iterations,
      evict,
      lazyPayload,
      results,
    },
    null,
    1,
  ),
);
console.log(`\nresults: ${out}`);
