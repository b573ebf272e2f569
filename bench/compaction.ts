/**
 * Peak memory of compaction (docs/BENCHMARKS.md "Compaction memory"; goal: "compaction of ≥ 2 GB of small files with peak RSS
 * reported, goal ≤ 300 MB above idle"). A child process writes `--gb` of small Parquet files of
 * `--file-mb` each (HEP INVITE rows with random branches, tags, Call-IDs and SDP ids, in arrival
 * order over the last two days, so two date partitions) straight into a lake's catalog; then this
 * process starts the lake with compaction and runs maintenance cycles until nothing is left to merge.
 * Idle = VmRSS after the lake started; peak = VmHWM (reset just before the first cycle), and RSS is
 * sampled every 50 ms. Rows (catalog) before, and rows and distinct uuids (DuckDB) after, are checked equal.
 *   bun bench/compaction.ts [--gb 2] [--file-mb 1] [--engine duckdb|native] [--memory-limit 224MB]
 *                           [--data /path: generate there once (absent), then compact a copy per run]
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { lakeConfig } from "../src/config/index.ts";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { configureLogging, createLogger, MetricsRegistry } from "../src/core/index.ts";
import { hepTableDef } from "../src/ingest/hep/tables.ts";
import { Lake } from "../src/lake/index.ts";
import { openLakeCatalog } from "../src/lake/catalog-adapter.ts";
import { writeDataFile } from "../src/lake/writer/data-file.ts";
import type { NewDataFile } from "../src/lake/catalog-port.ts";
import { testConfig } from "../test/appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const MiB = 1024 * 1024;
const DEF = hepTableDef(1, "call");
const KEY = `${DEF.schema}.${DEF.name}`;

/** One flush file's rows: every column of hep_proto_1_call, arrival (time) order. */
function rowsSql(first: number, n: number, t0Us: number, stepUs: number): string {
  const r = (salt: string) => `md5(i::VARCHAR || '${salt}')`;
  return `SELECT uuid()::VARCHAR AS uuid, make_timestamp(${t0Us} + i * ${stepUs}) AS timestamp, CAST(make_timestamp(${t0Us} + i * ${stepUs}) AS DATE) AS date,
    ${r("c")} || '@pbx.example.com' AS session_id, '+1555' || (i % 100000) AS caller, '+1666' || (i * 7 % 100000) AS callee,
    '192.0.2.' || (i % 250) AS src_ip, '198.51.100.' || (i % 200) AS dst_ip, 5060 AS src_port, 5060 AS dst_port, 'sip' AS event,
    'INVITE' AS method, NULL::INTEGER AS response_code, 'INVITE' AS cseq_method, 1 AS proto_type, 'udp' AS protocol, 100::BIGINT AS node_id, '' AS cid,
    'INVITE sip:+1666' || (i * 7 % 100000) || '@198.51.100.20 SIP/2.0' || chr(13) || chr(10) ||
    'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK' || left(${r("b")}, 16) || chr(13) || chr(10) ||
    'From: <sip:+1555' || (i % 100000) || '@example.com>;tag=' || left(${r("t")}, 10) || chr(13) || chr(10) ||
    'To: <sip:+1666' || (i * 7 % 100000) || '@example.com>' || chr(13) || chr(10) ||
    'Call-ID: ' || ${r("c")} || '@pbx.example.com' || chr(13) || chr(10) ||
    'CSeq: 1 INVITE' || chr(13) || chr(10) || 'Contact: <sip:+1555' || (i % 100000) || '@192.0.2.10:5060>' || chr(13) || chr(10) ||
    'Max-Forwards: 70' || chr(13) || chr(10) || 'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, PRACK, UPDATE, INFO' || chr(13) || chr(10) ||
    'P-Asserted-Identity: <sip:+1555' || (i % 100000) || '@example.com>' || chr(13) || chr(10) ||
    'Content-Type: application/sdp' || chr(13) || chr(10) || 'Content-Length: 230' || chr(13) || chr(10) || chr(13) || chr(10) ||
    'v=0' || chr(13) || chr(10) || 'o=- ' || (hash(i) % 1000000000) || ' 1 IN IP4 192.0.2.10' || chr(13) || chr(10) || 's=-' || chr(13) || chr(10) ||
    'c=IN IP4 192.0.2.10' || chr(13) || chr(10) || 't=0 0' || chr(13) || chr(10) || 'm=audio ' || (30000 + i % 20000) || ' RTP/AVP 0 8 101' || chr(13) || chr(10) ||
    'a=rtpmap:0 PCMU/8000' || chr(13) || chr(10) || 'a=rtpmap:8 PCMA/8000' || chr(13) || chr(10) || 'a=rtpmap:101 telephone-event/8000' || chr(13) || chr(10) AS payload,
    '{"cseq":"1 INVITE"}' AS data_extra
    FROM range(${first}, ${first + n}) t(i)`;
}

