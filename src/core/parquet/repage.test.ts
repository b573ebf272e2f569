import { describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, readOffsetIndex } from "hyparquet";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repageParquet } from "./repage.ts";
import { repageInWorker } from "./repage-host.ts";

async function duck() {
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  const all = async (sql: string) => (await con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  return { con, all, [Symbol.dispose]: () => (con.closeSync(), db.closeSync()) };
}

const zstd = { ZSTD: (input: Uint8Array) => new Uint8Array(Bun.zstdDecompressSync(input)) };

describe("repageParquet", () => {
  test("DuckDB's file cut into pages: the same rows, statistics and bloom filters, and an offset index", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-repage-"));
    try {
      using d = await duck();
      const src = join(dir, "duck.parquet");
      const out = join(dir, "paged.parquet");
      // Unique strings with NULLs (PLAIN), a repeating one (dictionary, bloom filter), numbers of
      // every width, booleans, timestamps, a column that is NULL everywhere, non-ASCII text.
      await d.con.run(`COPY (
        SELECT i, 'call-' || i || '@' || (i % 97) AS sid,
               CASE WHEN i % 11 = 0 THEN NULL ELSE repeat('x', i % 50) || 'Zoë ☎ ' || i END AS payload,
               'user' || (i % 40) AS caller,
               (i * 1.5)::DOUBLE AS f, (i % 7)::INTEGER AS small, i % 3 = 0 AS b,
               TIMESTAMP '2026-11-29 00:00:00' + INTERVAL (i) SECOND AS ts,
               NULL::VARCHAR AS nothing
        FROM range(40000) r(i) ORDER BY sid
      ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384)`);
      const stats = await repageParquet(src, out, {
        rowsPerPage: 1000,
        minPageBytes: 0,
        bloomColumns: new Set(["sid"]),
      });
      expect(stats.split).toBeGreaterThan(0);
      expect(stats.copied).toBeGreaterThan(0); // the dictionary chunks
      const rows = (f: string) => d.all(`SELECT * FROM read_parquet('${f}') ORDER BY i`);
      const a = await rows(out);
      expect(a.length).toBe(40000);
      expect(a).toEqual(await rows(src));
      const meta = (f: string) =>
        d.all(
          `SELECT row_group_id, column_id, path_in_schema, type, stats_min_value, stats_max_value, stats_null_count, num_values, encodings, compression FROM parquet_metadata('${f}') ORDER BY 1, 2`,
        );
      expect(await meta(out)).toEqual(await meta(src));
      // Bloom filters survive the move: DuckDB's own probe answers the same on both files.
      const probe = (f: string, v: string) =>
        d.all(
          `SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('${f}', 'caller', '${v}') ORDER BY 1`,
        );
      for (const v of ["user3", "user39", "nobody"]) expect(await probe(out, v)).toEqual(await probe(src, v));
      expect((await probe(out, "nobody")).some((r) => r.bloom_filter_excludes === true)).toBe(true);
      // A PLAIN chunk named in bloomColumns gets a bloom filter DuckDB's probe uses: no false
      // negative for any value, and an absent value ruled out of most row groups.
      const sids = await d.all(`SELECT DISTINCT sid FROM read_parquet('${src}') USING SAMPLE 50 ROWS`);
      for (const { sid } of sids) {
        const r = await d.all(
          `SELECT row_group_id FROM parquet_bloom_probe('${out}', 'sid', '${sid}') WHERE NOT bloom_filter_excludes`,
        );
        const holders = await d.all(
          `SELECT DISTINCT (file_row_number // 16384)::BIGINT AS g FROM read_parquet('${out}', file_row_number = true) WHERE sid = '${sid}'`,
        );
        for (const h of holders) expect(r.map((x) => Number(x.row_group_id))).toContain(Number(h.g));
      }
      const absent = await d.all(
        `SELECT bloom_filter_excludes AS x FROM parquet_bloom_probe('${out}', 'sid', 'call-none@1')`,
      );
      expect(absent.filter((r) => r.x === true).length).toBeGreaterThanOrEqual(2);
      expect(absent.every((r) => r.x !== null)).toBe(true);
      // The offset index: the payload chunk of row group 1 in pages of 1000 rows.
      const file = await asyncBufferFromFile(out);
      const md = await parquetMetadataAsync(file);
      const payload = md.row_groups[1]!.columns.find((c) => c.meta_data!.path_in_schema[0] === "payload")!;
      const at = Number(payload.offset_index_offset);
      const index = readOffsetIndex({
        view: new DataView(await file.slice(at, at + payload.offset_index_length!)),
        offset: 0,
      });
      expect(index.page_locations.map((p) => Number(p.first_row_index))).toEqual(
        Array.from({ length: 17 }, (_v, k) => k * 1000),
      );
      // In a worker: the same bytes; a worker entry that cannot start leaves the work to this thread.
      const inWorker = join(dir, "worker.parquet");
      await repageInWorker(new URL("./repage-worker.ts", import.meta.url), src, inWorker, {
        rowsPerPage: 1000,
        minPageBytes: 0,
        bloomColumns: new Set(["sid"]),
      });
      expect(Buffer.compare(readFileSync(inWorker), readFileSync(out))).toBe(0);
      const fallback = join(dir, "fallback.parquet");
      await repageInWorker(new URL("./no-such-worker.ts", import.meta.url), src, fallback, {
        rowsPerPage: 1000,
        minPageBytes: 0,
        bloomColumns: new Set(["sid"]),
      });
      expect(Buffer.compare(readFileSync(fallback), readFileSync(out))).toBe(0);
      // A row range through the index gives DuckDB's rows (file order).
      const inFileOrder = await d.all(`SELECT sid, payload, i FROM read_parquet('${out}')`);
      const got = await parquetReadObjects({
        file,
        rowStart: 20500,
        rowEnd: 20510,
        columns: ["sid", "payload", "i"],
        useOffsetIndex: true,
        compressors: zstd,
      });
      expect(got.map((r) => ({ sid: r.sid, payload: r.payload ?? null, i: String(r.i) }))).toEqual(
        inFileOrder.slice(20500, 20510).map((r) => ({ sid: r.sid, payload: r.payload, i: String(r.i) })),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
