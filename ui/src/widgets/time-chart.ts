/**
 * Time chart: events over time for the search of the source widget — the server's histogram of
 * the search's WHOLE range under its filters (`POST /transactions/histogram`, docs/HISTOGRAM.md),
 * not the rows a result page holds. Bars are stacked by SIP method or response class (a choice
 * saved in the widget config); hovering a bucket, or moving along with the arrow keys once the
 * chart has focus, shows its time span and counts.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, post } from "../lib/api.ts";
import { formatTime } from "../lib/format.ts";
import {
  countText,
  countTicks,
  GROUP_CHOICES,
  groupable,
  histogramRequest,
  seriesColors,
  timeTicks,
  widthText,
  type GroupBy,
  type Histogram,
} from "../lib/histogram.ts";
import { chartKeyHandler } from "../lib/chart-keys.ts";
import { html } from "../lib/html.ts";
import { channel } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { WidgetProps } from "./types.ts";

const W = 600;
const H = 240;
const PAD = { r: 10, t: 10, b: 30 };
/** Mono 10px digits are about 6 units wide in the chart's coordinates. */
const CHAR_W = 6.2;

interface Loaded {
  status: "idle" | "loading" | "done" | "error";
  data?: Histogram;
  error?: string;
}

const time = (ms: number) => formatTime(ms).slice(0, 19);

