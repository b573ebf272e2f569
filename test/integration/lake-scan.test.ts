import { describe, expect, test } from "bun:test";
import type { TableDef } from "../../src/core/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "scan_probe",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "session_id", type: "varchar" },
    { name: "cid", type: "varchar" },
  ],
  timeColumn: "timestamp",
  sortBy: ["session_id", "timestamp"],
};

/** Files a scan reads (the read_parquet lists of its SQL), in order. */
/** The lake's data files a scan reads (not the spool's, which may be Parquet seals too). */
const filesOf = (sql: string) =>
  [...sql.matchAll(/'([^']+\.parquet)'/g)].map((m) => m[1]!).filter((f) => !f.includes("/spool/"));

describe("Lake.scanSql file selection", () => {
  test("equals prunes files by min/max and all-NULL columns; newestFirst orders files and buffer", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const lake = a.app.lake!;
    await lake.defineTable(def);
    const key = "main.scan_probe";
    const t0 = Date.UTC(2026, 10, 1) * 1000;
    // Three flushes → three files: ids a-c (no cid), m-p (no cid), x-z with cid "corr-1".
    const batches = [
      { ids: ["a", "b", "c"], cid: null, t: t0 },
      { ids: ["m", "n", "p"], cid: null, t: t0 + 60_000_000 },
      { ids: ["x", "y", "z"], cid: "corr-1", t: t0 + 120_000_000 },
    ];
    for (const b of batches) {
      for (const [i, id] of b.ids.entries()) {
        const r = lake
          .row(key)!
          .time(b.t + i)
          .str(id);
        r.str(b.cid).end();
      }
      await lake.flush();
    }
    const all = filesOf(await lake.scanSql(key, { buffer: false }));
    expect(all).toHaveLength(3);
    const [fa, fm, fx] = all;

    expect(
      filesOf(await lake.scanSql(key, { buffer: false, equals: { column: "session_id", values: ["b"] } })),
    ).toEqual([fa!]);
    expect(
      filesOf(await lake.scanSql(key, { buffer: false, equals: { column: "session_id", values: ["o"] } })),
    ).toEqual([fm!]); // inside [m, p]: may be there
    expect(
      filesOf(await lake.scanSql(key, { buffer: false, equals: { column: "session_id", values: ["b", "y"] } })),
    ).toEqual([fa!, fx!]);
    expect(
      filesOf(await lake.scanSql(key, { buffer: false, equals: { column: "session_id", values: ["d", "q"] } })),
    ).toEqual([]);
    // cid is NULL in every row of the first two files.
    expect(
      filesOf(await lake.scanSql(key, { buffer: false, equals: { column: "cid", values: ["corr-1", "b"] } })),
    ).toEqual([fx!]);
    await expect(lake.scanSql(key, { equals: { column: "timestamp", values: ["x"] } })).rejects.toThrow(/VARCHAR/);

    // The pruned scan still answers the query exactly, buffer rows included.
    lake
      .row(key)!
      .time(t0 + 180_000_000)
      .str("b")
      .str(null)
      .end();
    await lake.sync();
    const scan = await lake.scanSql(key, { equals: { column: "session_id", values: ["b"] } });
    const got = await lake.query(
      `SELECT session_id, epoch_us("timestamp") AS ts FROM (${scan}) t WHERE session_id = 'b' ORDER BY ts`,
    );
    expect(got.rows).toEqual([
      { session_id: "b", ts: t0 + 1 },
      { session_id: "b", ts: t0 + 180_000_000 },
    ]);

    // Newest first: files by their newest row, the buffer before them.
    const newest = await lake.scanSql(key, { newestFirst: true });
    expect(filesOf(newest)).toEqual([fx!, fm!, fa!]);
    // The buffer (spool files, CSV or Parquet seals) is read before the data files, or after them.
    expect(newest.indexOf("/spool/")).toBeGreaterThanOrEqual(0);
    expect(newest.indexOf("/spool/")).toBeLessThan(newest.indexOf("/lake/"));
    const oldest = await lake.scanSql(key, {});
    expect(oldest.indexOf("/spool/")).toBeGreaterThan(oldest.indexOf("/lake/"));
  });
});
