/**
 * Call KPIs over time (docs/KPIS.md): one KPI of `GET /statistics/kpi` per step over the widget's
 * time range (the dashboard's or its own) as a line, the window's total in the status line.
 * A step without data (no call, no report) is a gap, not a zero. Hovering a step, or moving with
 * the arrow keys once the chart has focus, shows its time and value; Esc hides it. The chosen KPI
 * and node are saved in the widget config (`metric`, `node`).
 */
import { useState } from "preact/hooks";
import { formatTime } from "../lib/format.ts";
import { countTicks, timeTicks, widthText } from "../lib/histogram.ts";
import { chartKeyHandler } from "../lib/chart-keys.ts";
import { html } from "../lib/html.ts";
import { chartValue, KPI_METRICS, kpiText, metricOf, useKpiFetch, type KpiData } from "../lib/kpi.ts";
import { KpiControls } from "./kpi-controls.ts";
import type { WidgetProps } from "./types.ts";

const W = 600;
const H = 240;
const PAD = { r: 10, t: 10, b: 30 };
const CHAR_W = 6.2;
const time = (ms: number) => formatTime(ms).slice(0, 19);
export const KPI_CHART_TITLE = "Call KPIs over time";

/** Why a KPI has no value anywhere in the range. */
const noData = (key: string) =>
  key.startsWith("jitter") || key.startsWith("loss")
    ? "no RTCP reports"
    : key.startsWith("mos")
      ? "no media reports with a MOS"
      : key.startsWith("registration")
        ? "no REGISTER"
        : "no calls";

