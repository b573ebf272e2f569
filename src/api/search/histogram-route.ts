import { Elysia, t } from "elysia";
import { AppError, bucketLabel, MAX_BUCKETS } from "../../core/index.ts";
import { authContext } from "../auth/guard.ts";
import { checkedByRoute, errors } from "../openapi/schemas.ts";
import {
  NodeReportSchema,
  nodesMeta,
  virtualFieldsJson,
  VirtualFieldsSchema,
  type Gathered,
  type OverNodes,
} from "./fan-out.ts";
import { GROUP_BY, HistogramService, MAX_GROUPS, type HistogramCells, type HistogramRequest } from "./histogram.ts";
import { type SearchSettings, virtualFieldsOf } from "./tables.ts";
import { searchFilter, searchScope, searchWindow } from "./window.ts";

/**
 * `POST /transactions/histogram` (docs/HISTOGRAM.md): events over time for a search body — the
 * same `filter` and `timestamp` as `POST /transactions/search` (other members such as `param` are
 * accepted and ignored), counted over the whole window, not over a page of rows.
 */
const histogramProps = () => ({
  filter: searchFilter(),
  timestamp: searchWindow(),
  group_by: t.Optional(
    t.Union(
      GROUP_BY.map((g) => t.Literal(g)),
      {
        description:
          "none (default): one count per bucket; method: requests by SIP method, responses by class (1xx..6xx); status_class: request, 1xx..6xx",
      },
    ),
  ),
  interval: t.Optional(
    checkedByRoute(
      `bucket width: a whole number and s, m, h or d (30s, 5m, 1h, 1d); absent, null or "": chosen from the range (1s..1d, at most 120 buckets). At most ${MAX_BUCKETS} buckets.`,
      {
        anyOf: [{ type: "string", pattern: "^(\\s*[1-9][0-9]{0,9}\\s*[smhd]\\s*)?$" }, { type: "null" }],
      },
    ),
  ),
  utc_offset_min: t.Optional(
    t.Integer({
      minimum: -840,
      maximum: 840,
      description: "minutes east of UTC the buckets start in (1d buckets at local midnight); default 0",
    }),
  ),
});
const HistogramBody = t.Object(histogramProps(), { additionalProperties: true });

/** `POST /api/v1/histogram` of a node (src/cluster/node-reads.ts): the histogram body with the interval set, plus the coordinator's virtual fields. */
export const NodeHistogramBody = t.Object(
  {
    ...histogramProps(),
    virtual_fields: VirtualFieldsSchema,
    buffer_only: t.Optional(
      t.Boolean({
        description: "only rows not yet in data files: another node of the same lake answers for the files",
      }),
    ),
  },
  { additionalProperties: true },
);

/** The service's request of a histogram body. */
export function histogramRequest(body: typeof HistogramBody.static): HistogramRequest {
  const given =
    body.interval === undefined || body.interval === null || body.interval === "" ? undefined : body.interval;
  if (given !== undefined && typeof given !== "string")
    throw new AppError("VALIDATION", "interval: expected text such as 30s, 5m, 1h or 1d", {
      details: { fields: ["interval"] },
    });
  const interval = given as string | undefined;
  return {
    ...searchScope({ filter: body.filter, timestamp: body.timestamp }),
    groupBy: body.group_by ?? "none",
    ...(interval !== undefined ? { interval } : {}),
    ...(body.utc_offset_min !== undefined ? { utcOffsetMin: body.utc_offset_min } : {}),
  };
}

/** A node's cells (src/cluster/node-reads.ts): the histogram before groups fold, for the coordinator's sum. */
export async function nodeHistogramCells(
  histograms: HistogramService,
  body: typeof NodeHistogramBody.static,
): Promise<HistogramCells> {
  const req = histogramRequest(body);
  return histograms.cells({
    ...req,
    virtualFields: new Map(Object.entries(body.virtual_fields ?? {})),
    ...(body.buffer_only ? { bufferOnly: true } : {}),
  });
}

