import {
  callMediaSql,
  reportCorrelationSql,
  reportOfCallByAddressSql,
  reportOfCallByIdSql,
} from "../search/call-media.ts";

/**
 * The SQL of the call-quality KPIs (docs/KPIS.md). Every statement reads the lake with the same
 * scan our search uses (`Lake.scanSql`, pruned by the catalog's time statistics) and aggregates in
 * DuckDB, so only a few rows per time bucket come back, whatever the number of calls.
 *
 * A call is one Call-ID (`session_id`) of `hep_proto_1_call` whose initial INVITE (an INVITE
 * without To tag, RFC 3261 §12.1.2 / §8.1.1.2; stored as `data_extra.to_tag`) falls in the
 * window. Retransmissions and the copies of a message seen at several capture points are rows of
 * the same Call-ID, so grouping by Call-ID counts each call once.
 */
import { rtcpBlockField, withRtcpBlock } from "./rtcp-binary-sql.ts";

/** Positional parameters, collected while the SQL is written. */
export class Params {
  readonly values: unknown[] = [];
  p(v: unknown, cast = ""): string {
    this.values.push(v);
    return `$${this.values.length}${cast}`;
  }
}

export interface Scope {
  /** `Lake.scanSql` of the table. */
  scan: string;
  fromUs: number;
  toUs: number;
  /** Rows up to this time are read: responses and BYEs of calls that started before `toUs`. */
  scanEndUs: number;
  /** A call (or REGISTER) without outcome that started after this is still in progress. */
  pendingAfterUs: number;
  /** Capture node: integer = node_id (HEP capture id), text = data_extra.node_name. */
  node?: number | string;
}

const ts = (p: Params, us: number) => `make_timestamp(${p.p(us, "::BIGINT")})`;

function nodeClause(p: Params, node: Scope["node"]): string {
  if (node === undefined) return "";
  return typeof node === "number"
    ? ` AND node_id = ${p.p(node, "::BIGINT")}`
    : ` AND json_extract_string(data_extra, '$.node_name') = ${p.p(node)}`;
}

/** Outcome classes of a call (docs/KPIS.md "Classifying a call"), in display order. */
export const OUTCOMES = [
  "answered",
  "busy",
  "no_answer",
  "rejected",
  "cancelled",
  "redirected",
  "failed",
  "no_response",
  "pending",
] as const;
export type Outcome = (typeof OUTCOMES)[number];
/** Outcomes of the NER numerator (ITU-T E.425: answer, user busy, ring no answer, terminal rejection). */
export const NER_OUTCOMES: readonly Outcome[] = ["answered", "busy", "no_answer", "rejected", "cancelled"];
/** Outcomes the network is to blame for: the top failing destinations count these. */
export const FAILURE_OUTCOMES: readonly Outcome[] = ["redirected", "failed", "no_response"];

/**
 * One row per call: start `t0`, destination, first non-100 provisional, first 2xx, final code,
 * first CANCEL and BYE, and its outcome class.
 */
