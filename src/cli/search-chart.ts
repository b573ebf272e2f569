import { writeFileSync } from "node:fs";
import { AppError, chooseBucketWidth } from "../core/index.ts";
import { coordinatorClient, type CoordinatorClient } from "./coordinator-client.ts";
import type { CliIo } from "./io.ts";
import { fetchRows } from "./search-fetch.ts";
import type { SearchOptions } from "./search-options.ts";
import { buildSearchBody } from "./search-request.ts";
import {
  histogramChart,
  renderChart,
  rowsChart,
  TERMINAL_BUCKETS,
  type ChartData,
  type ServerHistogram,
} from "./views/chart.ts";
import { terminalWidth } from "./views/columns.ts";

/**
 * The data of `--format chart`: the coordinator's histogram over the WHOLE window
 * (`POST /transactions/histogram`, docs/HISTOGRAM.md) under the same filters as the search, not
 * the rows a `--limit` cut. The fetched rows are counted instead only where the server cannot
 * count: `--sql` (rows of a statement), `--grep`/`--exclude` (filters applied here), or a
 * coordinator without the route (older version); a note says so.
 */
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function isHistogram(v: unknown): v is ServerHistogram {
  return (
    isObj(v) &&
    isObj(v.window) &&
    typeof v.interval === "string" &&
    typeof v.interval_ms === "number" &&
    typeof v.total === "number" &&
    Array.isArray(v.groups) &&
    Array.isArray(v.buckets)
  );
}

export interface FetchedChart {
  chart: ChartData;
  notes: string[];
}

export async function fetchChart(client: CoordinatorClient, o: SearchOptions): Promise<FetchedChart> {
  const rowsFallback = async (why: string): Promise<FetchedChart> => {
    const r = await fetchRows(client, o);
    const chart = rowsChart(r.rows, r.range ?? {});
    const cut = r.limitReached ? ` (limit ${r.limit} reached)` : "";
    return {
      chart,
      notes: [...r.notes, `${why}: the chart counts the ${r.rows.length} fetched rows${cut}, not the whole range`],
    };
  };
  if (o.sql) return await rowsFallback("--sql");
  if (o.grep.length || o.exclude.length) return await rowsFallback("--grep/--exclude filter fetched rows here");
  const { body, ignored } = buildSearchBody(o.query);
  const interval = o.chart.interval ?? chooseBucketWidth(o.query.toMs - o.query.fromMs, TERMINAL_BUCKETS).label;
  const j = await client.post(
    "/transactions/histogram",
    { filter: body.filter, timestamp: body.timestamp, group_by: o.chart.groupBy, interval },
    { routeMayBeMissing: true },
  );
  if (j === undefined)
    return await rowsFallback("the coordinator has no POST /transactions/histogram (an older version)");
  const data = isObj(j) ? j.data : undefined;
  if (!isHistogram(data))
    throw new AppError("BAD_GATEWAY", "/transactions/histogram: unexpected answer (no data.buckets)");
  return {
    chart: histogramChart(data),
    notes: ignored.length ? [`ignored for proto ${o.query.proto}: ${ignored.join(", ")}`] : [],
  };
}

/** `svc search --format chart`: notes on stderr, the chart on stdout or in --output. */
export async function runChart(o: SearchOptions, io: CliIo, debug: boolean): Promise<number> {
  const c = await fetchChart(coordinatorClient(o, io, debug), o);
  for (const n of c.notes) await io.err(`${n}\n`);
  const text = `${renderChart(c.chart, { width: terminalWidth(io.env, io.columns) }).join("\n")}\n`;
  if (!o.output) {
    await io.out(text);
    return 0;
  }
  writeFileSync(o.output, text);
  await io.err(`wrote the chart of ${c.chart.total} ${c.chart.unit} to ${o.output}\n`);
  return 0;
}
