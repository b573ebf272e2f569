/** Widget kinds the dashboard can render (layout `type`), their default size and config. */
import type { ComponentChildren, FunctionComponent } from "preact";
import { html } from "../lib/html.ts";
import type { Widget } from "../lib/types.ts";
import { CallSearch, ProtocolSearch } from "./search.ts";
import { ResultTable } from "./results.ts";
import { TimeChart } from "./time-chart.ts";
import { Clock } from "./clock.ts";
import { KpiChart, KPI_CHART_TITLE } from "./kpi-chart.ts";
import { KpiTable, KPI_TABLE_TITLE } from "./kpi-table.ts";
import { Ask } from "./ask.ts";
import { SipDialogMaster } from "../games/learn/sip-dialog-master.ts";
import { JitterBufferHero } from "../games/learn/jitter-buffer-hero.ts";
import { OwnRangeBadge, WidgetMenu } from "./widget-time.ts";
import { GAME_WIDGETS } from "../games/widgets.ts";
import { ChessWidget, NetChessWidget } from "../games/chess/index.ts";

export type { WidgetProps } from "./types.ts";
import type { WidgetProps } from "./types.ts";

interface WidgetDef {
  title: string;
  component: FunctionComponent<WidgetProps>;
  w: number;
  h: number;
  config: Record<string, unknown>;
  /** Searches over the dashboard time range, or its own one (widget menu; docs/UI.md "Time range"). */
  timeRange?: boolean;
}

export const WIDGETS: Record<string, WidgetDef> = {
  "call-search": {
    title: "Call search",
    component: CallSearch,
    w: 8,
    h: 6,
    config: { proto_type: 1, event_type: "call" },
    timeRange: true,
  },
  "protocol-search": { title: "Protocol search", component: ProtocolSearch, w: 6, h: 8, config: {}, timeRange: true },
  "result-table": { title: "Results", component: ResultTable, w: 12, h: 10, config: { source: "call-search" } },
  "time-chart": { title: "Events over time", component: TimeChart, w: 6, h: 8, config: { source: "call-search" } },
  "kpi-chart": { title: KPI_CHART_TITLE, component: KpiChart, w: 6, h: 8, config: { metric: "asr" }, timeRange: true },
  "kpi-table": {
    title: KPI_TABLE_TITLE,
    component: KpiTable,
    w: 6,
    h: 10,
    config: { view: "summary" },
    timeRange: true,
  },
  clock: { title: "Clock", component: Clock, w: 4, h: 4, config: { timezone: "local" } },
  ask: { title: "Ask", component: Ask, w: 8, h: 8, config: {} },
  ...GAME_WIDGETS,
  "game-chess": { title: "Chess", component: ChessWidget, w: 6, h: 10, config: {} },
  "game-netchess": { title: "NetChess", component: NetChessWidget, w: 6, h: 10, config: {} },
  "game-sip-dialog-master": { title: "SIP Dialog Master", component: SipDialogMaster, w: 6, h: 8, config: {} },
  "game-jitter-buffer-hero": { title: "Jitter Buffer Hero", component: JitterBufferHero, w: 4, h: 8, config: {} },
};

export function widgetTitle(w: Widget): string {
  const custom = w.config?.title;
  if (typeof custom === "string" && custom) return custom;
  return WIDGETS[w.type]?.title ?? w.type.replace(/^game-/, "").replace(/-/g, " ");
}

interface FrameProps extends WidgetProps {
  handle: ComponentChildren;
  grip: ComponentChildren;
  onRemove: () => void;
}

export function WidgetFrame({ widget, handle, grip, onUpdate, onRemove }: FrameProps) {
  const def = WIDGETS[widget.type];
  const title = widgetTitle(widget);
  const headId = `wh-${widget.id}`;
  return html`<section class="widget" aria-labelledby=${headId} data-widget=${widget.type}>
    <header class="widget-head">
      ${handle}
      <h2 id=${headId} title=${title}>${title}</h2>
      ${def?.timeRange && html`<${OwnRangeBadge} widget=${widget} title=${title} onUpdate=${onUpdate} /><${WidgetMenu} widget=${widget} title=${title} onUpdate=${onUpdate} />`}
      <button type="button" class="icon-btn" aria-label=${`Remove ${title} widget`} title="Remove widget" onClick=${() => {
        if (confirm(`Remove the ${title} widget from this dashboard?`)) onRemove();
      }}>✕</button>
    </header>
    <div class="widget-body">
      ${def ? html`<${def.component} widget=${widget} onUpdate=${onUpdate} />` : html`<div class="empty"><p>The widget “${widget.type}” is not available in this build.</p></div>`}
    </div>
    ${grip}
  </section>`;
}
