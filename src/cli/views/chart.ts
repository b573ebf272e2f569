import type { Histogram } from "../../api/search/histogram.ts";
import { bucketGrid, bucketOf, chooseBucketWidth } from "../../core/index.ts";
import type { Row } from "../post-filter.ts";
import { rowTimeUs } from "./row-time.ts";

/**
 * `--format chart` (docs/HISTOGRAM.md "`svc search --format chart`"): a histogram of events over time, one line per bucket. The data is
 * the coordinator's histogram of the whole window (`POST /transactions/histogram`,
 * docs/HISTOGRAM.md), or the fetched rows counted here (`--sql`, `--grep`, an older coordinator).
 * A terminal shows at most TERMINAL_BUCKETS lines: the width is the smallest round step that fits
 * (1 h → 1 minute, 1 d → 30 minutes, 7 d → 3 hours). With groups each bar is stacked, one fill
 * character per group, and a legend line names them.
 */
export const TERMINAL_BUCKETS = 60;

export interface ChartBucket {
  startMs: number;
  count: number;
  groups: Record<string, number>;
}

export interface ChartData {
  fromMs: number;
  toMs: number;
  widthMs: number;
  /** `1m`, `30m`: the bucket width as the header says it. */
  width: string;
  buckets: ChartBucket[];
  /** Groups in display order with their totals (empty: no grouping). */
  groups: Array<{ key: string; total: number }>;
  total: number;
  /** What was counted: `events` (the server, whole window) or `rows` (the fetched rows). */
  unit: "events" | "rows";
  /** Lines after the chart (rows outside the range, rows without a time). */
  footnotes: string[];
}

/**
 * The coordinator's answer (`data` of POST /transactions/histogram): the server's own type, imported
 * as a type only (the CLI talks to the API over HTTP; nothing of the API runs here).
 */
export type ServerHistogram = Pick<Histogram, "window" | "interval" | "interval_ms" | "total" | "groups" | "buckets">;

export function histogramChart(h: ServerHistogram): ChartData {
  return {
    fromMs: h.window.from_ms,
    toMs: h.window.to_ms,
    widthMs: h.interval_ms,
    width: h.interval,
    buckets: h.buckets.map((b) => ({ startMs: b.start_ms, count: b.count, groups: b.groups })),
    groups: h.groups,
    total: h.total,
    unit: "events",
    footnotes: [],
  };
}

/** The searched range (epoch ms); SQL results use the rows' own range. */
export interface RowRange {
  fromMs?: number;
  toMs?: number;
}

/** Fetched rows counted into buckets of the same grid the coordinator uses (UTC). */
export function rowsChart(rows: readonly Row[], o: RowRange): ChartData {
  const times = rows
    .map(rowTimeUs)
    .filter((t): t is number => t !== undefined)
    .map((us) => us / 1000);
  const lo = o.fromMs ?? (times.length ? Math.min(...times) : Date.now());
  const hi = Math.max(o.toMs ?? (times.length ? Math.max(...times) : lo), lo);
  const width = chooseBucketWidth(hi - lo, TERMINAL_BUCKETS);
  const grid = bucketGrid(lo, hi, width.ms);
  const buckets: ChartBucket[] = Array.from({ length: grid.count }, (_x, i) => ({
    startMs: grid.originMs + i * grid.widthMs,
    count: 0,
    groups: {},
  }));
  let outside = 0;
  for (const t of times) {
    if (t < lo || t > hi) outside++;
    else buckets[bucketOf(grid, t)]!.count++;
  }
  const footnotes = [
    ...(outside > 0 ? [`(${outside} rows outside the range)`] : []),
    ...(times.length < rows.length ? [`(${rows.length - times.length} rows without a time)`] : []),
  ];
  return {
    fromMs: lo,
    toMs: hi,
    widthMs: width.ms,
    width: width.label,
    buckets,
    groups: [],
    total: times.length - outside,
    unit: "rows",
    footnotes,
  };
}

const pad = (n: number) => String(n).padStart(2, "0");

/** Bucket start as text, only as precise as the bucket width needs (UTC). */
function bucketText(ms: number, stepMs: number, multiDay: boolean): string {
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (stepMs >= 86_400_000 && d.getUTCHours() === 0 && d.getUTCMinutes() === 0) return day;
  const time = stepMs >= 60_000 && d.getUTCSeconds() === 0 ? hm : `${hm}:${pad(d.getUTCSeconds())}`;
  return multiDay || stepMs >= 86_400_000 ? `${day} ${time}` : time;
}

/** Fill characters of stacked groups, in the legend's order. */
const FILLS = ["█", "▓", "▒", "░", "#", "=", "+", "*", "%", "@", "~", ":"];

/** A bar of `len` cells split between the groups by cumulative rounding (the parts add up to len). */
function stackedBar(b: ChartBucket, keys: readonly string[], len: number): string {
  if (keys.length === 0 || b.count === 0) return "█".repeat(len);
  let out = "";
  let acc = 0;
  let drawn = 0;
  keys.forEach((k, i) => {
    acc += b.groups[k] ?? 0;
    const upTo = Math.round((acc / b.count) * len);
    out += FILLS[i % FILLS.length]!.repeat(upTo - drawn);
    drawn = upTo;
  });
  return out;
}

export function renderChart(d: ChartData, o: { width: number }): string[] {
  const first = d.buckets[0]?.startMs ?? d.fromMs;
  const last = d.buckets.at(-1)?.startMs ?? first;
  const multiDay = new Date(first).toISOString().slice(0, 10) !== new Date(last).toISOString().slice(0, 10);
  const labels = d.buckets.map((b) => bucketText(b.startMs, d.widthMs, multiDay));
  const labelW = Math.max(0, ...labels.map((l) => l.length));
  const max = Math.max(1, ...d.buckets.map((b) => b.count));
  const countW = String(max).length;
  const barW = Math.max(10, o.width - labelW - countW - 4);
  const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
  const what = d.unit === "events" ? `${d.total} events (whole range)` : `${d.total} rows`;
  const out = [`Events over time: ${iso(d.fromMs)} → ${iso(d.toMs)}, bucket ${d.width}, ${what}`];
  const keys = d.groups.map((g) => g.key);
  if (keys.length > 0)
    out.push(`  ${d.groups.map((g, i) => `${FILLS[i % FILLS.length]} ${g.key} ${g.total}`).join("  ")}`);
  d.buckets.forEach((b, i) => {
    const len = Math.round((b.count / max) * barW);
    const bar = len > 0 ? stackedBar(b, keys, len) : b.count > 0 ? "▏" : "";
    out.push(`${labels[i]!.padStart(labelW)} │ ${String(b.count).padStart(countW)} ${bar}`.trimEnd());
  });
  out.push(...d.footnotes);
  return out;
}