export function KpiChart({ widget, onUpdate }: WidgetProps) {
  const title = typeof widget.config?.title === "string" && widget.config.title ? widget.config.title : KPI_CHART_TITLE;
  const metric = metricOf(widget.config?.metric);
  const [seq, setSeq] = useState(0);
  const [hover, setHover] = useState<number | undefined>();
  const loaded = useKpiFetch<KpiData>(widget.config, "/statistics/kpi", {}, seq);
  const d = loaded.data;

  const status =
    loaded.status === "loading"
      ? "Computing KPIs…"
      : d
        ? `${metric.label} ${kpiText(d.totals[metric.key] as number | null, metric.kind)} over the range · ${widthText(d.step_ms)} steps`
        : "";
  const controls = html`<${KpiControls} widget=${widget} title=${title} onUpdate=${onUpdate} onRefresh=${() => setSeq((s) => s + 1)} status=${status}>
    <label class="small">KPI <select value=${metric.key} aria-label=${`KPI shown by ${title}`} onChange=${(e: Event) => onUpdate({ ...widget, config: { ...widget.config, metric: (e.target as HTMLSelectElement).value } })}>
      ${KPI_METRICS.map((m) => html`<option key=${m.key} value=${m.key}>${m.label}</option>`)}
    </select></label>
  </${KpiControls}>`;

  if (loaded.status === "error")
    return html`<div class="chart">${controls}<p class="alert alert-error" role="alert">KPIs could not be computed: ${loaded.error}</p></div>`;
  if (!d)
    return html`<div class="chart">${controls}<div class="empty"><p>Computing ${metric.label} over the time range…</p></div></div>`;
  const range = `${time(d.window.from_ms)} – ${time(d.window.to_ms)}`;
  const values = d.series.map((s) => chartValue(s[metric.key] as number | null, metric.kind));
  if (values.every((v) => v === null || (metric.kind === "count" && v === 0))) {
    return html`<div class="chart">${controls}<div class="empty"><p>No ${metric.label} in ${range}: ${noData(metric.key)}.</p></div></div>`;
  }

  const max = Math.max(...values.map((v) => v ?? 0));
  const yTicks = metric.kind === "ratio" ? [0, 20, 40, 60, 80, 100] : countTicks(max);
  const top = yTicks.at(-1)!;
  const tickText = (v: number) =>
    metric.kind === "ratio" ? `${v}%` : metric.kind === "mos" ? String(v) : kpiText(v, "count");
  const left = 18 + CHAR_W * Math.max(...yTicks.map((t) => tickText(t).length)) + 6;
  const plotW = W - left - PAD.r;
  const plotH = H - PAD.t - PAD.b;
  const origin = d.series[0]!.start_ms;
  const end = origin + d.series.length * d.step_ms;
  const x = (ms: number) => left + ((ms - origin) / (end - origin)) * plotW;
  const y = (v: number) => PAD.t + plotH * (1 - v / top);
  const bw = plotW / d.series.length;
  const mid = (i: number) => x(d.series[i]!.start_ms + d.step_ms / 2);
  // Runs of consecutive steps with a value, each one polyline.
  const runs: number[][] = [];
  values.forEach((v, i) => {
    if (v === null) return;
    const last = runs.at(-1);
    if (last && last.at(-1) === i - 1) last.push(i);
    else runs.push([i]);
  });
  const hovered = hover === undefined ? undefined : Math.min(hover, d.series.length - 1);
  const onKey = chartKeyHandler(d.series.length, hover, setHover);
  const tipAt = hovered === undefined ? 0 : (mid(hovered) / W) * 100;
  const tip =
    hovered === undefined
      ? null
      : html`<div class="chart-tip" role="tooltip" style=${`left:${tipAt}%;transform:translateX(${tipAt < 25 ? "0" : tipAt > 75 ? "-100%" : "-50%"})`}>
          <strong>${time(d.series[hovered]!.start_ms)} – ${formatTime(d.series[hovered]!.start_ms + d.step_ms, false).slice(0, 8)}</strong>
          <div>${metric.label} ${kpiText(d.series[hovered]![metric.key] as number | null, metric.kind)}</div>
          <div class="muted">${kpiText(d.series[hovered]!.attempts, "count")} ${d.series[hovered]!.attempts === 1 ? "call" : "calls"}</div>
        </div>`;

  return html`<figure class="chart" aria-busy=${loaded.status === "loading" ? "true" : "false"}>
    ${controls}
    <div class="chart-body" onMouseLeave=${() => setHover(undefined)}>
      <svg viewBox=${`0 0 ${W} ${H}`} role="img" tabindex="0" aria-label=${`${metric.label} ${kpiText(d.totals[metric.key] as number | null, metric.kind)} in ${range} (${widthText(d.step_ms)} steps)`} onKeyDown=${onKey} onBlur=${() => setHover(undefined)}>
        ${yTicks.map((t) => html`<g key=${`y${t}`}><line class="grid-line" x1=${left} x2=${W - PAD.r} y1=${y(t)} y2=${y(t)} /><text class="axis" x=${left - 4} y=${y(t) + 3.5} text-anchor="end">${tickText(t)}</text></g>`)}
        <text class="axis" transform=${`translate(10 ${PAD.t + plotH / 2}) rotate(-90)`} text-anchor="middle">${metric.label}${metric.kind === "ms" ? " (ms)" : metric.kind === "s" ? " (s)" : metric.kind === "pct" ? " (%)" : ""}</text>
        ${runs.map((r) =>
          r.length === 1
            ? html`<circle key=${`p${r[0]}`} class="kpi-point" cx=${mid(r[0]!)} cy=${y(values[r[0]!]!)} r="2.5" />`
            : html`<polyline key=${`l${r[0]}`} class="kpi-line" points=${r.map((i) => `${mid(i)},${y(values[i]!)}`).join(" ")} />`,
        )}
        ${hovered !== undefined && values[hovered] !== null ? html`<circle class="kpi-point" cx=${mid(hovered)} cy=${y(values[hovered]!)} r="4" />` : null}
        ${hovered !== undefined ? html`<rect class="chart-hover" x=${x(d.series[hovered]!.start_ms)} width=${bw} y=${PAD.t} height=${plotH} />` : null}
        ${d.series.map((s, i) => html`<rect key=${`h${s.start_ms}`} class="chart-hit" x=${x(s.start_ms)} width=${bw} y=${PAD.t} height=${plotH} onMouseEnter=${() => setHover(i)} />`)}
        <line class="chart-axis" x1=${left} x2=${W - PAD.r} y1=${y(0)} y2=${y(0)} />
        ${timeTicks(origin, end, d.step_ms).map(
          (t) =>
            html`<g key=${`x${t.ms}`}><line class="chart-axis" x1=${x(t.ms)} x2=${x(t.ms)} y1=${y(0)} y2=${y(0) + 4} /><text class="axis" x=${x(t.ms)} y=${H - PAD.b + 16} text-anchor=${x(t.ms) < left + 20 ? "start" : x(t.ms) > W - PAD.r - 20 ? "end" : "middle"}>${t.label}</text></g>`,
        )}
      </svg>
      ${tip}
    </div>
  </figure>`;
}