export function perCallSql(p: Params, s: Scope): string {
  const from = ts(p, s.fromUs);
  const to = ts(p, s.toUs);
  const end = ts(p, s.scanEndUs);
  const pendingAfter = ts(p, s.pendingAfterUs);
  const inv = "cm = 'INVITE'";
  return `SELECT *,
      CASE WHEN t2xx IS NOT NULL THEN 'answered'
        WHEN fail_rc IN (486, 600) THEN 'busy'
        WHEN fail_rc = 480 THEN 'no_answer'
        WHEN fail_rc IN (603, 607, 608) THEN 'rejected'
        WHEN fail_rc = 487 OR (fail_rc IS NULL AND t_cancel IS NOT NULL) THEN 'cancelled'
        WHEN fail_rc BETWEEN 300 AND 399 THEN 'redirected'
        WHEN fail_rc IS NOT NULL THEN 'failed'
        WHEN t0 > ${pendingAfter} THEN 'pending'
        ELSE 'no_response' END AS outcome,
      COALESCE(ans_rc, fail_rc) AS final_code
    FROM (
      SELECT session_id,
        min(ts) FILTER (WHERE initial) AS t0,
        arg_min(callee, ts) FILTER (WHERE initial) AS dest,
        min(ts) FILTER (WHERE ${inv} AND rc BETWEEN 101 AND 199) AS t1xx,
        min(ts) FILTER (WHERE ${inv} AND rc BETWEEN 200 AND 299) AS t2xx,
        arg_min(rc, ts) FILTER (WHERE ${inv} AND rc BETWEEN 200 AND 299) AS ans_rc,
        arg_max(rc, ts) FILTER (WHERE ${inv} AND rc BETWEEN 300 AND 699) AS fail_rc,
        min(ts) FILTER (WHERE method = 'CANCEL') AS t_cancel,
        min(ts) FILTER (WHERE method = 'BYE') AS t_bye
      FROM (
        SELECT session_id, timestamp AS ts, method, response_code AS rc, upper(cseq_method) AS cm, callee,
          (method = 'INVITE' AND json_extract_string(data_extra, '$.to_tag') IS NULL) AS initial
        FROM (${s.scan}) t
        WHERE timestamp BETWEEN ${from} AND ${end} AND session_id IS NOT NULL${nodeClause(p, s.node)}
      ) m
      GROUP BY session_id
      HAVING t0 BETWEEN ${from} AND ${to}
    ) c`;
}

const us = (col: string) => `epoch_us(${col})`;

export interface Grid {
  originUs: number;
  widthUs: number;
  last: number;
}

/** The step index of a time column: steps of `widthUs` from `originUs`, the window's end in the last one. */
function stepOf(p: Params, g: Grid, col: string): string {
  return `LEAST(${p.p(g.last, "::BIGINT")}, (${us(col)} - ${p.p(g.originUs, "::BIGINT")}) // ${p.p(g.widthUs, "::BIGINT")})`;
}

/**
 * Call counts and delay sums per (bucket, outcome, final code): the series, the totals and the
 * response-code mix all come from these few rows.
 */
export function callBucketsSql(p: Params, s: Scope, grid: Grid): string {
  const calls = perCallSql(p, s);
  const first = `LEAST(COALESCE(t1xx, t2xx), COALESCE(t2xx, t1xx))`;
  return `SELECT ${stepOf(p, grid, "t0")} AS b, outcome, final_code, count(*) AS n,
      sum(${us(first)} - ${us("t0")}) FILTER (WHERE ${first} IS NOT NULL) AS pdd_sum, count(*) FILTER (WHERE ${first} IS NOT NULL) AS pdd_n,
      sum(${us("t2xx")} - ${us("t0")}) FILTER (WHERE t2xx IS NOT NULL) AS setup_sum, count(*) FILTER (WHERE t2xx IS NOT NULL) AS setup_n,
      sum(${us("t_bye")} - ${us("t2xx")}) FILTER (WHERE t2xx IS NOT NULL AND t_bye >= t2xx) AS dur_sum, count(*) FILTER (WHERE t2xx IS NOT NULL AND t_bye >= t2xx) AS dur_n
    FROM (${calls}) k GROUP BY ALL`;
}

const list = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(", ");

/** Destinations (To user of the initial INVITE) with the most failed calls, at most `limit`. */
export function failingDestinationsSql(p: Params, s: Scope, limit: number, everyDestination = false): string {
  const calls = perCallSql(p, s);
  const failed = `outcome IN (${list(FAILURE_OUTCOMES)})`;
  // The final codes of the failures counted per code (JSON), not their mode: counts of several
  // nodes add, and the most frequent code is taken once over the sum (docs/KPIS.md "Top failing destinations").
  // everyDestination: a node's answer to a coordinator, every destination with a completed call, so that
  // the attempts of a destination failing on another node add too.
  return `SELECT COALESCE(dest, '') AS destination, count(*) FILTER (WHERE outcome <> 'pending') AS attempts,
      count(*) FILTER (WHERE ${failed}) AS failures, count(*) FILTER (WHERE outcome = 'answered') AS answered,
      CAST(to_json(histogram(final_code) FILTER (WHERE ${failed} AND final_code IS NOT NULL)) AS VARCHAR) AS codes,
      count(*) FILTER (WHERE outcome = 'no_response') AS no_response
    FROM (${calls}) k GROUP BY ALL HAVING ${everyDestination ? "attempts > 0" : "failures > 0"}
    ORDER BY failures DESC, destination LIMIT ${p.p(limit, "::BIGINT")}`;
}

