/**
 * The Flow tab of the transaction window (docs/CALL-VIEW.md): the ladder with its toolbar (columns
 * IP / IP:port / alias, hide duplicates, RTCP, media report and log markers) beside the selected row's detail.
 * Aliases come from `GET /aliases`, the markers from `POST /transactions/events`; either failing
 * leaves the ladder usable and says so.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { errorText, get, post } from "../lib/api.ts";
import { html } from "../lib/html.ts";
import {
  COLUMN_MODES,
  aliasLookup,
  defaultColumnMode,
  type AliasEntry,
  type AliasLookup,
  type ColumnMode,
} from "../lib/ladder-columns.ts";
import { MARKER_KINDS, ladderModel, type CallEvent } from "../lib/ladder-model.ts";
import type { TxMessage } from "../lib/transaction.ts";
import { LadderView } from "./ladder.ts";
import { LiveBar, LiveMessageDetail, type LiveLadder } from "./live-call.ts";
import { MessageDetail } from "./message-detail.ts";

const PREFS_KEY = "svc.ladder";
/** Alias list pages read at most (1000 entries each). */
const ALIAS_PAGES = 10;

interface Prefs {
  hideDuplicates: boolean;
  showEvents: boolean;
}

function loadPrefs(): Prefs {
  try {
    const p = JSON.parse(localStorage.getItem(PREFS_KEY) ?? "{}") as Partial<Prefs>;
    return { hideDuplicates: p.hideDuplicates !== false, showEvents: p.showEvents !== false };
  } catch {
    return { hideDuplicates: true, showEvents: true };
  }
}

async function loadAliases(): Promise<AliasEntry[]> {
  const out: AliasEntry[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < ALIAS_PAGES; page++) {
    const q: string = `/aliases?active=true&page[limit]=1000${cursor ? `&page[cursor]=${encodeURIComponent(cursor)}` : ""}`;
    const r = await get<{ data: { items: AliasEntry[] }; meta: { pagination: { next_cursor: string | null } } }>(q);
    out.push(...r.data.items);
    cursor = r.meta.pagination.next_cursor;
    if (!cursor) break;
  }
  return out;
}

interface EventsState {
  items: CallEvent[] | null;
  total: number;
  error?: string;
}

/** The open call's loads and column choice, kept while the user visits the other tabs. */
interface Loads {
  aliases: Promise<AliasLookup>;
  events: Promise<EventsState>;
  mode?: ColumnMode;
}
const loads = new WeakMap<readonly TxMessage[], Loads>();

