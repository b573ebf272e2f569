/**
 * Events over time for the time chart (docs/HISTOGRAM.md): the request sent to
 * `POST /transactions/histogram` for a search, and the pure layout helpers of the chart (axis
 * ticks, bucket width in words, series colours). Unit-tested in histogram.test.ts.
 */
import type { GroupBy, Histogram } from "../../../src/api/search/histogram.ts";
import type { SearchBody } from "./search-body.ts";

// The answer of POST /transactions/histogram is the server's type (imported as a type only).
export type { GroupBy, Histogram };

export const GROUP_CHOICES: ReadonlyArray<{ value: GroupBy; label: string }> = [
  { value: "method", label: "SIP method" },
  { value: "status_class", label: "Response class" },
  { value: "none", label: "Total only" },
];

/** Tables without SIP columns (OTLP 200-202, line protocol 300) can only be counted. */
export const groupable = (protoType: number) => protoType < 200;

/**
 * The histogram request of a search: its filter and window, grouped, buckets aligned in the
 * browser's time zone (at the window's start) so hour and day buckets start on local hours.
 */
export function histogramRequest(search: SearchBody, groupBy: GroupBy): Record<string, unknown> {
  const offset = -new Date(search.timestamp.from).getTimezoneOffset();
  return {
    filter: search.filter,
    timestamp: search.timestamp,
    group_by: groupable(search.filter.proto_type) ? groupBy : "none",
    utc_offset_min: offset,
  };
}

const UNITS: ReadonlyArray<[number, string, string]> = [
  [86_400_000, "day", "days"],
  [3_600_000, "hour", "hours"],
  [60_000, "min", "min"],
  [1_000, "s", "s"],
];

/** `300000` → `5 min`, `3600000` → `1 hour`, `172800000` → `2 days`. */
export function widthText(ms: number): string {
  for (const [size, one, many] of UNITS)
    if (ms >= size && ms % size === 0) return `${ms / size} ${ms === size ? one : many}`;
  return `${ms} ms`;
}

/** `1234567` → `1,234,567` (the same on every browser locale, so tests and screenshots agree). */
export const countText = (n: number) => n.toLocaleString("en-US");

/** Round y-axis ticks from 0 to at least `max`: steps of 1, 2 or 5 × 10^k, at most 5 intervals. */
export function countTicks(max: number): number[] {
  const top = Math.max(1, max);
  let step = 1;
  for (let p = 1; ; p *= 10) {
    const s = [p, 2 * p, 5 * p].find((x) => Math.ceil(top / x) <= 5);
    if (s !== undefined) {
      step = s;
      break;
    }
  }
  const ticks: number[] = [];
  for (let v = 0; v < top + step; v += step) ticks.push(v);
  return ticks;
}

const TICK_STEPS = [
  1_000, 5_000, 10_000, 30_000, 60_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000,
  43_200_000, 86_400_000,
];
const pad = (n: number) => String(n).padStart(2, "0");

/**
 * Time-axis labels at round local times, at most about `count` of them across [fromMs, toMs]: a step of
 * at least one bucket; a tick at local midnight shows the date, others the time.
 */
export function timeTicks(
  fromMs: number,
  toMs: number,
  widthMs: number,
  count = 8,
): Array<{ ms: number; label: string }> {
  const want = Math.max(widthMs, (toMs - fromMs) / count);
  const step = TICK_STEPS.find((s) => s >= want && s % widthMs === 0) ?? Math.ceil(want / 86_400_000) * 86_400_000;
  const offset = (ms: number) => -new Date(ms).getTimezoneOffset() * 60_000;
  const out: Array<{ ms: number; label: string }> = [];
  for (let t = Math.ceil((fromMs + offset(fromMs)) / step) * step - offset(fromMs); t <= toMs; t += step) {
    const d = new Date(t);
    const midnight = d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0;
    const label =
      midnight && step >= 3_600_000
        ? `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
        : step < 60_000
          ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
          : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    out.push({ ms: t, label });
  }
  return out;
}

/** Colours of the SIP palette (styles.css `--ev-*`): methods by family, responses by class. */
const KNOWN: Readonly<Record<string, string>> = {
  INVITE: "var(--ev-invite)",
  ACK: "var(--ev-ack)",
  BYE: "var(--ev-bye)",
  CANCEL: "var(--ev-bye)",
  REGISTER: "var(--ev-register)",
  request: "var(--ev-invite)",
  "1xx": "var(--ev-1xx)",
  "2xx": "var(--ev-2xx)",
  "3xx": "var(--ev-3xx)",
  "4xx": "var(--ev-4xx)",
  "5xx": "var(--ev-5xx)",
  "6xx": "#7a1020",
  other: "var(--ev-other)",
};
/** Further methods (OPTIONS, INFO, NOTIFY…) and other tables' events. */
const EXTRA = ["#2b8a9e", "#a05ab8", "#b08900", "#5a7d2b", "#d0587e", "#3f6fb5", "#8c6d3f", "#4b9c7a"];

/** A colour per group, distinct within one chart. */
export function seriesColors(keys: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  let next = 0;
  for (const k of keys) {
    const known = KNOWN[k];
    out.set(k, known && ![...out.values()].includes(known) ? known : EXTRA[next++ % EXTRA.length]!);
  }
  return out;
}
