/**
 * The list routes of the Transactions tag (docs/API.md "Search results"): `POST /transactions/search`
 * (and `POST /search`) with a search body, `GET /transactions` with the same search in the query,
 * and a node's `POST /api/v1/search` body and answer. Each pages with a cursor (paging.ts).
 */
import type { Static } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { AppError } from "../../core/index.ts";
import { authContext } from "../auth/guard.ts";
import { ErrorResponse, checkedByRoute, errors } from "../openapi/schemas.ts";
import { VirtualFieldsSchema, type ListSearch } from "./fan-out.ts";
import { CallListResponse, SEARCH_CURSOR_PATTERN, SEARCH_SORTS, searchListBody, searchPage } from "./paging.ts";
import type { SearchService } from "./service.ts";
import { tableKeyFor } from "./tables.ts";
import { searchFilter, searchScope, searchWindow, window } from "./window.ts";

const MAX_LIMIT = 50_000;

const intArg = (v: unknown, field: string, def: number, max: number): number => {
  if (v === undefined || v === null || v === "") return def;
  // Only numbers and digits: Number(true) is 1, Number([]) is 0.
  const n = typeof v === "number" || (typeof v === "string" && /^\s*\d+\s*$/.test(v)) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < 1)
    throw new AppError("VALIDATION", `${field}: expected a positive integer`, { details: { fields: [field] } });
  return Math.min(n, max);
};

/** Checked by searchPage (its messages say what a cursor is), published as the pattern. */
const cursorMember = (description: string, orNull = false) =>
  checkedByRoute(
    description,
    orNull
      ? { anyOf: [{ type: "string", pattern: SEARCH_CURSOR_PATTERN }, { type: "null" }] }
      : { type: "string", pattern: SEARCH_CURSOR_PATTERN },
  );

const searchBodyProps = () => ({
  filter: searchFilter(),
  param: t.Optional(
    t.Object(
      {
        limit: t.Optional(
          checkedByRoute("rows at most (default and cap: the route's)", {
            anyOf: [
              { type: "integer", minimum: 1 },
              { type: "string", pattern: "^(\\s*0*[1-9][0-9]*\\s*)?$" },
              { type: "null" },
            ],
          }),
        ),
        cursor: t.Optional(
          cursorMember(
            "meta.pagination.next_cursor of the previous page (same filter and timestamp); null or empty: the first page",
            true,
          ),
        ),
        sort: t.Optional(
          t.Union(
            SEARCH_SORTS.map((k) => t.Literal(k)),
            { description: "-timestamp newest first (default), timestamp oldest first; uuid breaks ties" },
          ),
        ),
      },
      { additionalProperties: true },
    ),
  ),
  timestamp: searchWindow(),
});
const SearchBody = t.Object(searchBodyProps(), { additionalProperties: true });

/**
 * `POST /api/v1/search` of a node (src/cluster/node-app.ts): the body of `POST
 * /transactions/search` plus the coordinator's virtual fields; the node has none of its own.
 */
export const NodeSearchBody = t.Object(
  {
    ...searchBodyProps(),
    virtual_fields: VirtualFieldsSchema,
    buffer_only: t.Optional(
      t.Boolean({
        description: "only rows not yet in data files: another node of the same lake answers for the files",
      }),
    ),
  },
  { additionalProperties: true },
);

/** A node's answer to a coordinator: the list body plus each row's sort key (docs/ARCHITECTURE.md "Coordinator over several nodes"). */
export async function nodeSearchAnswer(search: SearchService, body: typeof NodeSearchBody.static) {
  const page = listPage(body);
  const virtualFields = new Map(Object.entries(body.virtual_fields ?? {}));
  const r = await search.run({
    ...searchScope(body),
    ...runPage(page),
    virtualFields,
    ...(body.buffer_only ? { bufferOnly: true } : {}),
  });
  const answer = searchListBody(r, page);
  return { ...answer, data: { ...answer.data, sort_keys: r.sortKeys ?? [] } };
}

/** The page a search body asks for (param.limit, param.cursor, param.sort). */
const listPage = (body: typeof SearchBody.static) =>
  searchPage(
    {
      cursor: body.param?.cursor,
      sort: body.param?.sort,
      limit: intArg(body.param?.limit, "param.limit", 100, MAX_LIMIT),
    },
    { cursor: "param.cursor", sort: "param.sort" },
  );

/**
 * `POST /transactions/search` over `list`: this process's lake, or the lake and the nodes of
 * coordinator.nodes (src/cluster/fan-out.ts; docs/ARCHITECTURE.md "Coordinator over several nodes").
 */
