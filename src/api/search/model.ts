import { t, type Static } from "elysia";
import { NodeReportSchema, NodesMetaMembers } from "./fan-out.ts";
import { MediaEndpointSchema, QosStreamSchema } from "./qos.ts";

/**
 * Response of `POST /transactions/events` (docs/CALL-VIEW.md "RTCP and log events"): rows of the
 * call's RTCP (HEP 5), agent media report (HEP 34/35) and log (HEP 100) tables with every column
 * `POST /transactions/messages` gives a message, plus `kind`, a one-line `summary` and, for
 * reports, the numbers it is made of.
 */
const nullableNumber = (description: string) => t.Union([t.Number(), t.Null()], { description });

export const CallEventQosSchema = t.Object({
  jitter: nullableNumber(
    "jitter as the report carries it: RTCP interarrival jitter in RTP timestamp units (RFC 3550 §6.4.1), ms in agent media reports",
  ),
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
      description:
        "rtcp: HEP 5 RTCP report; media: HEP 34/35 media report of an RTP agent (MOS full report); log: HEP 100 log line",
    }),
    summary: t.String({
      description:
        "one line for the timeline: RTCP type, jitter, loss, lost packets, MOS; for a media report MOS, lost packets, jitter (and 'synthetic' when the report is marked so); or the log text (at most 300 characters)",
    }),
    qos: t.Union([CallEventQosSchema, t.Null()], {
      description: "the report's numbers (RTCP or media report); null for logs and undecodable reports",
    }),
    proto_type: t.Union([t.Integer(), t.Null()]),
    src_ip: t.Union([t.String(), t.Null()]),
    src_port: t.Union([t.Integer(), t.Null()]),
    dst_ip: t.Union([t.String(), t.Null()]),
    dst_port: t.Union([t.Integer(), t.Null()]),
    node_id: t.Union([t.Integer(), t.Null()], { description: "HEP capture id of the agent that sent the row" }),
    session_id: t.Union([t.String(), t.Null()], {
      description: "the HEP correlation id (for RTCP and logs: the Call-ID it belongs to)",
    }),
    payload: t.Union([t.String(), t.Null()], { description: "the whole report or log text" }),
  },
  {
    additionalProperties: true,
    description: "every other column of the row as in POST /transactions/messages (timestamp, cid, data_extra, …)",
  },
);

export const CallEventsResponse = t.Object({
  data: t.Object({
    items: t.Array(CallEventSchema),
    sessions: t.Array(t.String(), {
      description: "the call's Call-IDs (correlated legs included) the events were matched by",
    }),
    window: t.Object(
      { from_ms: t.Integer(), to_ms: t.Integer() },
      { description: "the time window searched (the transaction.range setting around the call)" },
    ),
  }),
  meta: t.Object({
    pagination: t.Object({
      limit: t.Integer(),
      total: t.Integer({ description: "events of the call; more than the items when the limit cut them" }),
    }),
    nodes: t.Optional(
      t.Array(NodeReportSchema, {
        description: "with coordinator.nodes: what each node did over the call's questions",
      }),
    ),
    partial: t.Optional(t.Boolean({ description: "a node failed or timed out: its legs and reports are missing" })),
  }),
});

const WindowSchema = (description: string) => t.Object({ from_ms: t.Integer(), to_ms: t.Integer() }, { description });

const nullableString = (description: string) => t.Union([t.String(), t.Null()], { description });
const nullableInteger = (description: string) => t.Union([t.Integer(), t.Null()], { description });

/**
 * A row's data_extra as the ingest writes it (src/ingest/hep/rows.ts): a JSON object of the
 * members the packet gave. Documented here: the capture point's members, which tell the copies of
 * one packet apart (docs/CALL-VIEW.md "Duplicates"), and the CSeq number; the others (from_tag,
 * request_uri, user_agent, custom_headers, time_shifted_us, …; docs/API.md "Search results") are
 * further members.
 */
export const MessageDataExtraSchema = t.Object(
  {
    node_name: t.Optional(
      t.String({ description: "HEP node name (chunk 0x0013) of the agent that captured the packet" }),
    ),
    capture_id: t.Optional(t.Integer({ description: "HEP capture id (chunk 0x000c) of that agent; absent when 0" })),
    cseq: t.Optional(t.Integer({ description: "the CSeq number of a SIP message" })),
  },
  { additionalProperties: true },
);

/**
 * One message of `POST /transactions/messages` (docs/API.md "Search results"): every column of its
 * HEP table (src/ingest/hep/tables.ts), null where the row has no value, plus the members the
 * search adds (id, sid, timestamp_us, the aliases, storage_*). Non-null where every row of a call
 * has a value: the lake makes uuid and the times; the ingest writes the addresses, event and
 * protocol type of every packet, and session_id of every row the call view can find (a SIP row's
 * Call-ID, which the parser requires; another row's correlation id, which is also its cid).
 * Other columns of the table (the registration table's aor, contact, expires, user_agent) are
 * further members.
 */
