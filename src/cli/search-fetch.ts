import { AppError } from "../core/index.ts";
import type { CoordinatorClient } from "./coordinator-client.ts";
import { applyPostFilters, postFilterSummary, type Row } from "./post-filter.ts";
import type { SearchOptions } from "./search-options.ts";
import { buildSearchBody } from "./search-request.ts";

/**
 * One search round trip: the structured search (`POST /transactions/search`) or `--sql`
 * (`POST /query`), then the client-side post-filters. Notes are lines for stderr.
 */
export interface FetchedRows {
  rows: Row[];
  /** Column order the server gave (search `keys`, SQL `columns`). */
  keys: string[];
  /** Rows the server returned before post-filtering. */
  received: number;
  /** The limit cut the answer: the search API's `has_more` (SQL: `meta.truncated`). */
  limitReached: boolean;
  limit: number;
  /** Matches of the search (`meta.pagination.total`); a lower bound when `totalExact` is false. Absent for SQL. */
  total?: number;
  totalExact?: boolean;
  /** The searched range; absent for SQL (its rows carry their own range). */
  range?: { fromMs: number; toMs: number };
  notes: string[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function shapeError(path: string, what: string): AppError {
  return new AppError("BAD_GATEWAY", `${path}: unexpected answer (${what})`);
}

export async function fetchRows(client: CoordinatorClient, o: SearchOptions): Promise<FetchedRows> {
  const notes: string[] = [];
  let rows: Row[];
  let keys: string[];
  let limitReached: boolean;
  let range: FetchedRows["range"];
  let count: { total: number; totalExact: boolean } | undefined;
  if (o.sql) {
    if (o.ignoredWithSql.length)
      notes.push(`--sql bypasses the structured filters: ${o.ignoredWithSql.join(", ")} ignored`);
    const j = await client.post("/query", { sql: o.sql, limit: o.query.limit });
    const data = isObj(j) && isObj(j.data) ? j.data : undefined;
    if (!data || !Array.isArray(data.rows)) throw shapeError("/query", "no data.rows");
    rows = data.rows.filter(isObj);
    keys = Array.isArray(data.columns) ? data.columns.map((c) => (isObj(c) ? String(c.name) : String(c))) : [];
    const meta = isObj(j) && isObj(j.meta) ? j.meta : {};
    limitReached = meta.truncated === true;
  } else {
    const { body, ignored } = buildSearchBody(o.query);
    if (ignored.length) notes.push(`ignored for proto ${o.query.proto}: ${ignored.join(", ")}`);
    const j = await client.post("/transactions/search", body);
    const data = isObj(j) && isObj(j.data) ? j.data : undefined;
    if (!data || !Array.isArray(data.items)) throw shapeError("/transactions/search", "no data.items");
    rows = data.items.filter(isObj);
    keys = Array.isArray(data.keys) ? data.keys.map(String) : [];
    const pagination = isObj(j) && isObj(j.meta) && isObj(j.meta.pagination) ? j.meta.pagination : {};
    // A coordinator without has_more (an older build) is read as before: a full page may be cut.
    limitReached = typeof pagination.has_more === "boolean" ? pagination.has_more : rows.length >= o.query.limit;
    if (typeof pagination.total === "number")
      count = { total: pagination.total, totalExact: pagination.total_exact !== false };
    range = { fromMs: o.query.fromMs, toMs: o.query.toMs };
    const partial = isObj(j) && isObj(j.meta) ? partialNote(j.meta) : undefined;
    if (partial) notes.push(partial);
  }
  const received = rows.length;
  if (o.grep.length || o.exclude.length) {
    rows = applyPostFilters(rows, o.grep, o.exclude);
    notes.push(
      postFilterSummary(o.grep, o.exclude, received, rows.length, { reached: limitReached, limit: o.query.limit }),
    );
  }
  return { rows, keys, received, limitReached, limit: o.query.limit, ...(range ? { range } : {}), ...count, notes };
}

/**
 * One line when a coordinator over several nodes answered without some of them (`meta.partial`,
 * docs/ARCHITECTURE.md "Coordinator over several nodes"): which nodes and why.
 */
export function partialNote(meta: Record<string, unknown>): string | undefined {
  if (meta.partial !== true) return undefined;
  const missing = (Array.isArray(meta.nodes) ? meta.nodes : [])
    .filter(isObj)
    .filter((n) => n.status === "failed" || n.status === "timeout")
    .map(
      (n) =>
        `${String(n.name)} ${n.status === "timeout" ? "timed out" : "failed"}${typeof n.error === "string" ? ` (${n.error})` : ""}`,
    );
  return `warning: partial result, rows of some nodes are missing: ${missing.join("; ") || "a node did not answer"}`;
}
