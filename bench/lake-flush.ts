/**
 * What a flush costs per row (docs/BENCHMARKS.md "Ingest: CPU per message": where the ingest CPU goes). Realistic INVITE packets go
 * through the real pipeline into the spool (no flush), then the flush's statement and variants of
 * it run on a separate DuckDB with the lake's thread count, each timed (wall and process CPU):
 *   bun bench/lake-flush.ts --rows 100000 [--seal-rows 7000] [--threads 2] [--repeat 3]
 * Variants: CSV parse only; the COPY as the writer runs it (ORDER BY session_id, timestamp);
 * no ORDER BY; ORDER BY timestamp; the partition-value pass (SELECT DISTINCT date).
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { testConfig } from "../test/appliance.ts";
import { createLogger } from "../src/core/index.ts";
import { startAppliance } from "../src/main.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const rows = Number(args.get("rows") ?? 100_000);
const threads = Number(args.get("threads") ?? 2);
const repeat = Number(args.get("repeat") ?? 3);
const dir = mkdtempSync(join(tmpdir(), "svc-flush-"));
const KEY = "main.hep_proto_1_call";

const app = await startAppliance(
  testConfig(dir, {
    storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000_000, max_buffered_rows: 10_000_000 } },
  }),
  createLogger({ test: true }),
);
try {
  const { packet, template } = packetSource("flush");
  const buf = template.slice();
  const _t0 = performance.now();
  // --seal-rows N: seal the batch every N rows, as the writer does every 100 ms (7 000 rows at 70 k/s).
  const sealRows = Number(args.get("seal-rows") ?? rows);
  let jsMs = 0;
  for (let n = 0; n < rows; ) {
    const t = performance.now();
    for (const end = Math.min(rows, n + sealRows); n < end; n++)
      app.ingest!.pipeline.handlePacket(packet(n, buf), "udp");
    jsMs += performance.now() - t;
    await app.lake!.sync();
  }
  const source = await app.lake!.scanSql(KEY); // no files yet: the spool only
  const db = await DuckDBInstance.create(":memory:", { threads: String(threads), memory_limit: "2GB" });
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  await con.run("SET preserve_insertion_order = false");
  const copy = (order: string, extra = "", compression = "COMPRESSION zstd, COMPRESSION_LEVEL 1") => {
    const out = join(dir, `v-${Math.random().toString(36).slice(2)}.parquet`);
    return {
      out,
      sql: `COPY (SELECT * FROM (${source}) ${order ? `ORDER BY ${order}` : ""}) TO '${out}' (FORMAT parquet, ${compression}, ROW_GROUP_SIZE 16384${extra})`,
    };
  };
  const variants: Array<[string, () => { sql: string; out?: string }]> = [
    [
      "CSV parse, every column",
      () => ({
        sql: `SELECT count(*), sum(length(payload)), sum(length(data_extra)), max(session_id), max(caller) FROM (${source})`,
      }),
    ],
    ["partition pass: SELECT DISTINCT date", () => ({ sql: `SELECT DISTINCT date::VARCHAR FROM (${source})` })],
    ["COPY ORDER BY session_id, timestamp (compaction's order)", () => copy("session_id, timestamp")],
    ["COPY ORDER BY timestamp", () => copy("timestamp")],
    ["COPY, no ORDER BY (the flush)", () => copy("")],
    ["COPY, no ORDER BY, DICTIONARY_SIZE_LIMIT 1", () => copy("", ", DICTIONARY_SIZE_LIMIT 1")],
    ["COPY, no ORDER BY, STRING_DICTIONARY_PAGE_SIZE_LIMIT 1", () => copy("", ", STRING_DICTIONARY_PAGE_SIZE_LIMIT 1")],
    ["COPY, no ORDER BY, lz4_raw instead of zstd", () => copy("", "", "COMPRESSION lz4_raw")],
    ["COPY, no ORDER BY, zstd level -3", () => copy("", "", "COMPRESSION zstd, COMPRESSION_LEVEL -3")],
    ["COPY, no ORDER BY, zstd level -1", () => copy("", "", "COMPRESSION zstd, COMPRESSION_LEVEL -1")],
    ["COPY, no ORDER BY, snappy instead of zstd", () => copy("", "", "COMPRESSION snappy")],
  ];
  console.log(
    `rows ${rows} in ${Math.ceil(rows / sealRows)} spool files, JS pipeline ${((jsMs * 1000) / rows).toFixed(2)} µs/row, DuckDB threads ${threads}, CPU ${cpus()[0]?.model}`,
  );
  for (const [name, make] of variants) {
    const wall: number[] = [];
    const cpu: number[] = [];
    let bytes = 0;
    for (let r = 0; r < repeat; r++) {
      const { sql, out } = make();
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      await con.run(sql);
      wall.push(performance.now() - w0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      if (out) {
        bytes = statSync(out).size;
        rmSync(out);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      `${name.padEnd(52)} wall ${med(wall).toFixed(0).padStart(5)} ms  CPU ${((med(cpu) * 1000) / rows).toFixed(2).padStart(6)} µs/row` +
        (bytes ? `  ${(bytes / rows).toFixed(1)} B/row` : ""),
    );
  }
  con.closeSync();
  db.closeSync();
} finally {
  await app.stop();
  rmSync(dir, { recursive: true, force: true });
}