export const TransactionMessageSchema = t.Object(
  {
    id: t.Integer({ description: "position in the answer, oldest first, from 1" }),
    sid: t.String({ description: "the same as session_id (HOMER's name)" }),
    uuid: t.String({ description: "the row's id (UUIDv7), for GET /messages/{id}" }),
    timestamp: t.String({ description: "capture time, ISO 8601 UTC with microseconds" }),
    timestamp_us: t.Integer({ description: "capture time, epoch microseconds" }),
    date: t.String({ description: "the capture day (YYYY-MM-DD, UTC), the lake's partition" }),
    session_id: t.String({ description: "the SIP Call-ID (other protocols: the HEP correlation id)" }),
    caller: nullableString("From user"),
    callee: nullableString("To user"),
    src_ip: t.String(),
    dst_ip: t.String(),
    src_port: nullableInteger("source port"),
    dst_port: nullableInteger("destination port"),
    event: t.String({ description: "the request method, or the response's status code as text (`200`)" }),
    method: nullableString("the request method; null for a response"),
    response_code: nullableInteger("the response's status code; null for a request"),
    cseq_method: nullableString("the method of the CSeq header (for a response: the request it answers)"),
    proto_type: t.Integer({ description: "HEP protocol type (1 SIP)" }),
    protocol: nullableString("transport: UDP, TCP, SCTP, TLS, WS, WSS or the IP protocol number"),
    node_id: nullableInteger("HEP capture id of the agent that sent the row"),
    cid: nullableString("correlation id (X-CID or a configured header, or the HEP correlation id)"),
    payload: nullableString("the whole message (base64 when data_extra.payload_encoding says so)"),
    data_extra: t.Union([MessageDataExtraSchema, t.String(), t.Null()], {
      description:
        "the row's data_extra JSON parsed (node_name, capture_id, cseq, from_tag, …); its text when it is not JSON; null when none",
    }),
    src_alias: nullableString('IP alias name of the source (docs/ADMIN.md "IP aliases")'),
    dst_alias: nullableString("IP alias name of the destination"),
    storage_lake: t.String({ description: "the lake's catalog name (svc_lake)" }),
    storage_volume: t.String({ description: "the table the row was read from (main.hep_proto_1_call)" }),
  },
  { additionalProperties: true, description: "every other column of the row's table is a further member" },
);
export type TransactionMessage = Static<typeof TransactionMessageSchema>;

/** Response of `POST /transactions/messages` (docs/CALL-VIEW.md): every message of the call and its correlated legs. */
export const TransactionMessagesResponse = t.Object({
  data: t.Object({
    items: t.Array(TransactionMessageSchema, { description: "the messages, oldest first" }),
    keys: t.Array(t.String(), { description: "the column names of the items" }),
    sessions: t.Array(t.String(), { description: "the Call-IDs of the call and its correlated legs" }),
    hosts: t.Array(t.Object({ ip: t.String(), alias: t.Union([t.String(), t.Null()]) }), {
      description: "the call's addresses and their alias names",
    }),
    window: WindowSchema("the time window searched (the transaction.range setting around the call)"),
    lookup: WindowSchema(
      "where the selected messages were looked for: the request's range widened by message_from/message_to",
    ),
    time_shift: t.Union(
      [t.Object({ messages: t.Integer(), shifts_us: t.Array(t.Number()), note: t.String() }), t.Null()],
      {
        description: 'set when some message\'s time was shifted at ingest (docs/CALL-VIEW.md "Shifted times")',
      },
    ),
  }),
  meta: t.Object({
    pagination: t.Object({ limit: t.Integer(), total: t.Integer(), total_exact: t.Boolean(), has_more: t.Boolean() }),
    ...NodesMetaMembers,
  }),
});

/** Response of `POST /transactions/qos` (docs/ADMIN.md "QoS"): the call's reports as per-stream series. */
export const TransactionQosResponse = t.Object({
  data: t.Object({
    streams: t.Array(
      t.Composite([
        QosStreamSchema,
        t.Object({
          computed_from_rtp: t.Boolean({
            description: 'computed by a PCAP import from the capture\'s RTP (docs/CALL-VIEW.md "Computed from RTP")',
          }),
        }),
      ]),
    ),
    media: t.Array(MediaEndpointSchema, { description: "RTP and RTCP endpoints offered in the call's SDP bodies" }),
    sessions: t.Array(t.String()),
    window: WindowSchema("the time window searched"),
    reports: t.Integer({ description: "reports read (RTCP and agent reports)" }),
  }),
  meta: t.Optional(t.Object(NodesMetaMembers)),
});

/** Response of `GET /messages/{id}`: the message's row, every column of its table (node added over nodes). */
export const MessageResponse = t.Object({
  data: t.Record(t.String(), t.Unknown(), {
    description: "every column of the message's table; over coordinator.nodes also `node`",
  }),
  meta: t.Optional(t.Object(NodesMetaMembers)),
});

/** Response of `GET /messages/{id}/decoded`: SIP as first line, headers and body; JSON reports parsed; other text as `{text}`. */
export const DecodedMessageResponse = t.Object({
  data: t.Object({
    uuid: t.Union([t.String(), t.Null()]),
    proto_type: t.Union([t.Integer(), t.Null()]),
    decoded: t.Unknown({
      description:
        "SIP: firstLine, kind, headers, body, bodyLength (and the parsed fields or the parse error); a JSON payload parsed; else {text}",
    }),
  }),
  meta: t.Optional(t.Object(NodesMetaMembers)),
});
