/**
 * The dashboard time range as a value (docs/UI.md "Time range"): quick ranges relative to now,
 * calendar days (today, yesterday) and absolute from/to; how each resolves to epoch ms in the display
 * zone (browser local or UTC), how it reads in the picker, and its text form in the URL and in a
 * widget's saved config (`from=now-15m&to=now`, `now/d`, `now-1d/d`, epoch ms, as Grafana and
 * HOMER write them). Pure; see time-range.test.ts.
 */

export type TimeRange =
  | { kind: "relative"; minutes: number }
  | { kind: "today" }
  | { kind: "yesterday" }
  | { kind: "absolute"; from: number; to: number };

/** Times are shown and typed in the browser's zone or in UTC (captures are stamped in UTC). */
export type Zone = "local" | "utc";

export const DEFAULT_RANGE: TimeRange = { kind: "relative", minutes: 60 };

export const QUICK_RANGES: ReadonlyArray<{ range: TimeRange; label: string }> = [
  { range: { kind: "relative", minutes: 5 }, label: "Last 5 minutes" },
  { range: { kind: "relative", minutes: 15 }, label: "Last 15 minutes" },
  { range: { kind: "relative", minutes: 60 }, label: "Last hour" },
  { range: { kind: "relative", minutes: 360 }, label: "Last 6 hours" },
  { range: { kind: "relative", minutes: 1440 }, label: "Last 24 hours" },
  { range: { kind: "relative", minutes: 2880 }, label: "Last 2 days" },
  { range: { kind: "relative", minutes: 10080 }, label: "Last 7 days" },
  { range: { kind: "today" }, label: "Today" },
  { range: { kind: "yesterday" }, label: "Yesterday" },
];

export const sameRange = (a: TimeRange, b: TimeRange): boolean =>
  rangeToParams(a).from === rangeToParams(b).from && rangeToParams(a).to === rangeToParams(b).to;

/** Midnight that starts the day holding `ms`, `days` days later (negative: earlier), in `zone`. */
export function startOfDay(ms: number, zone: Zone, days = 0): number {
  const d = new Date(ms);
  // Date arithmetic on the calendar, not on 86 400 000 ms: a local day across a DST change is 23 or 25 h.
  if (zone === "utc") return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + days);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + days).getTime();
}

