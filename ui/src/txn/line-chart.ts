/**
 * A small SVG line chart for QoS series (jitter, loss, MOS over time): several series (one per
 * stream), a y axis titled with the unit, a time axis, and a legend naming each series.
 */
import { html } from "../lib/html.ts";
import { formatTime } from "../lib/format.ts";
import { formatMetric, niceCeil, tickText } from "../lib/qos-format.ts";

const W = 340;
const H = 150;
const P = { l: 46, r: 10, t: 8, b: 32 };
/** Distinct on white and for common colour blindness (Okabe-Ito). */
export const SERIES_COLOURS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000"];

export interface SeriesPoint {
  t: number;
  v: number;
}

export interface Series {
  /** Legend text, e.g. `0x00009c41 10.0.0.1:40001 → 10.0.0.2:42001`. */
  label: string;
  points: SeriesPoint[];
}

export function LineChart({
  title,
  unit,
  series,
  min = 0,
  max,
}: {
  title: string;
  unit: string;
  series: Series[];
  min?: number;
  max?: number;
}) {
  const withValues = series.filter((s) => s.points.length > 0);
  const axisTitle = unit === "MOS" ? "MOS (1-5)" : `${title} (${unit})`;
  if (withValues.length === 0)
    return html`<figure class="qchart"><figcaption>${axisTitle}</figcaption><p class="muted small">No values in the reports.</p></figure>`;
  const all = withValues.flatMap((s) => s.points);
  const t0 = Math.min(...all.map((p) => p.t));
  const t1 = Math.max(t0 + 1, ...all.map((p) => p.t));
  const top = Math.max(...all.map((p) => p.v));
  const hi = max ?? niceCeil(Math.max(top * 1.05, unit === "%" ? 1 : 0.5));
  const x = (t: number) => P.l + ((W - P.l - P.r) * (t - t0)) / (t1 - t0);
  const y = (v: number) => P.t + (H - P.t - P.b) * (1 - (v - min) / (hi - min || 1));
  const ticks = [min, (min + hi) / 2, hi];
  const described = withValues
    .map(
      (s) => `${s.label}: ${s.points.length} values, max ${formatMetric(Math.max(...s.points.map((p) => p.v)), unit)}`,
    )
    .join("; ");
  return html`<figure class="qchart">
    <figcaption>${axisTitle}</figcaption>
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`${axisTitle}: ${described}`}>
      ${ticks.map(
        (t) => html`<g key=${t}>
          <line class="grid-line" x1=${P.l} x2=${W - P.r} y1=${y(t)} y2=${y(t)} />
          <text class="axis" x=${P.l - 4} y=${y(t) + 4} text-anchor="end">${tickText(t)}</text>
        </g>`,
      )}
      <text class="axis axis-title" transform=${`translate(11 ${(P.t + H - P.b) / 2}) rotate(-90)`} text-anchor="middle">${unit}</text>
      ${withValues.map((s, i) => {
        const colour = SERIES_COLOURS[i % SERIES_COLOURS.length]!;
        const path = s.points
          .map((p, j) => `${j === 0 ? "M" : "L"}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`)
          .join(" ");
        return html`<g key=${s.label}>
          <path class="series" d=${path} fill="none" stroke=${colour} />
          ${s.points.map(
            (p) =>
              html`<circle key=${p.t} class="dot" cx=${x(p.t)} cy=${y(p.v)} r="2.5" fill=${colour}><title>${s.label} · ${formatTime(p.t, false)}: ${formatMetric(p.v, unit)}</title></circle>`,
          )}
        </g>`;
      })}
      <text class="axis" x=${P.l} y=${H - 18}>${formatTime(t0, false).slice(0, 8)}</text>
      <text class="axis" x=${W - P.r} y=${H - 18} text-anchor="end">${formatTime(t1, false).slice(0, 8)}</text>
      <text class="axis axis-title" x=${(P.l + W - P.r) / 2} y=${H - 4} text-anchor="middle">time (local)</text>
    </svg>
    <ul class="qlegend" aria-label=${`${title} legend`}>
      ${withValues.map(
        (s, i) =>
          html`<li key=${s.label}><span class="swatch" style=${`background:${SERIES_COLOURS[i % SERIES_COLOURS.length]}`} aria-hidden="true"></span><span class="mono">${s.label}</span></li>`,
      )}
    </ul>
  </figure>`;
}
