/**
 * Rows fetched by page, measured (docs/BENCHMARKS.md "Rows fetched by page"): one compacted
 * `hep_proto_1_call` file of the benchmark lake merged again the way compaction writes it (COPY
 * sorted by session_id, zstd 1, 16 384-row groups) and cut into pages of `--rows-per-page` rows (narrow columns: 8 KiB of values, --min-page-bytes)
 * with an offset index (src/core/parquet/repage.ts). On DuckDB's file and on the paged one:
 * DuckDB's lookups by session_id (the search's first pass and a one-statement read of every
 * column), DuckDB fetching every column of rows by number, and src/lake/page-reader.ts fetching
 * the same rows from the paged file (what a search's second pass now does).
 *
 *   bun bench/search/pages.ts --file <a compacted .parquet of the lake> [--rows-per-page 512] [--min-page-bytes 32768]
 *     [--out-dir <for the two copies; default the system's temporary directory>]
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { repageParquet } from "../../src/core/parquet/repage.ts";
import { hepTableDef } from "../../src/ingest/hep/tables.ts";
import { LOOKUP_COLUMNS } from "../../src/lake/bloom-index.ts";
import { PagedFiles } from "../../src/lake/page-index.ts";
import { PageReader } from "../../src/lake/page-reader.ts";
import { flags } from "./manifest.ts";
import { summarize } from "./stats.ts";

const f = flags(process.argv.slice(2));
const src = f.get("file");
if (!src) throw new Error("--file is required");
const rowsPerPage = Number(f.get("rows-per-page") ?? 512);
/** Least bytes of values a page (default: repage.ts MIN_PAGE_BYTES). */
const minPageBytes = f.has("min-page-bytes") ? Number(f.get("min-page-bytes")) : undefined;
/** Most bytes of values a page of more than one row (default: repage.ts MAX_PAGE_BYTES). */
const maxPageBytes = f.has("max-page-bytes") ? Number(f.get("max-page-bytes")) : undefined;
/** As compaction writes a paged file: PLAIN chunks (no dictionaries); `--plain false`: DuckDB's default encodings. */
const plain = f.get("plain") !== "false";
// Written outside the lake (a file in its data path would be an orphan to the lake).
const dir = f.get("out-dir") ?? tmpdir();
const duckFile = join(dir, "pages-bench-duckdb.parquet");
const paged = join(dir, `pages-bench-${rowsPerPage}.parquet`);
const def = hepTableDef(1, "call");
const db = await DuckDBInstance.create(":memory:", { threads: "2" });
const con = await db.connect();
await con.run("SET GLOBAL parquet_metadata_cache = true");

let t = performance.now();
await con.run(
  `COPY (SELECT * FROM read_parquet('${src}') ORDER BY session_id, timestamp) TO '${duckFile}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384${plain ? ", DICTIONARY_SIZE_LIMIT 1" : ""})`,
);
const copyMs = performance.now() - t;
t = performance.now();
const cpu0 = process.cpuUsage();
const stats = await repageParquet(duckFile, paged, {
  rowsPerPage,
  bloomColumns: LOOKUP_COLUMNS,
  ...(minPageBytes !== undefined ? { minPageBytes } : {}),
  ...(maxPageBytes !== undefined ? { maxPageBytes } : {}),
});
const cpu = process.cpuUsage(cpu0);
console.log(
  `COPY ${copyMs.toFixed(0)} ms; cut into pages ${(performance.now() - t).toFixed(0)} ms (CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms): ${stats.split} chunks cut, ${stats.copied} copied, ${stats.pages} pages`,
);
console.log(
  `sizes: DuckDB's ${(Bun.file(duckFile).size / 1e6).toFixed(1)} MB, paged ${(Bun.file(paged).size / 1e6).toFixed(1)} MB`,
);

const total = Number((await con.runAndReadAll(`SELECT count(*) FROM read_parquet('${paged}')`)).getRows()[0]![0]);
const sids = (await con.runAndReadAll(`SELECT session_id FROM read_parquet('${paged}') USING SAMPLE 20 ROWS`))
  .getRows()
  .map((r) => String(r[0]));
const callRows: number[][] = [];
for (const sid of sids)
  callRows.push(
    (
      await con.runAndReadAll(
        `SELECT file_row_number FROM read_parquet('${paged}', file_row_number = true) WHERE session_id = '${sid}' ORDER BY 1`,
      )
    )
      .getRows()
      .map((r) => Number(r[0])),
  );
const scattered = () => Array.from({ length: 100 }, () => Math.floor(Math.random() * total));
const results: string[] = [];
async function time(label: string, run: (i: number) => Promise<unknown> | unknown): Promise<void> {
  const ms: number[] = [];
  for (let round = 0; round < 2; round++)
    for (let i = 0; i < sids.length; i++) {
      const t0 = performance.now();
      await run(i);
      if (round) ms.push(performance.now() - t0);
    }
  const s = summarize(ms);
  results.push(`| ${label} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} |`);
}
const byNumber = (file: string, rows: number[]) =>
  con.runAndReadAll(
    `SELECT * FROM read_parquet('${file}', file_row_number = true) WHERE file_row_number IN (${rows.join(", ")})`,
  );
for (const [name, file] of [
  ["DuckDB's file", duckFile],
  ["paged file", paged],
] as const) {
  await time(`${name}: DuckDB, uuid, session_id, time of one call (first pass)`, (i) =>
    con.runAndReadAll(
      `SELECT uuid, session_id, timestamp FROM read_parquet('${file}') WHERE session_id = '${sids[i]}'`,
    ),
  );
  await time(`${name}: DuckDB, every column of one call`, (i) =>
    con.runAndReadAll(`SELECT * FROM read_parquet('${file}') WHERE session_id = '${sids[i]}'`),
  );
  await time(`${name}: DuckDB, every column of 14 calls (≈ 100 rows) by number`, () =>
    byNumber(file, callRows.slice(0, 14).flat()),
  );
  await time(`${name}: DuckDB, every column of 100 scattered rows by number`, () => byNumber(file, scattered()));
}
// No page cache: the second round of the same calls would find their pages decompressed already.
const reader = new PageReader(new PagedFiles(512, 0));
await time("paged file: page reader, every column of one call", (i) => reader.read(paged, def, callRows[i]!));
await time("paged file: page reader, every column of 14 calls (≈ 100 rows)", () =>
  reader.read(paged, def, callRows.slice(0, 14).flat()),
);
await time("paged file: page reader, every column of 100 scattered rows", () => reader.read(paged, def, scattered()));
if (!reader.read(paged, def, [0])) throw new Error("the page reader did not read the paged file");
console.log(`| what | p50 ms | p95 ms |\n|---|---|---|\n${results.join("\n")}`);
rmSync(duckFile, { force: true });
rmSync(paged, { force: true });
