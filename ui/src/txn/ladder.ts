/**
 * Ladder diagram: one column per host (alias name and IP), one time-stamped arrow per message in
 * order, coloured by method / response class; each arrow is a button that selects its message.
 */
import { html } from "../lib/html.ts";
import { formatDelta, formatTime } from "../lib/format.ts";
import type { Ladder } from "../lib/transaction.ts";

const COL_W = 172;
const GUTTER = 112;
const HEAD = 54;
const ROW = 30;

interface Props {
  ladder: Ladder;
  selected: string | undefined;
  onSelect: (uuid: string) => void;
}

export function LadderView({ ladder, selected, onSelect }: Props) {
  const { columns, arrows } = ladder;
  const width = GUTTER + columns.length * COL_W + 20;
  const height = HEAD + arrows.length * ROW + 16;
  const cx = (i: number) => GUTTER + i * COL_W + COL_W / 2;
  const focusRow = (i: number) => (document.querySelectorAll<SVGGElement>(".ladder .arrow")[i] as SVGGElement | undefined)?.focus();
  const onKey = (uuid: string, i: number) => (e: KeyboardEvent) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      onSelect(uuid);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      focusRow(i + (e.key === "ArrowDown" ? 1 : -1));
    }
  };
  return html`<div class="ladder-wrap">
    <svg class="ladder" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="group" aria-label=${`Call flow: ${arrows.length} messages between ${columns.length} hosts`}>
      ${columns.map(
        (c, i) => html`<g key=${c.ip} class="host">
          <rect class="host-box" x=${cx(i) - COL_W / 2 + 10} y="6" width=${COL_W - 20} height="38" rx="4" />
          <text class="host-alias" x=${cx(i)} y="22" text-anchor="middle">${c.alias ?? c.ip}</text>
          <text class="host-ip" x=${cx(i)} y="37" text-anchor="middle">${c.alias ? c.ip : ""}</text>
          <line class="lifeline" x1=${cx(i)} x2=${cx(i)} y1="44" y2=${height - 6} />
        </g>`,
      )}
      ${arrows.map((a, i) => {
        const y = HEAD + i * ROW + ROW / 2 + 6;
        const x1 = cx(a.from);
        const x2 = cx(a.to);
        const self = a.from === a.to;
        const dir = x2 >= x1 ? 1 : -1;
        const label = `${a.label}${a.sdp ? " (SDP)" : ""}`;
        const name = `${i + 1}. ${label} from ${columns[a.from]?.alias ?? columns[a.from]?.ip} to ${columns[a.to]?.alias ?? columns[a.to]?.ip} at ${formatTime(a.tsMs, false)}`;
        const mid = self ? x1 + 46 : (x1 + x2) / 2;
        return html`<g
          key=${a.uuid}
          class=${`arrow ${a.cls}${selected === a.uuid ? " selected" : ""}`}
          role="button"
          tabindex="0"
          aria-label=${name}
          aria-pressed=${selected === a.uuid ? "true" : "false"}
          data-index=${i + 1}
          onClick=${() => onSelect(a.uuid)}
          onKeyDown=${onKey(a.uuid, i)}
        >
          <rect class="hit" x="0" y=${y - ROW / 2 - 4} width=${width} height=${ROW} />
          <rect class=${`leg leg-${a.leg % 6}`} x="4" y=${y - 9} width="4" height="14"><title>Call-ID ${ladder.sessions[a.leg]}</title></rect>
          <text class="ts" x="12" y=${y - 2}>${formatTime(a.tsMs, false)}</text>
          <text class="delta" x="12" y=${y + 10}>${i === 0 ? "" : formatDelta(a.deltaMs)}</text>
          ${self
            ? html`<path class="line" d=${`M${x1},${y - 6} h34 v12 h-30`} fill="none" /><polygon class="head" points=${`${x1},${y + 6} ${x1 + 8},${y + 2} ${x1 + 8},${y + 10}`} />`
            : html`<line class="line" x1=${x1} x2=${x2 - dir * 8} y1=${y} y2=${y} /><polygon class="head" points=${`${x2},${y} ${x2 - dir * 9},${y - 5} ${x2 - dir * 9},${y + 5}`} />`}
          <text class="label" x=${mid} y=${y - 5} text-anchor=${self ? "start" : "middle"}>${label}</text>
          <text class="ports" x=${x1 + dir * 6} y=${y + 11} text-anchor=${dir > 0 ? "start" : "end"}>${a.srcPort ?? ""}</text>
          <text class="ports" x=${x2 - dir * 12} y=${y + 11} text-anchor=${dir > 0 ? "end" : "start"}>${self ? "" : (a.dstPort ?? "")}</text>
        </g>`;
      })}
    </svg>
  </div>`;
}
