import type { FetchedRows } from "./search-fetch.ts";
import type { ScreenFormat } from "./search-options.ts";
import { buildCallFlow, renderCallFlow } from "./views/callflow.ts";
import { renderChart, rowsChart } from "./views/chart.ts";
import { resultColumns, tableOrder } from "./views/columns.ts";
import { renderCsv, renderJson, renderTable, renderVertical } from "./views/text-formats.ts";

/**
 * Text output of a search in one of the screen formats (spec doc 3 "Output formats"). `text` goes
 * to stdout (or --output); `summary` is the row count for stderr when the format itself has no
 * count line (csv and json stay machine-readable).
 */
export interface RenderedOutput {
  text: string;
  summary?: string;
}

/** `12 rows`, `50 rows (limit 50 reached)`. */
export function countLine(r: FetchedRows): string {
  const n = r.rows.length;
  const base = `${n} ${n === 1 ? "row" : "rows"}`;
  if (!r.limitReached) return base;
  return `${base} (limit ${r.limit} reached)`;
}

/** 12345 → `12 345`. */
export const groupDigits = (n: number): string => String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, " ");

/**
 * The stderr line when the limit cut the answer (undefined otherwise), from the search API's
 * `meta.pagination` (docs/ARCHITECTURE.md "Totals and paging of the search lists"): `svc: showing
 * 100 of 12 345 matches; raise --limit for more`. The exit code stays 0.
 */
export function limitNote(r: FetchedRows): string | undefined {
  if (!r.limitReached) return undefined;
  if (r.total === undefined) return `svc: showing the first ${groupDigits(r.received)} rows; raise --limit for more`;
  const of = r.totalExact === false ? `more than ${groupDigits(r.total)}` : groupDigits(r.total);
  return `svc: showing ${groupDigits(r.received)} of ${of} matches; raise --limit for more`;
}

const lines = (ls: readonly string[]) => (ls.length ? `${ls.join("\n")}\n` : "");

export function renderOutput(format: ScreenFormat, r: FetchedRows, o: { fields?: readonly string[]; width: number }): RenderedOutput {
  const columns = resultColumns(r.rows, r.keys, o.fields);
  switch (format) {
    case "table": {
      const cols = o.fields?.length ? columns : tableOrder(columns);
      return { text: lines([...(r.rows.length ? renderTable(r.rows, cols, o.width) : []), countLine(r)]) };
    }
    case "vertical":
      return { text: lines([...renderVertical(r.rows, columns), countLine(r)]) };
    case "csv":
      return { text: r.rows.length || columns.length ? renderCsv(r.rows, columns) : "", summary: countLine(r) };
    case "json":
      return { text: renderJson(r.rows, columns), summary: countLine(r) };
    case "chart":
      // The fetched rows; `svc search --format chart` and the interactive view chart the server's histogram (search-chart.ts).
      return { text: lines(renderChart(rowsChart(r.rows, r.range ?? {}), { width: o.width })) };
    case "callflow":
      return { text: lines(renderCallFlow(buildCallFlow(r.rows))) };
  }
}
