import { describe, expect, test } from "bun:test";
import {
  bucketGrid,
  bucketLabel,
  bucketOf,
  chooseBucketWidth,
  parseBucketWidth,
  TARGET_BUCKETS,
} from "./time-buckets.ts";

const S = 1_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe("bucket width", () => {
  test.each([
    [0, "1s", 1],
    [30 * S, "1s", 30],
    [2 * MIN, "1s", 120],
    [5 * MIN, "5s", 60],
    [15 * MIN, "10s", 90],
    [30 * MIN, "30s", 60],
    [HOUR, "30s", 120],
    [6 * HOUR, "5m", 72],
    [12 * HOUR, "10m", 72],
    [DAY, "30m", 48],
    [2 * DAY, "30m", 96],
    [7 * DAY, "3h", 56],
    [14 * DAY, "3h", 112],
    [30 * DAY, "6h", 120],
    [60 * DAY, "12h", 120],
    [90 * DAY, "1d", 90],
    [365 * DAY, "4d", 92],
  ])("range %p ms → %p (%p buckets)", (range, label, buckets) => {
    const w = chooseBucketWidth(range);
    expect(w.label).toBe(label);
    expect(Math.max(1, Math.ceil(range / w.ms))).toBe(buckets);
    expect(buckets).toBeLessThanOrEqual(TARGET_BUCKETS);
  });

  test("a smaller target (a terminal's lines) picks a wider step", () => {
    expect(chooseBucketWidth(HOUR, 60).label).toBe("1m");
    expect(chooseBucketWidth(DAY, 60).label).toBe("30m");
    expect(chooseBucketWidth(5000 * DAY, 60).label).toBe("84d");
  });

  test.each([
    ["30s", 30 * S, "30s"],
    ["5m", 5 * MIN, "5m"],
    [" 1h ", HOUR, "1h"],
    ["90m", 90 * MIN, "90m"],
    ["60m", HOUR, "1h"],
    ["1d", DAY, "1d"],
    ["366d", 366 * DAY, "366d"],
  ])("explicit width %p", (text, ms, label) => {
    expect(parseBucketWidth(text)).toEqual({ ok: true, value: { ms, label } });
  });

  test.each([
    ["", "syntax"],
    ["5", "syntax"],
    ["0m", "syntax"],
    ["-1m", "syntax"],
    ["1.5h", "syntax"],
    ["1w", "syntax"],
    ["1 minute", "syntax"],
    ["367d", "too_wide"],
  ])("explicit width %p is refused (%p)", (text, reason) => {
    const r = parseBucketWidth(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason as string).toBe(reason);
  });

  test("labels use the largest unit that divides the width", () => {
    expect([S, 90 * S, 2 * HOUR, 36 * HOUR, 7 * DAY, 1500].map(bucketLabel)).toEqual([
      "1s",
      "90s",
      "2h",
      "36h",
      "7d",
      "1500ms",
    ]);
  });
});

describe("bucket grid", () => {
  const t = Date.UTC(2026, 0, 10, 12, 3, 17, 250);

  test("starts at the last round time at or before from; the end falls in the last bucket", () => {
    const g = bucketGrid(t, t + HOUR, 5 * MIN);
    expect(g).toEqual({ originMs: Date.UTC(2026, 0, 10, 12, 0), widthMs: 5 * MIN, count: 13 });
    expect(bucketOf(g, t)).toBe(0);
    expect(bucketOf(g, t + HOUR)).toBe(12);
  });

  test("a range ending on a boundary has no bucket for its last instant alone", () => {
    const from = Date.UTC(2026, 0, 10, 12, 0);
    const g = bucketGrid(from, from + HOUR, 10 * MIN);
    expect(g.count).toBe(6);
    expect(bucketOf(g, from + HOUR)).toBe(5);
    expect(bucketOf(g, from + HOUR - 1)).toBe(5);
    expect(bucketOf(g, from + 10 * MIN)).toBe(1);
  });

  test("an empty range is one bucket; an offset east of UTC moves day buckets to local midnight", () => {
    expect(bucketGrid(t, t, MIN).count).toBe(1);
    const ist = bucketGrid(t, t + 2 * DAY, DAY, 330 * MIN);
    expect(ist.originMs).toBe(Date.UTC(2026, 0, 9, 18, 30));
    expect(ist.count).toBe(3);
  });
});