export function transactionSearchRoute(list: ListSearch) {
  const handler = async ({ body }: { body: Static<typeof SearchBody> }) => {
    const page = listPage(body);
    return searchListBody(await list.run({ ...searchScope(body), ...runPage(page) }), page);
  };
  const options = (summary: string) => ({
    body: SearchBody,
    detail: { tags: ["Transactions"], summary },
    response: { 200: CallListResponse, ...errors(400, 401, 409), 413: ErrorResponse },
  });
  // One handler on two paths: the search-form guide names POST /search (docs/API.md "Search paths").
  return new Elysia({ name: "svc-search-list" })
    .use(authContext)
    .post(
      "/transactions/search",
      handler,
      options(
        "Structured search (filter, param.limit/cursor/sort, timestamp.from/to in epoch ms); meta.pagination says how many rows match; with coordinator.nodes meta.nodes says what each node did",
      ),
    )
    .post(
      "/search",
      handler,
      options("The same operation as POST /transactions/search, on the path the search-form guide names"),
    );
}

/** `;`-separated integers as filters.ts reads them (safe integers: at most 15 digits). */
const INTEGER_LIST = "^\\s*[0-9]{1,15}\\s*(;\\s*[0-9]{1,15}\\s*)*$";
const text = (description: string) => t.Optional(t.String({ description }));
const queryTime = (description: string) =>
  t.Optional(
    checkedByRoute(description, {
      anyOf: [
        { type: "number" },
        { type: "string", pattern: "^(\\s*-?[0-9]+\\s*)?$" },
        { type: "string", format: "date-time" },
      ],
    }),
  );
const queryLimit = (description: string) => t.Optional(checkedByRoute(description, { type: "integer", minimum: 1 }));

/** Query of `GET /transactions` (docs/API.md "Search results": from, to, page limit, cursor, sort, filters). */
const TransactionListQuery = t.Object({
  from: queryTime("start, epoch ms or ISO 8601 (default: to minus 1 hour)"),
  to: queryTime("end, epoch ms or ISO 8601 (default now; send it when paging, so new rows do not shift the pages)"),
  "page[limit]": queryLimit(`rows of this page (default 100, at most ${MAX_LIMIT})`),
  limit: queryLimit("alias of page[limit]"),
  "page[cursor]": t.Optional(
    cursorMember(
      "meta.pagination.next_cursor of the previous page (same from, to and filters); without sort, the page continues in the cursor's order",
    ),
  ),
  sort: t.Optional(
    t.Union(
      SEARCH_SORTS.map((k) => t.Literal(k)),
      { description: "-timestamp newest first (default), timestamp oldest first; uuid breaks ties" },
    ),
  ),
  proto_type: t.Optional(
    t.String({
      pattern: "^([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$",
      description: "HEP protocol type 0..65535 (default 1, SIP)",
    }),
  ),
  event_type: text("call, registration or default for SIP (default call); <schema>__<table> for proto_type 300"),
  call_id: text("Call-ID (session_id); % is a wildcard, ; separates alternatives"),
  transaction_id: text("alias of call_id"),
  sid: text("alias of call_id"),
  src_ip: text("source address"),
  dst_ip: text("destination address"),
  protocol: text("transport: UDP, TCP, TLS, SCTP"),
  method: text("SIP method"),
  from_user: text("From user"),
  to_user: text("To user"),
  response_code: t.Optional(t.String({ pattern: INTEGER_LIST, description: "SIP response code(s), ; separated" })),
  capture_id: t.Optional(
    t.String({ pattern: INTEGER_LIST, description: "HEP capture id: node_id or data_extra.capture_id" }),
  ),
});

/** A validated page as the search service takes it. */
const runPage = (p: { offset: number; sort: string; limit: number }) => ({
  limit: p.limit,
  offset: p.offset,
  oldestFirst: p.sort === "timestamp",
});

/** `GET /transactions` over `list` (the lake, or the fan-out over coordinator.nodes as for the search body). */
export function transactionListRoute(list: ListSearch) {
  return new Elysia({ name: "svc-transaction-list" }).use(authContext).get(
    "/transactions",
    async ({ query }) => {
      const q = query as Record<string, string | undefined>;
      const protoType = q.proto_type === undefined ? 1 : Number(q.proto_type);
      const eventType = q.event_type ?? (protoType === 1 ? "call" : "default");
      const filter: Record<string, unknown> = {};
      for (const k of [
        "call_id",
        "sid",
        "transaction_id",
        "src_ip",
        "dst_ip",
        "protocol",
        "method",
        "from_user",
        "to_user",
        "response_code",
        "capture_id",
      ]) {
        if (q[k] !== undefined) filter[k === "transaction_id" ? "call_id" : k] = q[k];
      }
      const w = window(q.from, q.to, "");
      const page = searchPage(
        {
          cursor: q["page[cursor]"],
          sort: q.sort,
          limit: intArg(q["page[limit]"] ?? q.limit, "page[limit]", 100, MAX_LIMIT),
        },
        { cursor: "page[cursor]", sort: "sort" },
      );
      tableKeyFor(protoType, eventType);
      return searchListBody(await list.run({ protoType, eventType, filter, ...w, ...runPage(page) }), page);
    },
    {
      query: TransactionListQuery,
      detail: {
        tags: ["Transactions"],
        summary:
          "List messages of a window, newest first; page[cursor] from meta.pagination.next_cursor; with coordinator.nodes over every node (meta.nodes)",
      },
      response: { 200: CallListResponse, ...errors(400, 401, 409), 413: ErrorResponse },
    },
  );
}
