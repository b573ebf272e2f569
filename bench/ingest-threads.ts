/**
 * The whole HEP ingest path with N ingest threads, fed from memory (no sockets): each thread
 * replays distinct realistic INVITEs (bench/hep-packets.ts) through decode → SIP parse → rows →
 * hand-over, the main thread appends every batch to the lake's spool (durable: what kill -9 keeps)
 * and, with `--flush on`, DuckDB writes Parquet and the catalog commits as in the appliance.
 * Reports stored (accepted into the lake) msgs/s over the measured seconds and CPU per stage:
 * ingest threads (their own clocks), main thread (its clock), DuckDB and the rest (process − both).
 *   bun bench/ingest-threads.ts --threads 1,2 [--seconds 10] [--warmup 25] [--flush off|on] [--packets 16384] [--rate 0] [--spool-format csv|parquet]
 * `--rate` is per thread (0 = as fast as the thread runs). docs/BENCHMARKS.md "Ingest: several threads".
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { engineTuning, loadConfig } from "../src/config/index.ts";
import { MetricsRegistry, createLogger } from "../src/core/index.ts";
import { threadCpuSeconds } from "../src/core/index.ts";
import { createThreadedHepIngest } from "../src/ingest/index.ts";
import { Lake } from "../src/lake/index.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const threadCounts = (args.get("threads") ?? "1,2").split(",").map(Number);
const seconds = Number(args.get("seconds") ?? 10);
const flush = (args.get("flush") ?? "off") === "on";
const count = Number(args.get("packets") ?? 16384);
const rate = Number(args.get("rate") ?? 0);
// Seconds before the measured ones: JIT, first batches, first tables. Each Worker compiles its
// own code, and with every core busy that takes longer than with one thread and a core to spare:
// two threads on two cores settle after about 20 s (docs/BENCHMARKS.md "Parquet spool").
const warmup = Number(args.get("warmup") ?? 25);

// The frames every thread replays: distinct Call-IDs, branches, tags and numbers.
const src = packetSource("threads");
const tmp = src.template.slice();
const frames = new Uint8Array(count * src.template.length);
for (let i = 0; i < count; i++) frames.set(src.packet(i, tmp), i * src.template.length);

/** CPU ticks (1/100 s) per thread name of this process: Worker, Bun Pool (DuckDB's tasks, file I/O), JIT, GC helpers. */
function threadTicks(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    let st: string;
    try {
      st = readFileSync(`/proc/self/task/${tid}/stat`, "latin1");
    } catch {
      continue;
    }
    const raw = st.slice(st.indexOf("(") + 1, st.lastIndexOf(")")).replace(/[0-9]+$/, "#");
    const name = Number(tid) === process.pid ? "js-main" : raw;
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    out.set(name, (out.get(name) ?? 0) + Number(f[11]) + Number(f[12]));
  }
  return out;
}

