/**
 * Jitter Buffer Hero (docs/GAMES.md "Jitter Buffer Hero"): packets arrive with the jitter of
 * captured RTCP reports (`POST /transactions/search`, HEP 5) or a synthetic profile; the player
 * sizes the playout buffer (slider, or ↑/↓ ±5 ms and PgUp/PgDn ±20 ms in the game) and scores the
 * E-model-like MOS of every tick. Space starts and pauses.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, post } from "../../lib/api.ts";
import { html } from "../../lib/html.ts";
import { serverFeatures } from "../../lib/state.ts";
import { PopoverPanel, usePopover } from "../../lib/popover.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { BASE_DELAY_MS, phasesFromRtcp, SYNTHETIC_PHASES, type Phase } from "./jitter.ts";
import {
  advance,
  MAX_BUFFER_MS,
  newRound,
  phaseIndex,
  TICK_MS,
  totalTicks,
  WINDOW,
  type Round,
} from "./jitter-round.ts";

type Source = { state: "loading" } | { state: "done"; phases: Phase[]; note: string; failed?: boolean };

/** Up to 6 phases from the newest RTCP reports of the last 24 h, the rest synthetic. */
async function loadPhases(): Promise<{ phases: Phase[]; note: string; failed?: boolean }> {
  const now = Date.now();
  if (serverFeatures.get()?.search === false)
    return {
      phases: [...SYNTHETIC_PHASES],
      note: "This server stores no captures (no lake): a synthetic jitter profile plays.",
    };
  try {
    const r = await post<{ data: { items: Array<Record<string, unknown>> } }>("/transactions/search", {
      filter: { proto_type: 5, event_type: "default" },
      param: { limit: 50 },
      timestamp: { from: now - 86_400_000, to: now },
    });
    const rtcp = phasesFromRtcp(r.data.items.map((x) => String(x.payload ?? "")).reverse());
    if (rtcp.length === 0)
      return {
        phases: [...SYNTHETIC_PHASES],
        note: "No RTCP captured in the last 24 hours: a synthetic jitter profile plays.",
      };
    return {
      phases: [...rtcp, ...SYNTHETIC_PHASES.slice(rtcp.length)],
      note: `Jitter of ${rtcp.length} captured RTCP report${rtcp.length > 1 ? "s" : ""}${rtcp.length < 6 ? ", then synthetic phases" : ""}.`,
    };
  } catch (e) {
    return {
      phases: [...SYNTHETIC_PHASES],
      note: `RTCP could not be read (${errorText(e)}): a synthetic jitter profile plays.`,
      failed: true,
    };
  }
}

const CHART_W = 300;
const CHART_H = 70;
const Y_MAX = 200;

