/**
 * Rows into a spool batch and out as a sealed file, per row, on one thread: CsvBatch (the spool
 * CSV, which DuckDB parses again at the flush) against ColumnBatch (Parquet columns, zstd, the
 * file a flush can take as it is), and then what DuckDB spends turning the same rows from spool
 * CSV into the flush's Parquet (read_csv + COPY, as the writer runs it).
 *   bun bench/column-batch.ts [--seconds 5] [--seal 4096] [--threads 2]
 * Every packet is decoded and SIP-parsed once beforehand: this measures the row writing, the seal
 * and the flush, not the parsing (bench/ingest-path.ts measures the whole thread).
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ColumnBatch } from "../src/core/column-batch.ts";
import { CsvBatch } from "../src/core/csv-batch.ts";
import { decodeHep, type HepPacket } from "../src/hep/index.ts";
import { writeSipRow } from "../src/ingest/hep/rows.ts";
import { hepTableDef } from "../src/ingest/hep/tables.ts";
import { csvColumns, spoolSelect } from "../src/lake/writer/spool-sql.ts";
import { parseSip, type SipMessage } from "../src/sip/index.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const seconds = Number(args.get("seconds") ?? 5);
const seal = Number(args.get("seal") ?? 4096);
const threads = args.get("threads") ?? "2";
const table = hepTableDef(1, "call");
const dir = mkdtempSync(join(tmpdir(), "svc-colbench-"));

const { packet, template } = packetSource("colbench");
const msgs: Array<{ p: HepPacket; sip: SipMessage }> = [];
for (let k = 0; k < 16_384; k++) {
  const r = decodeHep(packet(k, template.slice()), { nowMs: Date.now(), maxSkewMs: Infinity, maxAgeMs: Infinity });
  if (!r.ok) throw new Error(r.reason);
  const sip = parseSip(r.value.payload, { customHeaders: [], correlationHeaders: [] });
  if (!sip.ok) throw new Error(sip.reason);
  msgs.push({ p: r.value, sip: sip.value });
}

const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Rows per CPU-µs through `write` for `seconds`, sealing every `seal` rows; also the sealed bytes per row. */
function run(
  name: string,
  write: (k: number) => void,
  sealNow: () => number,
  secs = seconds,
): { name: string; us_per_row: number; sealed_bytes_per_row: number } {
  const until = performance.now() + secs * 1000;
  const c0 = cpu();
  let rows = 0;
  let bytes = 0;
  while (performance.now() < until) {
    for (let k = 0; k < seal; k++) write(rows + k);
    rows += seal;
    bytes += sealNow();
  }
  return {
    name,
    us_per_row: Math.round(((cpu() - c0) / rows) * 100) / 100,
    sealed_bytes_per_row: Math.round((bytes / rows) * 10) / 10,
  };
}

const csv = new CsvBatch(csvColumns(table).length, 8 << 20);
const uuidNow = () => performance.timeOrigin + performance.now();
let lastCsv: Uint8Array = new Uint8Array();
const csvRun = (secs?: number) =>
  run(
    "CsvBatch (spool CSV)",
    (k) => {
      const m = msgs[k & 16383]!;
      csv.uuidv7(uuidNow());
      writeSipRow(csv, m.p, m.sip, false);
    },
    () => {
      lastCsv = csv.view().slice();
      const n = csv.byteLength;
      csv.reset();
      return n;
    },
    secs,
  );
const cols = new ColumnBatch(table, seal);
let lastParquet: Uint8Array[] = [];
const colRun = (secs?: number) =>
  run(
    "ColumnBatch + Parquet seal (zstd 1)",
    (k) => {
      const m = msgs[k & 16383]!;
      cols.uuidv7(uuidNow());
      writeSipRow(cols, m.p, m.sip, false);
    },
    () => {
      const f = cols.encode();
      lastParquet = f.parts;
      cols.reset();
      return f.length;
    },
    secs,
  );
// Warm-up: both paths compiled by the JIT before anything is measured.
csvRun(1);
colRun(1);
const results = [csvRun(), colRun(), csvRun(), colRun()];

// DuckDB: the flush of the same rows from spool CSV (ten seals per flush) to Parquet, as writer.ts runs it.
const db = await DuckDBInstance.create(":memory:", { threads });
const con = await db.connect();
const files = Array.from({ length: 10 }, (_, i) => {
  const f = join(dir, `${i}.csv`);
  writeFileSync(f, lastCsv);
  return f;
});
const source = spoolSelect(
  table,
  files.map((file) => ({ file, def: table })),
).join(" UNION ALL ");
let flushRows = 0;
const f0 = cpu();
const until = performance.now() + seconds * 1000;
let n = 0;
while (performance.now() < until) {
  await con.run(
    `COPY (SELECT * FROM (${source})) TO '${join(dir, `f${n++ % 2}.parquet`)}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384)`,
  );
  flushRows += seal * 10;
}
const copyUs = Math.round(((cpu() - f0) / flushRows) * 100) / 100;
const flushBytes = Bun.file(join(dir, "f0.parquet")).size / (seal * 10);
writeFileSync(join(dir, "ours.parquet"), Buffer.concat(lastParquet));
const check = (
  await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${join(dir, "ours.parquet")}')`)
).getRowObjects()[0]!.n;
con.closeSync();
db.closeSync();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    seal_rows: seal,
    writers: results,
    duckdb_flush_copy: {
      threads: Number(threads),
      us_per_row: copyUs,
      parquet_bytes_per_row: Math.round(flushBytes * 10) / 10,
    },
    ours_read_back_rows: Number(check),
  }),
);
