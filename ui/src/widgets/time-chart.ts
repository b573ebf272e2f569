/** Time chart: messages of the last search per time bucket, stacked by request / response class. */
import { html } from "../lib/html.ts";
import { formatTime } from "../lib/format.ts";
import { channel } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { WidgetProps } from "./registry.ts";

const SERIES = [
  { key: "req", label: "Requests", cls: "s-req", test: (e: string) => !/^\d{3}$/.test(e) },
  { key: "1xx", label: "1xx", cls: "s-1xx", test: (e: string) => /^1\d\d$/.test(e) },
  { key: "2xx", label: "2xx", cls: "s-2xx", test: (e: string) => /^2\d\d$/.test(e) },
  { key: "err", label: "3xx-6xx", cls: "s-err", test: (e: string) => /^[3-6]\d\d$/.test(e) },
];

const W = 600;
const H = 220;
const PAD = { l: 36, r: 8, t: 10, b: 28 };

export function TimeChart({ widget }: WidgetProps) {
  const source = typeof widget.config?.source === "string" ? widget.config.source : "call-search";
  const state = useStore(channel(source));
  if (state.status !== "done" || state.items.length === 0) {
    return html`<div class="empty"><p>${state.status === "loading" ? "Searching…" : state.status === "error" ? `Search failed: ${state.error}` : "The chart shows the messages of the last search over time."}</p></div>`;
  }
  const times = state.items.map((r) => (typeof r.timestamp_us === "number" ? r.timestamp_us / 1000 : NaN)).filter((t) => !Number.isNaN(t));
  // The searched range, or the span of the data when it fills only a small part of it (a call in a
  // day's search would otherwise be one bar).
  const lo = Math.min(...times);
  const hi = Math.max(...times);
  const pad = Math.max(1000, (hi - lo) * 0.05);
  const reqFrom = state.request?.timestamp.from ?? lo;
  const reqTo = state.request?.timestamp.to ?? hi;
  const zoom = hi - lo + 2 * pad < (reqTo - reqFrom) / 4;
  const from = zoom ? lo - pad : reqFrom;
  const to = zoom ? hi + pad : reqTo;
  const buckets = 40;
  const step = Math.max(1, (to - from) / buckets);
  const counts = Array.from({ length: buckets }, () => SERIES.map(() => 0));
  for (const r of state.items) {
    if (typeof r.timestamp_us !== "number") continue;
    const b = Math.min(buckets - 1, Math.max(0, Math.floor((r.timestamp_us / 1000 - from) / step)));
    const s = SERIES.findIndex((x) => x.test(String(r.event ?? "")));
    counts[b]![s === -1 ? 0 : s]!++;
  }
  const max = Math.max(1, ...counts.map((c) => c.reduce((a, b) => a + b, 0)));
  const bw = (W - PAD.l - PAD.r) / buckets;
  const y = (v: number) => PAD.t + (H - PAD.t - PAD.b) * (1 - v / max);
  const ticks = [0, Math.ceil(max / 2), max];
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${W} ${H}`} role="img" aria-label=${`${state.items.length} messages between ${formatTime(from)} and ${formatTime(to)}`}>
      ${ticks.map((t) => html`<g key=${t}><line class="grid-line" x1=${PAD.l} x2=${W - PAD.r} y1=${y(t)} y2=${y(t)} /><text class="axis" x=${PAD.l - 4} y=${y(t) + 4} text-anchor="end">${t}</text></g>`)}
      ${counts.map((c, i) => {
        let acc = 0;
        return c.map((n, s) => {
          if (n === 0) return null;
          const y0 = y(acc);
          acc += n;
          return html`<rect key=${`${i}-${s}`} class=${SERIES[s]!.cls} x=${PAD.l + i * bw + 1} width=${Math.max(1, bw - 2)} y=${y(acc)} height=${y0 - y(acc)}><title>${formatTime(from + i * step)}: ${n} ${SERIES[s]!.label}</title></rect>`;
        });
      })}
      <text class="axis" x=${PAD.l} y=${H - 8}>${formatTime(from, false).slice(0, 8)}</text>
      <text class="axis" x=${W - PAD.r} y=${H - 8} text-anchor="end">${formatTime(to, false).slice(0, 8)}</text>
    </svg>
    <figcaption class="legend">${SERIES.map((s) => html`<span key=${s.key}><i class=${`sw ${s.cls}`}></i>${s.label}</span>`)}</figcaption>
  </figure>`;
}
