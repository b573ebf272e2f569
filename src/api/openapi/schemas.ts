import { t, type TSchema } from "elysia";
import { AppError } from "../../core/index.ts";
import { cursorPattern, type Page, type PageInput } from "../../settings/index.ts";

/**
 * Route schemas shared by the list and write operations of the v4 API, so the OpenAPI document
 * describes every list the same way: query `page[limit]` (1..1000, default 100), `page[cursor]`
 * (from `meta.pagination.next_cursor`), `sort` (`key` or `-key`), `search`; response
 * `{data: {items}, meta: {pagination: {limit, total, next_cursor}}}`. `sort` is the enum of the
 * list's sort keys and the cursor's shape is a pattern, so every value the document allows is
 * answered (a cursor made for another sort than the one asked is the one 409).
 */
export const pageQuery = (sorts: Readonly<Record<string, string>>) => {
  const keys = Object.keys(sorts);
  const sortValues = [...keys, ...keys.map((k) => `-${k}`)];
  return {
    "page[limit]": t.Optional(
      t.Integer({ minimum: 1, maximum: 1000, description: "page size (default 100, max 1000)" }),
    ),
    "page[cursor]": t.Optional(
      t.String({
        maxLength: 64,
        pattern: cursorPattern(keys),
        description: "cursor from meta.pagination.next_cursor; without sort, the page continues in the cursor's order",
      }),
    ),
    // Literals, not t.UnionEnum: Elysia fills an absent UnionEnum query value with its first member,
    // which would replace the list's own default order.
    sort: t.Optional(
      t.Union(
        sortValues.map((k) => t.Literal(k)),
        { description: "sort key; prefix - for descending" },
      ),
    ),
    search: t.Optional(t.String({ maxLength: 256, description: "case-insensitive substring search" })),
  };
};

export const pageInput = (q: {
  "page[limit]"?: number | undefined;
  "page[cursor]"?: string | undefined;
  sort?: string | undefined;
  search?: string | undefined;
}): PageInput => ({
  limit: q["page[limit]"],
  cursor: q["page[cursor]"],
  sort: q.sort,
  search: q.search,
});

/** Query flag `true`/`false` (also 1/0). */
export const boolQuery = (description: string) =>
  t.Optional(t.Union([t.Literal("true"), t.Literal("false"), t.Literal("1"), t.Literal("0")], { description }));
export const parseBoolQuery = (v: string | undefined): boolean | undefined =>
  v === undefined ? undefined : v === "true" || v === "1";

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
  return {
    data: { items: page.items.map(map) },
    meta: { pagination: { limit: page.limit, total: page.total, next_cursor: page.nextCursor } },
  };
}

export const idBody = (id: string, message: string) => ({ data: { id }, message });

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : iso(ms);

/**
 * IP text as src/core/ip.ts reads it (RFC 4291 section 2.2 forms, no octal-looking IPv4 octets),
 * as patterns, so the document says exactly which strings an address field takes.
 */
const V4 = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}";
const H = "[0-9A-Fa-f]{1,4}";
const V6 = [
  `(${H}:){7}${H}`,
  `(${H}:){1,7}:`,
  ...[1, 2, 3, 4, 5, 6].map((k) => `(${H}:){1,${7 - k}}(:${H}){1,${k}}`),
  `:((:${H}){1,7}|:)`,
  `(${H}:){6}${V4}`,
  `::(${H}:){0,5}${V4}`,
  ...[1, 2, 3, 4, 5].map((k) => `(${H}:){${k}}:(${H}:){0,${5 - k}}${V4}`),
].join("|");
const PREFIX4 = "(0?0?[0-9]|0?[12][0-9]|0?3[0-2])";
const PREFIX6 = "(0?0?[0-9]|0?[1-9][0-9]|1[01][0-9]|12[0-8])";
/** An IPv4 or IPv6 address. */
export const IP_PATTERN = `^(${V4}|${V6})$`;
/** An address or a CIDR network (10.0.0.0/8, 2001:db8::/32). */
export const IP_OR_CIDR_PATTERN = `^(${V4}(/${PREFIX4})?|(${V6})(/${PREFIX6})?)$`;

/**
 * A time bound of a search or export window, as the routes read it: epoch milliseconds (a number or
 * its digits), an ISO 8601 time, or null/"" for the default. Checked by the route (its message
 * names the member); `from` after `to` is a 400 the document cannot express.
 */
export const timeBound = (description: string) =>
  t.Optional(
    checkedByRoute(description, {
      anyOf: [
        { type: "number" },
        { type: "string", pattern: "^(\\s*-?[0-9]+\\s*)?$" },
        { type: "string", format: "date-time" },
        { type: "null" },
      ],
    }),
  );

/** 9999-12-31T23:59:59.999Z, the last millisecond the lake's timestamp text has four year digits for. */
const LAST_WINDOW_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * A window bound as the lake can take it: whole milliseconds between 1970 (capture times are
 * unsigned seconds since the epoch: nothing is stored before) and the year 9999. A bound outside
 * is moved to the edge (the rows it selects are the same) instead of failing deep in the query.
 */
export const windowMs = (ms: number): number => Math.min(LAST_WINDOW_MS, Math.max(0, Math.trunc(ms)));

/** Path ids are UUIDs, but any text is accepted: an unknown or malformed id is simply a 404. */
export const idString = () => t.String({ minLength: 1, maxLength: 128 });

/**
 * A member the route checks itself (`t.Unknown` to the validator) but publishes in the OpenAPI
 * document as `published`: sanitizeOpenApi replaces the schema carrying `DOCUMENTED_AS` by it.
 */
export const DOCUMENTED_AS = "x-svc-documented-as";
export const checkedByRoute = (description: string, published: Record<string, unknown>) =>
  t.Unknown({ description, [DOCUMENTED_AS]: published });

/**
 * A free JSON object member (settings data, widget config, mapping documents). Declared as unknown
 * and checked by `jsonObject`, because Elysia's object coercion would turn `"dark"` into
 * `{"0":"d",...}` instead of rejecting it; the document says `type: object` (null is refused).
 */
export const anyObject = (description: string) =>
  checkedByRoute(`JSON object: ${description}`, { type: "object", additionalProperties: true });

export function jsonObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("VALIDATION", `${field}: must be a JSON object`, { details: { fields: [field] } });
  }
  return value as Record<string, unknown>;
}

/** Standard error responses for the OpenAPI document. */
export const errors = (...codes: Array<400 | 401 | 403 | 404 | 409 | 429>) =>
  Object.fromEntries(codes.map((c) => [c, ErrorResponse]));
