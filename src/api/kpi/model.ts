import { t } from "elysia";
import { OUTCOMES } from "./sql.ts";
import { REG_OUTCOMES } from "./figures.ts";
import { NodeReportSchema } from "../search/fan-out.ts";

/** Response schemas of the KPI routes (docs/KPIS.md defines every figure). */
const ratio = (d: string) =>
  t.Union([t.Number(), t.Null()], { description: `${d}; 0..1, null when nothing to divide by` });
const mean = (d: string) => t.Union([t.Number(), t.Null()], { description: `${d}; null without a sample` });
const counts = (keys: readonly string[], d: string) =>
  t.Object(Object.fromEntries(keys.map((k) => [k, t.Integer()])), { description: d });

const Figures = {
  attempts: t.Integer({
    description: "calls whose initial INVITE falls in the step / window (every outcome, pending included)",
  }),
  outcomes: counts(OUTCOMES, 'calls per outcome class (docs/KPIS.md "Classifying a call")'),
  asr: ratio("answer-seizure ratio: answered / (attempts - pending)"),
  ner: ratio(
    "network effectiveness ratio (ITU-T E.425): (answered + busy + no_answer + rejected + cancelled) / (attempts - pending)",
  ),
  acd_s: mean("average call duration, seconds: first 2xx to first BYE of answered calls whose BYE was seen"),
  pdd_ms: mean(
    "post-dial delay, ms: initial INVITE to the first 101..199 or 2xx response (RFC 6076 session request delay)",
  ),
  setup_ms: mean("setup time, ms: initial INVITE to the first 2xx of answered calls"),
  registrations: counts(REG_OUTCOMES, "REGISTER transactions (Call-ID and CSeq) per outcome"),
  registration_success_ratio: ratio("success / (success + failed + no_response); 401/407 challenges are not failures"),
  rtcp_reports: t.Integer({
    description:
      'RTCP reports (HEP 5) with a report block that belong to a call of the window (docs/KPIS.md "RTCP and MOS")',
  }),
  jitter_ms_avg: mean("mean RTCP interarrival jitter, ms (8 kHz RTP clock)"),
  jitter_ms_max: mean("highest RTCP interarrival jitter, ms"),
  loss_pct_avg: mean("mean RTCP fraction lost, percent"),
  loss_pct_max: mean("highest RTCP fraction lost, percent"),
  mos_avg: mean("mean MOS of RTP agent reports (HEP 34) of the window's calls"),
  mos_min: mean("lowest MOS of agent media reports"),
};

/** meta of a KPI answer over coordinator.nodes. */
const NodesMeta = t.Optional(
  t.Object({
    nodes: t.Optional(
      t.Array(NodeReportSchema, {
        description: 'with coordinator.nodes: what each node did (docs/ARCHITECTURE.md "Reads over several nodes")',
      }),
    ),
    partial: t.Optional(
      t.Boolean({ description: "a node failed or timed out: the figures are those of the other nodes' calls" }),
    ),
  }),
);

export const KpiResponse = t.Object({
  data: t.Object({
    window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }),
    node: t.Union([t.Integer(), t.String(), t.Null()], { description: "the node filter, null for every node" }),
    step: t.String({ description: "step as text (30s, 5m, 1h, 1d)" }),
    step_ms: t.Integer(),
    totals: t.Object(Figures, { description: "over the whole window" }),
    response_codes: t.Array(
      t.Object({
        code: t.Union([t.Integer(), t.Null()], { description: "final response code; null: no final response" }),
        calls: t.Integer(),
      }),
      {
        description: "calls per final response code of the initial INVITE (pending calls left out), by code",
      },
    ),
    series: t.Array(t.Object({ start_ms: t.Integer({ description: "step start, epoch ms" }), ...Figures }), {
      description: "every step of the window in time order",
    }),
  }),
  meta: NodesMeta,
});

export const DestinationsResponse = t.Object({
  meta: NodesMeta,
  data: t.Object({
    window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }),
    node: t.Union([t.Integer(), t.String(), t.Null()]),
    limit: t.Integer(),
    items: t.Array(
      t.Object({
        destination: t.String({ description: "To user of the initial INVITE (empty when it has none)" }),
        attempts: t.Integer({ description: "completed calls to it (pending left out)" }),
        failures: t.Integer({ description: "calls ending in 3xx, a failure response or no response" }),
        answered: t.Integer(),
        failure_ratio: t.Number({ description: "failures / attempts" }),
        top_code: t.Union([t.Integer(), t.Null()], {
          description: "most frequent final code of its failures; null when only no response",
        }),
        no_response: t.Integer(),
      }),
      { description: "most failures first, then destination" },
    ),
  }),
});
