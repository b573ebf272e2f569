/**
 * Dashboards (docs/API.md "Default dashboards"): the user's dashboards as tabs with
 * rename, reorder, delete, new, add widget and reset; the selected one as a widget grid whose
 * layout is saved through `PUT /dashboards/{id}` after every move, resize or widget change.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { del, errorText, get, post, put, type ListBody } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { freeSpot } from "../lib/grid.ts";
import { takeRangeNotice } from "../lib/dashboard-time.ts";
import { deepLink, notify, timeRange } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { Dashboard, Widget } from "../lib/types.ts";
import { GridView } from "./grid-view.ts";
import { NameDialog } from "./name-dialog.ts";
import { TimeRangePicker } from "./time-range.ts";
import { WIDGETS, WidgetFrame } from "./registry.ts";

const byPosition = (a: Dashboard, b: Dashboard) => a.position - b.position || a.name.localeCompare(b.name);
const upsert = (d: Dashboard) => ({
  name: d.name,
  position: d.position,
  layout: d.layout.map((w) => ({ ...w, config: w.config ?? {} })),
});

export function DashboardPage({ selected }: { selected?: string | undefined }) {
  const [list, setList] = useState<Dashboard[] | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [naming, setNaming] = useState(false);
  const link = useStore(deepLink);
  const range = useStore(timeRange);
  const saveTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const load = () =>
    get<ListBody<Dashboard>>("/dashboards?sort=position&page[limit]=100").then(
      (r) => setList([...r.data.items].sort(byPosition)),
      (e) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
    const bad = takeRangeNotice();
    if (bad) notify(bad, "error");
  }, []);

  if (error) return html`<p class="alert alert-error" role="alert">Dashboards could not be loaded: ${error}</p>`;
  if (!list) return html`<p class="loading" role="status">Loading dashboards…</p>`;

  // A deep link goes to the first dashboard that has a call search.
  const linked = link ? list.find((d) => d.layout.some((w) => w.type === "call-search")) : undefined;
  const current = linked ?? list.find((d) => d.id === selected) ?? list[0];

  const save = (d: Dashboard, immediate = false) => {
    setList((l) => (l ? l.map((x) => (x.id === d.id ? d : x)) : l));
    clearTimeout(saveTimer.current);
    const run = () =>
      put(`/dashboards/${d.id}`, upsert(d)).then(
        () => undefined,
        (e) => notify(`Dashboard not saved: ${errorText(e)}`, "error"),
      );
    if (immediate) void run();
    else saveTimer.current = setTimeout(run, 300);
  };

  const create = async (name: string) => {
    const r = await post<{ data: { id: string } }>("/dashboards", { name, layout: [] });
    setNaming(false);
    await load();
    location.hash = `#/d/${r.data.id}`;
  };
  const reset = async () => {
    if (!confirm("Replace all your dashboards by the defaults? Your changes to them are lost.")) return;
    try {
      await post("/me/dashboards/reset", {});
      await load();
      location.hash = "#/";
      notify("Dashboards reset to the defaults");
    } catch (e) {
      notify(errorText(e), "error");
    }
  };

  return html`
    <div class="dash">
      <div class="dash-bar">
        <${Tabs} list=${list} current=${current} />
        <button type="button" class="btn btn-ghost" onClick=${() => setNaming(true)} title="New dashboard">+ New</button>
        <span class="spacer"></span>
        <${TimeRangePicker} value=${range} onChange=${timeRange.set} name="Dashboard time range" align="end" />
        <button type="button" class="btn btn-ghost" onClick=${reset}>Reset to defaults</button>
      </div>
      ${
        current
          ? html`<${DashboardView}
            key=${current.id}
            dashboard=${current}
            list=${list}
            onSave=${save}
            onReload=${load}
          />`
          : html`<div class="empty"><p>You have no dashboards.</p><button type="button" class="btn btn-primary" onClick=${reset}>Create the default dashboards</button></div>`
      }
      ${naming && html`<${NameDialog} title="New dashboard" label="Name" initial="New dashboard" onCancel=${() => setNaming(false)} onOk=${create} />`}
    </div>
  `;
}

function Tabs({ list, current }: { list: Dashboard[]; current: Dashboard | undefined }) {
  const onKey = (i: number) => (e: KeyboardEvent) => {
    const next = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : -1;
    const d = list[(next + list.length) % list.length];
    if (next === -1 || !d) return;
    e.preventDefault();
    location.hash = `#/d/${d.id}`;
    requestAnimationFrame(() => document.getElementById(`tab-${d.id}`)?.focus());
  };
  return html`<div class="tabs" role="tablist" aria-label="Dashboards">
    ${list.map(
      (d, i) => html`<a
        key=${d.id}
        id=${`tab-${d.id}`}
        role="tab"
        href=${`#/d/${d.id}`}
        aria-selected=${d.id === current?.id ? "true" : "false"}
        tabindex=${d.id === current?.id ? 0 : -1}
        class=${d.id === current?.id ? "tab active" : "tab"}
        onKeyDown=${onKey(i)}
        >${d.name}</a
      >`,
    )}
  </div>`;
}

function DashboardView({
  dashboard,
  list,
  onSave,
  onReload,
}: {
  dashboard: Dashboard;
  list: Dashboard[];
  onSave: (d: Dashboard, immediate?: boolean) => void;
  onReload: () => Promise<void>;
}) {
  const [adding, setAdding] = useState("");
  const [renaming, setRenaming] = useState(false);
  const idx = list.findIndex((d) => d.id === dashboard.id);

  const rename = async (name: string) => {
    setRenaming(false);
    if (name !== dashboard.name) onSave({ ...dashboard, name }, true);
  };
  const move = async (dir: -1 | 1) => {
    const other = list[idx + dir];
    if (!other) return;
    // Positions are rewritten for the whole list so duplicates from older saves cannot stick.
    const order = [...list];
    order.splice(idx, 1);
    order.splice(idx + dir, 0, dashboard);
    try {
      await Promise.all(
        order.map((d, i) =>
          d.position === i ? Promise.resolve() : put(`/dashboards/${d.id}`, { ...upsert(d), position: i }),
        ),
      );
      await onReload();
    } catch (e) {
      notify(errorText(e), "error");
    }
  };
  const remove = async () => {
    if (!confirm(`Delete the dashboard "${dashboard.name}"?`)) return;
    try {
      await del(`/dashboards/${dashboard.id}`);
      location.hash = "#/";
      await onReload();
      notify(`Dashboard "${dashboard.name}" deleted`);
    } catch (e) {
      notify(errorText(e), "error");
    }
  };
  const addWidget = (type: string) => {
    const def = WIDGETS[type];
    if (!def) return;
    const spot = freeSpot(dashboard.layout, def.w, def.h);
    let id = type;
    for (let n = 2; dashboard.layout.some((w) => w.id === id); n++) id = `${type}-${n}`;
    onSave(
      {
        ...dashboard,
        layout: [
          ...dashboard.layout,
          { id, type, x: spot.x, y: spot.y, w: def.w, h: def.h, config: { ...def.config } },
        ],
      },
      true,
    );
    setAdding("");
    notify(`${def.title} added`);
  };
  const updateWidget = (w: Widget) =>
    onSave({ ...dashboard, layout: dashboard.layout.map((x) => (x.id === w.id ? w : x)) });
  const removeWidget = (w: Widget) =>
    onSave({ ...dashboard, layout: dashboard.layout.filter((x) => x.id !== w.id) }, true);

  return html`
    <section class="dash-view" role="tabpanel" aria-label=${dashboard.name}>
      <div class="dash-tools" role="toolbar" aria-label="Dashboard actions">
        <label class="inline"
          ><span class="sr-only">Add widget</span>
          <select value=${adding} onChange=${(e: Event) => addWidget((e.target as HTMLSelectElement).value)} aria-label="Add widget">
            <option value="">+ Add widget…</option>
            ${Object.entries(WIDGETS).map(([type, d]) => html`<option key=${type} value=${type}>${d.title}</option>`)}
          </select></label
        >
        <button type="button" class="btn btn-ghost" onClick=${() => setRenaming(true)}>Rename</button>
        <button type="button" class="btn btn-ghost" onClick=${() => move(-1)} disabled=${idx <= 0} aria-label="Move dashboard left">◀ Move</button>
        <button type="button" class="btn btn-ghost" onClick=${() => move(1)} disabled=${idx >= list.length - 1} aria-label="Move dashboard right">Move ▶</button>
        <button type="button" class="btn btn-ghost btn-danger" onClick=${remove}>Delete</button>
      </div>
      ${
        dashboard.layout.length === 0
          ? html`<div class="empty"><p>This dashboard has no widgets yet. Use <strong>Add widget</strong> to place a call search, a result table or a chart.</p></div>`
          : html`<${GridView}
            layout=${dashboard.layout}
            onChange=${(layout: Widget[]) => onSave({ ...dashboard, layout })}
            renderWidget=${(w: Widget, handle: unknown, grip: unknown) => html`<${WidgetFrame} widget=${w} handle=${handle} grip=${grip} onUpdate=${updateWidget} onRemove=${() => removeWidget(w)} />`}
          />`
      }
      ${renaming && html`<${NameDialog} title="Rename dashboard" label="Name" initial=${dashboard.name} onCancel=${() => setRenaming(false)} onOk=${rename} />`}
    </section>
  `;
}
