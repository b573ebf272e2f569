/**
 * Saved searches of a search form (docs/DASHBOARD.md "Saved searches"): "Save filters…" names the
 * form's values (and, when asked, the relative time range) in a small dialog; "Saved filters"
 * lists those of this protocol to load, rename or delete. (No button name holds the word
 * "search", so the form's Search button stays the one button of that name.) They are the user's setting
 * `search` / `saved` (`GET /me/settings`, `PUT /me/settings/search`), so they survive a reload and
 * a new login, and no other user sees them. Every change re-reads the list first, so a change made
 * in another tab is not lost.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, get, put } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";
import type { FieldValue } from "../lib/search-body.ts";
import { notify, timeRange, type TimeRange } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { Setting } from "../lib/types.ts";
import { NameDialog } from "./name-dialog.ts";
import { rangeLabel } from "./time-range.ts";

export interface SavedSearch {
  id: string;
  name: string;
  hepid: number;
  profile: string;
  filters: Record<string, string | string[] | boolean>;
  range: { minutes: number } | null;
}

async function loadAll(): Promise<SavedSearch[]> {
  const r = await get<{ data: { items: Setting[] } }>("/me/settings");
  const s = r.data.items.find((x) => x.category === "search" && x.param === "saved");
  return Array.isArray(s?.data.items) ? (s.data.items as SavedSearch[]) : [];
}

async function change(fn: (all: SavedSearch[]) => SavedSearch[]): Promise<SavedSearch[]> {
  const next = fn(await loadAll());
  await put("/me/settings/search", { param: "saved", data: { items: next } });
  return loadAll();
}

const newId = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Form values as stored: empty ones left out. */
function storable(values: Record<string, FieldValue>): SavedSearch["filters"] {
  const out: SavedSearch["filters"] = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || v === "" || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out;
}

/** "caller = 1001 · method = INVITE": what a saved search filters on, for its list entry. */
const summary = (s: SavedSearch) =>
  [
    ...Object.entries(s.filters).map(([k, v]) =>
      v === true ? k : `${k} = ${Array.isArray(v) ? v.join(", ") : String(v)}`,
    ),
    ...(s.range ? [rangeLabel({ kind: "relative", minutes: s.range.minutes })] : []),
  ].join(" · ") || "no filter";

interface Props {
  hepid: number;
  profile: string;
  values: Record<string, FieldValue>;
  onLoad: (values: Record<string, FieldValue>, range: TimeRange | undefined) => void;
}

type Editing = { kind: "save" } | { kind: "rename"; search: SavedSearch };

