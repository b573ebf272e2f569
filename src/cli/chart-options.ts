import { bucketGrid, MAX_BUCKETS, parseBucketWidth } from "../core/index.ts";
import { UsageError } from "./args.ts";

/** `--format chart` options of `svc search` (the chart itself: search-chart.ts). */
export const CHART_GROUPS = ["none", "method", "status_class"] as const;
export type ChartGroup = (typeof CHART_GROUPS)[number];

export interface ChartOptions {
  groupBy: ChartGroup;
  /** `--interval`; absent: chosen from the range for a terminal (at most 60 lines). */
  interval?: string;
}

/** `--group-by` and `--interval` checked (exit 2 on a bad value). */
export function chartOptions(
  groupBy: string | undefined,
  interval: string | undefined,
  range: { fromMs: number; toMs: number },
): ChartOptions {
  const g = (groupBy ?? "none")
    .trim()
    .toLowerCase()
    .replace(/^status$/, "status_class");
  const group = CHART_GROUPS.find((x) => x === g);
  if (!group) throw new UsageError(`--group-by "${groupBy}" is not one of none, method, status (status_class)`);
  if (interval === undefined) return { groupBy: group };
  const w = parseBucketWidth(interval);
  if (!w.ok) throw new UsageError(`--interval: ${w.detail}`);
  const n = bucketGrid(range.fromMs, range.toMs, w.value.ms).count;
  if (n > MAX_BUCKETS)
    throw new UsageError(
      `--interval ${w.value.label} gives ${n} buckets over --from..--to, at most ${MAX_BUCKETS}: choose a wider interval`,
    );
  return { groupBy: group, interval: w.value.label };
}
