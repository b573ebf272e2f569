import { t, type TSchema } from "elysia";
import { AppError } from "../../core/index.ts";
import type { Page, PageInput } from "../../settings/index.ts";

/**
 * Route schemas shared by the list and write operations of the v4 API, so the OpenAPI document
 * describes every list the same way: query `page[limit]` (1..1000, default 100), `page[cursor]`
 * (opaque, from `meta.pagination.next_cursor`), `sort` (`key` or `-key`), `search`; response
 * `{data: {items}, meta: {pagination: {limit, total, next_cursor}}}`.
 */
export const pageQuery = {
  "page[limit]": t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: "page size (default 100, max 1000)" })),
  "page[cursor]": t.Optional(t.String({ maxLength: 512, description: "opaque cursor from meta.pagination.next_cursor" })),
  sort: t.Optional(t.String({ maxLength: 64, description: "sort key; prefix - for descending (e.g. -created_at)" })),
  search: t.Optional(t.String({ maxLength: 256, description: "case-insensitive substring search" })),
};

export const pageInput = (q: { "page[limit]"?: number | undefined; "page[cursor]"?: string | undefined; sort?: string | undefined; search?: string | undefined }): PageInput => ({
  limit: q["page[limit]"],
  cursor: q["page[cursor]"],
  sort: q.sort,
  search: q.search,
});

/** Query flag `true`/`false` (also 1/0). */
export const boolQuery = (description: string) => t.Optional(t.Union([t.Literal("true"), t.Literal("false"), t.Literal("1"), t.Literal("0")], { description }));
export const parseBoolQuery = (v: string | undefined): boolean | undefined => (v === undefined ? undefined : v === "true" || v === "1");

export const Pagination = t.Object({
  limit: t.Integer(),
  total: t.Integer(),
  next_cursor: t.Union([t.String(), t.Null()]),
});

export const listResponse = <T extends TSchema>(item: T) =>
  t.Object({ data: t.Object({ items: t.Array(item) }), meta: t.Object({ pagination: Pagination }) });

export const dataResponse = <T extends TSchema>(item: T) => t.Object({ data: item });

export const IdResponse = t.Object({ data: t.Object({ id: t.String() }), message: t.String() });
export const MessageResponse = t.Object({ message: t.String() });
export const ErrorResponse = t.Object({ error: t.String(), message: t.String() }, { additionalProperties: true });

export function listBody<T, O>(page: Page<T>, map: (item: T) => O) {
  return { data: { items: page.items.map(map) }, meta: { pagination: { limit: page.limit, total: page.total, next_cursor: page.nextCursor } } };
}

export const idBody = (id: string, message: string) => ({ data: { id }, message });

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : iso(ms));

/** Path ids are UUIDs, but any text is accepted: an unknown or malformed id is simply a 404. */
export const idString = () => t.String({ minLength: 1, maxLength: 128 });

/**
 * A free JSON object member (settings data, widget config, mapping documents). Declared as unknown
 * and checked by `jsonObject`, because Elysia's object coercion would turn `"dark"` into
 * `{"0":"d",...}` instead of rejecting it.
 */
export const anyObject = (description: string) => t.Unknown({ description: `JSON object: ${description}` });

export function jsonObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("VALIDATION", `${field}: must be a JSON object`, { details: { fields: [field] } });
  }
  return value as Record<string, unknown>;
}

/** Standard error responses for the OpenAPI document. */
export const errors = (...codes: Array<400 | 401 | 403 | 404 | 409 | 429>) => Object.fromEntries(codes.map((c) => [c, ErrorResponse]));
