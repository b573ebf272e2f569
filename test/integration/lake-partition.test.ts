import { describe, expect, test } from "bun:test";
import type { TableDef } from "../../src/core/index.ts";
import { singleDate, spoolDeletable, type SpoolEntry } from "../../src/lake/writer/writer.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "part_probe",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "date", type: "date", derived: "date_of:timestamp" },
    { name: "v", type: "varchar" },
  ],
  timeColumn: "timestamp",
  partitionBy: "date",
  sortBy: ["timestamp"],
};

const DAY_US = 86_400_000_000;
const MIDNIGHT = Date.UTC(2026, 10, 24) * 1000;

describe("flush partitions", () => {
  test("singleDate: one UTC date from the spool spans, undefined across midnight or when unknown", () => {
    const e = (min: number, max: number): SpoolEntry => ({
      seq: 1,
      file: "f",
      rows: 1,
      def,
      atMs: 0,
      span: { min, max },
    });
    expect(singleDate(def, [e(MIDNIGHT, MIDNIGHT + DAY_US - 1)])).toBe("2026-11-24");
    expect(singleDate(def, [e(MIDNIGHT + 5, MIDNIGHT + 6), e(MIDNIGHT - 1, MIDNIGHT - 1)])).toBeUndefined();
    expect(singleDate(def, [e(MIDNIGHT, MIDNIGHT), { seq: 2, file: "g", rows: 1, def, atMs: 0 }])).toBeUndefined();
    expect(singleDate(def, [])).toBeUndefined();
    expect(singleDate({ ...def, partitionBy: undefined }, [e(MIDNIGHT, MIDNIGHT)])).toBeUndefined();
    expect(singleDate(def, [e(-DAY_US * 365 * 1000, -DAY_US * 365 * 1000)])).toBeUndefined(); // year < 1000
  });

  test("rows on both sides of midnight land in two date partitions; a NULL time in a third", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const lake = a.app.lake!;
    await lake.defineTable(def);
    const key = "main.part_probe";
    lake
      .row(key)!
      .time(MIDNIGHT - 1)
      .str("before")
      .end();
    lake.row(key)!.time(MIDNIGHT).str("after").end();
    lake
      .row(key)!
      .time(MIDNIGHT + 10)
      .str("after2")
      .end();
    lake.row(key)!.time(null).str("no-time").end();
    await lake.flush();
    // Then a batch inside one day: one file, the fast path.
    lake
      .row(key)!
      .time(MIDNIGHT + 20)
      .str("same-day")
      .end();
    await lake.flush();
    // summary(): committed files from catalog statistics, the buffer from the spans its batches kept.
    lake
      .row(key)!
      .time(MIDNIGHT + 5_000_000)
      .str("buffered-late")
      .end();
    lake
      .row(key)!
      .time(MIDNIGHT - 7_000_000)
      .str("buffered-early")
      .end();
    await lake.sync();
    const sum = await lake.summary();
    const truth = (
      await lake.query(
        `SELECT count(*) AS n, epoch_us(min(timestamp)) AS lo, epoch_us(max(timestamp)) AS hi FROM svc_lake.main.part_probe`,
      )
    ).rows[0]!;
    expect(sum).toEqual({ rows: Number(truth.n), minUs: Number(truth.lo), maxUs: Number(truth.hi) });
    expect(sum).toEqual({ rows: 7, minUs: MIDNIGHT - 7_000_000, maxUs: MIDNIGHT + 5_000_000 });
    await lake.flush();
    const files = (await lake.files(key)).map((f) => f.path).sort();
    expect(files.filter((p) => p.includes("date=2026-11-23"))).toHaveLength(2);
    expect(files.filter((p) => p.includes("date=2026-11-24"))).toHaveLength(3);
    expect(files.filter((p) => p.includes("date=__null"))).toHaveLength(1);
    expect(files).toHaveLength(6);
    const rows = await lake.query(`SELECT v, date::VARCHAR AS d FROM svc_lake.main.part_probe ORDER BY v`);
    expect(rows.rows).toEqual([
      { v: "after", d: "2026-11-24" },
      { v: "after2", d: "2026-11-24" },
      { v: "before", d: "2026-11-23" },
      { v: "buffered-early", d: "2026-11-23" },
      { v: "buffered-late", d: "2026-11-24" },
      { v: "no-time", d: null },
      { v: "same-day", d: "2026-11-24" },
    ]);
  });
});

describe("spool deletion after a flush", () => {
  const grace = { minMs: 2000, maxMs: 120_000 };
  test("kept for the minimum grace, then until the queries that started before the flush end, never past the maximum", () => {
    const flushed = 1_000_000;
    expect(spoolDeletable(flushed, flushed + 1999, undefined, grace)).toBe(false);
    expect(spoolDeletable(flushed, flushed + 2000, undefined, grace)).toBe(true);
    expect(spoolDeletable(flushed, flushed + 5000, flushed - 1, grace)).toBe(false); // a query planned before the flush still runs
    expect(spoolDeletable(flushed, flushed + 5000, flushed, grace)).toBe(false);
    expect(spoolDeletable(flushed, flushed + 5000, flushed + 1, grace)).toBe(true); // only newer queries run
    expect(spoolDeletable(flushed, flushed + 120_000, flushed - 1, grace)).toBe(true);
  });
});
