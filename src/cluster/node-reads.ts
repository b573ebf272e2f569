import { Elysia } from "elysia";
import {
  KpiService,
  lineProtocolDefs,
  NodeSqlBody,
  nodeSqlAnswer,
  type SqlQueryService,
  NodeCallReportsBody,
  NodeCallRowsBody,
  NodeHistogramBody,
  NodeKpiBody,
  nodeKpiPartial,
  everyDestination,
  lakeTableStats,
  NodeDestinationsBody,
  NodeStatisticsBody,
  lakeMessage,
  NodeMessageBody,
  NodeOtlpBody,
  otlpRelated,
  nodeReads,
  type NodeReadDeps,
} from "../api/index.ts";

/**
 * The node port's reads for a coordinator besides `POST /api/v1/search` (docs/ARCHITECTURE.md
 * "Reads over several nodes"), behind the same node token (`guard`, docs/ARCHITECTURE.md "Node
 * authentication"): the histogram's cells, a call view's rows, a call's report rows and the KPI sums. Each
 * answer carries this node's `node_id` and `lake_id`.
 */
export function nodeReadRoutes(
  deps: NodeReadDeps & { sql?: SqlQueryService },
  guard: (ctx: { request: Request }) => void,
  ids: Record<string, string | undefined>,
) {
  const reads = nodeReads(deps);
  const kpis = new KpiService(deps.lake, deps.timeoutMs);
  const sql = deps.sql;
  const doc = (summary: string) => ({
    summary,
    description:
      "For a coordinator over several nodes; needs Authorization: Bearer <node.http_server.token> when the node has a token.",
  });
  const app = new Elysia({ name: "svc-node-reads" })
    .post("/api/v1/histogram", async ({ body }) => ({ ...(await reads.histogram(body)), node: ids }), {
      beforeHandle: guard,
      body: NodeHistogramBody,
      detail: doc(
        "This node's histogram counts per (bucket, group) before groups fold (body of POST /api/v4/transactions/histogram with the interval set, plus virtual_fields)",
      ),
    })
    .post("/api/v1/transactions/rows", async ({ body }) => ({ ...(await reads.callRows(body)), node: ids }), {
      beforeHandle: guard,
      body: NodeCallRowsBody,
      detail: doc(
        "This node's rows of a call view: the rows of the tables in the window whose session_id or cid is one of ids",
      ),
    })
    .post("/api/v1/transactions/reports", async ({ body }) => ({ ...(await reads.callReports(body)), node: ids }), {
      beforeHandle: guard,
      body: NodeCallReportsBody,
      detail: doc(
        "This node's report rows (RTCP, agent reports, logs) of a call, by the call view's rule, oldest first",
      ),
    })
    .post("/api/v1/kpi", async ({ body }) => ({ ...(await nodeKpiPartial(kpis, body)), node: ids }), {
      beforeHandle: guard,
      body: NodeKpiBody,
      detail: doc(
        "This node's KPI sums per step (counts, sums and counts of the means, maxima, minima) and final-response counts, on the coordinator's step and clock",
      ),
    });
  app.post(
    "/api/v1/messages/by-uuid",
    async ({ body }) => ({
      item: (await lakeMessage(deps.lake, deps.search, body.uuid, body.buffer_only === true)) ?? null,
      node: ids,
    }),
    {
      beforeHandle: guard,
      body: NodeMessageBody,
      detail: doc("This node's message with this uuid as a search row, or null"),
    },
  );
  app.post(
    "/api/v1/transactions/otlp",
    async ({ body: b }) => ({
      ...(await otlpRelated(deps.lake, b, b.limit, {
        timeoutMs: deps.timeoutMs,
        maxResultBytes: deps.maxResultBytes,
        bufferOnly: b.buffer_only === true,
      })),
      node: ids,
    }),
    {
      beforeHandle: guard,
      body: NodeOtlpBody,
      detail: doc(
        "This node's OpenTelemetry spans and log records whose attributes carry one of the Call-IDs, in the window, oldest first",
      ),
    },
  );
  app.post(
    "/api/v1/kpi/destinations",
    async ({ body: b }) => {
      const req = {
        fromMs: b.from_ms,
        toMs: b.to_ms,
        ...(b.node !== undefined ? { node: b.node } : {}),
        ...(b.buffer_only ? { bufferOnly: true } : {}),
      };
      return { ...(await everyDestination((max) => kpis.destinationCounts(req, max, true, b.now_ms))), node: ids };
    },
    {
      beforeHandle: guard,
      body: NodeDestinationsBody,
      detail: doc(
        "This node's counts per destination (attempts, failures, answered, no response, failures per final code) of every destination with a completed call, on the coordinator's clock",
      ),
    },
  );
  app.post(
    "/api/v1/statistics/tables",
    async ({ body }) => ({
      tables: await lakeTableStats(deps.lake, body.stats === true, body.buffer_only === true),
      node: ids,
    }),
    {
      beforeHandle: guard,
      body: NodeStatisticsBody,
      detail: doc(
        "This node's lake tables with their columns, and with stats their committed rows, data files and time span (the coordinator's /statistics/* merge them)",
      ),
    },
  );
  app.post("/api/v1/line_protocol/tables", () => ({ tables: lineProtocolDefs(deps.lake), node: ids }), {
    beforeHandle: guard,
    detail: doc(
      "This node's line-protocol tables with their columns, for a coordinator's discovery (unioned over nodes)",
    ),
  });
  // Read-only SQL: the same guard as POST /api/v4/query (docs/ARCHITECTURE.md "User SQL: the read-only guard").
  if (sql) {
    app.post("/api/v1/query", async ({ body }) => ({ ...(await nodeSqlAnswer(sql, body)), node: ids }), {
      beforeHandle: guard,
      body: NodeSqlBody,
      detail: doc("This node's answer to a read-only SQL statement (the guard of POST /api/v4/query)"),
    });
  }
  return app;
}
