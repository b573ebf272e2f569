/**
 * The 201 body of `POST /imports/pcap` as a schema: the OpenAPI document states it and the
 * report's type is derived from it, so the two cannot drift (docs/API.md "PCAP import").
 */
import { type Static, t } from "elysia";

const count = (description?: string) => t.Integer({ minimum: 0, ...(description ? { description } : {}) });

export const MediaCountsSchema = t.Object({
  rtcp_reports: count("RTCP reports stored (HEP 5)"),
  rtp_packets: count("RTP packets measured"),
  rtp_streams: count("RTP streams measured, one HEP 34 report each"),
});
export type MediaCounts = Static<typeof MediaCountsSchema>;

export const ImportReportSchema = t.Object({
  file: t.Object({
    name: t.String(),
    bytes: count(),
    format: t.Union([t.Literal("pcap"), t.Literal("pcapng")]),
    frames: count("packet records in the capture"),
  }),
  sip_messages: count("SIP messages found in the capture"),
  imported: count("SIP rows written (the others are in `skipped` under backlog_full / internal_error)"),
  tables: t.Record(t.String(), count(), { description: "rows per lake table (`hep_proto_1_call`, ...)" }),
  transports: t.Partial(t.Object({ udp: count(), tcp: count(), ws: count(), sctp: count() }), {
    description: "SIP messages per transport of the capture",
  }),
  skipped: t.Record(t.String(), count(), {
    description:
      "why frames or bytes did not become stored SIP messages: the extractor's reasons (not_ip, udp_not_sip, tcp_retransmission, ...) and the pipeline's (backlog_full, internal_error)",
  }),
  first_timestamp: t.Union([t.String(), t.Null()], {
    description: "stored time of the first imported message (after any shift)",
  }),
  last_timestamp: t.Union([t.String(), t.Null()]),
  first_timestamp_us: t.Union([t.Integer(), t.Null()]),
  last_timestamp_us: t.Union([t.Integer(), t.Null()]),
  time_shift_us: t.Integer({ description: "added to every capture time (override_to_current_time), µs; 0 otherwise" }),
  time_shift: t.Union([t.String(), t.Null()], {
    description: "the shift in words (`shifted 21 y 10 d to now`); null without a shift",
  }),
  media: MediaCountsSchema,
  forced_table: t.Union([t.Literal("call"), t.Literal("registration"), t.Literal("default"), t.Null()]),
  truncated: t.Union([t.Object({ reason: t.String(), detail: t.Optional(t.String()) }), t.Null()], {
    description: "the capture ended inside a record: what was before it was imported",
  }),
  warnings: t.Array(t.String()),
});
/** The 201 body (`data`) of POST /imports/pcap. */
export type ImportReport = Static<typeof ImportReportSchema>;

export const ImportResponseSchema = t.Object({ data: ImportReportSchema, message: t.String() });
