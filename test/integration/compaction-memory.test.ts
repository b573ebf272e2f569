/**
 * Compaction of wide rows within compaction.memory_limit (docs/ARCHITECTURE.md "Compaction
 * memory"): rows with 2 KB headers are merged in pieces the planner sizes for them, without an
 * out-of-memory error and without rewriting the same files every cycle; when the estimate is wrong
 * (2 KB values that Parquet dictionary-encodes to almost nothing) the merge that ran out of memory
 * is written in smaller pieces, the table's next merges stay smaller for a while, and files no
 * piece could take are left as they are instead of being retried every cycle.
 */
import { describe, expect, test } from "bun:test";
import { configureLogging } from "../../src/core/index.ts";
import type { Lake } from "../../src/lake/index.ts";
import { tempDir } from "../harness.ts";
import { day, KEY, metricValue, openLake, pad } from "./compaction-helpers.ts";

type Line = Record<string, unknown>;

/** Log lines of the lake's maintenance, captured while `fn` runs. */
async function withLog<T>(fn: (lines: Line[]) => Promise<T>): Promise<T> {
  const lines: Line[] = [];
  configureLogging({ level: "info", format: "json", sink: { write: (l) => lines.push(JSON.parse(l) as Line) } });
  try {
    return await fn(lines);
  } finally {
    configureLogging({ level: "error", format: "json" });
  }
}

const HEADER = `X-Long-Header: ${"h".repeat(2000)}`;

/** `files` flushes of `rows` rows each; `value(i)` is the payload of row i. */
async function writeWide(lake: Lake, files: number, rows: number, value: (i: number) => string): Promise<void> {
  const t0 = day(-1).at(1);
  for (let f = 0, i = 0; f < files; f++) {
    for (let r = 0; r < rows; r++, i++)
      lake
        .row(KEY)!
        .time(t0 + i)
        .str(`call-${i % 997}`)
        .str(value(i))
        .end();
    await lake.sync();
    await lake.flush();
  }
}

/** Row count and an order-independent digest of every row. */
async function digest(lake: Lake): Promise<Record<string, unknown>> {
  const r = await lake.query(
    `SELECT count(*) AS n, sum(hash(session_id, "timestamp", payload))::VARCHAR AS h, sum(length(payload)) AS bytes FROM svc_lake.main.ce_hep`,
  );
  return r.rows[0]!;
}

const paths = async (lake: Lake) => (await lake.files(KEY)).map((f) => f.path).sort();
const oomLines = (lines: Line[]) => lines.filter((l) => /out of memory/.test(String(l.msg)));

describe("compaction of wide rows", () => {
  test("120 000 rows with 2 KB headers (8 files) are merged in pieces that fit: no out-of-memory error, rows unchanged, nothing rewritten again", async () => {
    await using dir = tempDir();
    {
      await using h = await openLake(dir.path, { enable: false });
      // Unique rows (the header, then noise): Parquet keeps about 2 KB a row uncompressed.
      await writeWide(h.lake, 8, 15_000, (i) => `${HEADER}|${i}|${pad(i, 4)}`);
    }
    await withLog(async (lines) => {
      await using h = await openLake(dir.path, { min_age_sec: 0 });
      const before = await digest(h.lake);
      expect(before.n).toBe(120_000);
      const r = await h.lake.maintain();
      expect(r.merged).toBeGreaterThanOrEqual(6);
      expect((await h.lake.files(KEY)).length).toBeLessThanOrEqual(4);
      expect(await digest(h.lake)).toEqual(before);
      // Two more cycles: what is left is stable (no file rewritten alone, no merge retried).
      const settled = await paths(h.lake);
      await h.lake.maintain();
      await h.lake.maintain();
      expect(await paths(h.lake)).toEqual(settled);
      expect(oomLines(lines)).toEqual([]);
      expect(metricValue(h.metrics, "svc_lake_compaction_rollbacks_total")).toBe(0);
      expect(await digest(h.lake)).toEqual(before);
    });
  }, 120_000);

  test("a merge the estimate gets wrong runs out of memory: written in smaller pieces, then left alone for a while; files no piece takes stay as they are", async () => {
    await using dir = tempDir();
    {
      // Flush files written by DuckDB's COPY (the CSV spool): Parquet seals joined by the flush are
      // PLAIN-encoded and their footers give the true 2 KB a row, which the estimate gets right.
      await using h = await openLake(dir.path, { enable: false }, { spool_format: "csv" });
      // 50 distinct 2 KB values: dictionary-encoded, so the footers say ~30 KB a file while a sort holds 30 MB.
      await writeWide(h.lake, 8, 15_000, (i) => `${HEADER}${i % 50}`);
    }
    await withLog(async (lines) => {
      await using h = await openLake(dir.path, { min_age_sec: 0 });
      const before = await digest(h.lake);
      const files = (await h.lake.files(KEY)).length;
      expect(files).toBe(8);
      // Cycle 1: the whole merge runs out of memory and is written as smaller pieces.
      const r1 = await h.lake.maintain();
      expect(metricValue(h.metrics, "svc_lake_compaction_oom_splits_total", { table: KEY })).toBeGreaterThanOrEqual(1);
      expect(r1.merged).toBeGreaterThanOrEqual(4);
      expect(await digest(h.lake)).toEqual(before);
      const afterFirst = await paths(h.lake);
      expect(afterFirst.length).toBeLessThan(files);
      // Cycle 2: the lowered budget holds; no merge is tried, nothing runs out of memory.
      const seen = oomLines(lines).length;
      const r2 = await h.lake.maintain();
      expect(r2.merged).toBe(0);
      expect(oomLines(lines).length).toBe(seen);
      expect(await paths(h.lake)).toEqual(afterFirst);
      // Later cycles try the configured budget again (back-off); whatever no piece of two files can
      // take stays as it is, is counted, and is never rewritten alone.
      for (let i = 0; i < 4; i++) await h.lake.maintain();
      expect(await digest(h.lake)).toEqual(before);
      const left = await paths(h.lake);
      if (left.length === afterFirst.length) {
        expect(left).toEqual(afterFirst);
        // Counted as skipped: by a merge that ran out of memory, or before any try, since the
        // pieces written by cycle 1 are paged files without dictionaries whose footers give the
        // sort's true size (docs/STORAGE.md "Paged data files").
        const skipped = (reason: string) =>
          metricValue(h.metrics, "svc_lake_compaction_skipped_total", { table: KEY, reason });
        expect(skipped("out_of_memory") + skipped("sort_bytes")).toBeGreaterThanOrEqual(2);
      }
      // Out-of-memory retries over six cycles: the first cycle's, then at most two back-off trials.
      expect(metricValue(h.metrics, "svc_lake_compaction_oom_splits_total", { table: KEY })).toBeLessThanOrEqual(6);
    });
  }, 120_000);
});
