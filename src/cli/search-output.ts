import type { FetchedRows } from "./search-fetch.ts";
import type { ScreenFormat, SearchOptions } from "./search-options.ts";
import { buildCallFlow, renderCallFlow } from "./views/callflow.ts";
import { renderChart, rowsChart } from "./views/chart.ts";
import { SIP_READABLE_COLUMNS, resultColumns, tableOrder, withEndpoints } from "./views/columns.ts";
import { renderCsv, renderJson, renderTable, renderVertical } from "./views/text-formats.ts";

/**
 * Text output of a search in one of the screen formats (docs/CLI.md "Output formats"). `text` goes
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

export interface RenderOptions {
  /** `--fields`; `["all"]` is every column. */
  fields?: readonly string[];
  width: number;
  /** Columns of `table` and `csv` when `--fields` is not given (SIP_READABLE_COLUMNS for a SIP search). */
  readable?: readonly string[];
}

/** The readable default columns of a structured SIP search; `--sql` and other protocols show every column. */
export function readableColumns(o: Pick<SearchOptions, "sql" | "query"> | undefined): Pick<RenderOptions, "readable"> {
  return o && !o.sql && o.query.proto === 1 ? { readable: SIP_READABLE_COLUMNS } : {};
}

export function renderOutput(format: ScreenFormat, fetched: FetchedRows, o: RenderOptions): RenderedOutput {
  const all = o.fields?.length === 1 && o.fields[0]!.toLowerCase() === "all";
  const fields = all
    ? undefined
    : o.fields?.length
      ? o.fields
      : format === "table" || format === "csv"
        ? o.readable
        : undefined;
  const columns = resultColumns(fetched.rows, fetched.keys, fields);
  const r = { ...fetched, rows: [...withEndpoints(fetched.rows, columns)] };
  switch (format) {
    case "table": {
      const cols = fields?.length ? columns : tableOrder(columns);
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
