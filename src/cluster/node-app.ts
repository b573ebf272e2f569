import { Elysia, t } from "elysia";
import {
  errorHandler,
  healthRoute,
  NodeSearchBody,
  nodeSearchAnswer,
  type HealthReport,
  type SearchService,
  type SqlQueryService,
} from "../api/index.ts";
import { AppError, type Logger, type StartupState } from "../core/index.ts";
import { AUTH_FAILED, type HepPipeline } from "../ingest/index.ts";
import type { Lake, WriterHealth } from "../lake/index.ts";
import type { StreamBroker } from "../stream/index.ts";
import type { ForwardReceiver } from "./forward-receiver.ts";
import { bearerMatches } from "./node-identity.ts";
import { nodeReadRoutes } from "./node-reads.ts";
import { nodeStreamRoutes } from "./node-stream.ts";
import { checkValues, ValueCheckBody } from "./value-check.ts";

/**
 * Node-local HTTP (docs/ARCHITECTURE.md "Node authentication"): the metadata without authentication
 * unless node.http_server.open_metadata is false — bind it to a management network or loopback.
 * Also HEP over HTTP POST (body = one or more HEP3 packets), and the search a coordinator fans out
 * to, behind the node token (docs/ARCHITECTURE.md "Node authentication").
 */
export interface NodeAppDeps {
  logger: Logger;
  lake?: Lake;
  pipeline?: HepPipeline;
  /** HEP over HTTP on the ingest threads (src/ingest/thread/host.ts); without it `pipeline` takes the body. */
  hepBody?: (
    body: Uint8Array,
    remoteIp: string | undefined,
  ) => Promise<{ accepted: number; rejected: Record<string, number>; unframed?: string }>;
  catalogType: string;
  hepOverHttp: boolean;
  /** What `/health` reports (src/api/health.ts); without it `/health` always passes. */
  health?: () => HealthReport;
  /** The live-stream broker, served on `/stream` when `ingest.hep_stream.enable` (docs/STREAM.md). */
  stream?: StreamBroker;
  /** This node's id and its lake's (src/cluster/node-identity.ts), in the stats and the check. */
  identity?: { nodeId: string; lakeId: string };
  /** The lake's search, served on POST /api/v1/search for a coordinator (docs/ARCHITECTURE.md "Coordinator over several nodes"). */
  search?: SearchService;
  /** The lake's reads for a coordinator besides the search (src/cluster/node-reads.ts); with `search`. */
  reads?: { timeoutMs: number; maxResultBytes: number; sql?: SqlQueryService };
  /** Bearer token of POST /api/v1/search (and of /api/v1/metadata/* unless `openMetadata`); undefined: open (loopback only). */
  token?: string;
  /** /api/v1/metadata/* without the token, as the spec has them (node.http_server.open_metadata). */
  openMetadata?: boolean;
  /** Edges' forward batches, POST /api/v1/forward behind the node token (docs/DEPLOY.md "Forward protocol"). */
  forward?: ForwardReceiver;
  /** The two-phase start: every route but /health and /stream answers 503 STARTING until the lake is ready (docs/ARCHITECTURE.md "Start-up"). */
  startup?: StartupState;
}

const usToIso = (us: number | null) => (us === null ? null : new Date(Math.floor(us / 1000)).toISOString());

const HepCounts = {
  accepted: t.Integer({ minimum: 0, description: "packets taken (stored, or queued for a table being created)" }),
  rejected: t.Record(t.String(), t.Integer({ minimum: 0 }), {
    description: "packets not taken, per reason (auth_failed, backlog_full, decode reasons)",
  }),
};
const HepAccepted = t.Object(HepCounts);
const HepError = t.Object({ error: t.String(), message: t.String(), ...HepCounts }, { additionalProperties: true });

/**
 * Error of a HEP body none of whose packets was taken (docs/ARCHITECTURE.md "HEP over HTTP"): a
 * missing or wrong auth key is 403 (the client's credentials), the rest 400 (packets that do not
 * decode). A full write buffer (503) is answered by the route.
 */
function noPacketTaken(rejected: Record<string, number>): AppError {
  const details = { accepted: 0, rejected };
  const total = Object.values(rejected).reduce((a, b) => a + b, 0);
  const auth = rejected[AUTH_FAILED] ?? 0;
  if (auth > 0)
    return new AppError(
      "FORBIDDEN",
      `${auth} of ${total} HEP packet(s) lack the auth key this node requires (ingest.hep.auth_key, chunk 0x000e) or carry a wrong one; nothing was stored`,
      {
        details,
      },
    );
  const reasons = Object.entries(rejected)
    .map(([k, n]) => `${k}: ${n}`)
    .join(", ");
  return new AppError("HEP_DECODE", `none of the ${total} HEP packet(s) could be stored (${reasons})`, { details });
}

/**
 * `data_path` as the unauthenticated stats show it (docs/ARCHITECTURE.md "Errors and request ids"): an object-store URI
 * keeps its scheme and bucket, a local directory only its own name, e.g. `lake/`. The absolute path
 * told anyone on the node port where the appliance keeps its files.
 */