/**
 * REGISTER transactions per (bucket, outcome): one transaction is a (Call-ID, CSeq number) pair
 * of `hep_proto_1_registration` (refreshes reuse the Call-ID, RFC 3261 §10.2.4), its outcome the
 * first 2xx, else the last final response: success, challenged (401/407), failed, no_response.
 */
export function registrationBucketsSql(p: Params, s: Scope, grid: Grid): string {
  const from = ts(p, s.fromUs);
  const to = ts(p, s.toUs);
  const end = ts(p, s.scanEndUs);
  const pendingAfter = ts(p, s.pendingAfterUs);
  const node = nodeClause(p, s.node);
  return `SELECT ${stepOf(p, grid, "t0")} AS b,
      CASE WHEN ok_rc IS NOT NULL THEN 'success' WHEN fail_rc IN (401, 407) THEN 'challenged' WHEN fail_rc IS NOT NULL THEN 'failed'
        WHEN t0 > ${pendingAfter} THEN 'pending' ELSE 'no_response' END AS outcome, count(*) AS n
    FROM (
      SELECT session_id, cs, min(ts) FILTER (WHERE method = 'REGISTER') AS t0,
        min(rc) FILTER (WHERE rc BETWEEN 200 AND 299) AS ok_rc, arg_max(rc, ts) FILTER (WHERE rc BETWEEN 300 AND 699) AS fail_rc
      FROM (
        SELECT session_id, timestamp AS ts, method, response_code AS rc, json_extract_string(data_extra, '$.cseq') AS cs
        FROM (${s.scan}) t
        WHERE timestamp BETWEEN ${from} AND ${end} AND upper(cseq_method) = 'REGISTER'${node}
      ) m GROUP BY ALL HAVING t0 BETWEEN ${from} AND ${to}
    ) r GROUP BY ALL`;
}

/**
 * The reports of `s` (an RTCP or agent-report table) that belong to a call of the window, by the
 * rule the call view applies (src/api/search/call-media.ts, docs/CALL-VIEW.md "Which reports
 * belong to a call"): by correlation id, or without one by a negotiated address pair of
 * `mediaJson` (callMediaJson) inside the call's media span. Each report once, with its call's `t0`
 * (a call's media counts in the step its call does); `cols` are the figures read from the payload.
 * The two halves of the rule are two joins (each an equality DuckDB hashes), never one OR.
 */
function callReportsSql(
  p: Params,
  s: Scope,
  calls: Scope,
  mediaJson: string,
  cols: string,
  binaryRtcp = false,
): string {
  const from = ts(p, s.fromUs);
  const end = ts(p, s.scanEndUs);
  const k = perCallSql(p, calls);
  const media = callMediaSql(p.p(mediaJson));
  return `WITH k AS (SELECT session_id, t0 FROM (${k}) c),
    m AS (SELECT session_id AS call_id, NULL::BIGINT AS span_from_us, NULL::BIGINT AS span_to_us, NULL::VARCHAR AS src_ip, NULL::BIGINT AS src_port, NULL::VARCHAR AS dst_ip, NULL::BIGINT AS dst_port, t0 FROM k
      UNION ALL SELECT x.call_id, x.span_from_us, x.span_to_us, x.src_ip, x.src_port, x.dst_ip, x.dst_port, k.t0 FROM ${media} x JOIN k ON k.session_id = x.call_id WHERE x.src_ip IS NOT NULL),
    r AS (SELECT uuid, "timestamp", cid, session_id, src_ip, src_port, dst_ip, dst_port, ${cols} FROM (${binaryRtcp ? withRtcpBlock(s.scan) : s.scan}) t
      WHERE "timestamp" BETWEEN ${from} AND ${end} AND (${binaryRtcp ? "rtcp_blk IS NOT NULL OR " : ""}json_valid(payload))),
    hit AS (SELECT r.*, m.t0 FROM r JOIN m ON ${reportOfCallByIdSql("r", "m")}
      UNION ALL SELECT r.*, m.t0 FROM r JOIN m ON ${reportOfCallByAddressSql("r", "m")})
    SELECT * FROM hit QUALIFY row_number() OVER (PARTITION BY uuid ORDER BY t0) = 1`;
}

