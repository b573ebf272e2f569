/**
 * The time-range picker (docs/UI.md "Time range"): quick ranges, custom from/to typed in the display
 * zone and checked before it applies, and the zone itself (browser zone name and UTC offset, with a
 * Local / UTC switch that every shown time follows). One instance sits in the dashboard header for
 * the dashboard range; a widget with its own range shows a second one as a badge in its title bar.
 */
import { useState } from "preact/hooks";
import { displayZone } from "../lib/dashboard-time.ts";
import { html } from "../lib/html.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";
import { useStore } from "../lib/store.ts";
import {
  QUICK_RANGES,
  customRange,
  rangeLabel,
  resolveRange,
  sameRange,
  toZoneText,
  zoneLabel,
  zoneShort,
  type TimeRange,
  type Zone,
} from "../lib/time-range.ts";

export { rangeLabel };

interface PickerProps {
  value: TimeRange;
  onChange: (r: TimeRange) => void;
  /** Accessible name of the trigger, before the range: "Dashboard time range". */
  name: string;
  align?: "start" | "end";
  /** The small form used as a widget's badge. */
  badge?: boolean;
}

export function TimeRangePicker({ value, onChange, name, align = "start", badge = false }: PickerProps) {
  const zone = useStore(displayZone);
  const pop = usePopover({ label: name, kind: "dialog", align });
  const label = rangeLabel(value, zone);
  const pick = (r: TimeRange) => {
    onChange(r);
    pop.close();
  };
  return html`<span class=${badge ? "trp trp-badge" : "trp"}>
    <button type="button" class=${badge ? "btn trp-button" : "btn btn-ghost trp-button"} ...${pop.trigger} aria-label=${`${name}: ${label}, ${zoneShort(zone)}`} title=${`${name}: ${label} (${zoneLabel(zone)})`}>
      <svg viewBox="0 0 16 16" aria-hidden="true"><circle cx="8" cy="8" r="6.5" /><path d="M8 4.5V8l2.5 1.5" /></svg>
      <span class="trp-label">${label}</span>
      ${!badge && html`<span class="trp-zone">${zoneShort(zone)}</span>`}
    </button>
    <${PopoverPanel} pop=${pop} class="trp-pop">
      <${RangePanel} value=${value} zone=${zone} onPick=${pick} />
    </${PopoverPanel}>
  </span>`;
}

/**
 * From/To are typed as `YYYY-MM-DD HH:MM:SS`, 24 h like every time shown (docs/UI.md "Time range"):
 * a datetime-local input would follow the browser's locale and show AM/PM.
 */
const TIME_TEXT = {
  type: "text",
  class: "mono",
  inputmode: "numeric",
  autocomplete: "off",
  spellcheck: false,
  placeholder: "YYYY-MM-DD HH:MM:SS",
  title: "24 h: YYYY-MM-DD HH:MM:SS",
  maxlength: 23,
};

/** Mounted when the popover opens, so the custom inputs start from the range in force then. */
function RangePanel({ value, zone, onPick }: { value: TimeRange; zone: Zone; onPick: (r: TimeRange) => void }) {
  const resolved = resolveRange(value, Date.now(), zone);
  const [from, setFrom] = useState(toZoneText(resolved.from, zone));
  const [to, setTo] = useState(toZoneText(resolved.to, zone));
  const [error, setError] = useState<string | undefined>();
  const [id] = useState(() => `trp-${Math.random().toString(36).slice(2, 8)}`);

  const switchZone = (z: Zone) => {
    if (z === zone) return;
    // The typed wall times keep meaning the same instants in the other zone.
    const f = customRange(from, to, zone);
    displayZone.set(z);
    if (f.ok && f.range.kind === "absolute") {
      setFrom(toZoneText(f.range.from, z));
      setTo(toZoneText(f.range.to, z));
    }
  };
  const apply = (e: Event) => {
    e.preventDefault();
    const r = customRange(from, to, zone);
    if (!r.ok) return setError(r.error);
    setError(undefined);
    onPick(r.range);
  };
  const active = QUICK_RANGES.find((q) => sameRange(q.range, value));
  return html`<div class="trp-zone-row">
      <span>Times in <strong>${zoneLabel(zone)}</strong></span>
      <span class="seg" role="group" aria-label="Show times in">
        ${(["local", "utc"] as const).map(
          (
            z,
          ) => html`<button key=${z} type="button" class=${zone === z ? "active" : ""} aria-pressed=${zone === z ? "true" : "false"} onClick=${() => switchZone(z)}>
            ${z === "local" ? "Local" : "UTC"}
          </button>`,
        )}
      </span>
    </div>
    <div class="trp-quick" role="group" aria-label="Quick ranges">
      ${QUICK_RANGES.map(
        (q) => html`<button
          type="button"
          key=${q.label}
          class=${q === active ? "chip active" : "chip"}
          aria-pressed=${q === active ? "true" : "false"}
          data-autofocus=${q === active || (!active && q === QUICK_RANGES[0]) ? "" : undefined}
          onClick=${() => onPick(q.range)}
        >
          ${q.label}
        </button>`,
      )}
    </div>
    <form class="trp-custom" onSubmit=${apply} aria-label="Custom range" novalidate>
      <label for=${`${id}-from`}>From</label>
      <input id=${`${id}-from`} ...${TIME_TEXT} value=${from} aria-invalid=${error ? "true" : undefined} aria-describedby=${error ? `${id}-err` : undefined} onInput=${(e: Event) => setFrom((e.target as HTMLInputElement).value)} />
      <label for=${`${id}-to`}>To</label>
      <input id=${`${id}-to`} ...${TIME_TEXT} value=${to} aria-invalid=${error ? "true" : undefined} aria-describedby=${error ? `${id}-err` : undefined} onInput=${(e: Event) => setTo((e.target as HTMLInputElement).value)} />
      ${error && html`<p class="field-error" id=${`${id}-err`} role="alert">${error}</p>`}
      <button type="submit" class="btn">Apply range</button>
    </form>`;
}
