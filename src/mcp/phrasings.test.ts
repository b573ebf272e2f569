import { describe, expect, test } from "bun:test";
import { summaryOf } from "./filters.ts";
import { understand } from "./phrases.ts";
import { PHRASINGS } from "./phrasings.corpus.ts";

/** The phrasing corpus (phrasings.corpus.ts; docs/MCP.md "Filters") through the regex parser. */
const NOW = Date.UTC(2026, 10, 26, 14, 30, 0);

describe("phrasings an engineer types → filters", () => {
  test("the corpus holds at least 60 phrasings, each once", () => {
    expect(PHRASINGS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(PHRASINGS.map((p) => p.text)).size).toBe(PHRASINGS.length);
  });

  test.each(PHRASINGS.map((p) => [p.text, p] as const))("%p", (_text, p) => {
    const u = understand(p.text, NOW);
    const { time_range_label, from_ms, to_ms, ...filters } = u.filters;
    expect({ filters, time: time_range_label, ignored: u.ignored, understood: u.understood }).toEqual({
      filters: p.filters,
      time: p.time ?? "last_hour",
      ignored: p.ignored ?? [],
      understood: p.understood ?? true,
    });
    expect(from_ms).toBeLessThanOrEqual(to_ms!);
  });
});

describe("the summary line", () => {
  test.each([
    ["please INVITEs from 1001 in the last hour", "Understood: method INVITE, from user 1001, last 1 h"],
    [
      "please show INVITEs from 1001 with bad audio",
      "Understood: method INVITE, from user 1001, last 1 h (default) · Ignored: 'bad', 'audio'",
    ],
    ["show busy calls today", "Understood: busy calls (486 or 600 to INVITE), today (UTC)"],
    ["5xx from 10.0.0.1 since 10:00", "Understood: response 5xx, from IP 10.0.0.1, since 10:00 UTC"],
    [
      "how is the weather",
      'Not understood: no word maps to a filter (ignored: \'weather\'); nothing was searched. Try e.g. "INVITEs from 1001 in the last hour" or "busy calls today"',
    ],
  ])("%p", (text, line) => {
    const u = understand(text, NOW);
    expect(summaryOf(u.filters, u.ignored, u.understood, u.timeDefault)).toBe(line);
  });

  test("time words resolve against now (UTC days, a clock time later than now is yesterday's)", () => {
    const midnight = Date.UTC(2026, 10, 26);
    expect(understand("today", NOW).filters).toMatchObject({ from_ms: midnight, to_ms: NOW });
    expect(understand("gestern", NOW).filters).toMatchObject({ from_ms: midnight - 86_400_000, to_ms: midnight - 1 });
    expect(understand("since 10:00", NOW).filters).toMatchObject({ from_ms: midnight + 10 * 3_600_000, to_ms: NOW });
    expect(understand("since 16:00", NOW).filters).toMatchObject({
      time_range_label: "since_16:00",
      from_ms: midnight - 8 * 3_600_000,
      to_ms: NOW,
    });
    expect(understand("since 2 pm", NOW).filters).toMatchObject({ time_range_label: "since_14:00" });
    expect(understand("between 9 and 10:30", NOW).filters).toMatchObject({
      from_ms: midnight + 9 * 3_600_000,
      to_ms: midnight + 10.5 * 3_600_000,
    });
  });
});
