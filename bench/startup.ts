/**
 * Start-up time (docs/BENCHMARKS.md "Start-up"): starts the executable `--runs` times on an empty
 * lake and on a lake of `--files` Parquet files, and measures, from the spawn, the first HTTP 200 on
 * `GET /api/v4/auth/providers` (the dashboard's login page can be drawn) and the moment `/health`
 * no longer reports the `startup` check as starting (the lake answers), and the CPU time the process
 * had used (all its threads, /proc/<pid>/stat) at the first 200: on a shared machine the wall time
 * grows with the load, the CPU time much less. Prints p50 and p95 of each.
 *   bun bench/startup.ts [--binary dist/svc[,other]] [--runs 20] [--files 1000] [--lake-dir d] [--source]
 * Several comma-separated executables are started in turn within each run (A/B under the same load).
 * `--source` runs `bun src/main.ts serve` instead of the executable (what `npm start` runs after
 * building the dashboard). The 1 000-file lake is written once with the real writer (one flush of
 * five HEP messages per file, compaction off) into `--lake-dir` (default under the system temp
 * directory) and reused by later runs. Every start after the first of each lake is a restart: the
 * settings database, the administrator and the catalog exist, as on an appliance that reboots.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createLogger } from "../src/core/index.ts";
import { startAppliance } from "../src/main.ts";
import { testConfig, testConfigJson } from "../test/appliance.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i]!;
  if (!a.startsWith("--")) continue;
  const next = process.argv[i + 1];
  if (next === undefined || next.startsWith("--")) args.set(a.slice(2), "true");
  else args.set(a.slice(2), next), i++;
}
const runs = Number(args.get("runs") ?? 20);
const files = Number(args.get("files") ?? 1000);
const source = args.get("source") === "true";
const binaries = (args.get("binary") ?? "dist/svc").split(",").map((b) => resolve(b));
const lakeDir = resolve(args.get("lake-dir") ?? join(tmpdir(), `svc-startup-lake-${files}`));
const root = resolve(import.meta.dir, "..");

// No compaction and no retention: the 1 000 files stay 1 000 files across the runs.
const LAKE = {
  storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000_000, compaction: { enable: false } } },
};

async function writeLake(dir: string, n: number): Promise<void> {
  const marker = join(dir, `.files-${n}`);
  if (existsSync(marker)) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const app = await startAppliance(testConfig(dir, LAKE), createLogger({ test: true }));
  try {
    const { packet, template } = packetSource("startup");
    const buf = template.slice();
    for (let f = 0; f < n; f++) {
      for (let m = f * 5; m < f * 5 + 5; m++) app.ingest!.pipeline.handlePacket(packet(m, buf), "udp");
      await app.lake!.flush();
    }
    const live = (await app.lake!.files("main.hep_proto_1_call")).length;
    if (live !== n) throw new Error(`the lake holds ${live} files of hep_proto_1_call, not ${n}`);
  } finally {
    await app.stop();
  }
  writeFileSync(marker, "");
}

function parquetCount(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile() && e.name.endsWith(".parquet")) n++;
  return n;
}

async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** One start: ms from spawn to the first 200 on auth/providers, and to /health without a starting check. */
/** CPU time (user + system, every thread) of a process so far, in ms; /proc counts in ticks of 10 ms. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

async function startOnce(
  dir: string,
  binary: string,
): Promise<{ providersMs: number; readyMs: number; cpuMs: number }> {
  const port = await freePort();
  const cfgPath = join(dir, "startup-bench.json");
  const cfg = testConfigJson(dir, {
    ...LAKE,
    log: { level: "warn", format: "json" },
    coordinator: { http_server: { listen: `127.0.0.1:${port}` } },
  });
  writeFileSync(cfgPath, JSON.stringify(cfg));
  const base = `http://127.0.0.1:${port}`;
  const cmd = source
    ? [process.execPath, join(root, "src/main.ts"), "serve", "--config-path", cfgPath]
    : [binary, "serve", "--config-path", cfgPath];
  const t0 = performance.now();
  const child = Bun.spawn(cmd, { stdout: "ignore", stderr: "ignore", cwd: dir });
  try {
    let providersMs = -1;
    let cpu = Number.NaN;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`svc exited with ${child.exitCode} before answering`);
      try {
        const r = await fetch(`${base}/api/v4/auth/providers`);
        if (r.status === 200) {
          providersMs = performance.now() - t0;
          cpu = cpuMs(child.pid);
          break;
        }
      } catch {
        // Not listening yet.
      }
      await Bun.sleep(2);
    }
    let readyMs = -1;
    for (;;) {
      const h = (await (await fetch(`${base}/health`)).json()) as {
        checks?: Record<string, Array<{ state?: string }>>;
      };
      const startup = h.checks?.startup?.[0];
      // An old executable has no startup check: it answers only once everything has started.
      if (startup?.state !== "starting") {
        readyMs = performance.now() - t0;
        break;
      }
      await Bun.sleep(2);
    }
    return { providersMs, readyMs, cpuMs: cpu };
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((s.length - 1) * p + 0.5))]!);
};

async function measure(label: string, dir: string): Promise<void> {
  // The first start creates the settings database, the administrator and the catalog.
  for (const b of binaries) await startOnce(dir, b);
  const r = binaries.map(() => ({ providers: [] as number[], ready: [] as number[], cpu: [] as number[] }));
  for (let i = 0; i < runs; i++) {
    for (const [k, b] of binaries.entries()) {
      const one = await startOnce(dir, b);
      r[k]!.providers.push(one.providersMs);
      r[k]!.ready.push(one.readyMs);
      r[k]!.cpu.push(one.cpuMs);
    }
  }
  const files = existsSync(join(dir, "lake")) ? parquetCount(join(dir, "lake")) : 0;
  for (const [k, b] of binaries.entries()) {
    const x = r[k]!;
    console.log(
      JSON.stringify({
        what: source ? "bun src/main.ts serve" : b,
        lake: label,
        parquet_files: files,
        runs,
        auth_providers_200_ms: {
          p50: pct(x.providers, 0.5),
          p95: pct(x.providers, 0.95),
          min: pct(x.providers, 0),
          max: pct(x.providers, 1),
        },
        cpu_ms_at_first_200: { p50: pct(x.cpu, 0.5), p95: pct(x.cpu, 0.95) },
        lake_ready_ms: { p50: pct(x.ready, 0.5), p95: pct(x.ready, 0.95) },
      }),
    );
  }
}

const empty = join(tmpdir(), `svc-startup-empty-${process.pid}`);
mkdirSync(empty, { recursive: true });
try {
  console.log(JSON.stringify({ cpus: navigator.hardwareConcurrency, load_average: loadavg() }));
  await measure("empty", empty);
  await writeLake(lakeDir, files);
  await measure(`${files} files`, lakeDir);
} finally {
  rmSync(empty, { recursive: true, force: true });
}
