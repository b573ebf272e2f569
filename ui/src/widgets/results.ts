/**
 * Result table: columns from `data.keys` (column chooser, saved in the widget config), sortable
 * headers, paging, the count with "Load more" (result-limit.ts), the range the search covered,
 * keyboard navigation (arrows move between rows, Enter opens the transaction window), rows selected
 * to open several calls as one view, and loading / empty / error states in words.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import { availableColumns, columnSortValue, columnTitle, columnValue, visibleColumns } from "../lib/columns.ts";
import { cellText, eventClass, formatTime } from "../lib/format.ts";
import { channel, openTransaction, type ResultRow } from "../lib/state.ts";
import { useStore } from "../lib/store.ts";
import type { WidgetProps } from "./types.ts";
import { SearchedRange } from "./widget-time.ts";
import { ColumnChooser } from "./column-chooser.ts";
import { SelectCell, SelectionBar, SelectPageHeader, useRowSelection } from "./row-select.ts";
import { PartialNote, ResultCount } from "./result-limit.ts";
import { LiveResults } from "./live.ts";

const PAGE_SIZES = [25, 50, 100, 200];

export function ResultTable({ widget, onUpdate }: WidgetProps) {
  const source = typeof widget.config?.source === "string" ? widget.config.source : "call-search";
  const state = useStore(channel(source));
  const [sort, setSort] = useState<{ key: string; dir: 1 | -1 }>({ key: "timestamp", dir: -1 });
  const [page, setPage] = useState(0);
  const [size, setSize] = useState(50);
  const tbody = useRef<HTMLTableSectionElement>(null);
  const [live, setLive] = useState(false);
  useEffect(() => setPage(0), [state.seq]);

  const keys = availableColumns(state.keys);
  const configured = Array.isArray(widget.config?.columns)
    ? (widget.config.columns as unknown[]).filter((k): k is string => typeof k === "string")
    : undefined;
  const cols = visibleColumns(keys, configured);

  const sorted = useMemo(() => {
    const rows = [...state.items];
    rows.sort((a, b) => {
      const x = columnSortValue(a, sort.key);
      const y = columnSortValue(b, sort.key);
      return (x < y ? -1 : x > y ? 1 : 0) * sort.dir;
    });
    return rows;
  }, [state.items, sort]);
  const pages = Math.max(1, Math.ceil(sorted.length / size));
  const shown = sorted.slice(page * size, page * size + size);
  const sel = useRowSelection(sorted, state.seq);

  const open = (row: ResultRow) => {
    const req = state.request;
    // An OTLP span or log record that carries a SIP Call-ID opens that call (docs/OTLP.md).
    if (!row.session_id && typeof row.sip_call_id === "string" && row.sip_call_id) {
      const from = req?.timestamp.from ?? Date.now() - 86_400_000;
      openTransaction.set({
        sessionIds: [row.sip_call_id],
        protoType: 1,
        eventType: "call",
        from,
        to: req?.timestamp.to ?? Date.now(),
        title: row.sip_call_id,
      });
      return;
    }
    if (!row.session_id) return;
    openTransaction.set({
      sessionIds: [String(row.session_id)],
      protoType: req?.filter.proto_type ?? Number(row.proto_type ?? 1),
      eventType: req?.filter.event_type ?? "call",
      from: req?.timestamp.from ?? Date.now() - 86_400_000,
      to: req?.timestamp.to ?? Date.now(),
      title: String(row.session_id),
    });
  };
  const setColumns = (next: string[]) => onUpdate({ ...widget, config: { ...widget.config, columns: next } });
  const onRowKey = (row: ResultRow, i: number) => (e: KeyboardEvent) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      open(row);
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const rows = tbody.current?.querySelectorAll<HTMLTableRowElement>("tr");
      rows?.[i + (e.key === "ArrowDown" ? 1 : -1)]?.focus();
    }
  };
  const headerSort = (k: string) =>
    setSort((s) => (s.key === k ? { key: k, dir: s.dir === 1 ? -1 : 1 } : { key: k, dir: k === "timestamp" ? -1 : 1 }));

  let body;
  if (state.status === "idle") body = html`<div class="empty"><p>Run a search to see messages here.</p></div>`;
  else if (state.status === "error")
    body = html`<p class="alert alert-error" role="alert">Search failed: ${state.error}</p>`;
  else if (state.status === "done" && state.items.length === 0)
    body = html`<div class="empty"><p>No messages match this search in the selected time range. Widen the range or remove a filter.</p></div>`;
  else
    body = html`<div class="table-wrap">
      <table class="grid-table" aria-label="Search results" aria-rowcount=${sorted.length}>
        <thead>
          <tr>
            <${SelectPageHeader} sel=${sel} rows=${sorted} from=${page * size} to=${page * size + shown.length} />
            ${cols.map((k) => {
              const active = sort.key === k;
              return html`<th key=${k} scope="col" aria-sort=${active ? (sort.dir === 1 ? "ascending" : "descending") : "none"}>
                <button type="button" class="th-sort" onClick=${() => headerSort(k)}>${columnTitle(k)}${active ? (sort.dir === 1 ? " ▲" : " ▼") : ""}</button>
              </th>`;
            })}
          </tr>
        </thead>
        <tbody ref=${tbody}>
          ${shown.map(
            (
              row,
              i,
            ) => html`<tr key=${String(row.uuid ?? i)} tabindex="0" onClick=${() => open(row)} onKeyDown=${onRowKey(row, i)} aria-label=${`Open call ${row.session_id ?? row.sip_call_id ?? ""}`} aria-selected=${sel.isSelected(row, page * size + i) ? "true" : "false"}>
              <${SelectCell} sel=${sel} row=${row} index=${page * size + i} />
              ${cols.map((k) => html`<td key=${k} class=${cellClass(k)} title=${cellTitle(row, k)}>${renderCell(row, k)}</td>`)}
            </tr>`,
          )}
        </tbody>
      </table>
    </div>`;

  if (live)
    return html`<${LiveResults} protoType=${state.request?.filter.proto_type ?? 1} filter=${state.request?.filter} onStop=${() => setLive(false)} />`;
  return html`<div class="results" aria-busy=${state.status === "loading"}>
    <div class="results-bar">
      <${ResultCount} source=${source} state=${state} onLoaded=${(before: number) => sort.key === "timestamp" && sort.dir === -1 && setPage(Math.floor(before / size))} />
      <${SearchedRange} range=${state.request?.timestamp} />
      <button type="button" class="btn btn-ghost" aria-pressed="false" title="Show new messages as they arrive" onClick=${() => setLive(true)}>Live</button>
      <${ColumnChooser} available=${keys} shown=${cols} custom=${(configured ?? []).some((k) => keys.includes(k))} onChange=${setColumns} />
      <${SelectionBar} sel=${sel} state=${state} />
      <span class="spacer"></span>
      <label class="inline small"
        >Rows
        <select value=${String(size)} onChange=${(e: Event) => {
          setSize(Number((e.target as HTMLSelectElement).value));
          setPage(0);
        }}>
          ${PAGE_SIZES.map((n) => html`<option key=${n} value=${String(n)}>${n}</option>`)}
        </select></label
      >
      <nav class="pager" aria-label="Result pages">
        <button type="button" class="icon-btn" onClick=${() => setPage(Math.max(0, page - 1))} disabled=${page === 0} aria-label="Previous page">‹</button>
        <span>${page + 1} / ${pages}</span>
        <button type="button" class="icon-btn" onClick=${() => setPage(Math.min(pages - 1, page + 1))} disabled=${page >= pages - 1} aria-label="Next page">›</button>
      </nav>
    </div>
    <${PartialNote} state=${state} />
    ${body}
  </div>`;
}

const MONO = new Set([
  "session_id",
  "sid",
  "src",
  "dst",
  "src_ip",
  "dst_ip",
  "uuid",
  "cid",
  "trace_id",
  "span_id",
  "timestamp",
  "payload",
]);
const cellClass = (k: string) => (MONO.has(k) ? "mono" : "");

/** The whole value on hover: a cell shows one line of at most 420 px (styles.css `.grid-table td`). */
function cellTitle(row: ResultRow, k: string): string | undefined {
  if (k === "timestamp" || k === "event") return undefined;
  const t = cellText(columnValue(row, k));
  return t === "" ? undefined : t.length > 4000 ? `${t.slice(0, 4000)}…` : t;
}

function renderCell(row: ResultRow, k: string) {
  if (k === "timestamp" && typeof row.timestamp_us === "number") return formatTime(row.timestamp_us / 1000);
  if (k === "event" && typeof row.event === "string")
    return html`<span class=${`ev ${eventClass(row.event)}`}>${row.event}</span>`;
  const t = cellText(columnValue(row, k));
  return t.length > 160 ? `${t.slice(0, 160)}…` : t;
}
