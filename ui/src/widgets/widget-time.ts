/**
 * A widget's time range (docs/UI.md "Time range"): it follows the dashboard picker unless the user
 * chose "Use own time range" in the widget menu; then its title bar shows a badge with its own
 * picker, and "Follow dashboard time range" goes back. The own range is saved in the widget config
 * (`time_range: {from, to}`) with the dashboard layout, so it survives a reload.
 */
import { displayZone, ownRange, timeRange, withOwnRange } from "../lib/dashboard-time.ts";
import { html } from "../lib/html.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";
import { useStore } from "../lib/store.ts";
import { spanLabel, type TimeRange } from "../lib/time-range.ts";
import type { Widget } from "../lib/types.ts";
import { TimeRangePicker } from "./time-range.ts";

interface Props {
  widget: Widget;
  title: string;
  onUpdate: (w: Widget) => void;
}

/** The badge in the title bar of a widget with its own range (nothing when it follows the dashboard). */
export function OwnRangeBadge({ widget, title, onUpdate }: Props) {
  const own = ownRange(widget.config);
  if (!own) return null;
  const set = (r: TimeRange) => onUpdate({ ...widget, config: withOwnRange(widget.config, r) });
  return html`<${TimeRangePicker} value=${own} onChange=${set} name=${`Own time range of ${title}`} align="end" badge=${true} />`;
}

/** The widget menu (⋮): own time range or follow the dashboard's. */
export function WidgetMenu({ widget, title, onUpdate }: Props) {
  const pop = usePopover({ label: `${title} widget menu`, kind: "menu", align: "end" });
  const own = ownRange(widget.config);
  const choose = (r: TimeRange | undefined) => {
    pop.close();
    onUpdate({ ...widget, config: withOwnRange(widget.config, r) });
  };
  return html`<span class="widget-menu">
    <button type="button" class="icon-btn" ...${pop.trigger} aria-label=${`${title} widget menu`} title="Widget menu">⋮</button>
    <${PopoverPanel} pop=${pop} class="menu-pop">
      ${
        own
          ? html`<button type="button" role="menuitem" class="menu-item" onClick=${() => choose(undefined)}>Follow dashboard time range</button>`
          : html`<button type="button" role="menuitem" class="menu-item" onClick=${() => choose(timeRange.get())}>Use own time range</button>`
      }
    </${PopoverPanel}>
  </span>`;
}

/** The range a search actually covered, for the bar above its results. */
export function SearchedRange({ range }: { range: { from: number; to: number } | undefined }) {
  const zone = useStore(displayZone);
  if (!range) return null;
  return html`<span class="searched-range muted" title="Time range of this search">${spanLabel(range.from, range.to, zone)}</span>`;
}
