/**
 * Ladder diagram (docs/CALL-VIEW.md): a header box per column (HTML, sticky while the ladder
 * scrolls), one time-stamped arrow per message in order, coloured by method / response class, and
 * marker rows for RTCP reports, agent media reports and log lines. Columns widen so no label is cut (ladder-layout.ts);
 * the pane scrolls sideways when they do not fit. Arrows and markers are buttons that select
 * their row.
 */
import { html } from "../lib/html.ts";
import { formatDelta, formatTime } from "../lib/format.ts";
import {
  GUTTER,
  MARKER_LINE,
  ROW,
  SELF_LOOP,
  layoutLadder,
  markerHeight,
  wrapText,
  type Measure,
  type TextStyle,
} from "../lib/ladder-layout.ts";
import { MARKER_KINDS, type Ladder, type LadderMarker } from "../lib/ladder-model.ts";

const TOP = 8;
/** Longest hover text of a log marker (the detail pane shows all of it). */
const TITLE_MAX = 4000;

interface Props {
  ladder: Ladder;
  selected: string | undefined;
  onSelect: (uuid: string) => void;
  /** Full text of each marker for its hover title (log payloads). */
  fullText?: (uuid: string) => string | undefined;
}

/** Text widths in the fonts the stylesheet gives the ladder (styles.css `.ladder*`). */
function browserMeasure(): Measure {
  const ctx = document.createElement("canvas").getContext("2d");
  const css = getComputedStyle(document.documentElement);
  const mono = css.getPropertyValue("--mono").trim() || "monospace";
  const sans = css.getPropertyValue("--sans").trim() || "sans-serif";
  const fonts: Record<TextStyle, string> = {
    title: `600 12px ${sans}`,
    subtitle: `10.5px ${mono}`,
    label: `600 11.5px ${mono}`,
    marker: `11px ${mono}`,
  };
  const cache = new Map<string, number>();
  return (text, style) => {
    const k = `${style}\u0000${text}`;
    let w = cache.get(k);
    if (w === undefined) {
      if (ctx) {
        ctx.font = fonts[style];
        w = ctx.measureText(text).width;
      } else w = text.length * (style === "title" ? 8 : 7.2);
      cache.set(k, w);
    }
    return w;
  };
}

let measureOnce: Measure | undefined;

/** Reports (RTCP, media) name their media path; a log line is its text. */
const markerText = (m: LadderMarker) => (m.kind === "log" ? m.summary : `${m.summary} · ${m.path}`);
const markerName = (m: LadderMarker) =>
  `${MARKER_KINDS[m.kind].name} at ${formatTime(m.tsMs, false)}: ${markerText(m)}`;

