/**
 * The Call-IDs of a combined call view (docs/DASHBOARD.md "Several calls in one view"): the ones
 * selected in the results grid and the legs correlated to them, with their message counts, above
 * the ladder that shows all of their messages together. Each carries the colour of its marker on
 * the ladder's arrows (legs are numbered in order of first message, as lib/transaction.ts does).
 */
import { html } from "../lib/html.ts";
import type { TxMessage } from "../lib/transaction.ts";

export function CallIdList({
  selected,
  sessions,
  items,
}: {
  selected: string[];
  sessions: string[];
  items: TxMessage[];
}) {
  const counts = new Map<string, number>();
  const legs: string[] = [];
  for (const m of items) {
    counts.set(m.session_id, (counts.get(m.session_id) ?? 0) + 1);
    if (!legs.includes(m.session_id)) legs.push(m.session_id);
  }
  const rank = (id: string) => (legs.includes(id) ? legs.indexOf(id) : legs.length);
  const ordered = [...new Set([...selected, ...sessions])]
    .filter((id) => sessions.includes(id) || counts.has(id))
    .sort((x, y) => rank(x) - rank(y));
  return html`<section class="call-ids" aria-label="Call-IDs in this view">
    <span class="small muted">Call-IDs</span>
    <ul class="plain">
      ${ordered.map((id) => {
        const n = counts.get(id) ?? 0;
        const leg = legs.indexOf(id);
        return html`<li key=${id}>
          ${leg >= 0 && html`<svg class="leg-swatch" viewBox="0 0 4 14" aria-hidden="true"><rect class=${`leg leg-${leg % 6}`} width="4" height="14" /></svg>`}
          <span class="mono">${id}</span>
          <span class="muted small">${n} message${n === 1 ? "" : "s"}${selected.includes(id) ? "" : " · correlated"}</span>
        </li>`;
      })}
    </ul>
  </section>`;
}
