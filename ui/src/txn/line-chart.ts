/** A small SVG line chart for QoS series (jitter, loss, MOS over time). */
import { html } from "../lib/html.ts";
import { formatTime } from "../lib/format.ts";

const W = 320;
const H = 130;
const P = { l: 38, r: 8, t: 8, b: 20 };

export interface SeriesPoint {
  t: number;
  v: number;
}

export function LineChart({ title, unit, points, min = 0, max, cls }: { title: string; unit: string; points: SeriesPoint[]; min?: number; max?: number; cls: string }) {
  if (points.length === 0) return html`<figure class="qchart"><figcaption>${title}</figcaption><p class="muted small">No values in the reports.</p></figure>`;
  const t0 = points[0]!.t;
  const t1 = Math.max(t0 + 1, points[points.length - 1]!.t);
  const hi = max ?? Math.max(...points.map((p) => p.v), 1) * 1.15;
  const x = (t: number) => P.l + ((W - P.l - P.r) * (t - t0)) / (t1 - t0);
  const y = (v: number) => P.t + (H - P.t - P.b) * (1 - (v - min) / (hi - min || 1));
  const path = points.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ");
  const ticks = [min, (min + hi) / 2, hi];
  const last = points[points.length - 1]!;
  return html`<figure class="qchart">
    <figcaption>${title} <span class="muted">last ${fmt(last.v)} ${unit} · max ${fmt(Math.max(...points.map((p) => p.v)))} ${unit}</span></figcaption>
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`${title}: ${points.length} values, last ${fmt(last.v)} ${unit}`}>
      ${ticks.map((t) => html`<g key=${t}><line class="grid-line" x1=${P.l} x2=${W - P.r} y1=${y(t)} y2=${y(t)} /><text class="axis" x=${P.l - 4} y=${y(t) + 4} text-anchor="end">${fmt(t)}</text></g>`)}
      <path class=${`series ${cls}`} d=${path} fill="none" />
      ${points.map((p) => html`<circle key=${p.t} class=${`dot ${cls}`} cx=${x(p.t)} cy=${y(p.v)} r="2.5"><title>${formatTime(p.t, false)}: ${fmt(p.v)} ${unit}</title></circle>`)}
      <text class="axis" x=${P.l} y=${H - 4}>${formatTime(t0, false).slice(0, 8)}</text>
      <text class="axis" x=${W - P.r} y=${H - 4} text-anchor="end">${formatTime(t1, false).slice(0, 8)}</text>
    </svg>
  </figure>`;
}

const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
