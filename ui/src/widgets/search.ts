/**
 * Search widgets. The form is generated from `GET /mappings/widget-fields` for the chosen protocol
 * and profile (docs/API.md "Field object"): every form type (input, multi-select, select,
 * datetime, switch, checkbox), hidden fields behind the field chooser (saved as the user's layout
 * with `PUT /me/mappings/{hepid}_{profile}`), virtual fields, saved searches (saved-searches.ts).
 * Results are published on the widget's channel for result tables and charts.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, get, post, put } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { buildSearchBody, formKind, visibleFields, type FieldValue, type MappingField } from "../lib/search-body.ts";
import { rangeKey, resolveWidgetRange, useRangeKey } from "../lib/dashboard-time.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";
import {
  channel,
  deepLink,
  openTransaction,
  timeRange,
  type ResultRow,
  type TimeRange,
  type SearchPagination,
  type NodeReport,
} from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { WidgetProps } from "./types.ts";
import { SavedSearches } from "./saved-searches.ts";

interface FieldList {
  data: { hepid: number; profile: string; hep_alias: string; items: MappingField[] };
}

const LIMITS = [50, 100, 200, 500, 1000, 5000];

export function CallSearch(props: WidgetProps) {
  const c = props.widget.config ?? {};
  const hepid = typeof c.proto_type === "number" ? c.proto_type : 1;
  const profile = typeof c.event_type === "string" ? c.event_type : "call";
  return html`<${SearchForm} ...${props} hepid=${hepid} profile=${profile} acceptsDeepLink=${true} />`;
}

interface MergedMapping {
  hepid: number;
  profile: string;
  hep_alias: string;
}

export function ProtocolSearch(props: WidgetProps) {
  const c = props.widget.config ?? {};
  const [mappings, setMappings] = useState<MergedMapping[] | null>(null);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    get<{ data: { items: MergedMapping[] } }>("/mappings/merged").then(
      (r) => setMappings([...r.data.items].sort((a, b) => a.hepid - b.hepid || a.profile.localeCompare(b.profile))),
      (e) => setError(errorText(e)),
    );
  }, []);
  const hepid = typeof c.proto_type === "number" ? c.proto_type : 1;
  const profile = typeof c.event_type === "string" ? c.event_type : "call";
  const selectId = `proto-${props.widget.id}`;
  const choose = (key: string) => {
    const [h, ...p] = key.split("/");
    props.onUpdate({ ...props.widget, config: { ...c, proto_type: Number(h), event_type: p.join("/") } });
  };
  return html`<div class="psearch">
    <div class="field field-row">
      <label for=${selectId}>Protocol</label>
      ${
        error
          ? html`<span class="field-error" role="alert">${error}</span>`
          : html`<select id=${selectId} value=${`${hepid}/${profile}`} onChange=${(e: Event) => choose((e.target as HTMLSelectElement).value)} disabled=${!mappings}>
            ${(mappings ?? [{ hepid, profile, hep_alias: "…" }]).map(
              (m) =>
                html`<option key=${`${m.hepid}/${m.profile}`} value=${`${m.hepid}/${m.profile}`}>${m.hep_alias} · ${m.profile} (HEP ${m.hepid})</option>`,
            )}
          </select>`
      }
    </div>
    <${SearchForm} key=${`${hepid}/${profile}`} ...${props} hepid=${hepid} profile=${profile} acceptsDeepLink=${false} />
  </div>`;
}

interface FormProps extends WidgetProps {
  hepid: number;
  profile: string;
  acceptsDeepLink: boolean;
}

function SearchForm({ widget, hepid, profile, acceptsDeepLink, onUpdate }: FormProps) {
  const [fields, setFields] = useState<MappingField[] | null>(null);
  const [loadError, setLoadError] = useState<string | undefined>();
  const [values, setValues] = useState<Record<string, FieldValue>>({});
  const chooser = usePopover({ label: "Fields shown in the form" });
  const results = channel(widget.id);
  const state = useStore(results);
  const link = useStore(deepLink);
  const limit = typeof widget.config?.limit === "number" ? widget.config.limit : 200;
  const linkDone = useRef(false);
  // The last search, run again over the new range when the widget's range changes (docs/UI.md "Time range").
  const currentRange = useRangeKey(widget.config);
  const last = useRef<{ values: Record<string, FieldValue>; key: string } | null>(null);

  const loadFields = () =>
    get<FieldList>(`/mappings/widget-fields?hepid=${hepid}&profile=${encodeURIComponent(profile)}`).then(
      (r) => setFields(r.data.items),
      (e) => setLoadError(errorText(e)),
    );
  useEffect(() => {
    void loadFields();
  }, [hepid, profile]);

  const run = async (vals: Record<string, FieldValue>, all: MappingField[]): Promise<ResultRow[] | undefined> => {
    last.current = { values: vals, key: rangeKey(widget.config) };
    const body = buildSearchBody({ hepid, profile }, all, vals, resolveWidgetRange(widget.config), limit);
    const seq = results.get().seq + 1;
    results.set({ status: "loading", items: results.get().items, keys: results.get().keys, request: body, seq });
    const t0 = performance.now();
    try {
      const r = await post<{
        data: { items: ResultRow[]; keys: string[] };
        meta?: { pagination?: SearchPagination; nodes?: NodeReport[]; partial?: boolean };
      }>("/transactions/search", body);
      results.set({
        status: "done",
        items: r.data.items,
        keys: r.data.keys,
        request: body,
        tookMs: performance.now() - t0,
        seq,
        ...(r.meta?.pagination ? { pagination: r.meta.pagination } : {}),
        ...(r.meta?.nodes ? { nodes: r.meta.nodes, partial: r.meta.partial === true } : {}),
      });
      return r.data.items;
    } catch (e) {
      results.set({ status: "error", items: [], keys: [], error: errorText(e), request: body, seq });
      return undefined;
    }
  };

  useEffect(() => {
    if (fields && last.current && last.current.key !== currentRange) void run(last.current.values, fields);
  }, [currentRange]);

  // Deep link `/?call_id=...&from=...&to=...`: fill the Call-ID, set the range, search once, and
  // open the call view when the search found the call (docs/DASHBOARD.md "Deep links"); a call not
  // found leaves the empty results saying so.
  useEffect(() => {
    if (!acceptsDeepLink || !fields || !link || linkDone.current) return;
    linkDone.current = true;
    const idField = fields.find((f) => f.id === "call_id") ?? fields.find((f) => f.sid_type);
    const now = Date.now();
    const from = link.from ?? (link.to ?? now) - 86_400_000;
    const to = link.to ?? now;
    timeRange.set({ kind: "absolute", from, to });
    const vals = idField ? { [idField.id]: link.callId } : {};
    setValues(vals);
    deepLink.set(undefined);
    void run(vals, fields).then((items) => {
      const ids = link.callId
        .split(";")
        .map((s) => s.trim())
        .filter(Boolean);
      const found = ids.filter((id) => items?.some((r) => String(r.session_id ?? "") === id));
      if (found.length === 0) return;
      openTransaction.set({
        sessionIds: found,
        protoType: hepid,
        eventType: profile,
        from,
        to,
        title: found.join(", "),
      });
    });
  }, [fields, link]);

  if (loadError)
    return html`<p class="alert alert-error" role="alert">The search form could not be loaded: ${loadError}</p>`;
  if (!fields) return html`<p class="loading" role="status">Loading search fields…</p>`;

  const shown = visibleFields(fields);
  const set = (id: string, v: FieldValue) => setValues((old) => ({ ...old, [id]: v }));
  const submit = (e: Event) => {
    e.preventDefault();
    void run(values, fields);
  };
  const toggleField = async (id: string, on: boolean) => {
    const current = new Set(shown.map((f) => f.id));
    if (on) current.add(id);
    else current.delete(id);
    try {
      await put(`/me/mappings/${hepid}_${encodeURIComponent(profile)}`, {
        fields: fields.map((f) => ({ id: f.id, selected: current.has(f.id) })),
      });
      await loadFields();
    } catch (e) {
      setLoadError(errorText(e));
    }
  };
  const loading = state.status === "loading";
  return html`<form class="search-form" onSubmit=${submit} aria-label=${`Search ${profile}`} aria-busy=${loading}>
    <div class="fields">
      ${shown.map((f) => html`<${FieldControl} key=${f.id} field=${f} prefix=${widget.id} value=${values[f.id]} onChange=${(v: FieldValue) => set(f.id, v)} />`)}
    </div>
    <div class="form-foot">
      <label class="inline small"
        >Limit
        <select value=${String(limit)} onChange=${(e: Event) => onUpdate({ ...widget, config: { ...widget.config, limit: Number((e.target as HTMLSelectElement).value) } })}>
          ${LIMITS.map((n) => html`<option key=${n} value=${String(n)}>${n}</option>`)}
        </select></label
      >
      <div class="chooser">
        <button type="button" class="btn btn-ghost" ...${chooser.trigger}>Fields…</button>
        <${PopoverPanel} pop=${chooser} class="chooser-pop">
          ${fields.map(
            (f) => html`<label key=${f.id} class="check"
              ><input type="checkbox" checked=${shown.some((s) => s.id === f.id)} onChange=${(e: Event) => toggleField(f.id, (e.target as HTMLInputElement).checked)} />
              ${f.name} <span class="muted mono">${f.id}${f.virtual ? " · virtual" : ""}${f.hide ? " · hidden" : ""}</span></label
            >`,
          )}
        </${PopoverPanel}>
      </div>
      <${SavedSearches}
        hepid=${hepid}
        profile=${profile}
        values=${values}
        onLoad=${(vals: Record<string, FieldValue>, range: TimeRange | undefined) => {
          if (range) timeRange.set(range);
          setValues(vals);
          void run(vals, fields);
        }}
      />
      <span class="spacer"></span>
      <button type="button" class="btn btn-ghost" onClick=${() => setValues({})}>Clear</button>
      <button type="submit" class="btn btn-primary" disabled=${loading}>${loading ? "Searching…" : "Search"}</button>
    </div>
  </form>`;
}

interface ControlProps {
  field: MappingField;
  prefix: string;
  value: FieldValue;
  onChange: (v: FieldValue) => void;
}

function FieldControl({ field: f, prefix, value, onChange }: ControlProps) {
  const id = `${prefix}-f-${f.id}`;
  const kind = formKind(f);
  const text = (e: Event) => onChange((e.target as HTMLInputElement).value);
  const numeric = f.type === "integer" || f.type === "int" || f.type === "number";
  const hint = f.virtual
    ? html`<span class="hint" title=${`data_extra.${f.virtual.path} (${f.virtual.match})`}>virtual</span>`
    : null;
  switch (kind) {
    case "select":
      return html`<div class="field"><label for=${id}>${f.name}</label>
        <select id=${id} value=${typeof value === "string" ? value : ""} onChange=${text}>
          <option value="">Any</option>
          ${(f.selector ?? []).map((o) => html`<option key=${String(o.value)} value=${String(o.value)}>${o.name}</option>`)}
        </select></div>`;
    case "multi":
      return html`<${MultiSelect} field=${f} id=${id} value=${value} onChange=${onChange} />`;
    case "datetime":
      return html`<div class="field"><label for=${id}>${f.name}</label><input id=${id} type="datetime-local" step="1" value=${typeof value === "string" ? value : ""} onInput=${text} /></div>`;
    case "switch":
      return html`<div class="field field-check"><label class="switch"
        ><input id=${id} type="checkbox" role="switch" checked=${value === true} onChange=${(e: Event) => onChange((e.target as HTMLInputElement).checked)} /> ${f.name}</label
      ></div>`;
    case "checkbox":
    case "flag-absent":
    case "flag-present": {
      const label =
        kind === "flag-absent" ? `${f.name} absent` : kind === "flag-present" ? `${f.name} present` : f.name;
      return html`<div class="field field-check"><label class="check"
        ><input id=${id} type="checkbox" checked=${value === true} onChange=${(e: Event) => onChange((e.target as HTMLInputElement).checked)} /> ${label} ${hint}</label
      ></div>`;
    }
    default:
      return html`<div class="field"><label for=${id}>${f.name} ${hint}</label
        ><input
          id=${id}
          class=${f.id === "call_id" || f.id === "payload" ? "mono" : ""}
          inputmode=${numeric ? "numeric" : undefined}
          autocomplete="off"
          spellcheck=${false}
          value=${typeof value === "string" ? value : ""}
          onInput=${text}
          placeholder=${f.sid_type ? "exact, % wildcard, ; for several" : ""}
          title=${f.sid_type ? "exact, % wildcard, ; for several" : undefined}
      /></div>`;
  }
}

/** Multi-select: free text (comma separated) plus a checklist of the mapping's preset values. */
function MultiSelect({
  field: f,
  id,
  value,
  onChange,
}: {
  field: MappingField;
  id: string;
  value: FieldValue;
  onChange: (v: FieldValue) => void;
}) {
  const pop = usePopover({ label: `${f.name} values`, align: "end" });
  const text = Array.isArray(value) ? value.join(", ") : typeof value === "string" ? value : "";
  const list = text
    .split(/[;,]/)
    .map((x) => x.trim())
    .filter((x) => x !== "");
  const toggle = (v: string, on: boolean) => {
    const next = on ? [...list, v] : list.filter((x) => x !== v);
    onChange(next.join(", "));
  };
  return html`<div class="field multi">
    <label for=${id}>${f.name}</label>
    <div class="multi-input">
      <input id=${id} value=${text} onInput=${(e: Event) => onChange((e.target as HTMLInputElement).value)} autocomplete="off" placeholder="any" />
      <button type="button" class="icon-btn" aria-label=${`Choose ${f.name} values`} ...${pop.trigger}>▾</button>
    </div>
    <${PopoverPanel} pop=${pop} class="multi-pop">
      ${(f.form_default ?? []).map(
        (o) => html`<label key=${String(o.value)} class="check"
          ><input type="checkbox" checked=${list.includes(String(o.value))} onChange=${(e: Event) => toggle(String(o.value), (e.target as HTMLInputElement).checked)} /> ${o.name}</label
        >`,
      )}
      ${(f.form_default ?? []).length === 0 && html`<p class="muted">Type values separated by commas.</p>`}
    </${PopoverPanel}>
  </div>`;
}
