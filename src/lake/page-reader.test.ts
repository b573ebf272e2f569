import { describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TableDef } from "../core/index.ts";
import { repageParquet } from "../core/parquet/repage.ts";
import { PageReader } from "./page-reader.ts";

const def: TableDef = {
  schema: "main",
  name: "t",
  columns: [
    { name: "uuid", type: "varchar" },
    { name: "ts", type: "timestamp" },
    { name: "day", type: "date" },
    { name: "sid", type: "varchar" },
    { name: "caller", type: "varchar" },
    { name: "port", type: "int32" },
    { name: "node", type: "int64" },
    { name: "payload", type: "varchar" },
    { name: "later", type: "varchar" },
  ],
  timeColumn: "ts",
  sortBy: ["sid", "ts"],
};

describe("PageReader", () => {
  test("rows by number from a paged file equal DuckDB's, NULLs, dictionaries and absent columns included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-pages-"));
    const db = await DuckDBInstance.create(":memory:");
    const con = await db.connect();
    try {
      await con.run("SET TimeZone = 'UTC'");
      const src = join(dir, "duck.parquet");
      const paged = join(dir, "paged.parquet");
      // `later` is not in the file (a column added after it was written): NULL.
      await con.run(`COPY (
        SELECT uuid()::VARCHAR AS uuid, TIMESTAMP '2026-11-29 10:00:00' + INTERVAL (i * 997) MILLISECOND AS ts,
               (DATE '2026-11-29' + (i // 30000)::INTEGER) AS day,
               'c' || (i // 7) || '@10.0.0.' || (i % 5) AS sid,
               CASE WHEN i % 13 = 0 THEN NULL ELSE 'user' || (i % 300) END AS caller,
               CASE WHEN i % 17 = 0 THEN NULL ELSE (5000 + i % 100)::INTEGER END AS port,
               (i * 1000000007)::BIGINT AS node,
               CASE WHEN i % 9 = 0 THEN NULL ELSE 'INVITE sip:' || i || ' SIP/2.0\r\nVia: Zoë ☎\r\n' || repeat('h', i % 200) END AS payload
        FROM range(50000) r(i) ORDER BY sid, ts
      ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 16384)`);
      await repageParquet(src, paged, { rowsPerPage: 500 });
      const reader = new PageReader();
      const wanted = [0, 1, 499, 500, 501, 16383, 16384, 20000, 33333, 49999, 7, 25000, 25001, 40000];
      // Advice before a read loads the offset indexes of the columns advised, in the row groups of
      // the rows, and of no other column; a file gone and rows past the end are skipped.
      const idx = (c: string) =>
        reader.layouts.withFile(
          paged,
          (_fd, index) => index.groups.map((g) => g.get(c)?.pages !== undefined),
          () => [],
        );
      reader.adviseMany(
        [
          { path: paged, rows: [1, 20000] },
          { path: join(dir, "gone.parquet"), rows: [1] },
          { path: paged, rows: [50000] },
        ],
        { columns: def.columns.filter((c) => c.name === "uuid" || c.name === "sid") },
      );
      expect({ uuid: idx("uuid"), sid: idx("sid"), payload: idx("payload") }).toEqual({
        uuid: [true, true, false, false],
        sid: [true, true, false, false],
        payload: [false, false, false, false],
      });
      const got = reader.read(paged, def, wanted)!;
      expect(got).toBeDefined();
      const rows = (
        await con.runAndReadAll(
          `SELECT file_row_number AS n, uuid, epoch_us(ts) AS ts, day::VARCHAR AS day, sid, caller, port, node, payload, NULL AS later FROM read_parquet('${paged}', file_row_number = true) WHERE file_row_number IN (${wanted.join(", ")})`,
        )
      ).getRowObjectsJson() as Record<string, unknown>[];
      const byRow = new Map(rows.map((r) => [Number(r.n), r]));
      wanted.forEach((n, j) => {
        const { n: _n, ...expected } = byRow.get(n)!;
        expect(got[j]).toEqual({ ...expected, ts: Number(expected.ts), node: Number(expected.node) });
      });
      expect(got.some((r) => r.caller === null) || got.some((r) => r.payload === null)).toBe(true);
      // Read again: the same values, the pages from the cache of decompressed pages.
      const reads = reader.layouts.pageStats.reads;
      expect(reader.read(paged, def, wanted)).toEqual(got);
      expect(reader.layouts.pageStats.reads).toBe(reads);
      expect(reader.layouts.pageStats.hits).toBeGreaterThan(0);
      // DuckDB's own file has no offset index: its pages are found by their headers, and with
      // chunks this small (a flush file's) its rows are read here too, the same values.
      expect(reader.read(src, def, wanted)).toEqual(got);
      // Chunks past 4 MiB uncompressed without pages: left to DuckDB.
      const big = join(dir, "big.parquet");
      await con.run(
        `COPY (SELECT i::VARCHAR AS uuid, TIMESTAMP '2026-11-29 10:00:00' AS ts, repeat('p', 400) || i AS payload FROM range(16384) r(i)) TO '${big}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 16384)`,
      );
      const small = { ...def, columns: def.columns.filter((c) => c.name !== "payload") };
      expect(reader.read(big, small, [1])).toBeDefined();
      expect(reader.read(big, def, [1])).toBeUndefined();
      expect(reader.read(join(dir, "gone.parquet"), def, [1])).toBeUndefined();
      expect(reader.read(paged, def, [50000])).toBeUndefined();
    } finally {
      con.closeSync();
      db.closeSync();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