export function JitterBufferHero({ widget }: WidgetProps) {
  const [source, setSource] = useState<Source>({ state: "loading" });
  const [round, setRound] = useState<Round | null>(null);
  const [running, setRunning] = useState(false);
  const [buffer, setBuffer] = useState(40);
  const [seed, setSeed] = useState(1);
  const bufferRef = useRef(buffer);
  bufferRef.current = buffer;
  const help = usePopover({ label: "How to play Jitter Buffer Hero" });

  useEffect(() => {
    void loadPhases().then((s) => {
      setSource({ state: "done", ...s });
      setRound(newRound(s.phases, 1));
    });
  }, []);

  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => {
      setRound((r) => {
        return r ? advance(r, bufferRef.current) : r;
      });
    }, TICK_MS);
    return () => clearInterval(t);
  }, [running]);

  useEffect(() => {
    if (round?.done) setRunning(false);
  }, [round?.done]);

  const start = () => {
    if (!round || source.state !== "done") return;
    if (round.done) {
      const s = seed + 1;
      setSeed(s);
      setRound(newRound(source.phases, s));
    }
    setRunning((x) => !x || round.done);
  };
  const nudge = (d: number) => setBuffer((b) => Math.max(0, Math.min(MAX_BUFFER_MS, b + d)));
  const onKey = (e: KeyboardEvent) => {
    const onSlider = (e.target as HTMLElement).getAttribute?.("type") === "range";
    if (e.key === " " && (e.target as HTMLElement).tagName !== "BUTTON") {
      e.preventDefault();
      start();
    } else if (
      !onSlider &&
      (e.key === "ArrowUp" || e.key === "ArrowDown" || e.key === "PageUp" || e.key === "PageDown")
    ) {
      e.preventDefault();
      nudge((e.key.startsWith("Page") ? 20 : 5) * (e.key.endsWith("Up") ? 1 : -1));
    }
  };

  if (source.state === "loading" || !round)
    return html`<p class="loading" role="status">Loading jitter from captured RTCP…</p>`;
  const p = phaseIndex(round);
  const phase = round.phases[p]!;
  const recent = round.played.slice(-2 * WINDOW);
  const lateRecent = round.played.slice(-WINDOW).filter((x) => x.late).length;
  const x = (i: number) => (i / Math.max(1, 2 * WINDOW - 1)) * CHART_W;
  const y = (ms: number) => CHART_H - (Math.min(ms, Y_MAX) / Y_MAX) * CHART_H;
  const sliderId = `jbh-buffer-${widget.id}`;
  const pct = round.par > 0 ? Math.round((round.points / round.par) * 100) : 0;
  return html`<div tabindex="-1" onKeyDown=${onKey} style=${{ display: "flex", flexDirection: "column", gap: "5px", padding: "6px 8px", height: "100%", boxSizing: "border-box", outline: "none" }}>
    <div style=${{ display: "flex", gap: "6px", alignItems: "center" }}>
      <p class=${source.failed ? "small alert alert-warn" : "small muted"} role=${source.failed ? "alert" : undefined} style=${{ margin: 0, flex: 1, minWidth: 0 }}>${source.note}</p>
      <button type="button" class="btn btn-ghost" ...${help.trigger}>How to play</button>
      <${PopoverPanel} pop=${help}>
        <div class="small" style=${{ maxWidth: "300px" }}>
          <p>Packets (dots) arrive late by the network's jitter. Every packet above the buffer line misses its playout time and is lost; a deeper buffer adds delay instead.</p>
          <p>Keys: Space starts and pauses, ↑/↓ change the buffer by 5 ms, PgUp/PgDn by 20 ms. Each 100 ms scores MOS × 10 of the last second; par is the best fixed buffer of each phase.</p>
        </div>
      <//>
    </div>
    <svg role="img" aria-label=${`Packets of the last 2 s: ${lateRecent} of the last ${Math.min(WINDOW, round.played.length)} late`} viewBox=${`0 0 ${CHART_W} ${CHART_H}`} preserveAspectRatio="none" style=${{ width: "100%", height: "70px", background: "#f6f8fb", border: "1px solid var(--line)", borderRadius: "4px", flex: "none" }}>
      ${recent.map((pk, i) => html`<circle key=${i} cx=${x(i)} cy=${y(pk.d)} r="2" fill=${pk.late ? "#c62828" : "#2e7d32"} />`)}
      ${round.played.length === 0 && html`<text x=${CHART_W / 2} y=${CHART_H / 2 - 8} text-anchor="middle" font-size="11" fill="#5a6878">Start (or Space), then hold the line</text>`}
      <line x1="0" x2=${CHART_W} y1=${y(buffer)} y2=${y(buffer)} stroke="#1f5fbf" stroke-width="1.5" stroke-dasharray="4 3" />
    </svg>
    <p class="small muted" style=${{ margin: 0 }}>Dots: packet delay, 0-${Y_MAX} ms (red: late); dashed: the buffer.</p>
    <div style=${{ display: "flex", alignItems: "center", gap: "6px" }}>
      <label for=${sliderId} class="small" style=${{ whiteSpace: "nowrap" }}>Playout buffer</label>
      <input id=${sliderId} type="range" min="0" max=${MAX_BUFFER_MS} step="5" value=${buffer} onInput=${(e: Event) => setBuffer(Number((e.target as HTMLInputElement).value))} style=${{ flex: 1, minWidth: 0 }} />
      <span class="small mono" style=${{ minWidth: "52px", textAlign: "right" }}>${buffer} ms</span>
    </div>
    <p class="small" style=${{ margin: 0 }}>
      Phase ${p + 1}/${round.phases.length} · jitter ${phase.jitterMs} ms (${phase.source}) · late ${Math.round(round.loss * 1000) / 10} % · delay ${BASE_DELAY_MS + buffer} ms · MOS ${round.tick > 0 ? round.mos.toFixed(2) : "–"}
    </p>
    <p role="status" aria-label="Score" class="small" style=${{ margin: 0 }}>
      Score <b>${round.points}</b> of par ${round.par}${round.done ? ` · round over: ${pct} % of par` : ` · ${Math.round((round.tick / totalTicks(round)) * 100)} % played`}
    </p>
    ${
      round.done &&
      html`<p class="small muted" style=${{ margin: 0 }}>
      Best fixed buffer per phase: ${round.phases.map((ph, i) => `${ph.jitterMs} ms jitter → ${round.parBuffers[i]} ms`).join(", ")}.
    </p>`
    }
    <div style=${{ display: "flex", gap: "6px" }}>
      <button type="button" class="btn btn-primary" onClick=${start}>${running ? "Pause" : round.done ? "New round" : round.tick > 0 ? "Resume" : "Start"}</button>
      <button type="button" class="btn" onClick=${() => nudge(-5)} aria-label="Smaller buffer">−5 ms</button>
      <button type="button" class="btn" onClick=${() => nudge(5)} aria-label="Larger buffer">+5 ms</button>
    </div>
  </div>`;
}