async function run(threads: number) {
  const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-bench-threads-"));
  const { config } = loadConfig({
    env: {},
    json: {
      log: { level: "warn" },
      storage: {
        lakehouse: {
          catalog_path: `${dir}/catalog.sqlite`,
          data_path: `${dir}/lake/`,
          // Off: rows stay in the spool (durable) for the whole run; on: the appliance's 5 s flushes.
          flush_interval_sec: flush ? 5 : 3600,
          ...(flush ? {} : { batch_size: 100_000_000 }),
          max_buffered_rows: flush ? 2_000_000 : 100_000_000,
          tuning: { threads: 2, memory_limit: "2GB" },
          // --spool-format csv|parquet (default the config's: parquet).
          ...(args.has("spool-format") ? { spool_format: args.get("spool-format") } : {}),
        },
      },
    },
  });
  const logger = createLogger({ bench: true });
  const metrics = new MetricsRegistry();
  const lake = new Lake({ config: { ...config.storage.lakehouse, tuning: engineTuning(config) }, logger, metrics });
  await lake.start();
  const ingest = createThreadedHepIngest(
    config.ingest,
    lake,
    config.storage.lakehouse.max_buffered_rows,
    logger,
    metrics,
    {
      entry: new URL("../src/ingest/thread/worker.ts", import.meta.url),
      count: threads,
      spoolFormat: config.storage.lakehouse.spool_format,
      feed: { frames: frames.buffer.slice(0), ratePerSec: rate },
    },
  );
  for (const m of ingest.modules) await m.start();
  const stored = () => metrics.sumOf("svc_hep_rows_accepted_total");
  const dropped = () => metrics.sumOf("svc_hep_packets_dropped_total");
  const threadCpu = () => metrics.sumOf("svc_hep_thread_cpu_seconds_total");
  /** Per thread: [packets, CPU seconds] from the rendered series (svc_hep_thread_*{thread="i"}). */
  const perThread = () => {
    const text = metrics.render();
    const value = (name: string, i: number) =>
      Number(new RegExp(`^${name}\\{thread="${i}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    return Array.from(
      { length: threads },
      (_, i) => [value("svc_hep_thread_packets_total", i), value("svc_hep_thread_cpu_seconds_total", i)] as const,
    );
  };
  const sample = () => ({
    perThread: perThread(),
    ticks: threadTicks(),
    at: performance.now(),
    stored: stored(),
    dropped: dropped(),
    threads: threadCpu(),
    main: threadCpuSeconds() ?? 0,
    proc: process.cpuUsage(),
    rss: process.memoryUsage.rss(),
  });
  await Bun.sleep(warmup * 1000);
  const a = sample();
  let peakRss = 0;
  const t = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 200);
  await Bun.sleep(seconds * 1000);
  const b = sample();
  clearInterval(t);
  for (const m of [...ingest.modules].reverse()) await m.stop();
  await lake.stop();
  rmSync(dir, { recursive: true, force: true });
  const secs = (b.at - a.at) / 1000;
  const msgs = b.stored - a.stored;
  const procSec = (b.proc.user + b.proc.system - a.proc.user - a.proc.system) / 1e6;
  const ingestSec = b.threads - a.threads;
  const mainSec = b.main - a.main;
  const perMsgOf = (s: number, n: number) => Math.round((s / n) * 1e7) / 10;
  const perMsg = (s: number) => perMsgOf(s, msgs);
  return {
    threads,
    flush,
    stored_per_sec: Math.round(msgs / secs),
    dropped: b.dropped - a.dropped,
    us_per_msg: {
      process: perMsg(procSec),
      ingest_threads: perMsg(ingestSec),
      main_thread: perMsg(mainSec),
      duckdb_and_rest: perMsg(procSec - ingestSec - mainSec),
    },
    cores: {
      process: +(procSec / secs).toFixed(2),
      ingest_threads: +(ingestSec / secs).toFixed(2),
      main_thread: +(mainSec / secs).toFixed(2),
    },
    peak_rss_mb: Math.round(Math.max(peakRss, b.rss) / 1e6),
    // A thread slower per message than the others (its own JIT, its core) shows here.
    per_thread: b.perThread.map(([p, c], i) => ({
      msgs_per_sec: Math.round((p - a.perThread[i]![0]) / secs),
      us_per_msg: perMsgOf(c - a.perThread[i]![1], p - a.perThread[i]![0]),
    })),
    cores_by_thread_name: Object.fromEntries(
      [...b.ticks.entries()]
        .map(([k, v]) => [k, Math.round(((v - (a.ticks.get(k) ?? 0)) / 100 / secs) * 100) / 100] as const)
        .filter(([, v]) => v > 0),
    ),
  };
}

const results = [];
for (const n of threadCounts) results.push(await run(n));
const base = results[0]!.stored_per_sec;
for (const r of results)
  console.log(
    JSON.stringify({
      ...r,
      speedup: +(r.stored_per_sec / base).toFixed(2),
      machine: `${cpus().length} × ${cpus()[0]?.model}`,
    }),
  );
process.exit(0);
