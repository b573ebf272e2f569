import { afterAll, expect, test } from "bun:test";
import {
  QUICK_RANGES,
  browserZone,
  customRange,
  formatOffset,
  fromZoneInput,
  parseRangeParams,
  rangeLabel,
  rangeToParams,
  resolveRange,
  toZoneInput,
  toZoneText,
  zoneLabel,
  zoneShort,
  type TimeRange,
} from "./time-range.ts";

// Bun reads TZ at every date operation: each test sets the zone it needs, the file restores it.
const savedTz = process.env.TZ;
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const H = 3_600_000;
const NOW = Date.UTC(2026, 10, 25, 14, 30, 15, 250); // 2026-11-25 14:30:15.250 UTC

test.each([
  ["Last 5 minutes", 5 * 60_000],
  ["Last 15 minutes", 15 * 60_000],
  ["Last hour", H],
  ["Last 6 hours", 6 * H],
  ["Last 24 hours", 24 * H],
  ["Last 7 days", 7 * 24 * H],
])("preset %s ends now and spans %d ms", (label, span) => {
  const q = QUICK_RANGES.find((x) => x.label === label);
  expect(q).toBeDefined();
  expect(resolveRange(q!.range, NOW, "utc")).toEqual({ from: NOW - span, to: NOW });
  expect(rangeLabel(q!.range)).toBe(label);
});

test("today and yesterday in UTC are calendar days of UTC", () => {
  const midnight = Date.UTC(2026, 10, 25);
  expect(resolveRange({ kind: "today" }, NOW, "utc")).toEqual({ from: midnight, to: NOW });
  expect(resolveRange({ kind: "yesterday" }, NOW, "utc")).toEqual({ from: midnight - 24 * H, to: midnight });
});

test("today and yesterday in the browser zone start at local midnight (Asia/Kolkata, UTC+05:30)", () => {
  process.env.TZ = "Asia/Kolkata";
  // 14:30 UTC is 20:00 in Kolkata: local midnight was 18:30 UTC the day before.
  const localMidnight = Date.UTC(2026, 10, 24, 18, 30);
  expect(resolveRange({ kind: "today" }, NOW, "local")).toEqual({ from: localMidnight, to: NOW });
  expect(resolveRange({ kind: "yesterday" }, NOW, "local")).toEqual({
    from: localMidnight - 24 * H,
    to: localMidnight,
  });
  // Just after UTC midnight it is already 05:30 local on the same local day.
  const early = Date.UTC(2026, 10, 25, 0, 5);
  expect(resolveRange({ kind: "today" }, early, "local").from).toBe(localMidnight);
  expect(resolveRange({ kind: "today" }, early, "utc").from).toBe(Date.UTC(2026, 10, 25));
});

test("yesterday across a DST change is 23 hours long in the browser zone (America/New_York, 2026-03-08)", () => {
  process.env.TZ = "America/New_York";
  const now = Date.UTC(2026, 2, 9, 15); // 2026-03-09 11:00 EDT
  const r = resolveRange({ kind: "yesterday" }, now, "local");
  expect(r).toEqual({ from: Date.UTC(2026, 2, 8, 5), to: Date.UTC(2026, 2, 9, 4) }); // 00:00 EST → 00:00 EDT
  expect(r.to - r.from).toBe(23 * H);
});

test("an absolute range resolves to itself", () => {
  expect(resolveRange({ kind: "absolute", from: 1000, to: 5000 }, NOW)).toEqual({ from: 1000, to: 5000 });
});

test.each([
  [0, "UTC+00:00"],
  [60, "UTC+01:00"],
  [330, "UTC+05:30"],
  [-180, "UTC-03:00"],
  [-570, "UTC-09:30"],
  [765, "UTC+12:45"],
])("formatOffset(%d) = %s", (min, want) => expect(formatOffset(min)).toBe(want));

test("the zone label names the browser zone and its offset, or UTC", () => {
  expect(zoneLabel("local", { name: "Europe/Berlin", offset: 60 })).toBe("Europe/Berlin (UTC+01:00)");
  expect(zoneLabel("utc", { name: "Europe/Berlin", offset: 60 })).toBe("UTC");
  expect(zoneShort("local", { name: "America/Sao_Paulo", offset: -180 })).toBe("UTC-03:00");
  process.env.TZ = "Asia/Kolkata";
  expect(browserZone(NOW)).toEqual({ name: "Asia/Kolkata", offset: 330 });
  expect(zoneLabel("local", browserZone(NOW))).toBe("Asia/Kolkata (UTC+05:30)");
  process.env.TZ = "America/New_York";
  // The offset is the one at the given instant: EST in winter, EDT in summer.
  expect(browserZone(Date.UTC(2026, 0, 15))).toEqual({ name: "America/New_York", offset: -300 });
  expect(browserZone(Date.UTC(2026, 6, 15))).toEqual({ name: "America/New_York", offset: -240 });
});