export function publicDataPath(path: string): string {
  const uri = /^([a-z][a-z0-9+.-]*:\/\/[^/]*)/i.exec(path);
  if (uri) return `${uri[1]}/`;
  const name = path
    .split(/[\\/]+/)
    .filter(Boolean)
    .pop();
  return name ? `${name}/` : "";
}

/**
 * The writer's state in the node stats (docs/OPERATIONS.md "Disk full, I/O errors and engine
 * memory"): whether rows reach Parquet now, why not, since when, the last error and the free bytes
 * of the lake's file systems. Reasons and numbers only: the endpoint is unauthenticated, so no path.
 */
export function storageStatus(h: WriterHealth | undefined) {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    write_blocked: h?.blocked !== undefined,
    blocked_reason: h?.blocked?.reason ?? null,
    blocked_since: iso(h?.blocked?.sinceMs),
    failing_tables: h?.failing.length ?? 0,
    last_write_error: h?.lastError ? { reason: h.lastError.reason, at: iso(h.lastError.atMs) } : null,
    backlog_rows: h?.backlogRows ?? 0,
    max_buffered_rows: h?.maxBufferedRows ?? 0,
    data_free_bytes: h?.freeBytes.data ?? null,
    state_free_bytes: h?.freeBytes.state ?? null,
  };
}

/**
 * 401 unless the request carries the node token (docs/ARCHITECTURE.md "Node authentication"):
 * constant-time compare, and one message for a missing and a wrong token.
 */
function requireToken(token: string | undefined) {
  return ({ request }: { request: Request }) => {
    if (token !== undefined && !bearerMatches(request.headers.get("authorization"), token)) {
      throw new AppError(
        "UNAUTHORIZED",
        "this node endpoint needs Authorization: Bearer <node.http_server.token> (the coordinator's coordinator.nodes[].token)",
      );
    }
  };
}