export function TimeChart({ widget, onUpdate }: WidgetProps) {
  const source = typeof widget.config?.source === "string" ? widget.config.source : "call-search";
  const state = useStore(channel(source));
  const chosen = GROUP_CHOICES.find((c) => c.value === widget.config?.group_by)?.value ?? "method";
  const request = state.request;
  const canGroup = request ? groupable(request.filter.proto_type) : true;
  const groupBy: GroupBy = canGroup ? chosen : "none";
  const [loaded, setLoaded] = useState<Loaded>({ status: "idle" });
  const [hover, setHover] = useState<number | undefined>();

  useEffect(() => {
    if (!request) return;
    let live = true;
    setLoaded((prev) => ({ status: "loading", ...(prev.data ? { data: prev.data } : {}) }));
    post<{ data: Histogram }>("/transactions/histogram", histogramRequest(request, groupBy)).then(
      (r) => live && setLoaded({ status: "done", data: r.data }),
      (e) => live && setLoaded({ status: "error", error: errorText(e) }),
    );
    return () => {
      live = false;
    };
  }, [request, state.seq, groupBy]);

  const setGroup = (value: string) => onUpdate({ ...widget, config: { ...widget.config, group_by: value } });
  const head = html`<div class="chart-head">
    <span class="muted small" role="status">${loaded.status === "loading" ? "Counting events…" : loaded.data ? `${countText(loaded.data.total)} events · ${widthText(loaded.data.interval_ms)} buckets` : ""}</span>
    <label class="small">Group by <select value=${groupBy} disabled=${!canGroup} title=${canGroup ? "" : "This table has no SIP method or response code"} onChange=${(e: Event) => setGroup((e.target as HTMLSelectElement).value)}>
      ${GROUP_CHOICES.map((c) => html`<option key=${c.value} value=${c.value}>${c.label}</option>`)}
    </select></label>
  </div>`;

  if (loaded.status === "error")
    return html`<div class="chart">${head}<p class="alert alert-error" role="alert">Events over time could not be counted: ${loaded.error}</p></div>`;
  const h = loaded.data;
  if (!h) {
    const text =
      loaded.status === "loading"
        ? "Counting events over the search's range…"
        : "Run a search: the chart counts every event of its time range, by SIP method or response class.";
    return html`<div class="chart">${head}<div class="empty"><p>${text}</p></div></div>`;
  }
  const range = `${time(h.window.from_ms)} – ${time(h.window.to_ms)}`;
  if (h.total === 0)
    return html`<div class="chart">${head}<div class="empty"><p>No events in ${range}.</p></div></div>`;

  const keys = h.groups.map((g) => g.key);
  const colors = seriesColors(keys);
  const yTicks = countTicks(Math.max(...h.buckets.map((b) => b.count)));
  const top = yTicks.at(-1)!;
  const left = 18 + CHAR_W * countText(top).length + 6;
  const plotW = W - left - PAD.r;
  const plotH = H - PAD.t - PAD.b;
  const origin = h.buckets[0]!.start_ms;
  const end = origin + h.buckets.length * h.interval_ms;
  const x = (ms: number) => left + ((ms - origin) / (end - origin)) * plotW;
  const y = (v: number) => PAD.t + plotH * (1 - v / top);
  const bw = plotW / h.buckets.length;
  const unit = widthText(h.interval_ms);
  const hovered = hover === undefined ? undefined : h.buckets[Math.min(hover, h.buckets.length - 1)];

  const onKey = chartKeyHandler(h.buckets.length, hover, setHover);

  // The tip sits over its bucket, kept inside the chart near either edge.
  const tipAt = hovered ? (x(hovered.start_ms + h.interval_ms / 2) / W) * 100 : 0;
  const tipShift = tipAt < 25 ? "0" : tipAt > 75 ? "-100%" : "-50%";
  const tip = hovered
    ? html`<div class="chart-tip" role="tooltip" style=${`left:${tipAt}%;transform:translateX(${tipShift})`}>
        <strong>${time(hovered.start_ms)} – ${formatTime(hovered.start_ms + h.interval_ms, false).slice(0, 8)}</strong>
        <div>${countText(hovered.count)} ${hovered.count === 1 ? "event" : "events"}</div>
        ${keys.filter((k) => hovered.groups[k]).map((k) => html`<div key=${k}><i class="sw" style=${`background:${colors.get(k)}`}></i>${k} ${countText(hovered.groups[k]!)}</div>`)}
      </div>`
    : null;

  return html`<figure class="chart" aria-busy=${loaded.status === "loading" ? "true" : "false"}>
    ${head}
    <div class="chart-body" onMouseLeave=${() => setHover(undefined)}>
      <svg viewBox=${`0 0 ${W} ${H}`} role="img" tabindex="0" aria-label=${`${countText(h.total)} events in ${range} (${unit} buckets)`} onKeyDown=${onKey} onBlur=${() => setHover(undefined)}>
        ${yTicks.map((t) => html`<g key=${`y${t}`}><line class="grid-line" x1=${left} x2=${W - PAD.r} y1=${y(t)} y2=${y(t)} /><text class="axis" x=${left - 4} y=${y(t) + 3.5} text-anchor="end">${countText(t)}</text></g>`)}
        <text class="axis" transform=${`translate(10 ${PAD.t + plotH / 2}) rotate(-90)`} text-anchor="middle">events per ${unit}</text>
        ${h.buckets.map((b, i) => {
          let acc = 0;
          const parts = keys.length ? keys.map((k) => [k, b.groups[k] ?? 0] as const) : [["", b.count] as const];
          return html`<g key=${`b${b.start_ms}`}>
            ${parts.map(([k, n]) => {
              if (n === 0) return null;
              const y0 = y(acc);
              acc += n;
              return html`<rect key=${k} x=${x(b.start_ms) + (bw > 4 ? 0.5 : 0)} width=${Math.max(0.8, bw - (bw > 4 ? 1 : 0))} y=${y(acc)} height=${y0 - y(acc)} style=${`fill:${k ? colors.get(k) : "var(--accent)"}`} />`;
            })}
            ${hover === i ? html`<rect class="chart-hover" x=${x(b.start_ms)} width=${bw} y=${PAD.t} height=${plotH} />` : null}
            <rect class="chart-hit" x=${x(b.start_ms)} width=${bw} y=${PAD.t} height=${plotH} onMouseEnter=${() => setHover(i)} />
          </g>`;
        })}
        <line class="chart-axis" x1=${left} x2=${W - PAD.r} y1=${y(0)} y2=${y(0)} />
        ${timeTicks(origin, end, h.interval_ms).map(
          (t) =>
            html`<g key=${`x${t.ms}`}><line class="chart-axis" x1=${x(t.ms)} x2=${x(t.ms)} y1=${y(0)} y2=${y(0) + 4} /><text class="axis" x=${x(t.ms)} y=${H - PAD.b + 16} text-anchor=${x(t.ms) < left + 20 ? "start" : x(t.ms) > W - PAD.r - 20 ? "end" : "middle"}>${t.label}</text></g>`,
        )}
      </svg>
      ${tip}
    </div>
    ${
      keys.length
        ? html`<figcaption class="legend" role="list" aria-label="Legend">
          ${h.groups.map((g) => html`<span key=${g.key} role="listitem"><i class="sw" style=${`background:${colors.get(g.key)}`}></i>${g.key} <span class="muted">${countText(g.total)}</span></span>`)}
        </figcaption>`
        : null
    }
  </figure>`;
}
