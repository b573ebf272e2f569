import { t } from "elysia";
import { NodeReportSchema } from "./fan-out.ts";

/**
 * Response of `POST /transactions/events` (docs/CALL-VIEW.md "RTCP and log events"): rows of the
 * call's RTCP (HEP 5), agent media report (HEP 34/35) and log (HEP 100) tables with every column
 * `POST /transactions/messages` gives a message, plus `kind`, a one-line `summary` and, for
 * reports, the numbers it is made of.
 */
const nullableNumber = (description: string) => t.Union([t.Number(), t.Null()], { description });

export const CallEventQosSchema = t.Object({
  jitter: nullableNumber("jitter as the report carries it: RTCP interarrival jitter in RTP timestamp units (RFC 3550 §6.4.1), ms in agent media reports"),
  fraction_lost: nullableNumber("fraction lost since the previous report, fixed point /256"),
  loss_pct: nullableNumber("the same as a percentage (one decimal)"),
  packets_lost: nullableNumber("cumulative packets lost"),
  mos: nullableNumber("MOS when the agent sends one (1..5)"),
});

export const CallEventSchema = t.Object(
  {
    id: t.Integer({ description: "position, oldest first, from 1" }),
    uuid: t.String(),
    timestamp_us: t.Number({ description: "capture time, epoch microseconds" }),
    kind: t.Union([t.Literal("rtcp"), t.Literal("media"), t.Literal("log")], {
      description: "rtcp: HEP 5 RTCP report; media: HEP 34/35 media report of an RTP agent (MOS full report); log: HEP 100 log line",
    }),
    summary: t.String({
      description:
        "one line for the timeline: RTCP type, jitter, loss, lost packets, MOS; for a media report MOS, lost packets, jitter (and 'synthetic' when the report is marked so); or the log text (at most 300 characters)",
    }),
    qos: t.Union([CallEventQosSchema, t.Null()], { description: "the report's numbers (RTCP or media report); null for logs and undecodable reports" }),
    proto_type: t.Union([t.Integer(), t.Null()]),
    src_ip: t.Union([t.String(), t.Null()]),
    src_port: t.Union([t.Integer(), t.Null()]),
    dst_ip: t.Union([t.String(), t.Null()]),
    dst_port: t.Union([t.Integer(), t.Null()]),
    node_id: t.Union([t.Integer(), t.Null()], { description: "HEP capture id of the agent that sent the row" }),
    session_id: t.Union([t.String(), t.Null()], { description: "the HEP correlation id (for RTCP and logs: the Call-ID it belongs to)" }),
    payload: t.Union([t.String(), t.Null()], { description: "the whole report or log text" }),
  },
  { additionalProperties: true, description: "every other column of the row as in POST /transactions/messages (timestamp, cid, data_extra, …)" },
);

export const CallEventsResponse = t.Object({
  data: t.Object({
    items: t.Array(CallEventSchema),
    sessions: t.Array(t.String(), { description: "the call's Call-IDs (correlated legs included) the events were matched by" }),
    window: t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }, { description: "the time window searched (the transaction.range setting around the call)" }),
  }),
  meta: t.Object({
    pagination: t.Object({ limit: t.Integer(), total: t.Integer({ description: "events of the call; more than the items when the limit cut them" }) }),
    nodes: t.Optional(t.Array(NodeReportSchema, { description: "with coordinator.nodes: what each node did over the call's questions" })),
    partial: t.Optional(t.Boolean({ description: "a node failed or timed out: its legs and reports are missing" })),
  }),
});
