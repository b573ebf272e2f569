/**
 * Selecting result rows to open several calls as one call view (docs/DASHBOARD.md "Several calls
 * in one view"): a checkbox per row, Shift+click selects the range from the last clicked row (in
 * the grid's sort order, across pages), and "Open N calls together" sends every selected row's
 * Call-ID to the transaction window, which loads them as one ladder (`session_id` as a list).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../lib/html.ts";
import { openTransaction, type ResultRow, type SearchState } from "../lib/state.ts";

/** Call-IDs one view loads at most (each is looked up and correlated on its own). */
export const MAX_COMBINED_CALLS = 50;

const rowKey = (row: ResultRow, i: number) =>
  String(row.uuid ?? `${String(row.session_id)}#${String(row.timestamp_us)}#${i}`);

export interface RowSelection {
  isSelected: (row: ResultRow, index: number) => boolean;
  /** index: the row's position in `rows`; shift: extend from the last clicked row. */
  toggle: (index: number, on: boolean, shift: boolean) => void;
  /** Rows [from, to) on or off (the header checkbox: the rows of the page). */
  setRange: (from: number, to: number, on: boolean) => void;
  clear: () => void;
  rowCount: number;
  /** Distinct Call-IDs of the selected rows, in grid order. */
  callIds: string[];
}

/** Selection over `rows` (the sorted results); emptied when a new search completes (`seq`). */
export function useRowSelection(rows: ResultRow[], seq: number): RowSelection {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const anchor = useRef<number | null>(null);
  useEffect(() => {
    setSelected(new Set());
    anchor.current = null;
  }, [seq]);

  const setRange = (from: number, to: number, on: boolean) =>
    setSelected((old) => {
      const next = new Set(old);
      for (let i = from; i < to; i++) {
        const row = rows[i];
        if (!row) continue;
        if (on) next.add(rowKey(row, i));
        else next.delete(rowKey(row, i));
      }
      return next;
    });
  const toggle = (index: number, on: boolean, shift: boolean) => {
    const last = shift ? anchor.current : null;
    setRange(Math.min(last ?? index, index), Math.max(last ?? index, index) + 1, on);
    anchor.current = index;
  };
  const callIds: string[] = [];
  let rowCount = 0;
  rows.forEach((row, i) => {
    if (!selected.has(rowKey(row, i))) return;
    rowCount++;
    const id = row.session_id;
    if (typeof id === "string" && id !== "" && !callIds.includes(id)) callIds.push(id);
  });
  return {
    isSelected: (row, i) => selected.has(rowKey(row, i)),
    toggle,
    setRange,
    clear: () => {
      setSelected(new Set());
      anchor.current = null;
    },
    rowCount,
    callIds,
  };
}

/** The checkbox cell of a row; its click never opens the row. */
export function SelectCell({ sel, row, index }: { sel: RowSelection; row: ResultRow; index: number }) {
  const on = sel.isSelected(row, index);
  return html`<td class="sel-cell" onClick=${(e: MouseEvent) => e.stopPropagation()} onKeyDown=${(e: KeyboardEvent) => e.stopPropagation()}>
    <input
      type="checkbox"
      checked=${on}
      aria-label=${`Select ${row.event ?? "message"} of call ${row.session_id ?? ""}`}
      onClick=${(e: MouseEvent) => sel.toggle(index, (e.target as HTMLInputElement).checked, e.shiftKey)}
    />
  </td>`;
}

/** The header cell: every row of the page [from, to) on or off. */
export function SelectPageHeader({
  sel,
  rows,
  from,
  to,
}: {
  sel: RowSelection;
  rows: ResultRow[];
  from: number;
  to: number;
}) {
  const page = rows.slice(from, to);
  const all = page.length > 0 && page.every((r, i) => sel.isSelected(r, from + i));
  const some = page.some((r, i) => sel.isSelected(r, from + i));
  return html`<th scope="col" class="sel-cell">
    <input
      type="checkbox"
      aria-label="Select every row of this page"
      checked=${all}
      indeterminate=${some && !all}
      onChange=${(e: Event) => sel.setRange(from, to, (e.target as HTMLInputElement).checked)}
    />
  </th>`;
}

/** The results bar's part: how much is selected, open them together, clear. */
export function SelectionBar({ sel, state }: { sel: RowSelection; state: SearchState }) {
  if (sel.rowCount === 0) return null;
  const n = sel.callIds.length;
  const tooMany = n > MAX_COMBINED_CALLS;
  const open = () => {
    const req = state.request;
    openTransaction.set({
      sessionIds: sel.callIds,
      protoType: req?.filter.proto_type ?? 1,
      eventType: req?.filter.event_type ?? "call",
      from: req?.timestamp.from ?? Date.now() - 86_400_000,
      to: req?.timestamp.to ?? Date.now(),
      title: n === 1 ? (sel.callIds[0] ?? "") : `${n} calls`,
    });
  };
  return html`<div class="sel-bar" role="group" aria-label="Selected rows">
    <span class="small">${sel.rowCount} row${sel.rowCount === 1 ? "" : "s"} · ${n} call${n === 1 ? "" : "s"} selected</span>
    <button type="button" class="btn btn-primary" onClick=${open} disabled=${n === 0 || tooMany} title=${tooMany ? `At most ${MAX_COMBINED_CALLS} calls in one view` : ""}>
      ${n === 1 ? "Open the call" : `Open ${n} calls together`}
    </button>
    <button type="button" class="btn btn-ghost" onClick=${sel.clear}>Clear selection</button>
    ${tooMany && html`<span class="field-error" role="alert">At most ${MAX_COMBINED_CALLS} calls in one view: clear some.</span>`}
  </div>`;
}
