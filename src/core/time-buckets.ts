import { fail, ok, type Result } from "./result.ts";

/**
 * Time buckets of an events-over-time histogram (docs/HISTOGRAM.md): the width is chosen from the
 * range on a ladder of round steps, or given explicitly (`30s`, `5m`, `1h`, `2d`) and checked;
 * buckets start at round times. Pure: the coordinator's histogram route and `svc search --format
 * chart` (which picks a coarser width for a terminal) use the same rules.
 */
export interface BucketWidth {
  ms: number;
  /** `1s`, `5m`, `1h`, `1d`: what `parseBucketWidth` reads back. */
  label: string;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The ladder of round widths; beyond its end, whole days. */
export const BUCKET_LADDER_MS: readonly number[] = [
  SECOND,
  5 * SECOND,
  10 * SECOND,
  30 * SECOND,
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
];

/** Buckets an automatic width aims at, at most (the ladder's steps are 2 to 5 apart: 24 to 120). */
export const TARGET_BUCKETS = 120;
/** Buckets an explicit width may produce at most (a 1 s width over a week would be 604 800). */
export const MAX_BUCKETS = 2_000;
/** The widest explicit width: a year. */
export const MAX_WIDTH_MS = 366 * DAY;

const UNITS: ReadonlyArray<[string, number]> = [
  ["d", DAY],
  ["h", HOUR],
  ["m", MINUTE],
  ["s", SECOND],
];

/** `30000` → `30s`, `5400000` → `90m`, `604800000` → `7d`: the largest unit that divides it. */
export function bucketLabel(ms: number): string {
  for (const [u, size] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size}${u}`;
  return `${ms}ms`;
}

/**
 * The smallest ladder width that keeps the range within `target` buckets; a range beyond the
 * ladder (more than `target` days) gets whole days. An empty range is one 1 s bucket.
 */
export function chooseBucketWidth(rangeMs: number, target = TARGET_BUCKETS): BucketWidth {
  const range = Math.max(rangeMs, 1);
  for (const ms of BUCKET_LADDER_MS) if (Math.ceil(range / ms) <= target) return { ms, label: bucketLabel(ms) };
  const days = Math.ceil(range / target / DAY);
  return { ms: days * DAY, label: bucketLabel(days * DAY) };
}

/** `30s`, `5m`, `1h`, `2d` (a positive whole number and a unit) → width; a reason otherwise. */
export function parseBucketWidth(text: string): Result<BucketWidth, "syntax" | "too_wide"> {
  const m = /^\s*([1-9][0-9]{0,9})\s*(s|m|h|d)\s*$/.exec(text);
  if (!m) return fail("syntax", `"${text}" is not a width such as 30s, 5m, 1h or 1d (a whole number and s, m, h or d)`);
  const ms = Number(m[1]) * UNITS.find(([u]) => u === m[2])![1];
  if (ms > MAX_WIDTH_MS) return fail("too_wide", `"${text}" is wider than ${bucketLabel(MAX_WIDTH_MS)}`);
  return ok({ ms, label: bucketLabel(ms) });
}

/**
 * The buckets covering [fromMs, toMs]: the first starts at the latest multiple of the width (in
 * the time zone `offsetMs` east of UTC, so `1d` buckets start at local midnight) at or before
 * `fromMs`; the last holds `toMs` itself (a range ending on a boundary gets no bucket for its last
 * instant alone). First and last may reach outside the range; they count only rows inside it.
 */
export interface BucketGrid {
  originMs: number;
  widthMs: number;
  count: number;
}

export function bucketGrid(fromMs: number, toMs: number, widthMs: number, offsetMs = 0): BucketGrid {
  const originMs = Math.floor((fromMs + offsetMs) / widthMs) * widthMs - offsetMs;
  const count = Math.max(1, Math.ceil((toMs - originMs) / widthMs));
  return { originMs, widthMs, count };
}

/** The bucket of a time inside the grid's range (the range's end falls in the last bucket). */
export function bucketOf(grid: BucketGrid, ms: number): number {
  return Math.min(grid.count - 1, Math.floor((ms - grid.originMs) / grid.widthMs));
}
