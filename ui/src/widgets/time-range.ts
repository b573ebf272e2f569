/** Time-range picker with quick ranges and a custom from/to; shared by every search (lib/state.ts). */
import { useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import { fromLocalInput, toLocalInput, formatTime } from "../lib/format.ts";
import { QUICK_RANGES, resolveRange, timeRange, type TimeRange } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";

export function rangeLabel(r: TimeRange): string {
  if (r.kind === "relative") return QUICK_RANGES.find((q) => q.minutes === r.minutes)?.label ?? `Last ${r.minutes} minutes`;
  const from = formatTime(r.from).slice(0, 19);
  const to = formatTime(r.to).slice(0, 19);
  // One day: the date once (operators read "2026-11-22 10:04:05 → 10:09:00").
  return from.slice(0, 10) === to.slice(0, 10) ? `${from} → ${to.slice(11)}` : `${from} → ${to}`;
}

let seq = 0;

export function TimeRangePicker({ onApply }: { onApply?: () => void }) {
  const range = useStore(timeRange);
  const [open, setOpen] = useState(false);
  const resolved = resolveRange(range);
  const [from, setFrom] = useState(toLocalInput(resolved.from));
  const [to, setTo] = useState(toLocalInput(resolved.to));
  const [error, setError] = useState<string | undefined>();
  const [id] = useState(() => `tr-${++seq}`);

  const pick = (r: TimeRange) => {
    timeRange.set(r);
    setOpen(false);
    onApply?.();
  };
  const applyCustom = (e: Event) => {
    e.preventDefault();
    const f = fromLocalInput(from);
    const t = fromLocalInput(to);
    if (f === undefined || t === undefined) return setError("Enter both times.");
    if (f >= t) return setError("“From” must be before “To”.");
    setError(undefined);
    pick({ kind: "absolute", from: f, to: t });
  };
  return html`<div class="trp" onKeyDown=${(e: KeyboardEvent) => e.key === "Escape" && setOpen(false)}>
    <button type="button" class="btn btn-ghost trp-button" aria-expanded=${open} aria-controls=${id} onClick=${() => setOpen(!open)} title="Time range">
      <svg viewBox="0 0 16 16" aria-hidden="true"><circle cx="8" cy="8" r="6.5" /><path d="M8 4.5V8l2.5 1.5" /></svg> <span class="trp-label">${rangeLabel(range)}</span>
    </button>
    ${open &&
    html`<div class="popover trp-pop" id=${id} role="group" aria-label="Time range">
      <div class="trp-quick">
        ${QUICK_RANGES.map(
          (q) => html`<button type="button" key=${q.minutes} class=${range.kind === "relative" && range.minutes === q.minutes ? "chip active" : "chip"} onClick=${() => pick({ kind: "relative", minutes: q.minutes })}>
            ${q.label}
          </button>`,
        )}
      </div>
      <form class="trp-custom" onSubmit=${applyCustom}>
        <label>From <input type="datetime-local" step="1" value=${from} onInput=${(e: Event) => setFrom((e.target as HTMLInputElement).value)} /></label>
        <label>To <input type="datetime-local" step="1" value=${to} onInput=${(e: Event) => setTo((e.target as HTMLInputElement).value)} /></label>
        ${error && html`<p class="field-error" role="alert">${error}</p>`}
        <button type="submit" class="btn">Apply range</button>
      </form>
    </div>`}
  </div>`;
}
