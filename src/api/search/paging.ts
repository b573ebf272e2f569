import { t } from "elysia";
import { AppError } from "../../core/index.ts";
import { decodeCursor, encodeCursor } from "../../settings/index.ts";
import { NodeReportSchema, type ListSearchResult } from "./fan-out.ts";
import type { SearchResult } from "./service.ts";

/**
 * Pages of the search lists (`POST /transactions/search`, `GET /transactions`; docs/ARCHITECTURE.md
 * "Totals and paging of the search lists"). The cursor is the `<offset>:<sort>` of every other list
 * (src/settings/page.ts) over the search's exact order: `-timestamp` newest first (the default) or
 * `timestamp` oldest first, the uuid breaking ties in the same direction. Pages reach the first
 * MAX_SEARCH_ROWS rows of that order (the route's row cap); a narrower window reaches the rest.
 */
export const MAX_SEARCH_ROWS = 50_000;
export const SEARCH_SORTS = ["-timestamp", "timestamp"] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];
const DEFAULT_SORT: SearchSort = "-timestamp";

/** Offsets 0..49 999 (below MAX_SEARCH_ROWS): every cursor the document allows names a page; empty is the first. */
export const SEARCH_CURSOR_PATTERN = "^((0|[1-9][0-9]{0,3}|[1-4][0-9]{4}):-?timestamp)?$";

export interface SearchPage {
  offset: number;
  sort: SearchSort;
  /** The asked limit, shortened so the page ends at MAX_SEARCH_ROWS. */
  limit: number;
}

const isSort = (v: string): v is SearchSort => (SEARCH_SORTS as readonly string[]).includes(v);
const invalid = (field: string, message: string) =>
  new AppError("VALIDATION", `${field}: ${message}`, { details: { fields: [field] } });

/**
 * Validates a page request. Malformed cursor, unknown sort: 400 naming the member. A cursor made for
 * the other sort: 409, as every list answers it (src/settings/page.ts). Without `sort`, a cursor
 * continues in its own order.
 */
export function searchPage(
  input: { cursor: unknown; sort: unknown; limit: number },
  names: { cursor: string; sort: string },
): SearchPage {
  const rawSort = typeof input.sort === "string" ? input.sort.trim() : input.sort;
  if (
    rawSort !== undefined &&
    rawSort !== null &&
    rawSort !== "" &&
    (typeof rawSort !== "string" || !isSort(rawSort))
  ) {
    throw invalid(
      names.sort,
      `unknown sort ${JSON.stringify(rawSort)}; one of -timestamp (newest first, the default) or timestamp (oldest first)`,
    );
  }
  let cursor: { offset: number; sort: SearchSort } | undefined;
  if (input.cursor !== undefined && input.cursor !== null && input.cursor !== "") {
    const c = typeof input.cursor === "string" ? decodeCursor(input.cursor.trim()) : undefined;
    if (!c || !isSort(c.sort))
      throw invalid(
        names.cursor,
        "not a cursor of this list (send meta.pagination.next_cursor of the previous page, <offset>:<sort>)",
      );
    if (c.offset >= MAX_SEARCH_ROWS) {
      throw invalid(
        names.cursor,
        `pages reach the first ${MAX_SEARCH_ROWS} rows of the order; narrow the time range or the filter for the rest`,
      );
    }
    cursor = { offset: c.offset, sort: c.sort };
  }
  const sort = (rawSort as SearchSort | undefined) || cursor?.sort || DEFAULT_SORT;
  if (cursor && cursor.sort !== sort) {
    throw new AppError(
      "CONFLICT",
      `${names.cursor}: the cursor was made for sort=${cursor.sort}; send that sort or start without a cursor`,
      { details: { fields: [names.cursor] } },
    );
  }
  const offset = cursor?.offset ?? 0;
  return { offset, sort, limit: Math.min(input.limit, MAX_SEARCH_ROWS - offset) };
}

/** `meta.pagination` of a search answer. */
export function searchPagination(r: SearchResult, page: SearchPage) {
  const next = r.offset + r.items.length;
  return {
    limit: r.limit,
    offset: r.offset,
    total: r.total,
    total_exact: r.totalExact,
    has_more: r.hasMore,
    next_cursor: r.hasMore && r.items.length > 0 && next < MAX_SEARCH_ROWS ? encodeCursor(next, page.sort) : null,
  };
}

export const SearchPagination = t.Object(
  {
    limit: t.Integer({ description: "rows asked for this page" }),
    offset: t.Integer({ description: "rows of the order before this page" }),
    total: t.Integer({
      description:
        "rows of the window that match. Exact when total_exact is true: always without a filter (the catalog's row counts plus a COUNT(*) of the files crossing the window's edges and the buffer); with a filter a COUNT(*) over the same filtered scan, stopped at storage.lakehouse.search.count_cap matches (default 100000). Beyond the cap, or when the count passes the query time-out, total is a lower bound and total_exact false",
    }),
    total_exact: t.Boolean({ description: "false: total is a lower bound (more rows match)" }),
    has_more: t.Boolean({ description: "rows after this page exist in the window (always exact)" }),
    next_cursor: t.Union([t.String(), t.Null()], {
      description:
        "page[cursor] (GET) or param.cursor (POST) of the next page with the same window and filter; null on the last page and past the first 50000 rows of the order",
    }),
  },
  {
    description:
      "pages follow the exact order of the search (timestamp, then uuid); send the same from/to with every page (the default to is now)",
  },
);

/** The list answer of a search (`CallListResponse`, docs/API.md "Search results"). */
export const CallListResponse = t.Object({
  data: t.Object({
    items: t.Array(
      t.Unknown({
        description:
          "one row: the table's columns, timestamp as ISO text plus timestamp_us, sid, src_alias, dst_alias, storage_lake, storage_volume",
      }),
    ),
    keys: t.Array(t.String(), { description: "column names, in row order" }),
  }),
  meta: t.Object({
    pagination: SearchPagination,
    nodes: t.Optional(
      t.Array(NodeReportSchema, {
        description: "with coordinator.nodes: what each node (and this process's lake, `local`) did",
      }),
    ),
    partial: t.Optional(
      t.Boolean({
        description: "with coordinator.nodes: true when a node failed or timed out, so rows of it may be missing",
      }),
    ),
  }),
});

export const searchListBody = (r: ListSearchResult, page: SearchPage) => ({
  data: { items: r.items, keys: r.keys },
  meta: { pagination: searchPagination(r, page), ...(r.nodes ? { nodes: r.nodes, partial: r.partial === true } : {}) },
});
