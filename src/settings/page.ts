import type { Database } from "bun:sqlite";
import { AppError } from "../core/index.ts";
import { invalidField } from "./db.ts";

/**
 * List paging shared by every list operation: `page[limit]` (default 100, max 1000), an opaque
 * `page[cursor]`, `sort` (`name` or `-name`) and `search`. The cursor is `<offset>:<sort>`, the
 * offset and the sort it was made for: its shape is published as a pattern in the OpenAPI document
 * (src/api/openapi/schemas.ts), so every cursor the document allows means one page. A request without
 * `sort` continues in the cursor's order; one with another `sort` is a 409, not a silently wrong page.
 */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

export interface PageRequest {
  limit: number;
  offset: number;
  /** Validated sort key as sent (`username`, `-created_at`). */
  sort: string;
  search: string;
}

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  nextCursor: string | null;
}

export interface PageInput {
  limit?: number | undefined;
  cursor?: string | undefined;
  sort?: string | undefined;
  search?: string | undefined;
}

export function encodeCursor(offset: number, sort: string): string {
  return `${offset}:${sort}`;
}

/** `<offset>:<sort>` (the shape `cursorPattern` publishes); undefined when it is not one. */
export function decodeCursor(cursor: string): { offset: number; sort: string } | undefined {
  const m = /^(0|[1-9][0-9]{0,14}):(-?[a-z_]+)$/.exec(cursor);
  return m ? { offset: Number(m[1]), sort: m[2]! } : undefined;
}

/** The pattern of a cursor of a list sortable by `keys` (published in the OpenAPI document). */
export const cursorPattern = (keys: readonly string[]): string => `^(0|[1-9][0-9]{0,14}):-?(${keys.join("|")})$`;

/**
 * Validates paging input against the sortable columns of one list. `sorts` maps public sort keys to
 * SQL column expressions; only those keys are accepted, so `sort` never reaches SQL as text.
 */
export function pageRequest(
  input: PageInput,
  sorts: Readonly<Record<string, string>>,
  defaultSort: string,
): PageRequest {
  const limit = input.limit ?? DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw invalidField("page[limit]", `must be an integer between 1 and ${MAX_PAGE_LIMIT}`);
  }
  const cursor = input.cursor ? decodeCursor(input.cursor) : undefined;
  if (input.cursor && (!cursor || !(cursor.sort.replace(/^-/, "") in sorts)))
    throw invalidField("page[cursor]", "not a cursor returned by this list");
  const asked = input.sort?.trim();
  const sort = asked || cursor?.sort || defaultSort;
  if (!(sort.replace(/^-/, "") in sorts)) {
    throw invalidField(
      "sort",
      `unknown key "${sort}" (one of: ${Object.keys(sorts).join(", ")}; prefix - for descending)`,
    );
  }
  if (cursor && cursor.sort !== sort) {
    throw new AppError(
      "CONFLICT",
      `page[cursor]: the cursor was made for sort=${cursor.sort}; send that sort or start without a cursor`,
      { details: { fields: ["page[cursor]"] } },
    );
  }
  return { limit, offset: cursor?.offset ?? 0, sort, search: input.search?.trim() ?? "" };
}

/** `ORDER BY` for a validated sort; `id` breaks ties so pages never overlap. */
export function orderBy(
  sort: string,
  sorts: Readonly<Record<string, string>>,
  tieBreak: readonly string[] = ["id"],
): string {
  const desc = sort.startsWith("-");
  const column = sorts[sort.replace(/^-/, "")];
  if (!column) throw new AppError("INTERNAL", `orderBy called with unvalidated sort ${sort}`);
  const dir = desc ? "DESC" : "ASC";
  return [column, ...tieBreak].map((c) => `${c} ${dir}`).join(", ");
}

/** Builds `WHERE` from conditions that each use named parameters present in `params`. */
export interface Filter {
  where: string[];
  params: Record<string, string | number | null>;
}

export const emptyFilter = (): Filter => ({ where: [], params: {} });

/** Adds `column = value` when a filter value was given (`column` is a trusted identifier). */
export function addEquals(f: Filter, column: string, value: string | number | boolean | undefined): void {
  if (value === undefined || value === "") return;
  f.where.push(`${column} = $f_${column}`);
  f.params[`f_${column}`] = typeof value === "boolean" ? (value ? 1 : 0) : value;
}

/** Escapes LIKE wildcards so a search for `50%` matches the text, not everything. */
export const likeContains = (s: string): string => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Counts and reads one page of `table` (a trusted identifier) under `filter`. */
export function queryPage<R, T>(
  db: Database,
  table: string,
  filter: Filter,
  page: PageRequest,
  sorts: Readonly<Record<string, string>>,
  map: (row: R) => T,
  tieBreak: readonly string[] = ["id"],
): Page<T> {
  const where = filter.where.length ? `WHERE ${filter.where.join(" AND ")}` : "";
  const total = (db.query(`SELECT COUNT(*) AS n FROM ${table} ${where}`).get(filter.params) as { n: number }).n;
  const rows = db
    .query(
      `SELECT * FROM ${table} ${where} ORDER BY ${orderBy(page.sort, sorts, tieBreak)} LIMIT $limit OFFSET $offset`,
    )
    .all({ ...filter.params, limit: page.limit, offset: page.offset }) as R[];
  const next = page.offset + rows.length;
  return {
    items: rows.map(map),
    total,
    limit: page.limit,
    nextCursor: next < total && rows.length > 0 ? encodeCursor(next, page.sort) : null,
  };
}