/** Whether `s` holds a JSON report without correlation id in its range: only then the calls' SDP is read for the address half of the rule. */
export function uncorrelatedReportsSql(p: Params, s: Scope): string {
  const binary = "json_extract_string(data_extra, '$.payload_encoding') = 'base64'";
  return `SELECT count(*) AS n FROM (SELECT 1 FROM (${s.scan}) r WHERE "timestamp" BETWEEN ${ts(p, s.fromUs)} AND ${ts(p, s.scanEndUs)} AND ${reportCorrelationSql("r")} IS NULL AND (json_valid(payload) OR ${binary}) LIMIT 1) x`;
}

/**
 * The SIP messages `callMedia` reads a call's media from: those with an SDP body, the INVITE's
 * final responses and the BYEs, of the calls' scan range.
 */
export function callMediaMessagesSql(p: Params, s: Scope): string {
  const ct = "json_extract_string(data_extra, '$.content_type')";
  return `SELECT session_id, epoch_us("timestamp") AS timestamp_us, payload FROM (${s.scan}) t
    WHERE "timestamp" BETWEEN ${ts(p, s.fromUs)} AND ${ts(p, s.scanEndUs)} AND session_id IS NOT NULL
      AND (method = 'BYE' OR (upper(cseq_method) = 'INVITE' AND response_code >= 200) OR ${ct} ILIKE '%sdp%' OR ${ct} ILIKE 'multipart/%')`;
}

/**
 * RTCP receiver-report figures per bucket (HEP 5: the JSON heplify and rtpengine send, or the
 * binary packet, rtcp-binary-sql.ts) of the window's calls: the first report block's interarrival
 * jitter (RTP units, turned into ms at 8 kHz, docs/KPIS.md) and fraction lost (/256).
 */
export function rtcpBucketsSql(p: Params, s: Scope, calls: Scope, mediaJson: string, grid: Grid): string {
  const cols = `CASE WHEN rtcp_blk IS NOT NULL THEN ${rtcpBlockField(12, 4)} ELSE TRY_CAST(json_extract_string(payload, '$.report_blocks[0].ia_jitter') AS DOUBLE) END AS jit,
        CASE WHEN rtcp_blk IS NOT NULL THEN ${rtcpBlockField(4, 1)} ELSE TRY_CAST(json_extract_string(payload, '$.report_blocks[0].fraction_lost') AS DOUBLE) END AS fl`;
  const reports = callReportsSql(p, s, calls, mediaJson, cols, true);
  return `SELECT ${stepOf(p, grid, "t0")} AS b, count(*) AS reports, count(jit) AS jit_n, sum(jit) AS jit_sum, max(jit) AS jit_max, count(fl) AS fl_n, sum(fl) AS fl_sum, max(fl) AS fl_max
    FROM (${reports}) r WHERE jit IS NOT NULL OR fl IS NOT NULL GROUP BY b`;
}

/**
 * MOS of RTP agent reports (HEP 34 JSON with a `mos` member; agents send MOS × 100) of the
 * window's calls per bucket: the mean and the lowest.
 */
export function mosBucketsSql(p: Params, s: Scope, calls: Scope, mediaJson: string, grid: Grid): string {
  const reports = callReportsSql(
    p,
    s,
    calls,
    mediaJson,
    `TRY_CAST(json_extract_string(payload, '$.mos') AS DOUBLE) AS raw`,
  );
  return `SELECT ${stepOf(p, grid, "t0")} AS b, count(mos) AS mos_n, sum(mos) AS mos_sum, min(mos) AS mos_min
    FROM (SELECT t0, CASE WHEN raw > 5 THEN raw / 100 ELSE raw END AS mos FROM (${reports}) x WHERE raw > 0) r GROUP BY b`;
}