function loadsFor(items: readonly TxMessage[], request: Record<string, unknown>): Loads {
  let l = loads.get(items);
  if (!l) {
    l = {
      aliases: loadAliases().then(aliasLookup),
      events: post<{ data: { items: CallEvent[] }; meta: { pagination: { total: number } } }>(
        "/transactions/events",
        request,
      ).then(
        (r) => ({ items: r.data.items, total: r.meta.pagination.total }),
        (e) => ({ items: [], total: 0, error: errorText(e) }),
      ),
    };
    loads.set(items, l);
  }
  return l;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `1 RTCP, 3 media, 2 logs`: the kinds the call has, in the order of MARKER_KINDS. */
function eventCounts(items: readonly CallEvent[]): string {
  const n = (k: CallEvent["kind"]) => items.filter((e) => e.kind === k).length;
  const parts = [`${n("rtcp")} RTCP`, `${n("media")} media`, plural(n("log"), "log")];
  return parts.filter((p) => !p.startsWith("0 ")).join(", ");
}

export function LadderPanel({
  items,
  request,
  selected,
  onSelect,
  live,
}: {
  items: TxMessage[];
  request: Record<string, unknown>;
  selected: string | undefined;
  onSelect: (uuid: string) => void;
  /** The call's live state (live-call.ts): its messages join the ladder. */
  live?: LiveLadder;
}) {
  const l = loadsFor(items, request);
  const [mode, setModeState] = useState<ColumnMode>(() => l.mode ?? defaultColumnMode(items));
  const [prefs, setPrefs] = useState<Prefs>(loadPrefs);
  const [lookup, setLookup] = useState<AliasLookup | undefined>();
  const [aliasError, setAliasError] = useState<string | undefined>();
  const [events, setEvents] = useState<EventsState>({ items: null, total: 0 });
  const setMode = (m: ColumnMode) => {
    setModeState(m);
    l.mode = m;
  };

  useEffect(() => {
    let live = true;
    l.aliases.then(
      (x) => live && setLookup(() => x),
      (e) => live && setAliasError(errorText(e)),
    );
    l.events.then((ev) => live && setEvents(ev));
    return () => {
      live = false;
    };
  }, [l]);

  const setPref = (p: Partial<Prefs>) => {
    const next = { ...prefs, ...p };
    setPrefs(next);
    try {
      localStorage.setItem(PREFS_KEY, JSON.stringify(next));
    } catch {
      // private mode: the choice lasts for this window only
    }
  };

  const liveItems = live?.items;
  // The model orders rows by time: live messages take their place among the stored ones.
  const all = useMemo(() => (liveItems?.length ? [...items, ...liveItems] : items), [items, liveItems]);
  const ladder = useMemo(
    () =>
      ladderModel(all, {
        mode,
        ...(lookup ? { lookup } : {}),
        hideDuplicates: prefs.hideDuplicates,
        events: prefs.showEvents ? (events.items ?? []) : [],
      }),
    [all, mode, lookup, prefs, events.items],
  );
  const byUuid = useMemo(
    () => new Map<string, TxMessage | CallEvent>([...all, ...(events.items ?? [])].map((m) => [m.uuid, m])),
    [all, events.items],
  );
  const row = selected ? byUuid.get(selected) : undefined;
  const arrow = ladder.arrows.find((a) => a.uuid === selected);
  const marker = ladder.markers.find((m) => m.uuid === selected);

  const dupText =
    ladder.duplicates === 0
      ? "no copies from other capture points"
      : prefs.hideDuplicates
        ? `${plural(ladder.hidden, "duplicate")} hidden`
        : `${plural(ladder.duplicates, "duplicate")} shown`;
  let eventsText: string;
  if (events.error) eventsText = `could not be loaded: ${events.error}`;
  else if (events.items === null) eventsText = "loading…";
  else if (events.total > events.items.length) eventsText = `first ${events.items.length} of ${events.total}`;
  else eventsText = events.total === 0 ? "none for this call" : `${events.total} (${eventCounts(events.items)})`;

  // Nothing selected: the detail pane holds one sentence, so the ladder takes the width (docs/UI.md
  // "Nothing cut"): two calls' four columns fit at 1280 px instead of the last one being cut.
  return html`<div class=${row ? "split" : "split split-idle"}>
    <div class="ladder-pane">
      <div class="ladder-tools" role="toolbar" aria-label="Ladder options">
        <div class="seg" role="radiogroup" aria-label="Columns">
          ${COLUMN_MODES.map(
            ([k, label]) => html`<button
              key=${k}
              type="button"
              role="radio"
              aria-checked=${mode === k ? "true" : "false"}
              class=${mode === k ? "active" : ""}
              onClick=${() => setMode(k)}
            >
              ${label}
            </button>`,
          )}
        </div>
        <label class="check"
          ><input type="checkbox" checked=${prefs.hideDuplicates} onChange=${(e: Event) => setPref({ hideDuplicates: (e.target as HTMLInputElement).checked })} /> Hide duplicates</label
        >
        <span class="muted small" role="status" aria-label="Duplicates">${dupText}</span>
        <label class="check"
          ><input type="checkbox" checked=${prefs.showEvents} onChange=${(e: Event) => setPref({ showEvents: (e.target as HTMLInputElement).checked })} /> RTCP, media and logs</label
        >
        <span class=${events.error ? "small alert-text" : "muted small"} role="status" aria-label="RTCP, media and log events">${eventsText}</span>
        ${aliasError && html`<span class="small alert-text" role="status">Aliases could not be read (${aliasError}): names are the server's</span>`}
      </div>
      ${live && html`<${LiveBar} live=${live} />`}
      <${LadderView} ladder=${ladder} selected=${selected} onSelect=${onSelect} fullText=${(u: string) => byUuid.get(u)?.payload ?? undefined} />
    </div>
    ${
      row && !("kind" in row) && row.live
        ? html`<${LiveMessageDetail} message=${row} index=${arrow ? arrow.number - 1 : all.indexOf(row)} />`
        : row
          ? html`<${MessageDetail} message=${row} index=${arrow ? arrow.number - 1 : all.findIndex((m) => m.uuid === row.uuid)} heading=${marker ? MARKER_KINDS[marker.kind].name : undefined} />`
          : html`<div class="empty side"><p>Select an arrow or a marker to read its message.</p></div>`
    }
  </div>`;
}
