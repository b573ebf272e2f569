/**
 * The controls both KPI widgets show above their content (docs/KPIS.md): a node filter saved in
 * the widget config, a refresh button, and the status line (loading, the window's attempts).
 */
import { html } from "../lib/html.ts";
import type { Widget } from "../lib/types.ts";

interface Props {
  widget: Widget;
  title: string;
  onUpdate: (w: Widget) => void;
  onRefresh: () => void;
  status: string;
}

export function KpiControls({ widget, title, onUpdate, onRefresh, status, children }: Props & { children?: unknown }) {
  const node = typeof widget.config?.node === "string" ? widget.config.node : "";
  const setNode = (v: string) => {
    const { node: _old, ...rest } = widget.config ?? {};
    onUpdate({ ...widget, config: v.trim() ? { ...rest, node: v.trim() } : rest });
  };
  return html`<div class="chart-head">
    <span class="muted small" role="status">${status}</span>
    <span class="kpi-tools">
      ${children}
      <label class="small">Node <input class="kpi-node" type="text" value=${node} placeholder="every" aria-label=${`Capture node of ${title}`} title="A HEP capture id or node name; empty: every node"
        onChange=${(e: Event) => setNode((e.target as HTMLInputElement).value)} /></label>
      <button type="button" class="icon-btn" aria-label=${`Refresh ${title}`} title="Compute again" onClick=${onRefresh}>↻</button>
    </span>
  </div>`;
}
