import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { duckScratch } from "../../test/harness.ts";
import { repageParquet } from "../core/parquet/repage.ts";
import { PagedFiles } from "./page-index.ts";
import { PageTimes } from "./page-time.ts";

describe("PageTimes", () => {
  test("the newest rows of a window are DuckDB's, ties at the last time included, and old row groups are not read", async () => {
    await using scratch = await duckScratch("svc-newest-");
    const { con, path: dir } = scratch;
    const src = join(dir, "duck.parquet");
    const paged = join(dir, "paged.parquet");
    // Times rising by row in steps of 7 rows sharing one time (ties), a stray late row in the
    // fourth row group (read first: its newest time is the newest), NULL every 97th row.
    await con.run(`COPY (
      SELECT CASE WHEN i % 97 = 0 THEN NULL
                  WHEN i = 31235 THEN TIMESTAMP '2026-11-29 23:00:00'
                  ELSE TIMESTAMP '2026-11-29 00:00:00' + INTERVAL (i // 7) SECOND END AS ts
      FROM range(60000) r(i)
    ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 10000)`);
    await repageParquet(src, paged, { rowsPerPage: 500, minPageBytes: 512 });
    const times = new PageTimes(new PagedFiles());
    const us = async (sql: string) =>
      Number((await con.runAndReadAll(`SELECT epoch_us(${sql}) AS t`)).getRowObjectsJson()[0]!.t);
    for (const [from, to, limit] of [
      ["TIMESTAMP '2026-11-29 00:00:00'", "TIMESTAMP '2026-11-30 00:00:00'", 100],
      ["TIMESTAMP '2026-11-29 00:00:00'", "TIMESTAMP '2026-11-29 01:00:00'", 30],
      ["TIMESTAMP '2026-11-29 00:10:00'", "TIMESTAMP '2026-11-29 00:20:00.5'", 12],
      ["TIMESTAMP '2027-01-01 00:00:00'", "TIMESTAMP '2027-01-02 00:00:00'", 5],
      // Rows 10 234-10 240 share 00:24:22 across the first two row groups (DuckDB makes them
      // 10 240 rows): the newest row is in the second, its ties in the first, read after it.
      ["TIMESTAMP '2026-11-29 00:00:00'", "TIMESTAMP '2026-11-29 00:24:22'", 1],
    ] as const) {
      const lo = await us(from);
      const hi = await us(to);
      const truth = (
        await con.runAndReadAll(
          `SELECT file_row_number AS n, epoch_us(ts) AS t FROM read_parquet('${src}', file_row_number = true) WHERE ts BETWEEN make_timestamp(${lo}) AND make_timestamp(${hi})`,
        )
      )
        .getRowObjectsJson()
        .map((r) => ({ t: Number(r.t), row: Number(r.n) }))
        .sort((a, b) => b.t - a.t || a.row - b.row);
      // The newest `limit`, and every other row at the last one's time.
      const last = truth[Math.min(limit, truth.length) - 1]?.t;
      const want = truth.filter((r, i) => i < limit || r.t === last);
      for (const file of [paged, src]) {
        const before = times.stats.groupsRead;
        expect(times.newest(file, "ts", lo, hi, limit)).toEqual(want);
        if (limit === 30) expect(times.stats.groupsRead - before).toBeLessThanOrEqual(2);
      }
    }
  });

  test("rows in a time window equal DuckDB's count, from statistics where a row group lies on one side", async () => {
    await using scratch = await duckScratch("svc-count-");
    const { con, path: dir } = scratch;
    const src = join(dir, "duck.parquet");
    const paged = join(dir, "paged.parquet");
    // Time rising with the row (row groups hold disjoint spans) except every 50th row of the
    // first two row groups, which lies far back (those groups cross any window's edge); NULL
    // every 97th row; µs that are not whole milliseconds and times before 1970 (negative) too.
    await con.run(`COPY (
      SELECT CASE WHEN i % 97 = 0 THEN NULL
                  WHEN i % 50 = 0 AND i < 20000 THEN TIMESTAMP '1969-12-31 23:00:00' + INTERVAL (i) MICROSECOND
                  ELSE TIMESTAMP '2026-11-29 00:00:00' + INTERVAL (i * 1003) MICROSECOND * 1000 END AS ts,
             'x' || i AS v
      FROM range(60000) r(i)
    ) TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 10000)`);
    await repageParquet(src, paged, { rowsPerPage: 500, minPageBytes: 512 });
    const layouts = new PagedFiles();
    const counter = new PageTimes(layouts);
    const us = async (sql: string) =>
      Number((await con.runAndReadAll(`SELECT epoch_us(${sql}) AS t`)).getRowObjectsJson()[0]!.t);
    const windows: Array<[string, string]> = [
      ["TIMESTAMP '2026-11-29 00:00:00'", "TIMESTAMP '2026-11-30 00:00:00'"],
      ["TIMESTAMP '2026-11-29 00:05:00'", "TIMESTAMP '2026-11-29 00:40:00.123456'"],
      ["TIMESTAMP '1969-12-31 22:00:00'", "TIMESTAMP '1969-12-31 23:00:00.030000'"],
      ["TIMESTAMP '2026-11-29 00:16:43.003'", "TIMESTAMP '2026-11-29 00:16:43.003'"],
      ["TIMESTAMP '2027-01-01 00:00:00'", "TIMESTAMP '2027-01-02 00:00:00'"],
    ];
    for (const [from, to] of windows) {
      const lo = await us(from);
      const hi = await us(to);
      const truth = Number(
        (
          await con.runAndReadAll(
            `SELECT count(*) AS n FROM read_parquet('${src}') WHERE ts BETWEEN make_timestamp(${lo}) AND make_timestamp(${hi})`,
          )
        ).getRowObjectsJson()[0]!.n,
      );
      expect(counter.count(paged, "ts", lo, hi)).toBe(truth);
      expect(counter.count(src, "ts", lo, hi)).toBe(truth);
    }
    // The windows above were counted partly from statistics, partly from pages.
    expect(counter.stats.groupsByStats).toBeGreaterThan(0);
    expect(counter.stats.groupsRead).toBeGreaterThan(0);
    // A column the file lacks is never in a window; a VARCHAR column is not counted here.
    expect(counter.count(paged, "later", 0, Number.MAX_SAFE_INTEGER)).toBe(0);
    expect(counter.count(paged, "v", 0, Number.MAX_SAFE_INTEGER)).toBeUndefined();
    expect(counter.count(join(dir, "gone.parquet"), "ts", 0, 1)).toBeUndefined();
  });
});
