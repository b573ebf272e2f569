import { describe, expect, test } from "bun:test";
import { formatTimestampUs, isoFromUs, parseDuration, parseTimestampUs } from "./time.ts";

describe("parseDuration", () => {
  test.each([
    ["30m", 1_800_000],
    ["1h", 3_600_000],
    ["2h30m", 9_000_000],
    ["1d", 86_400_000],
    ["7d", 604_800_000],
    ["90s", 90_000],
    ["500ms", 500],
    ["1.5h", 5_400_000],
    ["1w", 604_800_000],
    [" 3S ", 3000],
  ])("%p → %p ms", (text, ms) => expect(parseDuration(text)).toBe(ms));

  test.each(["", "30", "h", "1x", "1h 30m", "-1h", "1h30"])("%p is not a duration", (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );
});

describe("timestamp text", () => {
  const us = Date.UTC(2026, 10, 26, 1, 2, 3, 456) * 1000 + 789;
  test.each([
    [us, "2026-11-26 01:02:03.456789", "2026-11-26T01:02:03.456789Z"],
    [Date.UTC(2026, 0, 1) * 1000, "2026-01-01 00:00:00.000000", "2026-01-01T00:00:00.000000Z"],
    [Date.UTC(2026, 0, 1) * 1000 + 7, "2026-01-01 00:00:00.000007", "2026-01-01T00:00:00.000007Z"],
    [Date.UTC(1969, 11, 31, 23, 59, 59, 999) * 1000 + 1, "1969-12-31 23:59:59.999001", "1969-12-31T23:59:59.999001Z"],
  ])("%p µs → %p, %p and back", (value, text, iso) => {
    expect(formatTimestampUs(value)).toBe(text);
    expect(isoFromUs(value)).toBe(iso);
    expect(parseTimestampUs(text)).toBe(value);
    expect(parseTimestampUs(iso)).toBe(value);
  });

  test("fewer fraction digits are scaled, none means whole seconds", () => {
    expect(parseTimestampUs("2026-11-26 01:02:03.5")).toBe(Date.UTC(2026, 10, 26, 1, 2, 3, 500) * 1000);
    expect(parseTimestampUs("2026-11-26 01:02:03")).toBe(Date.UTC(2026, 10, 26, 1, 2, 3) * 1000);
  });

  test("a zone moves the time to UTC; digits beyond µs are dropped; seconds may be left out", () => {
    const base = Date.UTC(2026, 10, 26, 10, 22, 33, 123) * 1000;
    expect(parseTimestampUs("2026-11-26T12:22:33.123456789+02:00")).toBe(base + 456);
    expect(parseTimestampUs("2026-11-26T05:22:33.123-0500")).toBe(base);
    expect(parseTimestampUs("2026-11-26t10:22:33.123z")).toBe(base);
    expect(parseTimestampUs("2026-11-26 10:22")).toBe(Date.UTC(2026, 10, 26, 10, 22) * 1000);
  });

  test.each([null, undefined, "", "yesterday", "2026-11-26", "2026-13-45 99:00:00"])(
    "%p is not a timestamp",
    (text) => {
      expect(parseTimestampUs(text)).toBeNull();
    },
  );
});
