import { describe, expect, test } from "bun:test";
import { chooseBucket, renderChart } from "./chart.ts";
import { rowTimeUs } from "./row-time.ts";

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

describe("chart", () => {
  test.each([
    [30_000, "1s"],
    [60_000, "1s"],
    [5 * MIN, "5s"],
    [10 * MIN, "10s"],
    [30 * MIN, "30s"],
    [HOUR, "1m"],
    [6 * HOUR, "10m"],
    [12 * HOUR, "30m"],
    [DAY, "30m"],
    [2 * DAY, "1h"],
    [7 * DAY, "3h"],
    [30 * DAY, "12h"],
    [60 * DAY, "1d"],
    [365 * DAY, "7d"],
    [5000 * DAY, "84d"],
  ])("range %p ms → bucket %p", (range, label) => {
    const b = chooseBucket(range);
    expect(b.label).toBe(label);
    expect(Math.ceil(range / b.ms)).toBeLessThanOrEqual(60);
  });

  test("counts per bucket over the searched range, bars scaled to the largest", () => {
    const from = Date.UTC(2024, 4, 1, 12, 0, 0);
    const at = (ms: number) => ({ timestamp_us: (from + ms) * 1000 });
    const rows = [at(1000), at(2000), at(61_000), at(5 * MIN + 10), at(5 * MIN + 20), at(5 * MIN + 30), at(5 * MIN + 40)];
    const out = renderChart(rows, { fromMs: from, toMs: from + 10 * MIN, width: 40 });
    expect(out[0]).toBe("Events over time: 2024-05-01T12:00:00Z → 2024-05-01T12:10:00Z, bucket 10s, 7 rows");
    const bars = out.slice(1);
    expect(bars.length).toBe(61);
    const barLen = 40 - 8 - 1 - 4;
    expect(bars[0]).toBe(`12:00:00 │ 2 ${"█".repeat(Math.round((2 / 4) * barLen))}`);
    expect(bars[1]).toBe("12:00:10 │ 0");
    expect(bars[6]).toBe(`12:01:00 │ 1 ${"█".repeat(Math.round((1 / 4) * barLen))}`);
    expect(bars[30]).toBe(`12:05:00 │ 4 ${"█".repeat(barLen)}`);
    expect(bars.reduce((n, l) => n + Number(/│ +(\d+)/.exec(l)![1]), 0)).toBe(7);
  });

  test("SQL rows (no searched range) use their own range; rows outside or without time are counted apart", () => {
    const t0 = Date.UTC(2024, 0, 1);
    const out = renderChart([{ time: new Date(t0).toISOString() }, { time: new Date(t0 + 2 * DAY).toISOString() }, { x: 1 }], { width: 60 });
    expect(out[0]).toContain("bucket 1h, 2 rows");
    expect(out[1]).toStartWith("2024-01-01 00:00 │ 1");
    expect(out.at(-1)).toBe("(1 rows without a time)");
    const outside = renderChart([{ timestamp_us: (t0 - DAY) * 1000 }], { fromMs: t0, toMs: t0 + HOUR, width: 60 });
    expect(outside.at(-1)).toBe("(1 rows outside the range)");
  });

  test.each([
    [{ timestamp_us: 1714564800123456 }, 1714564800123456],
    [{ timestamp_us: "1714564800123456" }, 1714564800123456],
    [{ timestamp: "2024-05-01T12:00:00.123456Z" }, 1714564800123456],
    [{ timestamp: "2024-05-01 12:00:00.5" }, 1714564800500000],
    [{ time: 1714564800123 }, 1714564800123000],
    [{ timestamp: 1714564800123456 }, 1714564800123456],
    [{ other: 1 }, undefined],
  ])("row time of %p", (row, us) => expect(rowTimeUs(row)).toBe(us as number));
});