export function LadderView({ ladder, selected, onSelect, fullText }: Props) {
  const measure = (measureOnce ??= browserMeasure());
  const { columns, arrows, markers } = ladder;
  const layout = layoutLadder(
    columns,
    arrows.map((a) => ({ from: a.from, to: a.to, label: arrowLabel(a.label, a.sdp) })),
    measure,
  );
  const wrapped = new Map(markers.map((m) => [m.uuid, wrapText(markerText(m), layout.markerTextWidth, measure)]));
  // y of every slot: arrows are one row, markers as tall as their wrapped text.
  const slots = arrows.length + markers.length;
  const heights = new Array<number>(slots).fill(ROW);
  for (const m of markers) heights[m.slot] = markerHeight(wrapped.get(m.uuid)?.length ?? 1);
  const tops: number[] = [];
  let y = TOP;
  for (const h of heights) {
    tops.push(y);
    y += h;
  }
  const { width, centers } = layout;
  const height = y + 12;
  const cx = (i: number) => centers[i] ?? GUTTER;
  const focusRow = (el: Element, step: 1 | -1) => {
    const rows = el.closest(".ladder")?.querySelectorAll<SVGGElement>("[data-row]");
    const all = rows ? Array.from(rows) : [];
    all[all.indexOf(el as SVGGElement) + step]?.focus();
  };
  const onKey = (uuid: string) => (e: KeyboardEvent) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      onSelect(uuid);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      focusRow(e.currentTarget as Element, e.key === "ArrowDown" ? 1 : -1);
    }
  };
  const colName = (i: number) => columns[i]?.name ?? "?";

  return html`<div class="ladder-wrap">
    <div class="ladder-canvas" style=${`width:${width}px`}>
      <ol class="ladder-hosts" aria-label="Endpoints">
        ${columns.map(
          (
            c,
            i,
          ) => html`<li key=${c.key} class="host" title=${c.name} aria-label=${c.name} style=${`left:${cx(i) - layout.boxes[i]! / 2}px;width:${layout.boxes[i]}px`}>
            <span class="host-title">${c.title}</span>
            <span class="host-sub">${c.subtitle}</span>
          </li>`,
        )}
      </ol>
      <svg class="ladder" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`}>
        ${columns.map((c, i) => html`<line key=${c.key} class="lifeline" x1=${cx(i)} x2=${cx(i)} y1="0" y2=${height} />`)}
        <g role="group" aria-label=${`Call flow: ${arrows.length} messages between ${columns.length} hosts`}>
          ${arrows.map((a) => {
            const top = tops[a.slot]!;
            const yy = top + ROW / 2 + 4;
            const x1 = cx(a.from);
            const x2 = cx(a.to);
            const self = a.from === a.to;
            const dir = x2 >= x1 ? 1 : -1;
            const label = arrowLabel(a.label, a.sdp);
            const seen = a.seenBy.length > 1 ? `, seen by ${a.seenBy.join(" and ")}` : "";
            const copy = a.copyFrom ? `, copy from ${a.copyFrom}` : "";
            const name = `${a.number}. ${label} from ${colName(a.from)} to ${colName(a.to)} at ${formatTime(a.tsMs, false)}${copy || seen}${a.live ? ", received live" : ""}`;
            const mid = self ? x1 + SELF_LOOP : (x1 + x2) / 2;
            // Ports at the arrow ends where the column does not name one (IP columns).
            const srcPort = columns[a.from]?.port === null ? a.srcPort : null;
            const dstPort = columns[a.to]?.port === null && !self ? a.dstPort : null;
            return html`<g
              key=${a.uuid}
              class=${`arrow ${a.cls}${a.copyFrom ? " copy" : ""}${a.live ? " live" : ""}${selected === a.uuid ? " selected" : ""}`}
              role="button"
              tabindex="0"
              aria-label=${name}
              aria-pressed=${selected === a.uuid ? "true" : "false"}
              data-row=""
              onClick=${() => onSelect(a.uuid)}
              onKeyDown=${onKey(a.uuid)}
            >
              <title>${name}</title>
              <rect class="hit" x="0" y=${top} width=${width} height=${ROW} />
              <rect class=${`leg leg-${a.leg % 6}`} x="4" y=${yy - 9} width="4" height="14"><title>Call-ID ${ladder.sessions[a.leg]}</title></rect>
              <text class="ts" x="12" y=${yy - 2}>${formatTime(a.tsMs, false)}</text>
              <text class="delta" x="12" y=${yy + 10}>${a.number === 1 ? "" : formatDelta(a.deltaMs)}</text>
              ${
                self
                  ? html`<path class="line" d=${`M${x1},${yy - 6} h34 v12 h-30`} fill="none" /><polygon class="head" points=${`${x1},${yy + 6} ${x1 + 8},${yy + 2} ${x1 + 8},${yy + 10}`} />`
                  : html`<line class="line" x1=${x1} x2=${x2 - dir * 8} y1=${yy} y2=${yy} /><polygon class="head" points=${`${x2},${yy} ${x2 - dir * 9},${yy - 5} ${x2 - dir * 9},${yy + 5}`} />`
              }
              <text class="label" x=${mid} y=${yy - 5} text-anchor=${self ? "start" : "middle"}>${label}</text>
              ${srcPort !== null && html`<text class="ports" x=${x1 + dir * 6} y=${yy + 11} text-anchor=${dir > 0 ? "start" : "end"}>${srcPort}</text>`}
              ${dstPort !== null && html`<text class="ports" x=${x2 - dir * 12} y=${yy + 11} text-anchor=${dir > 0 ? "end" : "start"}>${dstPort}</text>`}
            </g>`;
          })}
        </g>
        <g role="group" aria-label=${`RTCP, media and log events: ${markers.length}`}>
          ${markers.map((m) => {
            const top = tops[m.slot]!;
            const h = heights[m.slot]!;
            const lines = wrapped.get(m.uuid) ?? [];
            const full = fullText?.(m.uuid);
            const hover =
              m.kind === "log" && full
                ? `${markerName(m)}\n\n${full.length > TITLE_MAX ? `${full.slice(0, TITLE_MAX)}…` : full}`
                : markerName(m);
            return html`<g
              key=${m.uuid}
              class=${`marker marker-${m.kind}${selected === m.uuid ? " selected" : ""}`}
              role="button"
              tabindex="0"
              aria-label=${markerName(m)}
              aria-pressed=${selected === m.uuid ? "true" : "false"}
              data-row=""
              onClick=${() => onSelect(m.uuid)}
              onKeyDown=${onKey(m.uuid)}
            >
              <title>${hover}</title>
              <rect class="hit" x="0" y=${top} width=${width} height=${h} />
              <text class="ts" x="12" y=${top + 16}>${formatTime(m.tsMs, false)}</text>
              <rect class="band" x=${GUTTER - 6} y=${top + 3} width=${width - GUTTER - 8} height=${h - 6} rx="3" />
              <text class="tag" x=${GUTTER} y=${top + 16}>${MARKER_KINDS[m.kind].tag}</text>
              <text class="text" x=${layout.markerX} y=${top + 16}>
                ${lines.map((l, k) => html`<tspan key=${k} x=${layout.markerX} dy=${k === 0 ? 0 : MARKER_LINE}>${l}</tspan>`)}
              </text>
            </g>`;
          })}
        </g>
      </svg>
    </div>
  </div>`;
}

const arrowLabel = (label: string, sdp: boolean) => `${label}${sdp ? " (SDP)" : ""}`;
