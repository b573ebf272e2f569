/**
 * Call-quality KPIs for the dashboard widgets (docs/KPIS.md): the figures of
 * `GET /statistics/kpi`, how each one is written, and the request of a widget (its time range,
 * its node). Pure but for `useKpi`; unit-tested in kpi.test.ts.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, get } from "./api.ts";
import { resolveWidgetRange, useRangeKey } from "./dashboard-time.ts";
import { countText } from "./histogram.ts";

// The API's own shapes (type-only: nothing of the server enters the bundle).
export type { FailingDestination } from "../../../src/api/kpi/service.ts";
export type { KpiFigures, KpiResult as KpiData } from "../../../src/api/kpi/figures.ts";
import type { KpiFigures } from "../../../src/api/kpi/figures.ts";

export type Kind = "ratio" | "count" | "ms" | "s" | "pct" | "mos";

export interface KpiMetric {
  key: keyof KpiFigures;
  label: string;
  kind: Kind;
  /** What the figure is, for the table's title attribute and the chart's axis. */
  help: string;
}

/** The figures a chart can draw, in the order of the chart's choice list. */
export const KPI_METRICS: readonly KpiMetric[] = [
  { key: "asr", label: "ASR", kind: "ratio", help: "answered / completed attempts" },
  {
    key: "ner",
    label: "NER",
    kind: "ratio",
    help: "answered, busy, no answer, declined or cancelled / completed attempts (ITU-T E.425)",
  },
  { key: "attempts", label: "Call attempts", kind: "count", help: "calls whose initial INVITE falls in the step" },
  { key: "acd_s", label: "ACD", kind: "s", help: "average duration of answered calls (2xx to BYE)" },
  { key: "pdd_ms", label: "PDD", kind: "ms", help: "post-dial delay: INVITE to first 18x or 2xx" },
  { key: "setup_ms", label: "Setup time", kind: "ms", help: "INVITE to first 2xx of answered calls" },
  {
    key: "registration_success_ratio",
    label: "Registration success",
    kind: "ratio",
    help: "successful REGISTERs / REGISTERs (challenges left out)",
  },
  { key: "jitter_ms_avg", label: "RTCP jitter", kind: "ms", help: "mean RTCP interarrival jitter" },
  { key: "loss_pct_avg", label: "RTCP loss", kind: "pct", help: "mean RTCP fraction lost" },
  { key: "mos_avg", label: "MOS", kind: "mos", help: "mean MOS of agent media reports" },
];

export const metricOf = (key: unknown): KpiMetric => KPI_METRICS.find((m) => m.key === key) ?? KPI_METRICS[0]!;

/** `0.714285` → `71.4 %`; `1234.5` ms → `1,235 ms`; null → `–` (nothing to compute from). */
export function kpiText(v: number | null | undefined, kind: Kind): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  switch (kind) {
    case "ratio":
      return `${(v * 100).toFixed(1)} %`;
    case "pct":
      return `${v.toFixed(2)} %`;
    case "count":
      return countText(v);
    case "ms":
      return v >= 100 ? `${countText(Math.round(v))} ms` : `${v.toFixed(1)} ms`;
    case "s":
      return `${v.toFixed(1)} s`;
    case "mos":
      return v.toFixed(2);
  }
}

/** The value on the chart's scale (ratios in percent). */
export const chartValue = (v: number | null, kind: Kind): number | null =>
  v === null ? null : kind === "ratio" ? v * 100 : v;

/** The widget's node filter (config `node`), as the API takes it. */
export const nodeOf = (config: Record<string, unknown> | undefined): string =>
  typeof config?.node === "string" ? config.node.trim() : "";

export function kpiQuery(
  range: { from: number; to: number },
  node: string,
  extra: Record<string, string> = {},
): string {
  const q = new URLSearchParams({ from: String(range.from), to: String(range.to), ...extra });
  // Steps start on local hours and midnights (the browser's offset at the range's start).
  const offset = -new Date(range.from).getTimezoneOffset();
  if (offset !== 0) q.set("utc_offset_min", String(offset));
  if (node) q.set("node", node);
  return q.toString();
}

export interface Loaded<T> {
  status: "loading" | "done" | "error";
  data?: T;
  error?: string;
}

/**
 * Fetches `path?query` for the widget's range and node, again when either changes or `seq`
 * moves (the Refresh button); keeps the last data while loading.
 */
export function useKpiFetch<T>(
  config: Record<string, unknown> | undefined,
  path: string,
  extra: Record<string, string>,
  seq: number,
): Loaded<T> {
  const rangeKey = useRangeKey(config);
  const node = nodeOf(config);
  const extraKey = JSON.stringify(extra);
  const [loaded, setLoaded] = useState<Loaded<T>>({ status: "loading" });
  useEffect(() => {
    let live = true;
    setLoaded((prev) => ({ status: "loading", ...(prev.data ? { data: prev.data } : {}) }));
    get<{ data: T }>(`${path}?${kpiQuery(resolveWidgetRange(config), node, extra)}`).then(
      (r) => live && setLoaded({ status: "done", data: r.data }),
      (e) => live && setLoaded({ status: "error", error: errorText(e) }),
    );
    return () => {
      live = false;
    };
  }, [rangeKey, node, extraKey, seq, path]);
  return loaded;
}
