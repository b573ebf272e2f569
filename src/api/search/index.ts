import { Elysia, t } from "elysia";
import type { Config } from "../../config/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SettingsStore } from "../../settings/index.ts";
import { authContext } from "../auth/guard.ts";
import { ErrorResponse, errors } from "../openapi/schemas.ts";
import { callEvents, callScope, reportRowsReader } from "./call-events.ts";
import { CallEventsResponse, TransactionMessagesResponse, TransactionQosResponse } from "./model.ts";
import { OtlpRelatedResponse, otlpOverNodes, otlpRelated } from "./otlp-related.ts";
import { HistogramService } from "./histogram.ts";
import { histogramRoute } from "./histogram-route.ts";
import { nodesMeta, type ListSearch, type OverNodes } from "./fan-out.ts";
import { buildStreams, mediaEndpoints } from "./qos.ts";
import { markComputedFromRtp } from "./media-source.ts";
import { noLakeError } from "./no-lake.ts";
import { rtcpClockRate, rtcpPayloadText } from "./rtcp-report.ts";
import { transactionListRoute, transactionSearchRoute } from "./list-routes.ts";
import { messageRoutes } from "./message-routes.ts";
import { SearchService } from "./service.ts";
import { NodeAcc, TransactionService } from "./transaction.ts";
import { searchWindow, window } from "./window.ts";
import { hepTableKey, mediaProtos } from "../../core/protocols.ts";

export { SearchService, type SearchRequest } from "./service.ts";
export { NO_SEARCH_SETTINGS, virtualFieldsOf, type SearchSettings } from "./tables.ts";
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
export { NodeSearchBody, nodeSearchAnswer, transactionSearchRoute } from "./list-routes.ts";
export {
  nodeReads,
  NodeCallReportsBody,
  NodeCallRowsBody,
  NodeHistogramBody,
  type NodeReadDeps,
} from "./node-reads.ts";

/** This process's lake, for a read that has no nodes to ask (a coordinator without either answers 503). */
const ownLake = (lake: Lake | undefined, what: string): Lake => {
  if (!lake) throw noLakeError(what);
  return lake;
};
/** Timeline events of one call view at most (an hour of RTCP every 5 s both ways is 1 440). */
const MAX_EVENTS = 5_000;

const SessionBody = t.Object(
  {
    session_id: t.Union([t.String({ minLength: 1 }), t.Array(t.String({ minLength: 1 }), { minItems: 1 })]),
    proto_type: t.Optional(t.Integer()),
    event_type: t.Optional(t.String()),
    timestamp: searchWindow(),
    whitelist: t.Optional(
      t.Array(t.String(), {
        description: "IP addresses to EXCLUDE (despite the name; docs/API.md, Exports and share links)",
      }),
    ),
  },
  { additionalProperties: true },
);

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
  const search = new SearchService(
    deps.lake,
    deps.settings,
    deps.config.storage.lakehouse.search,
    timeoutMs,
    maxResultBytes,
  );
  const transactions = new TransactionService(
    deps.lake,
    deps.settings,
    search,
    {
      headers: deps.config.coordinator.correlation.headers,
      b2buaSuffixes: deps.config.coordinator.correlation.b2bua_suffixes,
    },
    timeoutMs,
    maxResultBytes,
    deps.overNodes,
  );
  return { search, transactions };
}

/** Transactions tag: the list routes (list-routes.ts), the call view (messages, QoS, events, OpenTelemetry) and messages by id (message-routes.ts). */
export function searchRoutes(deps: SearchDeps) {
  const { search, transactions } = searchServices(deps);
  const reportOptions = {
    timeoutMs: deps.config.coordinator.query_timeout_sec * 1000,
    maxResultBytes: deps.config.coordinator.query.max_result_bytes,
  };
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
  return new Elysia({ name: "svc-search" })
    .use(authContext)
    .use(histogramRoute(histograms, deps.overNodes ? { nodes: deps.overNodes, settings: deps.settings } : undefined))
    .use(transactionSearchRoute(deps.listSearch ?? search))
    .use(transactionListRoute(deps.listSearch ?? search))
    .post(
      "/transactions/messages",
      async ({ body, auth }) => {
        const r = await transactions.messages(sessionRequest(body, auth.username));
        return {
          data: {
            items: r.items,
            keys: r.keys,
            sessions: r.sessions,
            hosts: r.hosts,
            window: r.window,
            lookup: r.lookup,
            time_shift: r.time_shift,
          },
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
        const rows: Array<{
          proto: number;
          ts_ms: number;
          src_ip: string;
          src_port: number;
          dst_ip: string;
          dst_port: number;
          payload: string;
        }> = [];
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
            if (proto === 5)
              row.payload = rtcpPayloadText(row.payload, x.payload_encoding, row.ts_ms, rtcpClockRate(endpoints, row));
            rows.push(row);
          }
        }
        return {
          data: {
            streams: markComputedFromRtp(buildStreams(rows, endpoints), rows),
            media: endpoints,
            sessions: call.sessions,
            window: call.window,
            reports: rows.length,
          },
          ...(call.nodes ? { meta: acc.meta() } : {}),
        };
      },
      {
        body: SessionBody,
        response: { 200: TransactionQosResponse, ...errors(400, 401, 404), 413: ErrorResponse },
        detail: {
          tags: ["Transactions"],
          summary: "RTCP (5) and agent reports (34/35) of the call as per-stream series",
        },
      },
    )
    .post(
      "/transactions/events",
      async ({ body, auth }) => {
        const call = await transactions.messages(sessionRequest(body, auth.username));
        const endpoints = mediaEndpoints(call.items.map((m) => String(m.payload ?? "")));
        const acc = new NodeAcc(call);
        const r = await callEvents(
          reportRowsReader(deps.lake, reportOptions, deps.overNodes, acc),
          search,
          callScope(call),
          endpoints,
          MAX_EVENTS,
        );
        return {
          data: { items: r.items, sessions: call.sessions, window: call.window },
          meta: { pagination: { limit: MAX_EVENTS, total: r.total }, ...acc.meta() },
        };
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
        const over = deps.overNodes
          ? await otlpOverNodes(deps.lake, deps.overNodes, call, MAX_EVENTS, reportOptions)
          : undefined;
        if (over) acc.add(over.gathered);
        const r =
          over ??
          (await otlpRelated(
            ownLake(deps.lake, "OpenTelemetry rows without coordinator.nodes"),
            call,
            MAX_EVENTS,
            reportOptions,
          ));
        return {
          data: { items: r.items, sessions: call.sessions, window: call.window },
          meta: { pagination: { limit: MAX_EVENTS, total: r.total }, ...acc.meta() },
        };
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
    .use(messageRoutes({ lake: deps.lake, search, settings: deps.settings, over: deps.overNodes }));
}
