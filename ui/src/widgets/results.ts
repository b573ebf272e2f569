/**
 * Result table: columns from `data.keys` (column chooser, saved in the widget config), sortable
 * headers, paging, the range the search covered, keyboard navigation (arrows move between rows, Enter
 * opens the transaction window), and loading / empty / error states in words.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import { cellText, eventClass, formatTime, hostLabel } from "../lib/format.ts";
import { channel, openTransaction, type ResultRow } from "../lib/state.ts";
import { PopoverPanel, usePopover } from "../lib/popover.ts";
import { useStore } from "../lib/store.ts";
import type { WidgetProps } from "./registry.ts";
import { SearchedRange } from "./widget-time.ts";
import { LiveResults } from "./live.ts";

/** What an operator reads first; the rest is one click away in the column chooser. */
const PREFERRED = ["timestamp", "event", "caller", "callee", "src", "dst", "session_id", "protocol", "node_id", "name", "service_name", "trace_id", "body"];
const PAGE_SIZES = [25, 50, 100, 200];

/** Source and destination shown as one column each (alias and ip:port). */
function virtualKeys(keys: string[]): string[] {
  const out = [...keys];
  if (keys.includes("src_ip")) out.push("src");
  if (keys.includes("dst_ip")) out.push("dst");
  return out;
}

const TITLES: Record<string, string> = {
  timestamp: "Time",
  event: "Event",
  caller: "From",
  callee: "To",
  src: "Source",
  dst: "Destination",
  session_id: "Call-ID",
  protocol: "Transport",
  node_id: "Node",
};
export const columnTitle = (k: string) => TITLES[k] ?? k.replace(/_/g, " ");

function value(row: ResultRow, key: string): unknown {
  if (key === "src") return hostLabel(row.src_ip, row.src_port, row.src_alias);
  if (key === "dst") return hostLabel(row.dst_ip, row.dst_port, row.dst_alias);
  return row[key];
}

function sortValue(row: ResultRow, key: string): string | number {
  if (key === "timestamp" && typeof row.timestamp_us === "number") return row.timestamp_us;
  const v = value(row, key);
  return typeof v === "number" ? v : cellText(v).toLowerCase();
}

export function ResultTable({ widget, onUpdate }: WidgetProps) {
  const source = typeof widget.config?.source === "string" ? widget.config.source : "call-search";
  const state = useStore(channel(source));
  const [sort, setSort] = useState<{ key: string; dir: 1 | -1 }>({ key: "timestamp", dir: -1 });
  const [page, setPage] = useState(0);
  const [size, setSize] = useState(50);
  const chooser = usePopover({ label: "Columns shown" });
  const tbody = useRef<HTMLTableSectionElement>(null);
  const [live, setLive] = useState(false);
  useEffect(() => setPage(0), [state.seq]);

  const keys = virtualKeys(state.keys);
  const configured = Array.isArray(widget.config?.columns) ? (widget.config.columns as unknown[]).filter((k): k is string => typeof k === "string") : undefined;
  const columns = (configured && configured.length > 0 ? configured.filter((k) => keys.includes(k)) : PREFERRED.filter((k) => keys.includes(k))) as string[];
  const cols = columns.length > 0 ? columns : keys.filter((k) => k !== "payload" && k !== "data_extra").slice(0, 8);

  const sorted = useMemo(() => {
    const rows = [...state.items];
    rows.sort((a, b) => {
      const x = sortValue(a, sort.key);
      const y = sortValue(b, sort.key);
      return (x < y ? -1 : x > y ? 1 : 0) * sort.dir;
    });
    return rows;
  }, [state.items, sort]);
  const pages = Math.max(1, Math.ceil(sorted.length / size));
  const shown = sorted.slice(page * size, page * size + size);

  const open = (row: ResultRow) => {
    const req = state.request;
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
  const headerSort = (k: string) => setSort((s) => (s.key === k ? { key: k, dir: s.dir === 1 ? -1 : 1 } : { key: k, dir: k === "timestamp" ? -1 : 1 }));

  let body;
  if (state.status === "idle") body = html`<div class="empty"><p>Run a search to see messages here.</p></div>`;
  else if (state.status === "error") body = html`<p class="alert alert-error" role="alert">Search failed: ${state.error}</p>`;
  else if (state.status === "done" && state.items.length === 0)
    body = html`<div class="empty"><p>No messages match this search in the selected time range. Widen the range or remove a filter.</p></div>`;
  else
    body = html`<div class="table-wrap">
      <table class="grid-table" aria-label="Search results" aria-rowcount=${sorted.length}>
        <thead>
          <tr>
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
            (row, i) => html`<tr key=${String(row.uuid ?? i)} tabindex="0" onClick=${() => open(row)} onKeyDown=${onRowKey(row, i)} aria-label=${`Open call ${row.session_id ?? ""}`}>
              ${cols.map((k) => html`<td key=${k} class=${cellClass(k)}>${renderCell(row, k)}</td>`)}
            </tr>`,
          )}
        </tbody>
      </table>
    </div>`;

  if (live) return html`<${LiveResults} protoType=${state.request?.filter.proto_type ?? 1} onStop=${() => setLive(false)} />`;
  return html`<div class="results" aria-busy=${state.status === "loading"}>
    <div class="results-bar">
      <span class="count" role="status">
        ${state.status === "loading" ? "Searching…" : state.status === "done" ? `${state.items.length} message${state.items.length === 1 ? "" : "s"}${state.tookMs ? ` · ${Math.round(state.tookMs)} ms` : ""}` : ""}
      </span>
      <${SearchedRange} range=${state.request?.timestamp} />
      <button type="button" class="btn btn-ghost" aria-pressed="false" title="Show new messages as they arrive" onClick=${() => setLive(true)}>Live</button>
      <div class="chooser">
        <button type="button" class="btn btn-ghost" ...${chooser.trigger} disabled=${keys.length === 0}>Columns…</button>
        <${PopoverPanel} pop=${chooser} class="chooser-pop">
          ${keys.map(
            (k) => html`<label key=${k} class="check"
              ><input type="checkbox" checked=${cols.includes(k)} onChange=${(e: Event) => setColumns((e.target as HTMLInputElement).checked ? [...cols, k] : cols.filter((c) => c !== k))} />
              ${columnTitle(k)} <span class="muted mono">${k}</span></label
            >`,
          )}
          <button type="button" class="btn btn-ghost" onClick=${() => setColumns([])}>Default columns</button>
        </${PopoverPanel}>
      </div>
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
    ${body}
  </div>`;
}

const MONO = new Set(["session_id", "sid", "src", "dst", "src_ip", "dst_ip", "uuid", "cid", "trace_id", "span_id", "timestamp", "payload"]);
const cellClass = (k: string) => (MONO.has(k) ? "mono" : "");

function renderCell(row: ResultRow, k: string) {
  if (k === "timestamp" && typeof row.timestamp_us === "number") return formatTime(row.timestamp_us / 1000);
  if (k === "event" && typeof row.event === "string") return html`<span class=${`ev ${eventClass(row.event)}`}>${row.event}</span>`;
  const t = cellText(value(row, k));
  return t.length > 160 ? `${t.slice(0, 160)}…` : t;
}
