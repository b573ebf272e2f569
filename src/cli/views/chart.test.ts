import { describe, expect, test } from "bun:test";
import { histogramChart, renderChart, rowsChart, type ServerHistogram } from "./chart.ts";
import { rowTimeUs } from "./row-time.ts";

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const countOf = (line: string) => Number(/│ +(\d+)/.exec(line)![1]);

describe("chart", () => {
  test("rows: counts per bucket over the searched range, bars scaled to the largest", () => {
    const from = Date.UTC(2024, 4, 1, 12, 0, 0);
    const at = (ms: number) => ({ timestamp_us: (from + ms) * 1000 });
    const rows = [
      at(1000),
      at(2000),
      at(61_000),
      at(5 * MIN + 10),
      at(5 * MIN + 20),
      at(5 * MIN + 30),
      at(5 * MIN + 40),
    ];
    const out = renderChart(rowsChart(rows, { fromMs: from, toMs: from + 10 * MIN }), { width: 40 });
    expect(out[0]).toBe("Events over time: 2024-05-01T12:00:00Z → 2024-05-01T12:10:00Z, bucket 10s, 7 rows");
    const bars = out.slice(1);
    // The range's end (12:10:00) falls in the last bucket: no bucket of its own.
    expect(bars.length).toBe(60);
    const barLen = 40 - 8 - 1 - 4;
    expect(bars[0]).toBe(`12:00:00 │ 2 ${"█".repeat(Math.round((2 / 4) * barLen))}`);
    expect(bars[1]).toBe("12:00:10 │ 0");
    expect(bars[6]).toBe(`12:01:00 │ 1 ${"█".repeat(Math.round((1 / 4) * barLen))}`);
    expect(bars[30]).toBe(`12:05:00 │ 4 ${"█".repeat(barLen)}`);
    expect(bars.reduce((n, l) => n + countOf(l), 0)).toBe(7);
  });

  test("rows of SQL (no searched range) use their own range; rows outside or without time are counted apart", () => {
    const t0 = Date.UTC(2024, 0, 1);
    const out = renderChart(
      rowsChart([{ time: new Date(t0).toISOString() }, { time: new Date(t0 + 2 * DAY).toISOString() }, { x: 1 }], {}),
      { width: 60 },
    );
    expect(out[0]).toContain("bucket 1h, 2 rows");
    expect(out[1]).toStartWith("2024-01-01 00:00 │ 1");
    expect(out.at(-1)).toBe("(1 rows without a time)");
    const outside = renderChart(rowsChart([{ timestamp_us: (t0 - DAY) * 1000 }], { fromMs: t0, toMs: t0 + HOUR }), {
      width: 60,
    });
    expect(outside[0]).toEndWith(", 0 rows");
    expect(outside.at(-1)).toBe("(1 rows outside the range)");
  });

  test("the server's histogram: its buckets as they are, stacked by group with a legend", () => {
    const from = Date.UTC(2024, 4, 1, 23, 0, 0);
    const h: ServerHistogram = {
      window: { from_ms: from, to_ms: from + 2 * HOUR },
      interval: "30m",
      interval_ms: 30 * MIN,
      total: 1210,
      groups: [
        { key: "INVITE", total: 600 },
        { key: "2xx", total: 600 },
        { key: "4xx", total: 10 },
      ],
      buckets: [
        { start_ms: from, count: 1000, groups: { INVITE: 500, "2xx": 500 } },
        { start_ms: from + 30 * MIN, count: 0, groups: {} },
        { start_ms: from + 60 * MIN, count: 200, groups: { INVITE: 100, "2xx": 100 } },
        { start_ms: from + 90 * MIN, count: 10, groups: { "4xx": 10 } },
      ],
    };
    const out = renderChart(histogramChart(h), { width: 50 });
    expect(out[0]).toBe(
      "Events over time: 2024-05-01T23:00:00Z → 2024-05-02T01:00:00Z, bucket 30m, 1210 events (whole range)",
    );
    expect(out[1]).toBe("  █ INVITE 600  ▓ 2xx 600  ▒ 4xx 10");
    // Across midnight: labels carry the day.
    const barLen = 50 - 16 - 4 - 4;
    expect(out[2]).toBe(`2024-05-01 23:00 │ 1000 ${"█".repeat(barLen / 2)}${"▓".repeat(barLen / 2)}`);
    expect(out[3]).toBe("2024-05-01 23:30 │    0");
    // 200 of 1000 is 5 of 26 cells; 100 of 200 rounds to 3 of them.
    expect(out[4]).toBe(`2024-05-02 00:00 │  200 ${"█".repeat(3)}${"▓".repeat(2)}`);
    expect(out[5]).toBe("2024-05-02 00:30 │   10 ▏");
    expect(out.slice(2).reduce((n, l) => n + countOf(l), 0)).toBe(1210);
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