export function SavedSearches({ hepid, profile, values, onLoad }: Props) {
  const pop = usePopover({ label: "Saved filters" });
  const [list, setList] = useState<SavedSearch[] | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [editing, setEditing] = useState<Editing | null>(null);
  const mine = (list ?? []).filter((s) => s.hepid === hepid && s.profile === profile);

  useEffect(() => {
    if (!pop.open) return;
    setError(undefined);
    loadAll().then(setList, (e) => setError(errorText(e)));
  }, [pop.open]);

  const load = (s: SavedSearch) => {
    pop.close();
    onLoad({ ...s.filters }, s.range ? { kind: "relative", minutes: s.range.minutes } : undefined);
  };
  const remove = async (s: SavedSearch) => {
    if (!confirm(`Delete the saved filters “${s.name}”?`)) return;
    try {
      setList(await change((all) => all.filter((x) => x.id !== s.id)));
      notify(`Saved filters “${s.name}” deleted`);
    } catch (e) {
      setError(errorText(e));
    }
  };

  return html`<div class="chooser saved">
    <button type="button" class="btn btn-ghost" onClick=${() => setEditing({ kind: "save" })}>Save filters…</button>
    <button type="button" class="btn btn-ghost" ...${pop.trigger}>Saved filters</button>
    <${PopoverPanel} pop=${pop} class="saved-pop">
      ${error && html`<p class="field-error" role="alert">${error}</p>`}
      ${list === null && !error && html`<p class="loading" role="status">Loading your saved filters…</p>`}
      ${list !== null && mine.length === 0 && html`<p class="muted">No saved filters for ${profile} yet: fill in the form and use “Save filters…”.</p>`}
      ${
        mine.length > 0 &&
        html`<ul class="plain saved-list">
        ${mine.map(
          (s) => html`<li key=${s.id}>
            <button type="button" class="btn btn-ghost saved-load" onClick=${() => load(s)} aria-label=${`Load ${s.name}`} title=${summary(s)}>
              <span class="saved-name">${s.name}</span>
              <span class="muted small saved-sum">${summary(s)}</span>
            </button>
            <button type="button" class="btn btn-ghost" aria-label=${`Rename ${s.name}`} onClick=${() => {
              pop.close();
              setEditing({ kind: "rename", search: s });
            }}>Rename</button>
            <button type="button" class="btn btn-ghost btn-danger" aria-label=${`Delete ${s.name}`} onClick=${() => remove(s)}>Delete</button>
          </li>`,
        )}
      </ul>`
      }
    </${PopoverPanel}>
    ${
      editing &&
      html`<${SaveDialog}
      editing=${editing}
      existing=${mine}
      onClose=${() => setEditing(null)}
      onSave=${async (name: string, withRange: boolean) => {
        const range = timeRange.get();
        if (editing.kind === "rename") {
          const id = editing.search.id;
          setList(await change((all) => all.map((x) => (x.id === id ? { ...x, name } : x))));
          notify(`Renamed to “${name}”`);
        } else {
          const entry: SavedSearch = {
            id: newId(),
            name,
            hepid,
            profile,
            filters: storable(values),
            range: withRange && range.kind === "relative" ? { minutes: range.minutes } : null,
          };
          const same = (x: SavedSearch) =>
            x.hepid === hepid && x.profile === profile && x.name.toLowerCase() === name.toLowerCase();
          setList(await change((all) => [...all.filter((x) => !same(x)), entry]));
          notify(`Filters saved as “${name}”`);
        }
        setEditing(null);
      }}
    />`
    }
  </div>`;
}

interface DialogProps {
  editing: Editing;
  existing: SavedSearch[];
  onClose: () => void;
  onSave: (name: string, withRange: boolean) => Promise<void>;
}

/** The name prompt (widgets/name-dialog.ts) with the saved filters' options: the time range, the clash. */
function SaveDialog({ editing, existing, onClose, onSave }: DialogProps) {
  const range = useStore(timeRange);
  const [withRange, setWithRange] = useState(range.kind === "relative");
  const clashOf = (trimmed: string) =>
    existing.find(
      (s) => s.name.toLowerCase() === trimmed.toLowerCase() && (editing.kind === "save" || s.id !== editing.search.id),
    );
  return html`<${NameDialog}
    title=${editing.kind === "save" ? "Save filters" : "Rename saved filters"}
    label="Name"
    initial=${editing.kind === "rename" ? editing.search.name : ""}
    maxLength=${80}
    onCancel=${onClose}
    onOk=${(name: string) => onSave(name, withRange)}
    problem=${(trimmed: string) => {
      const clash = clashOf(trimmed);
      return editing.kind === "rename" && clash ? `“${clash.name}” exists already: choose another name.` : undefined;
    }}
    okText=${(trimmed: string) => (editing.kind === "rename" ? "Rename" : clashOf(trimmed) ? "Replace" : "Save")}
    extra=${(trimmed: string) => {
      const clash = clashOf(trimmed);
      return (
        editing.kind === "save" &&
        html`<label class="check"
            ><input type="checkbox" checked=${withRange && range.kind === "relative"} disabled=${range.kind !== "relative"} onChange=${(e: Event) => setWithRange((e.target as HTMLInputElement).checked)} />
            Restore the time range (${rangeLabel(range)})</label
          >
          ${range.kind !== "relative" && html`<p class="muted small">Only relative ranges (“Last …”) are saved; loading these filters keeps the range in use.</p>`}
          ${clash && html`<p class="muted small" role="status">Replaces the saved filters “${clash.name}”.</p>`}`
      );
    }}
  />`;
}
