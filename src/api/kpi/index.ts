import { Elysia, t } from "elysia";
import { AppError, bucketLabel, MAX_BUCKETS } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { authContext } from "../auth/guard.ts";
import { checkedByRoute, errors } from "../openapi/schemas.ts";
import { window } from "../search/window.ts";
import { KpiResponse, DestinationsResponse } from "./model.ts";
import { nodesMeta, type OverNodes } from "../search/fan-out.ts";
import { noLakeError } from "../search/no-lake.ts";
import { destinationsOverNodes, everyDestination } from "./destinations.ts";
import { END_GRACE_MS, KpiService, MAX_DESTINATIONS, type KpiPartial, type KpiRequest } from "./service.ts";

export { KpiService } from "./service.ts";
export { everyDestination, NodeDestinationsBody } from "./destinations.ts";
export { kpiMetrics } from "./prometheus.ts";

const time = (what: string) =>
  t.Optional(
    checkedByRoute(`${what}: epoch milliseconds or ISO 8601`, {
      anyOf: [
        { type: "number" },
        { type: "string", pattern: "^(\\s*-?[0-9]+\\s*)?$" },
        { type: "string", format: "date-time" },
      ],
    }),
  );

const KpiQuery = t.Object(
  {
    from: time("window start (default: to minus 1 hour)"),
    to: time("window end (default now)"),
    node: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 128,
        pattern: "\\S",
        description:
          "capture node: a HEP capture id (node_id) or a node name (data_extra.node_name); default every node",
      }),
    ),
  },
  { additionalProperties: true },
);

const SeriesQuery = t.Composite([
  KpiQuery,
  t.Object({
    utc_offset_min: t.Optional(
      t.Integer({
        minimum: -840,
        maximum: 840,
        description: "minutes east of UTC the steps start in (1d steps at local midnight); default 0",
      }),
    ),
    step: t.Optional(
      t.String({
        maxLength: 16,
        pattern: "^\\s*[1-9][0-9]{0,9}\\s*[smhd]\\s*$",
        description: `step of the series: 30s, 5m, 1h, 1d (default: about 60 steps over the window; at most ${MAX_BUCKETS} steps)`,
      }),
    ),
  }),
]);

const DestQuery = t.Composite([
  KpiQuery,
  t.Object({
    limit: t.Optional(
      checkedByRoute(`how many destinations, 1..${MAX_DESTINATIONS} (default 10)`, {
        type: "integer",
        minimum: 1,
        maximum: MAX_DESTINATIONS,
      }),
    ),
  }),
]);

function scope(q: { from?: unknown; to?: unknown; node?: string | undefined }): Omit<KpiRequest, "step"> {
  const w = window(q.from, q.to, "");
  const node = q.node?.trim();
  if (q.node !== undefined && !node)
    throw new AppError("VALIDATION", "node: expected a capture id or a node name", { details: { fields: ["node"] } });
  return { ...w, ...(node ? { node: /^\d{1,15}$/.test(node) ? Number(node) : node } : {}) };
}

/**
 * Call-quality KPIs (docs/KPIS.md) under the Statistics and Metrics tags: `GET /statistics/kpi`
 * (series per step and totals: ASR, NER, ACD, PDD, attempts, outcomes, response-code mix,
 * registrations, RTCP jitter and loss, MOS) and `GET /statistics/kpi/destinations` (the top
 * failing destinations). Prometheus series of the same figures: prometheus.ts.
 */
/** `POST /api/v1/kpi` of a node (src/cluster/node-reads.ts): the window, the step resolved by the coordinator, its `now`. */
export const NodeKpiBody = t.Object({
  from_ms: t.Integer(),
  to_ms: t.Integer(),
  step: t.String({ maxLength: 16 }),
  utc_offset_min: t.Optional(t.Integer({ minimum: -840, maximum: 840 })),
  node: t.Optional(t.Union([t.Integer(), t.String({ minLength: 1, maxLength: 128 })])),
  now_ms: t.Integer({ description: "the coordinator's clock: every node classifies pending calls alike" }),
  buffer_only: t.Optional(
    t.Boolean({ description: "only rows not yet in data files: another node of the same lake answers for the files" }),
  ),
});

/** A node's KPI sums per step (KpiService.partial). */
export function nodeKpiPartial(kpis: KpiService, b: typeof NodeKpiBody.static): Promise<KpiPartial> {
  const req: KpiRequest = {
    fromMs: b.from_ms,
    toMs: b.to_ms,
    step: b.step,
    ...(b.utc_offset_min !== undefined ? { utcOffsetMin: b.utc_offset_min } : {}),
    ...(b.node !== undefined ? { node: b.node } : {}),
    ...(b.buffer_only ? { bufferOnly: true } : {}),
  };
  return kpis.partial(req, b.now_ms);
}

