/**
 * Reads of a lake on S3 (moto on loopback), the two ways docs/STORAGE.md "Read cache" weighs:
 *  (b) svc's read cache: the Lake fetches the files a statement names into a local directory
 *      (cold: read_cache_bytes 0, every statement fetches; warm: the files are cached);
 *  (a) DuckDB's httpfs: a stock DuckDB 1.5.5 with the httpfs wheel reads the same files as
 *      s3:// URLs with range requests (svc's DuckDB 1.5.6 cannot load that extension).
 * A lake of --files files (one flush each, --rows rows each, a minute of data per file, random
 * Call-IDs), then newest-100 (the newest ten minutes, ORDER BY time DESC LIMIT 100) and a Call-ID
 * search (pruned by the catalog's min/max: random ids prune nothing) --runs times each.
 *   bun bench/object-store-read.ts [--files 500] [--rows 200] [--runs 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createLogger, MetricsRegistry, type TableDef } from "../src/core/index.ts";
import { lakeConfig } from "../src/config/index.ts";
import { Lake } from "../src/lake/index.ts";
import { testConfig } from "../test/appliance.ts";
import { pyPeersPython } from "../test/harness.ts";
import { startMoto } from "../test/peers/moto.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const FILES = Number(args.get("files") ?? 500);
const ROWS = Number(args.get("rows") ?? 200);
const RUNS = Number(args.get("runs") ?? 3);

const def: TableDef = {
  schema: "main",
  name: "bench_calls",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "call_id", type: "varchar" },
    { name: "body", type: "varchar" },
  ],
  timeColumn: "timestamp",
  sortBy: ["timestamp"],
};
const KEY = "main.bench_calls";
const BODY = "INVITE sip:bob@example.com SIP/2.0 Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK ".repeat(3);

const dir = mkdtempSync(join(tmpdir(), "svc-bench-s3-"));
const moto = await startMoto(dir);
const s3 = {
  region: "us-east-1",
  access_key_id: moto.accessKeyId,
  secret_access_key: moto.secretAccessKey,
  endpoint: moto.endpoint,
};
const open = async (cacheBytes: number) => {
  const config = testConfig(dir, {
    storage: {
      lakehouse: {
        data_path: `s3://${moto.bucket}/bench/`,
        s3,
        batch_size: 1_000_000,
        flush_interval_sec: 3600,
        read_cache_bytes: cacheBytes,
        compaction: { enable: false },
      },
    },
  });
  const lake = new Lake({
    config: lakeConfig(config),
    logger: createLogger({ test: true }),
    metrics: new MetricsRegistry(),
    sealIntervalMs: 20,
  });
  await lake.start();
  await lake.defineTable(def);
  return lake;
};
const ms = (t0: number) => Math.round(performance.now() - t0);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  // The lake: FILES flushes, each a minute of rows.
  const t0Us = Date.UTC(2026, 10, 1) * 1000;
  let lake = await open(0);
  const ids: string[] = [];
  const built = performance.now();
  for (let f = 0; f < FILES; f++) {
    for (let i = 0; i < ROWS; i++) {
      const id = `${crypto.randomUUID()}@bench`;
      if (i === 7) ids.push(id);
      lake
        .row(KEY)!
        .time(t0Us + f * 60_000_000 + Math.floor((i * 60_000_000) / ROWS))
        .str(id)
        .str(BODY)
        .end();
    }
    await lake.sync();
    await lake.flush();
  }
  const buildMs = ms(built);
  const files = await lake.files(KEY);
  const bytes = files.reduce((a, f) => a + f.bytes, 0);
  const maxUs = t0Us + FILES * 60_000_000;
  const wanted = ids[Math.floor(ids.length / 3)]!;
  const newestSql = (scan: string) =>
    `SELECT "timestamp", call_id FROM (${scan}) t ORDER BY "timestamp" DESC LIMIT 100`;
  const callSql = (scan: string) => `SELECT "timestamp", call_id FROM (${scan}) t WHERE call_id = '${wanted}'`;
  const newest = async () => newestSql(await lake.scanSql(KEY, { fromUs: maxUs - 600_000_000, buffer: false }));
  const call = async () =>
    callSql(await lake.scanSql(KEY, { equals: { column: "call_id", values: [wanted] }, buffer: false }));
  const time = async (sql: () => Promise<string>) => {
    const out: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t = performance.now();
      await lake.query(await sql());
      out.push(ms(t));
    }
    return out;
  };
  const cold = { newest: await time(newest), call: await time(call) };
  await lake.stop();
  lake = await open(10 * 1024 ** 3);
  await lake.query(await call()); // fills the cache
  const warm = { newest: await time(newest), call: await time(call) };
  const callFiles = (await lake.scanPlan(KEY, { equals: { column: "call_id", values: [wanted] } })).files.length;
  const newestFiles = (await lake.scanPlan(KEY, { fromUs: maxUs - 600_000_000 })).files.length;
  await lake.stop();
  console.error(JSON.stringify({ build_ms: buildMs, files: files.length, bytes, cold, warm }));

  // (a) stock DuckDB 1.5.5 + httpfs on the same objects: one process per run (cold), then warm runs in one.
  const urls = files.map((f) => `s3://${moto.bucket}/bench/${f.path}`);
  const newestUrls = files.slice(-newestFiles).map((f) => `s3://${moto.bucket}/bench/${f.path}`);
  const py = `
import glob, json, os, sys, time
sys.path.insert(0, ${JSON.stringify(resolve(import.meta.dir, "../test/peers"))})
import duckdb_extension_httpfs, duckpeer
from urllib.parse import urlparse
cfg = json.load(sys.stdin)
con = duckpeer.connect()
con.execute("SET enable_progress_bar = false")
con.execute("LOAD '" + glob.glob(os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions", "*", "httpfs.duckdb_extension"))[0] + "'")
u = urlparse(cfg["endpoint"])
con.execute("CREATE SECRET s3 (TYPE s3, KEY_ID ?, SECRET ?, REGION 'us-east-1', ENDPOINT ?, URL_STYLE 'path', USE_SSL false)", [cfg["key"], cfg["secret"], u.netloc])
def lst(xs): return "[" + ", ".join("'" + x + "'" for x in xs) + "]"
newest = 'SELECT "timestamp", call_id FROM read_parquet(' + lst(cfg["newest"]) + ') ORDER BY "timestamp" DESC LIMIT 100'
call = "SELECT \\"timestamp\\", call_id FROM read_parquet(" + lst(cfg["all"]) + ") WHERE call_id = '" + cfg["id"] + "'"
out = {}
for name, sql in (("newest", newest), ("call", call)):
    times = []
    for _ in range(cfg["runs"]):
        t = time.perf_counter(); con.execute(sql).fetchall(); times.append(round((time.perf_counter() - t) * 1000))
    out[name] = times
print(json.dumps(out))
`;
  const httpfs = (runs: number) => {
    const r = Bun.spawnSync([pyPeersPython(), "-c", py], {
      stdin: new TextEncoder().encode(
        JSON.stringify({
          endpoint: moto.endpoint,
          key: moto.accessKeyId,
          secret: moto.secretAccessKey,
          all: urls,
          newest: newestUrls,
          id: wanted,
          runs,
        }),
      ),
      stdout: "pipe",
      stderr: "pipe",
    });
    if (r.exitCode !== 0) throw new Error(r.stderr.toString().slice(-2000));
    return JSON.parse(r.stdout.toString().trim().split("\n").pop()!) as { newest: number[]; call: number[] };
  };
  const coldA = { newest: [] as number[], call: [] as number[] };
  for (let r = 0; r < RUNS; r++) {
    const one = httpfs(1);
    coldA.newest.push(one.newest[0]!);
    coldA.call.push(one.call[0]!);
  }
  const warmA = httpfs(RUNS + 1);
  console.log(
    JSON.stringify(
      {
        files: files.length,
        rows: FILES * ROWS,
        lake_bytes: bytes,
        build_ms: buildMs,
        flush_upload_ms_per_file: Math.round(buildMs / FILES),
        newest_files: newestFiles,
        call_files: callFiles,
        cache_cold_ms: { newest: median(cold.newest), call: median(cold.call), runs: cold },
        cache_warm_ms: { newest: median(warm.newest), call: median(warm.call), runs: warm },
        httpfs_cold_ms: { newest: median(coldA.newest), call: median(coldA.call), runs: coldA },
        httpfs_warm_ms: { newest: median(warmA.newest.slice(1)), call: median(warmA.call.slice(1)), runs: warmA },
      },
      null,
      1,
    ),
  );
} finally {
  await moto[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
}