/** The range as epoch ms: relative ranges end now, today runs from midnight to now, yesterday is the whole previous day. */
export function resolveRange(r: TimeRange, now = Date.now(), zone: Zone = "local"): { from: number; to: number } {
  switch (r.kind) {
    case "relative":
      return { from: now - r.minutes * 60_000, to: now };
    case "today":
      return { from: startOfDay(now, zone), to: now };
    case "yesterday":
      return { from: startOfDay(now, zone, -1), to: startOfDay(now, zone) };
    case "absolute":
      return { from: r.from, to: r.to };
  }
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `UTC+05:30`, `UTC-03:00`, `UTC+00:00` from minutes east of UTC. */
export function formatOffset(eastMinutes: number): string {
  const a = Math.abs(eastMinutes);
  return `UTC${eastMinutes < 0 ? "-" : "+"}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** The browser's zone name (IANA) and its offset at `now`, in minutes east of UTC. */
export function browserZone(now = Date.now()): { name: string; offset: number } {
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
  return { name, offset: -new Date(now).getTimezoneOffset() };
}

/** What the picker says about the zone: `Europe/Berlin (UTC+01:00)`, or `UTC`. */
export function zoneLabel(zone: Zone, local: { name: string; offset: number } = browserZone()): string {
  return zone === "utc" ? "UTC" : `${local.name} (${formatOffset(local.offset)})`;
}

/** Short form for the trigger button: `UTC+01:00` or `UTC`. */
export function zoneShort(zone: Zone, local: { name: string; offset: number } = browserZone()): string {
  return zone === "utc" ? "UTC" : formatOffset(local.offset);
}

/** Wall time in `zone`: `YYYY-MM-DD HH:MM:SS`. */
export function wallTime(ms: number, zone: Zone): string {
  const d = new Date(ms);
  const u = zone === "utc";
  return `${u ? d.getUTCFullYear() : d.getFullYear()}-${pad((u ? d.getUTCMonth() : d.getMonth()) + 1)}-${pad(u ? d.getUTCDate() : d.getDate())} ${pad(u ? d.getUTCHours() : d.getHours())}:${pad(u ? d.getUTCMinutes() : d.getMinutes())}:${pad(u ? d.getUTCSeconds() : d.getSeconds())}`;
}

/** `Last 15 minutes`, `Today`, or `2026-11-22 10:04:05 → 10:09:00` (the date once when both ends share it). */
export function rangeLabel(r: TimeRange, zone: Zone = "local"): string {
  if (r.kind !== "absolute") {
    const q = QUICK_RANGES.find((x) => sameRange(x.range, r));
    if (q) return q.label;
    return r.kind === "relative" ? `Last ${r.minutes} minutes` : r.kind === "today" ? "Today" : "Yesterday";
  }
  return spanLabel(r.from, r.to, zone);
}

export function spanLabel(from: number, to: number, zone: Zone): string {
  const f = wallTime(from, zone);
  const t = wallTime(to, zone);
  return f.slice(0, 10) === t.slice(0, 10) ? `${f} → ${t.slice(11)}` : `${f} → ${t}`;
}

/** Value of an `<input type="datetime-local">` showing `ms` in `zone`. */
export function toZoneInput(ms: number, zone: Zone): string {
  return wallTime(ms, zone).replace(" ", "T");
}

/**
 * The time picker's From/To text: `YYYY-MM-DD HH:MM:SS` in 24 h, like every time the dashboard
 * shows (docs/UI.md "Time range"); a datetime-local input would follow the browser's locale (AM/PM).
 */
export const toZoneText = (ms: number, zone: Zone): string => wallTime(ms, zone);

/** A datetime-local value or a typed `YYYY-MM-DD HH:MM[:SS]` read in `zone` → epoch ms (undefined when empty or invalid). */
export function fromZoneInput(v: string, zone: Zone): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ]\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/.exec(v.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Number((m[7] ?? "0").padEnd(3, "0"));
  const out = zone === "utc" ? Date.UTC(y, mo - 1, d, h, mi, s, ms) : new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  // Reject dates the calendar rolled over (2026-02-30 would become 2026-03-02, month 13 next January).
  return Number.isNaN(out) || toZoneInput(out, zone).slice(0, 10) !== v.trim().slice(0, 10) ? undefined : out;
}

/** The custom from/to of the picker: a range, or the sentence that says what is wrong. */
export function customRange(
  fromText: string,
  toText: string,
  zone: Zone,
): { ok: true; range: TimeRange } | { ok: false; error: string } {
  if (!fromText.trim() || !toText.trim()) return { ok: false, error: "Enter both “From” and “To”." };
  const from = fromZoneInput(fromText, zone);
  if (from === undefined) return { ok: false, error: "“From” is not a valid date and time." };
  const to = fromZoneInput(toText, zone);
  if (to === undefined) return { ok: false, error: "“To” is not a valid date and time." };
  if (from >= to) return { ok: false, error: "“From” must be before “To”." };
  return { ok: true, range: { kind: "absolute", from, to } };
}

const UNIT_MINUTES: Record<string, number> = { m: 1, h: 60, d: 1440, w: 10080 };

/** The text form: `{from: "now-15m", to: "now"}`, `now/d`, `now-1d/d`, or epoch ms. */
export function rangeToParams(r: TimeRange): { from: string; to: string } {
  switch (r.kind) {
    case "relative": {
      const n = r.minutes;
      const rel = n % 1440 === 0 && n >= 2880 ? `${n / 1440}d` : n % 60 === 0 ? `${n / 60}h` : `${n}m`;
      return { from: `now-${rel}`, to: "now" };
    }
    case "today":
      return { from: "now/d", to: "now" };
    case "yesterday":
      return { from: "now-1d/d", to: "now-1d/d" };
    case "absolute":
      return { from: String(Math.round(r.from)), to: String(Math.round(r.to)) };
  }
}

/** An absolute end: epoch ms or an ISO 8601 date-time. */
function absolute(v: string): number | undefined {
  if (/^\d{10,16}$/.test(v)) return Number(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Reads the text form back; the error names what could not be read. */
export function parseRangeParams(
  from: string | null | undefined,
  to: string | null | undefined,
): { ok: true; range: TimeRange } | { ok: false; error: string } {
  const f = (from ?? "").trim();
  const t = (to ?? "now").trim() || "now";
  const rel = /^now-(\d+)([mhdw])$/.exec(f);
  if (rel && t === "now") {
    const minutes = Number(rel[1]) * UNIT_MINUTES[rel[2]!]!;
    if (minutes > 0 && minutes <= 366 * 1440) return { ok: true, range: { kind: "relative", minutes } };
    return { ok: false, error: `from=${f} is outside 1 minute to 366 days` };
  }
  if (f === "now/d" && (t === "now" || t === "now/d")) return { ok: true, range: { kind: "today" } };
  if (f === "now-1d/d" && t === "now-1d/d") return { ok: true, range: { kind: "yesterday" } };
  const a = absolute(f);
  const b = t === "now" ? undefined : absolute(t);
  if (a === undefined)
    return {
      ok: false,
      error: `from=${f || "(empty)"} is neither now-<n>m|h|d|w, now/d, now-1d/d, epoch ms nor an ISO date`,
    };
  if (b === undefined) return { ok: false, error: `to=${t} is not epoch ms or an ISO date` };
  if (a >= b) return { ok: false, error: "from must be before to" };
  return { ok: true, range: { kind: "absolute", from: a, to: b } };
}
