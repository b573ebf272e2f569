import { describe, expect, test } from "bun:test";
import { countText, countTicks, histogramRequest, seriesColors, timeTicks, widthText } from "./histogram.ts";
import type { SearchBody } from "./search-body.ts";

const MIN = 60_000;
const HOUR = 60 * MIN;
const pad = (n: number) => String(n).padStart(2, "0");

describe("time chart helpers", () => {
  test.each([
    [1_000, "1 s"],
    [30_000, "30 s"],
    [5 * MIN, "5 min"],
    [HOUR, "1 hour"],
    [3 * HOUR, "3 hours"],
    [24 * HOUR, "1 day"],
    [4 * 24 * HOUR, "4 days"],
    [1500, "1500 ms"],
  ])("width %p ms reads %p", (ms, text) => expect(widthText(ms)).toBe(text));

  test("counts read with thousands separators", () => {
    expect([0, 999, 1234, 1234567].map(countText)).toEqual(["0", "999", "1,234", "1,234,567"]);
  });

  test.each([
    [0, [0, 1]],
    [1, [0, 1]],
    [4, [0, 1, 2, 3, 4]],
    [7, [0, 2, 4, 6, 8]],
    [23, [0, 5, 10, 15, 20, 25]],
    [100, [0, 20, 40, 60, 80, 100]],
    [1234, [0, 500, 1000, 1500]],
  ])("y ticks up to %p: %p", (max, ticks) => expect(countTicks(max)).toEqual(ticks));

  test("time ticks fall on round local times, at most about eight across the range, a step of whole buckets", () => {
    const from = new Date(2026, 0, 10, 9, 7, 13).getTime();
    const ticks = timeTicks(from, from + 3 * HOUR, 5 * MIN);
    expect(ticks.length).toBeGreaterThanOrEqual(5);
    expect(ticks.length).toBeLessThanOrEqual(9);
    for (const t of ticks) {
      const d = new Date(t.ms);
      expect([d.getMinutes() % 30, d.getSeconds()]).toEqual([0, 0]);
      expect(t.label).toBe(`${pad(d.getHours())}:${pad(d.getMinutes())}`);
    }
    expect(ticks[0]!.ms).toBe(new Date(2026, 0, 10, 9, 30).getTime());
    // Local midnight shows the date.
    const night = timeTicks(new Date(2026, 0, 10, 20, 0).getTime(), new Date(2026, 0, 11, 8, 0).getTime(), 10 * MIN);
    expect(night.map((t) => t.label)).toEqual(["20:00", "22:00", "01-11", "02:00", "04:00", "06:00", "08:00"]);
  });

  test("every group gets its own colour, SIP ones from the palette", () => {
    const c = seriesColors(["INVITE", "OPTIONS", "NOTIFY", "2xx", "4xx", "other"]);
    expect(c.get("INVITE")).toBe("var(--ev-invite)");
    expect(c.get("2xx")).toBe("var(--ev-2xx)");
    expect(new Set(c.values()).size).toBe(6);
    // `request` and INVITE share a palette colour: the second one gets another.
    const d = seriesColors(["INVITE", "request"]);
    expect(d.get("request")).not.toBe(d.get("INVITE"));
  });

  test("the request carries the search's filter and window; tables without SIP columns are not grouped", () => {
    const search: SearchBody = {
      filter: { proto_type: 1, event_type: "call", from_user: "1001" },
      param: { limit: 200 },
      timestamp: { from: 1_000_000, to: 2_000_000 },
    };
    expect(histogramRequest(search, "method")).toEqual({
      filter: search.filter,
      timestamp: search.timestamp,
      group_by: "method",
      utc_offset_min: -new Date(1_000_000).getTimezoneOffset(),
    });
    const lp: SearchBody = { ...search, filter: { proto_type: 300, event_type: "metrics__cpu" } };
    expect(histogramRequest(lp, "status_class").group_by).toBe("none");
  });
});
