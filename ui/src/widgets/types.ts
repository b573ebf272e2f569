import type { Widget } from "../lib/types.ts";

/** What the dashboard gives every widget component (registry.ts renders them; widgets import this, not the registry). */
export interface WidgetProps {
  widget: Widget;
  onUpdate: (w: Widget) => void;
}
