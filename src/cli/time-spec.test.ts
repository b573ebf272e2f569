import { describe, expect, test } from "bun:test";
import { parseTimeSpec } from "./time-spec.ts";

const NOW = Date.UTC(2024, 4, 1, 12, 0, 0); // 2024-05-01T12:00:00Z

describe("parseTimeSpec", () => {
  test.each([
    ["now", NOW],
    ["1h", NOW - 3_600_000],
    ["2h30m", NOW - 9_000_000],
    ["7d", NOW - 7 * 86_400_000],
    ["1714564800123", 1714564800123],
    ["2024-05-01T10:00:00Z", Date.UTC(2024, 4, 1, 10)],
    ["2024-05-01T10:00:00.250Z", Date.UTC(2024, 4, 1, 10, 0, 0, 250)],
    ["2024-05-01T10:00:00+02:00", Date.UTC(2024, 4, 1, 8)],
    ["2024-05-01T10:00:00-0130", Date.UTC(2024, 4, 1, 11, 30)],
    ["2024-05-01T10:00", Date.UTC(2024, 4, 1, 10)],
    ["2024-05-01 10:20:30", Date.UTC(2024, 4, 1, 10, 20, 30)],
    ["2024-05-01", Date.UTC(2024, 4, 1)],
    ["2024-02-29", Date.UTC(2024, 1, 29)],
  ])("%p → %p", (spec, ms) => expect(parseTimeSpec(spec, NOW)).toEqual({ ok: true, value: ms }));

  test.each([
    ["", "TIME_SPEC_EMPTY"],
    ["yesterday", "TIME_SPEC_INVALID"],
    ["2024-02-30", "TIME_SPEC_INVALID"],
    ["2023-02-29", "TIME_SPEC_INVALID"],
    ["2024-05-01 25:00:00", "TIME_SPEC_INVALID"],
    ["2024-05-01 10:61:00", "TIME_SPEC_INVALID"],
    ["2024-05-01 10:00:61", "TIME_SPEC_INVALID"],
    ["01.05.2024", "TIME_SPEC_INVALID"],
  ])("%p fails with %p", (spec, reason) => {
    const r = parseTimeSpec(spec, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason as "TIME_SPEC_INVALID");
  });
});
