/**
 * The "Call info" tab of the transaction window (docs/DASHBOARD.md "Several calls in one view"):
 * status, parties, timings, codecs and user agents of the call. A view with several Call-IDs (calls
 * opened together, or a call with correlated legs) gets one summary per Call-ID, in the order and
 * colour of the ladder's legs, because one summary over all of them would mix the outcome of one
 * call with the timings of another.
 */
import { html } from "../lib/html.ts";
import { formatDuration, formatTime } from "../lib/format.ts";
import { callSummary, summariesByCallId, type CallSummary, type TxMessage } from "../lib/transaction.ts";

interface Props {
  items: TxMessage[];
  sessions: string[];
  window: { from_ms: number; to_ms: number };
  lookup?: { from_ms: number; to_ms: number } | undefined;
}

const row = (k: string, v: unknown) => html`<div><dt>${k}</dt><dd>${v}</dd></div>`;

function Summary({ s }: { s: CallSummary }) {
  return html`<p class=${`status status-${s.tone}`} role="status"><strong>${s.status}</strong>${s.finalResponse ? html` · final response <span class="mono">${s.finalResponse}</span>` : ""}</p>
    <dl class="info-grid">
      ${row("From", html`<span class="mono">${s.caller || "—"}</span>`)}
      ${row("To", html`<span class="mono">${s.callee || "—"}</span>`)}
      ${row("Started", html`<span class="mono">${formatTime(s.firstMs)}</span>`)}
      ${row("Last message", html`<span class="mono">${formatTime(s.lastMs)}</span>`)}
      ${row("Ringing after", s.ringingMs === null ? "—" : formatDuration(s.ringingMs))}
      ${row("Setup delay (INVITE → final)", s.setupMs === null ? "—" : formatDuration(s.setupMs))}
      ${row("Duration (answer → BYE)", s.durationMs === null ? "—" : formatDuration(s.durationMs))}
      ${row("Messages", s.messages)}
      ${row("Codecs offered", s.offeredCodecs.join(", ") || "—")}
      ${row("Codecs answered", s.answeredCodecs.join(", ") || "—")}
      ${row("User agents", s.userAgents.join(" · ") || "—")}
    </dl>`;
}

export function CallInfo({ items, sessions, window: w, lookup }: Props) {
  const per = summariesByCallId(items);
  const searched = html`<dl class="info-grid call-info-window">
    ${lookup && row("Selected messages looked for in", html`<span class="mono">${formatTime(lookup.from_ms)} → ${formatTime(lookup.to_ms)}</span>`)}
    ${row("Window searched", html`<span class="mono">${formatTime(w.from_ms)} → ${formatTime(w.to_ms, false)}</span>`)}
    ${row("Call-IDs", html`<ul class="plain mono">${sessions.map((x) => html`<li key=${x}>${x}</li>`)}</ul>`)}
  </dl>`;
  if (per.length <= 1) return html`<div class="call-info"><${Summary} s=${callSummary(items)} />${searched}</div>`;
  return html`<div class="call-info">
    <p class="muted">${per.length} Call-IDs in this view, each summarised on its own.</p>
    ${per.map(
      ({ callId, leg, summary }) => html`<section key=${callId} class="call-sum" aria-label=${`Call ${callId}`}>
        <h3 class="call-sum-head">
          <svg class="leg-swatch" viewBox="0 0 4 14" aria-hidden="true"><rect class=${`leg leg-${leg % 6}`} width="4" height="14" /></svg>
          <span class="mono">${callId}</span>
        </h3>
        <${Summary} s=${summary} />
      </section>`,
    )}
    ${searched}
  </div>`;
}
