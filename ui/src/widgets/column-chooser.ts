/**
 * "Columns…" of the results grid (docs/DASHBOARD.md "Columns"): a checkbox per column, internal
 * keys listed apart, "Reset to default". The choice is the widget's `columns` config, saved with
 * the user's dashboard, so it survives a reload and follows the user to another browser.
 */
import { html } from "../lib/html.ts";
import { chooserGroups, columnTitle } from "../lib/columns.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";

interface Props {
  /** Every column the rows offer (lib/columns.ts availableColumns). */
  available: string[];
  /** The columns shown now, in order. */
  shown: string[];
  /** True when the user made a choice (the default is shown otherwise). */
  custom: boolean;
  onChange: (columns: string[]) => void;
}

export function ColumnChooser({ available, shown, custom, onChange }: Props) {
  const pop = usePopover({ label: "Columns shown" });
  const { regular, internal } = chooserGroups(available);
  const toggle = (k: string, on: boolean) => onChange(on ? [...shown, k] : shown.filter((c) => c !== k));
  const box = (k: string) => {
    const on = shown.includes(k);
    return html`<label key=${k} class="check"
      ><input type="checkbox" checked=${on} disabled=${on && shown.length === 1} onChange=${(e: Event) => toggle(k, (e.target as HTMLInputElement).checked)} />
      ${columnTitle(k)} <span class="muted mono small">${k}</span></label
    >`;
  };
  return html`<div class="chooser">
    <button type="button" class="btn btn-ghost" ...${pop.trigger} disabled=${available.length === 0}>Columns…</button>
    <${PopoverPanel} pop=${pop} class="cols-pop">
      <div class="cols-list">${regular.map(box)}</div>
      ${
        internal.length > 0 &&
        html`<details class="cols-internal">
        <summary>Internal columns (${internal.length})</summary>
        <div class="cols-list">${internal.map(box)}</div>
      </details>`
      }
      <div class="pop-foot">
        <span class="muted small">${custom ? "Your choice, saved with this dashboard" : "Default columns"}</span>
        <button type="button" class="btn" onClick=${() => onChange([])} disabled=${!custom}>Reset to default</button>
      </div>
    </${PopoverPanel}>
  </div>`;
}
