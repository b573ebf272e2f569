/**
 * Dashboard layout document and the default dashboards (docs/DASHBOARD.md): Home (call
 * search, results, clock), Smart Search (protocol search, results, time chart), Quality (the call
 * KPIs of docs/KPIS.md: summary, ASR over time, response codes, failing destinations; docs/DASHBOARD.md
 * "Quality dashboard"), Games (Packet Defender, SIP Dialog Master, Jitter Buffer Hero, SIPetris,
 * Chess) and NetGames (Netris, NetChess); the last two only when `coordinator.widgets.control.games`
 * is true.
 *
 * A layout is a grid of widgets: `x`/`y` cell origin, `w`/`h` size in a 12-column grid, `type` the
 * widget kind the UI renders, `config` the widget's own settings.
 */
import { type Static, Type } from "@sinclair/typebox";

export const WidgetPlacementSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: "unique within the dashboard" }),
  type: Type.String({ minLength: 1, maxLength: 64, description: "widget kind" }),
  x: Type.Integer({ minimum: 0, maximum: 1000 }),
  y: Type.Integer({ minimum: 0, maximum: 100000 }),
  w: Type.Integer({ minimum: 1, maximum: 48 }),
  h: Type.Integer({ minimum: 1, maximum: 1000 }),
});

/** A stored widget: its placement (the API's WidgetSchema, src/api/dashboards/model.ts) and its config. */
export type Widget = Static<typeof WidgetPlacementSchema> & { config: Record<string, unknown> };

export interface DashboardDraft {
  name: string;
  position: number;
  layout: Widget[];
}

const w = (
  id: string,
  type: string,
  x: number,
  y: number,
  width: number,
  height: number,
  config: Record<string, unknown> = {},
): Widget => ({
  id,
  type,
  x,
  y,
  w: width,
  h: height,
  config,
});

export function defaultDashboards(opts: { games: boolean }): DashboardDraft[] {
  const out: DashboardDraft[] = [
    {
      name: "Home",
      position: 0,
      layout: [
        w("call-search", "call-search", 0, 0, 8, 6, { proto_type: 1, event_type: "call" }),
        w("clock", "clock", 8, 0, 4, 6, { timezone: "local" }),
        w("results", "result-table", 0, 6, 12, 10, { source: "call-search" }),
      ],
    },
    {
      name: "Smart Search",
      position: 1,
      layout: [
        w("protocol-search", "protocol-search", 0, 0, 6, 8, {}),
        w("time-chart", "time-chart", 6, 0, 6, 8, { source: "protocol-search" }),
        w("results", "result-table", 0, 8, 12, 10, { source: "protocol-search" }),
      ],
    },
    {
      name: "Quality",
      position: 2,
      layout: [
        w("kpi-summary", "kpi-table", 0, 0, 4, 10, { view: "summary" }),
        w("kpi-asr", "kpi-chart", 4, 0, 8, 10, { metric: "asr" }),
        w("kpi-codes", "kpi-table", 0, 10, 6, 10, { view: "codes" }),
        w("kpi-destinations", "kpi-table", 6, 10, 6, 10, { view: "destinations" }),
      ],
    },
  ];
  if (opts.games) {
    out.push(
      {
        name: "Games",
        position: 3,
        layout: [
          w("packet-defender", "game-packet-defender", 0, 0, 6, 8),
          w("sip-dialog-master", "game-sip-dialog-master", 6, 0, 6, 8),
          w("jitter-buffer-hero", "game-jitter-buffer-hero", 0, 8, 4, 8),
          w("sipetris", "game-sipetris", 4, 8, 4, 8),
          w("chess", "game-chess", 8, 8, 4, 8),
        ],
      },
      {
        name: "NetGames",
        position: 4,
        layout: [w("netris", "game-netris", 0, 0, 6, 10), w("netchess", "game-netchess", 6, 0, 6, 10)],
      },
    );
  }
  return out;
}
