import type { Row } from "../post-filter.ts";
import { rowTimeUs } from "./row-time.ts";

/**
 * `--format chart` (spec doc 3): a histogram of events over time, one line per bucket. The bucket
 * width is the smallest step of a fixed ladder that keeps the range within MAX_BUCKETS lines, so
 * 1 h gives 1-minute buckets and 7 d gives 1-day buckets.
 */
export const MAX_BUCKETS = 60;

const STEPS: Array<[number, string]> = [
  [1_000, "1s"],
  [5_000, "5s"],
  [10_000, "10s"],
  [30_000, "30s"],
  [60_000, "1m"],
  [300_000, "5m"],
  [600_000, "10m"],
  [1_800_000, "30m"],
  [3_600_000, "1h"],
  [10_800_000, "3h"],
  [21_600_000, "6h"],
  [43_200_000, "12h"],
  [86_400_000, "1d"],
  [604_800_000, "7d"],
];

export function chooseBucket(rangeMs: number, maxBuckets = MAX_BUCKETS): { ms: number; label: string } {
  for (const [ms, label] of STEPS) if (Math.ceil(Math.max(rangeMs, 1) / ms) <= maxBuckets) return { ms, label };
  // Beyond the ladder (years): whole weeks.
  const weeks = Math.ceil(rangeMs / maxBuckets / 604_800_000);
  return { ms: weeks * 604_800_000, label: `${weeks * 7}d` };
}

const pad = (n: number) => String(n).padStart(2, "0");

/** Bucket start as text, only as precise as the bucket width needs (UTC). */
function bucketLabel(ms: number, stepMs: number, multiDay: boolean): string {
  const d = new Date(ms);
  const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (stepMs >= 86_400_000) return day;
  const time = stepMs >= 60_000 ? hm : `${hm}:${pad(d.getUTCSeconds())}`;
  return multiDay ? `${day} ${time}` : time;
}

export interface ChartOptions {
  /** The searched range (epoch ms); SQL results use the rows' own range. */
  fromMs?: number;
  toMs?: number;
  width: number;
}

export function renderChart(rows: readonly Row[], o: ChartOptions): string[] {
  const times = rows.map(rowTimeUs).filter((t): t is number => t !== undefined).map((us) => us / 1000);
  const lo = o.fromMs ?? (times.length ? Math.min(...times) : Date.now());
  const hi = Math.max(o.toMs ?? (times.length ? Math.max(...times) : lo), lo);
  const step = chooseBucket(hi - lo);
  // Buckets are aligned to the step (UTC), so labels read as round times.
  const first = Math.floor(lo / step.ms) * step.ms;
  const n = Math.max(1, Math.floor(hi / step.ms) - Math.floor(lo / step.ms) + 1);
  const counts = new Array<number>(n).fill(0);
  let outside = 0;
  for (const t of times) {
    const i = Math.floor((t - first) / step.ms);
    if (i >= 0 && i < n) counts[i]!++;
    else outside++;
  }
  const multiDay = new Date(first).toISOString().slice(0, 10) !== new Date(first + (n - 1) * step.ms).toISOString().slice(0, 10);
  const labels = counts.map((_c, i) => bucketLabel(first + i * step.ms, step.ms, multiDay));
  const labelW = Math.max(...labels.map((l) => l.length));
  const max = Math.max(1, ...counts);
  const countW = String(max).length;
  const barW = Math.max(10, o.width - labelW - countW - 4);
  const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
  const out = [`Events over time: ${iso(lo)} → ${iso(hi)}, bucket ${step.label}, ${times.length} rows`];
  counts.forEach((c, i) => {
    const bar = "█".repeat(Math.round((c / max) * barW)) || (c > 0 ? "▏" : "");
    out.push(`${labels[i]!.padStart(labelW)} │ ${String(c).padStart(countW)} ${bar}`.trimEnd());
  });
  if (outside > 0) out.push(`(${outside} rows outside the range)`);
  if (times.length < rows.length) out.push(`(${rows.length - times.length} rows without a time)`);
  return out;
}