/** Child: writes the files and registers them, one snapshot per 100 files. */
async function generate(dir: string, totalBytes: number, fileBytes: number): Promise<void> {
  const dataPath = join(dir, "lake/");
  const cat = openLakeCatalog({ path: join(dir, "catalog.sqlite"), dataPath });
  const info = await cat.ensureTable(DEF.schema, {
    name: DEF.name,
    columns: DEF.columns.map((c) => ({ name: c.name, type: c.type })),
    partitionBy: "date",
  });
  const db = await DuckDBInstance.create(":memory:", { threads: "2" });
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  const run = async (sql: string) => void (await con.run(sql));
  const read = async (sql: string) => (await con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  const dayMs = 86_400_000;
  const startUs = (Math.floor(Date.now() / dayMs) - 1) * dayMs * 1000; // yesterday 00:00 UTC: two partitions
  // Bytes per row from a calibration file (not registered), then rows per file and the time step.
  const probe = join(dir, "probe.parquet");
  await con.run(
    `COPY (${rowsSql(0, 5000, startUs, 1000)}) TO '${probe}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384)`,
  );
  const bytesPerRow = Bun.file(probe).size / 5000;
  rmSync(probe);
  const rowsPerFile = Math.max(100, Math.round(fileBytes / bytesPerRow));
  const stepUs = Math.max(1, Math.floor((2 * dayMs * 1000 * 0.98) / (totalBytes / bytesPerRow)));
  let written = 0;
  let first = 0;
  let batch: NewDataFile[] = [];
  while (written < totalBytes) {
    const t0 = startUs + first * stepUs;
    const date = new Date(t0 / 1000).toISOString().slice(0, 10);
    const dayEnd = (Math.floor(t0 / 1000 / dayMs) + 1) * dayMs * 1000;
    const n = Math.max(1, Math.min(rowsPerFile, Math.ceil((dayEnd - t0) / stepUs)));
    const f = await writeDataFile(run, read, rowsSql(first, n, startUs, stepUs), {
      def: DEF,
      info,
      dataPath,
      relPath: await cat.newDataFilePath(info.tableId, date),
      rowGroupRows: 16384,
      partitionValue: date,
      sorted: false,
    });
    first += n;
    written += f.fileSizeBytes;
    batch.push(f);
    if (batch.length === 100 || written >= totalBytes || n < rowsPerFile) {
      await cat.commitDataFiles(info.tableId, batch);
      batch = [];
    }
  }
  con.closeSync();
  db.closeSync();
  await cat.close();
  console.log(JSON.stringify({ generated_mib: Math.round(written / MiB), rows: first }));
}

const status = () => readFileSync("/proc/self/status", "utf8");
const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status())?.[1] ?? 0) * 1024;
const mib = (b: number) => Math.round(b / MiB);

async function measure(dir: string, engine: string, memoryLimit: string): Promise<void> {
  const config = testConfig(dir, {
    ingest: { hep: { enable: false }, line_protocol: { enable: false } },
    storage: {
      lakehouse: {
        retention: { days: 0 },
        compaction: { engine, min_age_sec: 0, check_interval_sec: 86_400, memory_limit: memoryLimit },
      },
    },
  });
  const metrics = new MetricsRegistry();
  configureLogging({ level: "warn" });
  const lake = new Lake({ config: lakeConfig(config), logger: createLogger({ bench: "compaction" }), metrics });
  await lake.start();
  try {
    await lake.defineTable(DEF);
    const state = async () => {
      const files = await lake.files(KEY);
      return {
        files: files.length,
        mib: mib(files.reduce((s, f) => s + f.bytes, 0)),
        rows: files.reduce((s, f) => s + f.rows, 0),
      };
    };
    // From the catalog only: a DuckDB query over every row now would leave its memory in the idle figure.
    const before = await state();
    Bun.gc(true);
    const idle = kb("VmRSS");
    writeFileSync("/proc/self/clear_refs", "5");
    let sampled = 0;
    const timer = setInterval(() => (sampled = Math.max(sampled, kb("VmRSS"))), 50);
    const t0 = performance.now();
    let cycles = 0;
    for (;;) {
      const r = await lake.maintain();
      cycles++;
      if (r.merged === 0) break;
    }
    const ms = performance.now() - t0;
    clearInterval(timer);
    const peak = kb("VmHWM");
    const after = await state();
    const check = (await lake.query(`SELECT count(*) AS n, count(DISTINCT uuid) AS d FROM svc_lake.main.${DEF.name}`))
      .rows[0] as { n: number; d: number };
    console.log(
      JSON.stringify({
        engine,
        memory_limit: memoryLimit,
        cpu: spawnSync("nproc").stdout.toString().trim(),
        bun: Bun.version,
        before,
        after,
        // Every generated uuid is distinct: the same count of rows and of distinct uuids after = nothing lost or doubled.
        rows_equal: before.rows === after.rows && check.n === before.rows && check.d === before.rows,
        cycles,
        seconds: Math.round(ms / 100) / 10,
        mib_per_second: Math.round((before.mib / (ms / 1000)) * 10) / 10,
        rss_idle_mib: mib(idle),
        rss_peak_mib: mib(peak),
        rss_peak_sampled_mib: mib(sampled),
        rss_peak_above_idle_mib: mib(peak - idle),
      }),
    );
  } finally {
    await lake.stop();
  }
}

if (args.has("generate")) {
  await generate(args.get("generate")!, Number(args.get("bytes")), Number(args.get("file-bytes")));
} else {
  const gb = Number(args.get("gb") ?? 2);
  const fileMb = Number(args.get("file-mb") ?? 1);
  const data = args.get("data");
  const dir = mkdtempSync(join(tmpdir(), "svc-compaction-"));
  try {
    const source = data ? resolve(data) : dir;
    if (!existsSync(join(source, "catalog.sqlite"))) {
      const gen = spawnSync(
        process.execPath,
        [
          import.meta.path,
          "--generate",
          source,
          "--bytes",
          String(Math.round(gb * 1024 * MiB)),
          "--file-bytes",
          String(Math.round(fileMb * MiB)),
        ],
        {
          stdio: ["ignore", "inherit", "inherit"],
        },
      );
      if (gen.status !== 0) throw new Error(`generator failed (${gen.status})`);
    }
    // --data: the generated lake is kept there and each run compacts a copy of it.
    if (source !== dir) cpSync(source, dir, { recursive: true });
    await measure(dir, args.get("engine") ?? "duckdb", args.get("memory-limit") ?? "224MB");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
