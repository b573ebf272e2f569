import { Elysia, t } from "elysia";
import { AppError, MAX_BUCKETS } from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import { authContext } from "../auth/guard.ts";
import { checkedByRoute, errors } from "../openapi/schemas.ts";
import { window } from "../search/window.ts";
import { KpiResponse, DestinationsResponse } from "./model.ts";
import { KpiService, MAX_DESTINATIONS, type KpiRequest } from "./service.ts";

export { KpiService } from "./service.ts";
export { kpiMetrics } from "./prometheus.ts";

const time = (what: string) =>
  t.Optional(checkedByRoute(`${what}: epoch milliseconds or ISO 8601`, { anyOf: [{ type: "number" }, { type: "string", pattern: "^(\\s*-?[0-9]+\\s*)?$" }, { type: "string", format: "date-time" }] }));

const KpiQuery = t.Object(
  {
    from: time("window start (default: to minus 1 hour)"),
    to: time("window end (default now)"),
    node: t.Optional(t.String({ minLength: 1, maxLength: 128, pattern: "\\S", description: "capture node: a HEP capture id (node_id) or a node name (data_extra.node_name); default every node" })),
  },
  { additionalProperties: true },
);

const SeriesQuery = t.Composite([
  KpiQuery,
  t.Object({
    utc_offset_min: t.Optional(t.Integer({ minimum: -840, maximum: 840, description: "minutes east of UTC the steps start in (1d steps at local midnight); default 0" })),
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
  t.Object({ limit: t.Optional(checkedByRoute(`how many destinations, 1..${MAX_DESTINATIONS} (default 10)`, { type: "integer", minimum: 1, maximum: MAX_DESTINATIONS })) }),
]);

function scope(q: { from?: unknown; to?: unknown; node?: string | undefined }): Omit<KpiRequest, "step"> {
  const w = window(q.from, q.to, "");
  const node = q.node?.trim();
  if (q.node !== undefined && !node) throw new AppError("VALIDATION", "node: expected a capture id or a node name", { details: { fields: ["node"] } });
  return { ...w, ...(node ? { node: /^\d{1,15}$/.test(node) ? Number(node) : node } : {}) };
}

/**
 * Call-quality KPIs (docs/KPIS.md) under the Statistics and Metrics tags: `GET /statistics/kpi`
 * (series per step and totals: ASR, NER, ACD, PDD, attempts, outcomes, response-code mix,
 * registrations, RTCP jitter and loss, MOS) and `GET /statistics/kpi/destinations` (the top
 * failing destinations). Prometheus series of the same figures: prometheus.ts.
 */
export function kpiRoutes(lake: Lake, timeoutMs: number) {
  const kpis = new KpiService(lake, timeoutMs);
  return new Elysia({ name: "svc-kpi" })
    .use(authContext)
    .get(
      "/statistics/kpi",
      async ({ query }) => {
        const step = query.step?.trim();
        const offset = query.utc_offset_min;
        return { data: await kpis.run({ ...scope(query), ...(step ? { step } : {}), ...(offset !== undefined ? { utcOffsetMin: offset } : {}) }) };
      },
      {
        query: SeriesQuery,
        detail: {
          tags: ["Statistics", "Metrics"],
          summary: "Call-quality KPIs over a window: ASR, NER, ACD, PDD, attempts, outcomes, response codes, registrations, RTCP jitter/loss, MOS",
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
        const limit = raw === undefined || raw === "" ? 10 : typeof raw === "number" || (typeof raw === "string" && /^\s*\d{1,4}\s*$/.test(raw)) ? Number(raw) : Number.NaN;
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DESTINATIONS)
          throw new AppError("VALIDATION", `limit: expected an integer from 1 to ${MAX_DESTINATIONS}`, { details: { fields: ["limit"] } });
        const s = scope(query);
        return { data: { window: { from_ms: s.fromMs, to_ms: s.toMs }, node: s.node ?? null, limit, items: await kpis.failingDestinations(s, limit) } };
      },
      {
        query: DestQuery,
        detail: {
          tags: ["Statistics", "Metrics"],
          summary: "Top failing destinations: called users with the most failed calls (3xx, failures, no response) in a window",
          description: "Destination = the To user of the initial INVITE. Busy, no answer, declined and cancelled calls are not failures (docs/KPIS.md).",
        },
        response: { 200: DestinationsResponse, ...errors(400, 401) },
      },
    );
}
