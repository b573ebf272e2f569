import type { Static } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Config } from "../../config/index.ts";
import { AppError } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { decodeSipMessage } from "../../sip/index.ts";
import { authContext } from "../auth/guard.ts";
import { ErrorResponse, checkedByRoute, errors } from "../openapi/schemas.ts";
import { callEvents, callScope, reportRowsReader } from "./call-events.ts";
import { CallEventsResponse, DecodedMessageResponse, MessageResponse, TransactionMessagesResponse, TransactionQosResponse } from "./model.ts";
import { OtlpRelatedResponse, otlpOverNodes, otlpRelated } from "./otlp-related.ts";
import { HistogramService } from "./histogram.ts";
import { histogramRoute } from "./histogram-route.ts";
import { VirtualFieldsSchema, nodesMeta, type ListSearch, type OverNodes } from "./fan-out.ts";
import { CallListResponse, SEARCH_CURSOR_PATTERN, SEARCH_SORTS, searchListBody, searchPage } from "./paging.ts";
import { buildStreams, mediaEndpoints } from "./qos.ts";
import { markComputedFromRtp } from "./media-source.ts";
import { findMessage } from "./message-by-uuid.ts";
import { noLakeError } from "./no-lake.ts";
import { rtcpClockRate, rtcpPayloadText } from "./rtcp-report.ts";
import { SearchService, tableKeyFor } from "./service.ts";
import { NodeAcc, TransactionService } from "./transaction.ts";
import { searchFilter, searchScope, searchWindow, window } from "./window.ts";
import { hepTableKey, mediaProtos } from "../../core/protocols.ts";

export { SearchService, NO_SEARCH_SETTINGS, virtualFieldsOf, type SearchRequest, type SearchSettings } from "./service.ts";
export {
  mergeNodePages,
  compareKeys,
  nodesMeta,
  virtualFieldsJson,
  type Gathered,
  type ListSearch,
  type ListSearchResult,
  type NodeAnswer,
  type NodePage,
  type NodeReport,
  type OverNodes,
  type OverNodesRead,
} from "./fan-out.ts";
export { TransactionService } from "./transaction.ts";
export { buildWhere, type WhereClause } from "./filters.ts";
export { noLakeError } from "./no-lake.ts";
export { lakeMessage, NodeMessageBody } from "./message-by-uuid.ts";
export { NodeOtlpBody, otlpRelated } from "./otlp-related.ts";
export { nodeReads, NodeCallReportsBody, NodeCallRowsBody, NodeHistogramBody, type NodeReadDeps } from "./node-reads.ts";

const MAX_LIMIT = 50_000;

/** This process's lake, for a read that has no nodes to ask (a coordinator without either answers 503). */
const ownLake = (lake: Lake | undefined, what: string): Lake => {
  if (!lake) throw noLakeError(what);
  return lake;
};
/** Timeline events of one call view at most (an hour of RTCP every 5 s both ways is 1 440). */
const MAX_EVENTS = 5_000;

const intArg = (v: unknown, field: string, def: number, max: number): number => {
  if (v === undefined || v === null || v === "") return def;
  // Only numbers and digits: Number(true) is 1, Number([]) is 0.
  const n = typeof v === "number" || (typeof v === "string" && /^\s*\d+\s*$/.test(v)) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) throw new AppError("VALIDATION", `${field}: expected a positive integer`, { details: { fields: [field] } });
  return Math.min(n, max);
};

/** Checked by searchPage (its messages say what a cursor is), published as the pattern. */
const cursorMember = (description: string, orNull = false) =>
  checkedByRoute(description, orNull ? { anyOf: [{ type: "string", pattern: SEARCH_CURSOR_PATTERN }, { type: "null" }] } : { type: "string", pattern: SEARCH_CURSOR_PATTERN });

