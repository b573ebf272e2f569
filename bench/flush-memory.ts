/**
 * Peak memory of one flush COPY (spool CSV → Parquet), each variant in a fresh process so
 * allocator retention of one variant does not hide the next: --rows rows of realistic INVITEs go
 * through the real pipeline into --files spool files, then one COPY runs as the writer runs it.
 *   bun bench/flush-memory.ts --rows 250000 --files 50 [--variant base|buf2m|mem512|t1|rgbytes] [--memory-limit 2GB]
 * Reports the process' RSS before the COPY and its peak during it (VmHWM after clear_refs).
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testConfig } from "../test/appliance.ts";
import { createLogger } from "../src/core/index.ts";
import { startAppliance } from "../src/main.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const rows = Number(args.get("rows") ?? 250_000);
const files = Number(args.get("files") ?? 50);
const variant = args.get("variant") ?? "base";
const dir = mkdtempSync(join(tmpdir(), "svc-flushmem-"));
const KEY = "main.hep_proto_1_call";
const status = (k: string) =>
  Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) * 1024;
const mb = (b: number) => Math.round(b / 1048576);

const app = await startAppliance(
  testConfig(dir, {
    storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000_000, max_buffered_rows: 10_000_000 } },
  }),
  createLogger({ test: true }),
);
try {
  const { packet, template } = packetSource("flushmem");
  const buf = template.slice();
  const per = Math.ceil(rows / files);
  for (let n = 0; n < rows; ) {
    for (const end = Math.min(rows, n + per); n < end; n++) app.ingest!.pipeline.handlePacket(packet(n, buf), "udp");
    await app.lake!.sync();
  }
  let source = await app.lake!.scanSql(KEY);
  if (variant === "buf2m")
    source = source.replaceAll("strict_mode = true", "strict_mode = true, buffer_size = 2097152");
  const db = await DuckDBInstance.create(":memory:", {
    threads: variant === "t1" ? "1" : "2",
    memory_limit: variant === "mem512" ? "512MB" : (args.get("memory-limit") ?? "2GB"),
  });
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  await con.run("SET preserve_insertion_order = false");
  Bun.gc(true);
  const before = status("VmRSS");
  writeFileSync("/proc/self/clear_refs", "5");
  const out = join(dir, "v.parquet");
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await con.run(
    `COPY (SELECT * FROM (${source})) TO '${out}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384${variant === "rgbytes" ? `, ROW_GROUP_SIZE_BYTES '${args.get("rg-bytes") ?? "8MB"}'` : ""})`,
  );
  const c = process.cpuUsage(c0);
  const peak = status("VmHWM");
  const groups = Number(
    (
      await con.runAndReadAll(`SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata('${out}')`)
    ).getRowObjects()[0]!.n,
  );
  console.log(
    JSON.stringify({
      variant,
      rows,
      files,
      rss_before_mb: mb(before),
      peak_mb: mb(peak),
      wall_ms: Math.round(performance.now() - t0),
      cpu_us_per_row: Math.round(((c.user + c.system) / rows) * 100) / 100,
      parquet_bytes_per_row: Math.round((Bun.file(out).size / rows) * 10) / 10,
      row_groups: groups,
    }),
  );
  con.closeSync();
  db.closeSync();
} finally {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
}