test("absolute ranges read in the display zone", () => {
  process.env.TZ = "Asia/Kolkata";
  const r: TimeRange = { kind: "absolute", from: Date.UTC(2026, 10, 22, 10, 4, 5), to: Date.UTC(2026, 10, 22, 10, 9) };
  expect(rangeLabel(r, "utc")).toBe("2026-11-22 10:04:05 → 10:09:00");
  expect(rangeLabel(r, "local")).toBe("2026-11-22 15:34:05 → 15:39:00");
  expect(rangeLabel({ kind: "absolute", from: Date.UTC(2026, 10, 22, 23), to: Date.UTC(2026, 10, 23, 1) }, "utc")).toBe(
    "2026-11-22 23:00:00 → 2026-11-23 01:00:00",
  );
});

test("datetime-local values round-trip in both zones and bad dates are refused", () => {
  process.env.TZ = "Asia/Kolkata";
  const ms = Date.UTC(2026, 10, 22, 10, 4, 5);
  expect(toZoneInput(ms, "utc")).toBe("2026-11-22T10:04:05");
  expect(toZoneInput(ms, "local")).toBe("2026-11-22T15:34:05");
  expect(fromZoneInput("2026-11-22T10:04:05", "utc")).toBe(ms);
  expect(fromZoneInput("2026-11-22T15:34:05", "local")).toBe(ms);
  expect(fromZoneInput("2026-11-22T15:34", "local")).toBe(ms - 5000);
  expect(fromZoneInput("2026-02-30T10:00", "utc")).toBeUndefined();
  expect(fromZoneInput("yesterday", "utc")).toBeUndefined();
  expect(fromZoneInput("", "utc")).toBeUndefined();
});

test.each([
  [
    "2026-11-22T10:00:00",
    "2026-11-22T11:00:00",
    { ok: true, range: { kind: "absolute", from: Date.UTC(2026, 10, 22, 10), to: Date.UTC(2026, 10, 22, 11) } },
  ],
  ["2026-11-22T11:00:00", "2026-11-22T10:00:00", { ok: false, error: "“From” must be before “To”." }],
  ["2026-11-22T10:00:00", "2026-11-22T10:00:00", { ok: false, error: "“From” must be before “To”." }],
  ["", "2026-11-22T10:00:00", { ok: false, error: "Enter both “From” and “To”." }],
  ["2026-13-01T10:00", "2026-11-22T10:00:00", { ok: false, error: "“From” is not a valid date and time." }],
  ["2026-11-22T10:00", "2026-11-31T10:00", { ok: false, error: "“To” is not a valid date and time." }],
])("custom range %s → %s", (from, to, want) =>
  expect(customRange(from, to, "utc")).toEqual(want as ReturnType<typeof customRange>),
);

test("every quick range survives the text form of the address and the widget config", () => {
  for (const q of QUICK_RANGES) {
    const p = rangeToParams(q.range);
    expect(parseRangeParams(p.from, p.to)).toEqual({ ok: true, range: q.range });
  }
  expect(rangeToParams({ kind: "relative", minutes: 15 })).toEqual({ from: "now-15m", to: "now" });
  expect(rangeToParams({ kind: "relative", minutes: 1440 })).toEqual({ from: "now-24h", to: "now" });
  expect(rangeToParams({ kind: "relative", minutes: 10080 })).toEqual({ from: "now-7d", to: "now" });
  expect(rangeToParams({ kind: "today" })).toEqual({ from: "now/d", to: "now" });
  const abs: TimeRange = { kind: "absolute", from: 1_764_000_000_000, to: 1_764_000_600_000 };
  expect(parseRangeParams(rangeToParams(abs).from, rangeToParams(abs).to)).toEqual({ ok: true, range: abs });
});

test.each([
  ["now-2w", "now", { kind: "relative", minutes: 20160 }],
  ["now-90m", undefined, { kind: "relative", minutes: 90 }],
  [
    "2026-11-22T10:00:00Z",
    "2026-11-22T11:00:00Z",
    { kind: "absolute", from: Date.UTC(2026, 10, 22, 10), to: Date.UTC(2026, 10, 22, 11) },
  ],
])("parseRangeParams(%s, %s)", (from, to, range) =>
  expect(parseRangeParams(from, to)).toEqual({ ok: true, range: range as TimeRange }),
);

test.each([
  ["now-0m", "now", /outside/],
  ["now-400d", "now", /outside/],
  ["banana", "now", /^from=banana is neither/],
  ["1764000600000", "1764000000000", /before/],
  ["1764000000000", "later", /^to=later/],
  [null, null, /from=\(empty\)/],
])("parseRangeParams(%s, %s) is refused", (from, to, want) => {
  const r = parseRangeParams(from, to);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.error).toMatch(want);
});

test("the picker's From/To text is 24 h, and a typed 'YYYY-MM-DD HH:MM[:SS]' reads back", () => {
  const ms = Date.UTC(2026, 10, 22, 13, 4, 5);
  expect(toZoneText(ms, "utc")).toBe("2026-11-22 13:04:05");
  expect(fromZoneInput("2026-11-22 13:04:05", "utc")).toBe(ms);
  expect(fromZoneInput("2026-11-22 13:04", "utc")).toBe(ms - 5000);
  expect(fromZoneInput("2026-11-22 1:04 PM", "utc")).toBeUndefined();
});