const searchBodyProps = () => ({
  filter: searchFilter(),
  param: t.Optional(
    t.Object(
      {
        limit: t.Optional(
          checkedByRoute("rows at most (default and cap: the route's)", { anyOf: [{ type: "integer", minimum: 1 }, { type: "string", pattern: "^(\\s*0*[1-9][0-9]*\\s*)?$" }, { type: "null" }] }),
        ),
        cursor: t.Optional(cursorMember("meta.pagination.next_cursor of the previous page (same filter and timestamp); null or empty: the first page", true)),
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
    buffer_only: t.Optional(t.Boolean({ description: "only rows not yet in data files: another node of the same lake answers for the files" })),
  },
  { additionalProperties: true },
);

/** A node's answer to a coordinator: the list body plus each row's sort key (docs/ARCHITECTURE.md "Coordinator over several nodes"). */
export async function nodeSearchAnswer(search: SearchService, body: typeof NodeSearchBody.static) {
  const page = listPage(body);
  const virtualFields = new Map(Object.entries(body.virtual_fields ?? {}));
  const r = await search.run({ ...searchScope(body), ...runPage(page), virtualFields, ...(body.buffer_only ? { bufferOnly: true } : {}) });
  const answer = searchListBody(r, page);
  return { ...answer, data: { ...answer.data, sort_keys: r.sortKeys ?? [] } };
}

/** The page a search body asks for (param.limit, param.cursor, param.sort). */
const listPage = (body: typeof SearchBody.static) =>
  searchPage({ cursor: body.param?.cursor, sort: body.param?.sort, limit: intArg(body.param?.limit, "param.limit", 100, MAX_LIMIT) }, { cursor: "param.cursor", sort: "param.sort" });

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
    .post("/search", handler, options("The same operation as POST /transactions/search, on the path the search-form guide names"));
}

const SessionBody = t.Object(
  {
    session_id: t.Union([t.String({ minLength: 1 }), t.Array(t.String({ minLength: 1 }), { minItems: 1 })]),
    proto_type: t.Optional(t.Integer()),
    event_type: t.Optional(t.String()),
    timestamp: searchWindow(),
    whitelist: t.Optional(t.Array(t.String(), { description: "IP addresses to EXCLUDE (despite the name; docs/API.md, Exports and share links)" })),
  },
  { additionalProperties: true },
);

/** `;`-separated integers as filters.ts reads them (safe integers: at most 15 digits). */
const INTEGER_LIST = "^\\s*[0-9]{1,15}\\s*(;\\s*[0-9]{1,15}\\s*)*$";
const text = (description: string) => t.Optional(t.String({ description }));
const queryTime = (description: string) =>
  t.Optional(checkedByRoute(description, { anyOf: [{ type: "number" }, { type: "string", pattern: "^(\\s*-?[0-9]+\\s*)?$" }, { type: "string", format: "date-time" }] }));
const queryLimit = (description: string) => t.Optional(checkedByRoute(description, { type: "integer", minimum: 1 }));

/** Query of `GET /transactions` (docs/API.md "Search results": from, to, page limit, cursor, sort, filters). */
const TransactionListQuery = t.Object({
  from: queryTime("start, epoch ms or ISO 8601 (default: to minus 1 hour)"),
  to: queryTime("end, epoch ms or ISO 8601 (default now; send it when paging, so new rows do not shift the pages)"),
  "page[limit]": queryLimit(`rows of this page (default 100, at most ${MAX_LIMIT})`),
  limit: queryLimit("alias of page[limit]"),
  "page[cursor]": t.Optional(cursorMember("meta.pagination.next_cursor of the previous page (same from, to and filters); without sort, the page continues in the cursor's order")),
  sort: t.Optional(
    t.Union(
      SEARCH_SORTS.map((k) => t.Literal(k)),
      { description: "-timestamp newest first (default), timestamp oldest first; uuid breaks ties" },
    ),
  ),
  proto_type: t.Optional(t.String({ pattern: "^([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$", description: "HEP protocol type 0..65535 (default 1, SIP)" })),
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
  capture_id: t.Optional(t.String({ pattern: INTEGER_LIST, description: "HEP capture id: node_id or data_extra.capture_id" })),
});

/** A validated page as the search service takes it. */
const runPage = (p: { offset: number; sort: string; limit: number }) => ({ limit: p.limit, offset: p.offset, oldestFirst: p.sort === "timestamp" });

export interface SearchDeps {
  /** Undefined on a coordinator without a lake: every read goes to `overNodes` (docs/ARCHITECTURE.md "A coordinator without a lake"). */
  lake: Lake | undefined;
  settings: SettingsStore;
  config: Config;
  /** Runs POST /transactions/search instead of the lake's own search (the fan-out over coordinator.nodes). */
  listSearch?: ListSearch;
  /** coordinator.nodes: the histogram and the call view read every node (docs/ARCHITECTURE.md "Reads over several nodes"). */
  overNodes?: OverNodes;
}

export function searchServices(deps: SearchDeps) {
  const timeoutMs = deps.config.coordinator.query_timeout_sec * 1000;
  const maxResultBytes = deps.config.coordinator.query.max_result_bytes;
  const search = new SearchService(deps.lake, deps.settings, deps.config.storage.lakehouse.search, timeoutMs, maxResultBytes);
  const transactions = new TransactionService(
    deps.lake,
    deps.settings,
    search,
    { headers: deps.config.coordinator.correlation.headers, b2buaSuffixes: deps.config.coordinator.correlation.b2bua_suffixes },
    timeoutMs,
    maxResultBytes,
    deps.overNodes,
  );
  return { search, transactions };
}

/** Transactions tag: search, the call view (messages, decoded message, QoS). */
export function searchRoutes(deps: SearchDeps) {
  const { search, transactions } = searchServices(deps);
  const reportOptions = { timeoutMs: deps.config.coordinator.query_timeout_sec * 1000, maxResultBytes: deps.config.coordinator.query.max_result_bytes };
  const histograms = new HistogramService(deps.lake, search, deps.config.coordinator.query_timeout_sec * 1000);
  const sessionRequest = (body: typeof SessionBody.static, username: string) => {
    const w = body.timestamp ? window(body.timestamp.from, body.timestamp.to, "timestamp.") : undefined;
    return {
      sessionIds: Array.isArray(body.session_id) ? body.session_id : [body.session_id],
      protoType: body.proto_type ?? 1,
      eventType: body.event_type ?? "call",
      ...(w ? { fromMs: w.fromMs, toMs: w.toMs } : {}),
      excludeIps: body.whitelist ?? [],
      username,
    };
  };
  // One message by uuid, over coordinator.nodes too (message-by-uuid.ts).
  const message = (id: string) => findMessage({ lake: deps.lake, search, settings: deps.settings, over: deps.overNodes }, id);
  return new Elysia({ name: "svc-search" })
    .use(authContext)
    .use(histogramRoute(histograms, deps.overNodes ? { nodes: deps.overNodes, settings: deps.settings } : undefined))
    .use(transactionSearchRoute(deps.listSearch ?? search))
    .get(
      "/transactions",
      async ({ query }) => {
        const q = query as Record<string, string | undefined>;
        const protoType = q.proto_type === undefined ? 1 : Number(q.proto_type);
        const eventType = q.event_type ?? (protoType === 1 ? "call" : "default");
        const filter: Record<string, unknown> = {};
        for (const k of ["call_id", "sid", "transaction_id", "src_ip", "dst_ip", "protocol", "method", "from_user", "to_user", "response_code", "capture_id"]) {
          if (q[k] !== undefined) filter[k === "transaction_id" ? "call_id" : k] = q[k];
        }
        const w = window(q.from, q.to, "");
        const page = searchPage({ cursor: q["page[cursor]"], sort: q.sort, limit: intArg(q["page[limit]"] ?? q.limit, "page[limit]", 100, MAX_LIMIT) }, { cursor: "page[cursor]", sort: "sort" });
        tableKeyFor(protoType, eventType);
        return searchListBody(await (deps.listSearch ?? search).run({ protoType, eventType, filter, ...w, ...runPage(page) }), page);
      },
      {
        query: TransactionListQuery,
        detail: { tags: ["Transactions"], summary: "List messages of a window, newest first; page[cursor] from meta.pagination.next_cursor; with coordinator.nodes over every node (meta.nodes)" },
        response: { 200: CallListResponse, ...errors(400, 401, 409), 413: ErrorResponse },
      },
    )
    .post(
      "/transactions/messages",
      async ({ body, auth }) => {
        const r = await transactions.messages(sessionRequest(body, auth.username));
        return {
          data: { items: r.items, keys: r.keys, sessions: r.sessions, hosts: r.hosts, window: r.window, lookup: r.lookup, time_shift: r.time_shift },
          meta: {
            pagination: { limit: r.items.length, total: r.items.length, total_exact: true, has_more: false },
            ...nodesMeta(r.nodes ? { nodes: r.nodes, partial: r.partial === true } : undefined),
          },
        };
      },
      {
        body: SessionBody,
        response: { 200: TransactionMessagesResponse, ...errors(400, 401, 404), 413: ErrorResponse },
        detail: { tags: ["Transactions"], summary: "Every message of the selected call(s) and their correlated legs" },
      },
    )
    .post(
      "/transactions/qos",
      async ({ body, auth }) => {
        const call = await transactions.messages(sessionRequest(body, auth.username));
        const endpoints = mediaEndpoints(call.items.map((m) => String(m.payload ?? "")));
        const scope = callScope(call);
        const acc = new NodeAcc(call);
        const read = reportRowsReader(deps.lake, reportOptions, deps.overNodes, acc);
        const rows: Array<{ proto: number; ts_ms: number; src_ip: string; src_port: number; dst_ip: string; dst_port: number; payload: string }> = [];
        for (const proto of mediaProtos()) {
          for (const x of (await read(hepTableKey(proto), scope, "qos", true)).rows) {
            const row = {
              proto,
              ts_ms: Number(x.ts_ms),
              src_ip: String(x.src_ip),
              src_port: Number(x.src_port),
              dst_ip: String(x.dst_ip),
              dst_port: Number(x.dst_port),
              payload: String(x.payload ?? ""),
            };
            // RTCP binary or JSON → one JSON form with the derived figures (docs/CALL-VIEW.md "Binary RTCP").
            if (proto === 5) row.payload = rtcpPayloadText(row.payload, x.payload_encoding, row.ts_ms, rtcpClockRate(endpoints, row));
            rows.push(row);
          }
        }
        return {
          data: { streams: markComputedFromRtp(buildStreams(rows, endpoints), rows), media: endpoints, sessions: call.sessions, window: call.window, reports: rows.length },
          ...(call.nodes ? { meta: acc.meta() } : {}),
        };
      },
      {
        body: SessionBody,
        response: { 200: TransactionQosResponse, ...errors(400, 401, 404), 413: ErrorResponse },
        detail: { tags: ["Transactions"], summary: "RTCP (5) and agent reports (34/35) of the call as per-stream series" },
      },
    )
    .post(
      "/transactions/events",
      async ({ body, auth }) => {
        const call = await transactions.messages(sessionRequest(body, auth.username));
        const endpoints = mediaEndpoints(call.items.map((m) => String(m.payload ?? "")));
        const acc = new NodeAcc(call);
        const r = await callEvents(reportRowsReader(deps.lake, reportOptions, deps.overNodes, acc), search, callScope(call), endpoints, MAX_EVENTS);
        return { data: { items: r.items, sessions: call.sessions, window: call.window }, meta: { pagination: { limit: MAX_EVENTS, total: r.total }, ...acc.meta() } };
      },
      {
        body: SessionBody,
        response: { 200: CallEventsResponse, ...errors(400, 401, 404), 413: ErrorResponse },
        detail: {
          tags: ["Transactions"],
          summary: `RTCP reports (5), agent media reports (34/35) and log events (100) of the call for its timeline, oldest first, each with a one-line summary (at most ${MAX_EVENTS}; meta.pagination.total counts all)`,
        },
      },
    )
    .post(
      "/transactions/otlp",
      async ({ body, auth }) => {
        const call = await transactions.messages(sessionRequest(body, auth.username));
        const acc = new NodeAcc(call);
        const over = deps.overNodes ? await otlpOverNodes(deps.lake, deps.overNodes, call, MAX_EVENTS, reportOptions) : undefined;
        if (over) acc.add(over.gathered);
        const r = over ?? (await otlpRelated(ownLake(deps.lake, "OpenTelemetry rows without coordinator.nodes"), call, MAX_EVENTS, reportOptions));
        return { data: { items: r.items, sessions: call.sessions, window: call.window }, meta: { pagination: { limit: MAX_EVENTS, total: r.total }, ...acc.meta() } };
      },
      {
        body: SessionBody,
        response: { 200: OtlpRelatedResponse, ...errors(400, 401, 404), 413: ErrorResponse },
        detail: {
          tags: ["Transactions"],
          summary: `OpenTelemetry spans (200) and log records (202) whose attributes carry one of the call's Call-IDs (sip.call_id and similar; docs/OTLP.md), oldest first (at most ${MAX_EVENTS})`,
        },
      },
    )
    .get(
      "/messages/:messageId",
      async ({ params }) => {
        const m = await message(params.messageId);
        const data: Record<string, unknown> = m.item;
        return m.gathered ? { data, meta: { nodes: m.gathered.nodes, partial: m.gathered.partial } } : { data };
      },
      {
        params: t.Object({ messageId: t.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: MessageResponse, ...errors(401, 404) },
        detail: { tags: ["Transactions"], summary: "One message by uuid" },
      },
    )
    .get(
      "/messages/:messageId/decoded",
      async ({ params }) => {
        const found = await message(params.messageId);
        const m = found.item;
        const payload = String(m.payload ?? "");
        let decoded: unknown;
        if (m.proto_type === 1) decoded = decodeSipMessage(new TextEncoder().encode(payload));
        else {
          try {
            decoded = JSON.parse(payload);
          } catch {
            decoded = { text: payload };
          }
        }
        const data = { uuid: m.uuid == null ? null : String(m.uuid), proto_type: m.proto_type == null ? null : Number(m.proto_type), decoded };
        return { data, ...(found.gathered ? { meta: { nodes: found.gathered.nodes, partial: found.gathered.partial } } : {}) };
      },
      {
        params: t.Object({ messageId: t.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: DecodedMessageResponse, ...errors(401, 404) },
        detail: { tags: ["Transactions"], summary: "One message decoded (SIP first line, headers, SDP; JSON reports parsed)" },
      },
    );
}