/**
 * The KPIs over coordinator.nodes (docs/ARCHITECTURE.md "Reads over several nodes"): every node's
 * sums per step on the coordinator's grid and clock, added, and the ratios taken once.
 */
export async function kpiOverNodes(kpis: KpiService | undefined, over: OverNodes, req: KpiRequest) {
  const grid = KpiService.grid(req);
  const now = Date.now();
  const g = await over.gather<KpiPartial>({
    read: "kpi",
    path: "/api/v1/kpi",
    // Responses and BYEs are read up to END_GRACE_MS after the window (docs/KPIS.md "Classifying a call").
    window: { fromMs: req.fromMs, toMs: req.toMs + END_GRACE_MS },
    body: (bufferOnly) => ({
      from_ms: req.fromMs,
      to_ms: req.toMs,
      step: bucketLabel(grid.widthMs),
      ...(req.utcOffsetMin !== undefined ? { utc_offset_min: req.utcOffsetMin } : {}),
      ...(req.node !== undefined ? { node: req.node } : {}),
      now_ms: now,
      ...(bufferOnly ? { buffer_only: true } : {}),
    }),
    ...(kpis ? { local: () => kpis.partial(req, now, grid) } : {}),
    rows: (p) => p.codes.reduce((s, [, c]) => s + c, 0),
  });
  return {
    data: KpiService.result(
      req,
      grid,
      g.answers.map((a) => a.value),
    ),
    meta: nodesMeta(g),
  };
}

export function kpiRoutes(lake: Lake | undefined, timeoutMs: number, over?: OverNodes) {
  // Without a lake of its own a coordinator adds the nodes' sums only (docs/ARCHITECTURE.md "A coordinator without a lake").
  const kpis = lake ? new KpiService(lake, timeoutMs) : undefined;
  const own = () => {
    if (!kpis) throw noLakeError("the KPIs without coordinator.nodes");
    return kpis;
  };
  return new Elysia({ name: "svc-kpi" })
    .use(authContext)
    .get(
      "/statistics/kpi",
      async ({ query }) => {
        const step = query.step?.trim();
        const offset = query.utc_offset_min;
        const req = {
          ...scope(query),
          ...(step ? { step } : {}),
          ...(offset !== undefined ? { utcOffsetMin: offset } : {}),
        };
        if (over) return kpiOverNodes(kpis, over, req);
        return { data: await own().run(req) };
      },
      {
        query: SeriesQuery,
        detail: {
          tags: ["Statistics", "Metrics"],
          summary:
            "Call-quality KPIs over a window: ASR, NER, ACD, PDD, attempts, outcomes, response codes, registrations, RTCP jitter/loss, MOS",
          description:
            "Computed from the lake (docs/KPIS.md): a call is a Call-ID whose initial INVITE falls in the window, classified by the final response of its initial INVITE transaction. " +
            "Returns one entry per step (every step listed, empty ones with zero counts and null ratios) and the totals over the window; ratios are 0..1, null when there is nothing to divide by.",
        },
        response: { 200: KpiResponse, ...errors(400, 401) },
      },
    )
    .get(
      "/statistics/kpi/destinations",
      async ({ query }) => {
        const raw = query.limit;
        const limit =
          raw === undefined || raw === ""
            ? 10
            : typeof raw === "number" || (typeof raw === "string" && /^\s*\d{1,4}\s*$/.test(raw))
              ? Number(raw)
              : Number.NaN;
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DESTINATIONS)
          throw new AppError("VALIDATION", `limit: expected an integer from 1 to ${MAX_DESTINATIONS}`, {
            details: { fields: ["limit"] },
          });
        const s = scope(query);
        const head = { window: { from_ms: s.fromMs, to_ms: s.toMs }, node: s.node ?? null, limit };
        if (!over) return { data: { ...head, items: await own().failingDestinations(s, limit) } };
        // Over nodes every destination's counts add before the ranking (destinations.ts).
        const local = kpis
          ? (now: number) => everyDestination((max) => kpis.destinationCounts(s, max, true, now))
          : undefined;
        const r = await destinationsOverNodes(over, s, limit, local, END_GRACE_MS);
        return { data: { ...head, items: r.items }, meta: nodesMeta(r.gathered) };
      },
      {
        query: DestQuery,
        detail: {
          tags: ["Statistics", "Metrics"],
          summary:
            "Top failing destinations: called users with the most failed calls (3xx, failures, no response) in a window",
          description:
            "Destination = the To user of the initial INVITE. Busy, no answer, declined and cancelled calls are not failures (docs/KPIS.md).",
        },
        response: { 200: DestinationsResponse, ...errors(400, 401) },
      },
    );
}
