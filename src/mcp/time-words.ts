import type { NlFilters } from "./filters.ts";

/**
 * Time words of the parsers, English and German (docs/MCP.md "Filters"): UTC days and clock times.
 * The first rule of the list that matches sets the range; the words of every match are used
 * (`consume`), so they are never reported as ignored. Pure: no I/O.
 */
type Range = Pick<NlFilters, "time_range_label" | "from_ms" | "to_ms">;

const MIN_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const CLOCK = String.raw`(\d{1,2})(?::(\d{2}))?\s*((?:am|pm|uhr|h|utc)\b)?`;
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/** Milliseconds after midnight of a clock time; undefined for 25:00 or a bare number without a clock sign. */
function clockMs(m: RegExpExecArray, at: number): number | undefined {
  const h = Number(m[at]);
  const min = m[at + 1] === undefined ? 0 : Number(m[at + 1]);
  const suffix = m[at + 2]?.toLowerCase();
  if (m[at + 1] === undefined && suffix === undefined) return undefined;
  const hour = suffix === "pm" && h < 12 ? h + 12 : suffix === "am" && h === 12 ? 0 : h;
  if (hour > 23 || min > 59) return undefined;
  return hour * HOUR_MS + min * MIN_MS;
}

const UNIT = `(minutes?|mins?|m|minuten|hours?|hrs?|h|stunden?|std|days?|d|tagen?|tage|weeks?|wochen?)`;

const RULES: Array<[RegExp, (m: RegExpExecArray, nowMs: number, midnight: number) => Range | undefined]> = [
  [
    new RegExp(String.raw`\b(?:between|zwischen|from|von)\s+${CLOCK}\s*(?:and|und|to|bis|-)\s*${CLOCK}`, "gi"),
    (m, nowMs, midnight) => {
      const signed = [clockMs(m, 1), clockMs(m, 4)];
      if (signed[0] === undefined && signed[1] === undefined) return undefined;
      // One clock sign is enough for both ("between 10 and 11 uhr", "from 10:00 to 11").
      const bare = (i: number) => (m[i + 1] === undefined && Number(m[i]) <= 23 ? Number(m[i]) * HOUR_MS : undefined);
      const from = signed[0] ?? bare(1);
      const to = signed[1] ?? bare(4);
      if (from === undefined || to === undefined) return undefined;
      let day = midnight;
      if (day + from > nowMs) day -= DAY_MS;
      const end = to > from ? day + to : day + to + DAY_MS;
      return { time_range_label: `between_${hhmm(day + from)}_and_${hhmm(end)}`, from_ms: day + from, to_ms: end };
    },
  ],
  [
    new RegExp(String.raw`\b(?:since|seit|after|ab)\s+${CLOCK}`, "gi"),
    (m, nowMs, midnight) => {
      const at = clockMs(m, 1);
      if (at === undefined) return undefined;
      const from = midnight + at > nowMs ? midnight + at - DAY_MS : midnight + at;
      return { time_range_label: `since_${hhmm(from)}`, from_ms: from, to_ms: nowMs };
    },
  ],
  [
    /\b(?:since|seit)\s+(?:yesterday|gestern)\b/gi,
    (_m, nowMs, midnight) => ({ time_range_label: "since_yesterday", from_ms: midnight - DAY_MS, to_ms: nowMs }),
  ],
  [
    new RegExp(
      String.raw`\b(?:in\s+(?:the|den|der)\s+)?(?:last|past|previous|letzten?|vergangenen?)\s+(\d{1,4})\s*${UNIT}\b`,
      "gi",
    ),
    (m, nowMs) => {
      const n = Number(m[1]);
      const u = m[2]!.toLowerCase();
      const unit = /^m/.test(u) ? "minutes" : /^(?:h|s)/.test(u) ? "hours" : "days";
      const count = /^w/.test(u) ? n * 7 : n;
      if (count === 0) return undefined;
      const ms = count * (unit === "minutes" ? MIN_MS : unit === "hours" ? HOUR_MS : DAY_MS);
      return { time_range_label: `last_${count}_${unit}`, from_ms: nowMs - ms, to_ms: nowMs };
    },
  ],
  [
    /\b(?:in\s+(?:the|der)\s+)?(?:last|past|previous|letzte[nr]?|vergangenen?)\s+(?:hour|stunde)\b/gi,
    (_m, nowMs) => ({ time_range_label: "last_hour", from_ms: nowMs - HOUR_MS, to_ms: nowMs }),
  ],
  [
    /\b(?:in\s+(?:the|den)\s+)?(?:last|past|previous|letzte[nr]?|vergangenen?)\s+(?:day|24\s*hours|tag|24\s*stunden)\b/gi,
    (_m, nowMs) => ({ time_range_label: "last_1_days", from_ms: nowMs - DAY_MS, to_ms: nowMs }),
  ],
  [
    /\b(?:in\s+(?:the|der)\s+)?(?:last|past|previous|this|letzte[nr]?|vergangenen?|diese[nr]?)\s+(?:week|woche)\b/gi,
    (_m, nowMs) => ({ time_range_label: "last_7_days", from_ms: nowMs - 7 * DAY_MS, to_ms: nowMs }),
  ],
  [
    /\b(?:today|heute|heutigen?|this\s+day)\b/gi,
    (_m, nowMs, midnight) => ({ time_range_label: "today", from_ms: midnight, to_ms: nowMs }),
  ],
  [
    /\b(?:yesterday|gestern|gestrigen?)\b/gi,
    (_m, _nowMs, midnight) => ({ time_range_label: "yesterday", from_ms: midnight - DAY_MS, to_ms: midnight - 1 }),
  ],
];

/** The range the text names (undefined: none); `consume(start, length)` receives the words used. */
export function timeRange(
  text: string,
  nowMs: number,
  consume: (start: number, length: number) => void = () => {},
): Range | undefined {
  const midnight = Math.floor(nowMs / DAY_MS) * DAY_MS;
  let found: Range | undefined;
  let work = text;
  for (const [re, rangeOf] of RULES) {
    for (const m of [...work.matchAll(re)]) {
      const r = rangeOf(m, nowMs, midnight);
      if (!r) continue;
      found ??= r;
      consume(m.index, m[0].length);
      work = work.slice(0, m.index) + " ".repeat(m[0].length) + work.slice(m.index + m[0].length);
    }
  }
  return found;
}