/**
 * The histogram over coordinator.nodes (docs/ARCHITECTURE.md "Reads over several nodes"): every
 * node counts its rows on the coordinator's grid (the interval resolved here and sent), the cells
 * add, and the groups fold once over the sum — the histogram of one lake holding every row.
 */
export async function histogramOverNodes(
  histograms: HistogramService,
  nodes: OverNodes,
  settings: SearchSettings,
  req: HistogramRequest,
  body: Record<string, unknown>,
) {
  const grid = HistogramService.grid(req);
  const virtualFields =
    req.protoType >= 200 ? new Map() : virtualFieldsOf(settings, req.protoType, req.eventType || "call");
  const g: Gathered<HistogramCells> = await nodes.gather({
    read: "histogram",
    path: "/api/v1/histogram",
    window: req,
    body: (bufferOnly) => ({
      ...body,
      interval: bucketLabel(grid.widthMs),
      virtual_fields: virtualFieldsJson(virtualFields),
      ...(bufferOnly ? { buffer_only: true } : {}),
    }),
    ...(histograms.lake ? { local: () => histograms.cells(req, grid) } : {}),
    rows: (v) => v.cells.reduce((s, c) => s + c.n, 0),
  });
  const cells = g.answers.flatMap((a) => a.value.cells);
  const table = g.answers.find((a) => a.value.table !== null)?.value.table ?? null;
  return { data: HistogramService.assemble(req, grid, { cells, table }), meta: nodesMeta(g) };
}

const HistogramResponse = t.Object({
  data: t.Object({
    window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }),
    interval: t.String({ description: "bucket width as text (30s, 5m, 1h, 1d)" }),
    interval_ms: t.Integer(),
    group_by: t.String(),
    total: t.Integer({ description: "rows in the window under the filter: the sum of every bucket" }),
    groups: t.Array(t.Object({ key: t.String(), total: t.Integer() }), {
      description: `every group seen, at most ${MAX_GROUPS} (the rest summed as other)`,
    }),
    buckets: t.Array(
      t.Object({
        start_ms: t.Integer({
          description: "bucket start, epoch ms (the first and last bucket count only rows inside the window)",
        }),
        count: t.Integer(),
        groups: t.Record(t.String(), t.Integer(), {
          description: "count per group; groups without rows in the bucket are left out",
        }),
      }),
      { description: "every bucket of the window in time order, empty ones with count 0" },
    ),
    table: t.Union([t.String(), t.Null()], {
      description: "the lake table counted (schema.table); a table that does not exist yet counts 0 everywhere",
    }),
  }),
  meta: t.Optional(
    t.Object({
      nodes: t.Optional(t.Array(NodeReportSchema, { description: "with coordinator.nodes: what each node did" })),
      partial: t.Optional(t.Boolean({ description: "a node failed or timed out: the counts are those of the others" })),
    }),
  ),
});

export function histogramRoute(histograms: HistogramService, over?: { nodes: OverNodes; settings: SearchSettings }) {
  return new Elysia({ name: "svc-histogram" }).use(authContext).post(
    "/transactions/histogram",
    async ({ body }) => {
      const req = histogramRequest(body);
      if (over) return histogramOverNodes(histograms, over.nodes, over.settings, req, body);
      return { data: await histograms.run(req) };
    },
    {
      body: HistogramBody,
      detail: {
        tags: ["Transactions"],
        summary:
          "Events over time: count per time bucket over the whole window of a search body, by SIP method or response class",
        description:
          "Takes the filter and timestamp of POST /transactions/search and counts every matching row of the window (not a page). " +
          "group_by none (default): counts only; method: a request under its method, a response under its class (1xx..6xx); status_class: request, 1xx..6xx. " +
          "Rows of other HEP tables fall under their event (the protocol name); tables without SIP columns take group_by none only. " +
          "Buckets start at multiples of the interval (in UTC shifted by utc_offset_min); every bucket is listed, empty ones with count 0.",
      },
      response: { 200: HistogramResponse, ...errors(400, 401) },
    },
  );
}