export function createNodeApp(deps: NodeAppDeps) {
  const app = new Elysia();
  app.use(errorHandler(deps.logger, app)).use(healthRoute(deps.health));
  if (deps.stream)
    app.use(
      nodeStreamRoutes(deps.stream, {
        ...(deps.token ? { token: deps.token } : {}),
        required: deps.openMetadata === false,
      }),
    );
  // A local hook: it covers the routes added below (the lake's and the ingest's), not /health and /stream above.
  const startup = deps.startup;
  if (startup) app.onBeforeHandle(() => startup.assertReady("this node endpoint"));
  const lake = deps.lake;
  const ids = deps.identity ? { node_id: deps.identity.nodeId, lake_id: deps.identity.lakeId } : {};
  const metadataGuard = deps.openMetadata === false ? requireToken(deps.token) : () => {};
  const search = deps.search;
  if (search) {
    app.post("/api/v1/search", async ({ body }) => ({ ...(await nodeSearchAnswer(search, body)), node: ids }), {
      beforeHandle: requireToken(deps.token),
      body: NodeSearchBody,
      detail: {
        summary:
          "This node's rows of a structured search, for a coordinator (body of POST /api/v4/transactions/search plus virtual_fields)",
        description:
          "The first offset + limit rows of the order with data.sort_keys ([time µs, uuid] per row), this node's total and has_more, and its node_id and lake_id. Needs Authorization: Bearer <node.http_server.token> when the node has a token.",
      },
    });
    if (lake && deps.reads) app.use(nodeReadRoutes({ lake, search, ...deps.reads }, requireToken(deps.token), ids));
  }
  if (lake) {
    app
      .post(
        "/api/v1/metadata/check",
        async ({ body }) => {
          // The legacy file store's value check (docs/ARCHITECTURE.md "Node check by values").
          if ("field" in body) return { ...ids, ...(await checkValues(lake, body)) };
          if (body.max_ts < body.min_ts)
            throw new AppError("VALIDATION", "max_ts must not be before min_ts", { details: { fields: ["max_ts"] } });
          const s = await lake.summary();
          const nodeMin = s.minUs === null ? null : s.minUs * 1000;
          const nodeMax = s.maxUs === null ? null : s.maxUs * 1000;
          const hasData = nodeMin !== null && nodeMax !== null && nodeMin <= body.max_ts && nodeMax >= body.min_ts;
          return {
            ...ids,
            has_data: hasData,
            node_min_ts: nodeMin,
            node_max_ts: nodeMax,
            oldest_data: usToIso(s.minUs),
            newest_data: usToIso(s.maxUs),
            data_span_hours:
              s.minUs === null || s.maxUs === null ? 0 : Math.round(((s.maxUs - s.minUs) / 3.6e9) * 1000) / 1000,
          };
        },
        {
          beforeHandle: metadataGuard,
          body: t.Union([
            t.Object({
              min_ts: t.Number({ description: "nanoseconds since epoch" }),
              max_ts: t.Number({ description: "nanoseconds since epoch" }),
            }),
            ValueCheckBody,
          ]),
        },
      )
      .get(
        "/api/v1/metadata/stats",
        async () => {
          const s = await lake.summary();
          return {
            ...ids,
            row_count: s.rows,
            min_timestamp: s.minUs === null ? null : s.minUs * 1000,
            max_timestamp: s.maxUs === null ? null : s.maxUs * 1000,
            oldest_data: usToIso(s.minUs),
            newest_data: usToIso(s.maxUs),
            catalog_type: deps.catalogType,
            data_path: publicDataPath(lake.dataLocation()),
            snapshot_id: await lake.snapshotId(),
            storage: storageStatus(lake.writerHealth()),
          };
        },
        { beforeHandle: metadataGuard },
      );
  }
  const forward = deps.forward;
  if (forward) {
    app.post(
      "/api/v1/forward",
      async ({ request, server }) => {
        const h = request.headers;
        if ((h.get("content-encoding") ?? "").toLowerCase() !== "gzip")
          throw new AppError("BAD_REQUEST", "send the batch with Content-Encoding: gzip");
        const sender = h.get("x-svc-forward-sender") ?? "";
        const first = Number(h.get("x-svc-forward-first") ?? "");
        const last = Number(h.get("x-svc-forward-last") ?? "");
        const floor = h.get("x-svc-forward-floor");
        const body = new Uint8Array(await request.arrayBuffer());
        return await forward.receive(
          sender,
          first,
          last,
          body,
          server?.requestIP(request)?.address,
          floor === null ? first : Number(floor),
          h.get("x-svc-forward-kind") ?? "hep",
        );
      },
      {
        beforeHandle: requireToken(deps.token),
        detail: {
          summary:
            "Store-and-forward batch from an edge svc (ingest.forward): gzip of length-prefixed HEP packets, line-protocol or OTLP requests",
          description:
            "Headers x-svc-forward-sender (the edge's id), x-svc-forward-kind (hep, line_protocol or otlp; default hep), x-svc-forward-first and x-svc-forward-last (sequence numbers of the first and last packet), x-svc-forward-floor (the first seq the edge's log still has). The packets at or below the sender's position are dropped as replays; the rest are stored like UDP HEP. 200 with `last` (the position the central holds; below first - 1: send again from last + 1) and `committed` (the position committed with the rows: the edge may delete its log up to it); 503 to retry. Needs Authorization: Bearer <node.http_server.token> when the node has a token (docs/DEPLOY.md).",
        },
      },
    );
    app.get(
      "/api/v1/forward",
      async ({ query }) =>
        await forward.position(
          String((query as Record<string, unknown>).sender ?? ""),
          String((query as Record<string, unknown>).kind ?? "hep"),
        ),
      {
        beforeHandle: requireToken(deps.token),
        detail: {
          summary:
            'A sender\'s forward positions: `last` held, `committed` with the rows (docs/DEPLOY.md "Forward protocol")',
          description:
            "Query parameters sender (the edge's id) and kind (hep, line_protocol or otlp; default hep). An idle edge asks this to learn that its held packets were committed, or that the central restarted and needs them again.",
        },
      },
    );
  }
  const pipeline = deps.pipeline;
  if (pipeline && deps.hepOverHttp) {
    app.post(
      "/api/v1/hep",
      async ({ request, set, server }) => {
        const body = new Uint8Array(await request.arrayBuffer());
        if (body.length === 0) throw new AppError("BAD_REQUEST", "empty body: send one or more HEP3 packets");
        const ip = server?.requestIP(request)?.address;
        // On the ingest threads when they run (decode and parse off the API's thread), else here.
        const r = deps.hepBody ? await deps.hepBody(body, ip) : pipeline.handleStream(body, "http", ip);
        const counts = { accepted: r.accepted, rejected: r.rejected };
        if (r.unframed)
          throw new AppError(
            "HEP_DECODE",
            `body is not a sequence of HEP3 packets (${r.unframed}; ${r.accepted} packet(s) before it accepted)`,
            { details: counts },
          );
        if (r.accepted === 0 && r.rejected.backlog_full) {
          // Not a fault to log and hide like other 5xx: the client should back off and retry.
          set.status = 503;
          set.headers["retry-after"] = "1";
          return {
            error: "UNAVAILABLE",
            message: `the write buffer is full; ${r.rejected.backlog_full} HEP packet(s) not stored, retry later`,
            ...counts,
          };
        }
        if (r.accepted === 0) throw noPacketTaken(counts.rejected);
        set.status = 202;
        return counts;
      },
      {
        detail: {
          summary: "HEP over HTTP: one or more HEP3 packets back to back in the body",
          description:
            "202 when at least one packet was taken, with the others counted per reason in `rejected` (the labels of svc_hep_packets_dropped_total). When none was taken: 403 if packets lack the configured ingest.hep.auth_key, 503 if the lake's write buffer is full (retry), else 400.",
        },
        response: { 202: HepAccepted, 400: HepError, 403: HepError, 503: HepError },
      },
    );
  }
  return app;
}
