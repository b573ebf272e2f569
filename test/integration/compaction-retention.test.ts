/**
 * Retention and compaction together (docs/ARCHITECTURE.md "Maintenance": retention deletes by timestamp while tables
 * partition by date, so the one partition cut by the retention cutoff is skipped until the cutoff
 * passes it): files wholly older than the cutoff are retired, the partition holding the cutoff is
 * never merged (a merged file would straddle the cutoff and outlive it), newer partitions are.
 */
import { describe, expect, test } from "bun:test";
import { DAY_MS, filesByPartition, metricValue, openLake, writeFile, KEY } from "./compaction-helpers.ts";
import { tempDir } from "../harness.ts";

const HOUR_US = 3_600_000_000;

describe.each(["duckdb", "native"] as const)("engine %s", (engine) => {
  test("the partition cut by the retention cutoff is not merged until the cutoff passes it", async () => {
    await using dir = tempDir();
    // Maintenance "now" at the next 12:00 UTC (never before the files' commits: min_age_sec 0 holds),
    // so with 3 days of retention the cutoff is 12:00 of a day three days back.
    const nowMs = Math.ceil((Date.now() + 60_000) / (DAY_MS / 2)) * (DAY_MS / 2);
    const noon = nowMs % DAY_MS === 0 ? nowMs + DAY_MS / 2 : nowMs;
    const cutoffUs = (noon - 3 * DAY_MS) * 1000;
    const date = (us: number) => new Date(us / 1000).toISOString().slice(0, 10);
    await using h = await openLake(dir.path, { engine, min_age_sec: 0 }, { retention: { days: 3 } });
    // The day before the cut: two files; the cut day: two files before and two after the cutoff;
    // the day after: two files.
    for (const us of [cutoffUs - 25 * HOUR_US, cutoffUs - 23 * HOUR_US]) await writeFile(h.lake, us);
    for (const us of [cutoffUs - 2 * HOUR_US, cutoffUs - HOUR_US, cutoffUs + HOUR_US, cutoffUs + 2 * HOUR_US])
      await writeFile(h.lake, us);
    for (const us of [cutoffUs + 23 * HOUR_US, cutoffUs + 25 * HOUR_US]) await writeFile(h.lake, us);
    const [older, cut, next] = [date(cutoffUs - DAY_MS * 1000), date(cutoffUs), date(cutoffUs + DAY_MS * 1000)];
    const afterCutoff = (await filesByPartition(h.lake))
      .get(cut)!
      .slice(2)
      .map((f) => f.path);

    const r = await h.lake.maintain(noon);
    expect(r.retired).toBe(4);
    const parts = await filesByPartition(h.lake);
    expect(parts.has(older)).toBe(false);
    // The cut partition keeps its two files after the cutoff as they were: not merged.
    expect(parts.get(cut)!.map((f) => f.path)).toEqual(afterCutoff);
    expect(parts.get(next)!.map((f) => f.rows)).toEqual([40]);
    expect(
      metricValue(h.metrics, "svc_lake_compaction_skipped_total", { table: KEY, reason: "retention_cut" }),
    ).toBeGreaterThanOrEqual(1);
    const left = await h.lake.query(`SELECT count(*) AS n FROM svc_lake.main.ce_hep`);
    expect(left.rows[0]!.n).toBe(80);

    // A day later the cutoff has passed the whole cut partition: retired; the next day's merged
    // file straddles the new cutoff and stays.
    const r2 = await h.lake.maintain(noon + DAY_MS);
    expect(r2.retired).toBe(2);
    const later = await filesByPartition(h.lake);
    expect(later.has(cut)).toBe(false);
    expect(later.get(next)!.map((f) => f.rows)).toEqual([40]);
  });
});
