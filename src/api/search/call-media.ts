import { parseSip, sipSdp, type SdpMedia } from "../../sip/index.ts";

/**
 * Which media reports belong to which call (docs/CALL-VIEW.md "Which reports belong to a call"):
 * the one rule `POST /transactions/qos`, `POST /transactions/events` and the KPIs' RTCP jitter,
 * loss and MOS (docs/KPIS.md "RTCP and MOS") all apply, so the three never disagree.
 *
 * - A report with a correlation id (HEP chunk 0x0011, stored in `cid`, and in `session_id` for
 *   rows that are not SIP) belongs to the call of that Call-ID and to no other, whatever its
 *   addresses: sipp answers every call on one media port, so an address says nothing about the call.
 * - A report without one belongs to a call when its source and destination IP:port are the two
 *   ends of a media stream the call negotiated (an offer's m= line and the answer's m= line of the
 *   same index, RFC 3264 §6; RTP ports, or both RTCP ports: `a=rtcp` or RTP + 1, RFC 3605), in
 *   either direction, and its time is inside the call's media span: from the SDP answer to the
 *   BYE (a failed call's final response; without either, the end of the window searched), widened
 *   by MEDIA_SPAN_SLACK_MS on both sides.
 */

/** Slack around a call's media span: an agent's end-of-call report (or an RTCP BYE) follows the BYE by a moment, and two capture points' clocks differ by a little. */
export const MEDIA_SPAN_SLACK_MS = 2_000;

/** One direction of a negotiated stream's addresses. */
export interface MediaPair {
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
}

/** What the rule needs of one Call-ID: its media span (epoch µs, slack included) and address pairs; both null/empty without an SDP answer. */
export interface CallMedia {
  call_id: string;
  span: { from_us: number; to_us: number } | null;
  pairs: MediaPair[];
}

/** A SIP message of the call: its Call-ID, capture time and text. */
export interface CallMessage {
  session_id: string;
  timestamp_us: number;
  payload: string;
}

interface Exchange {
  offers: SdpMedia[][];
  answers: SdpMedia[][];
}

const ends = (m: SdpMedia): Array<{ ip: string; port: number }> => {
  if (!m.address || !m.port) return []; // port 0: a stream declined (RFC 3264 §6)
  return [
    { ip: m.address, port: m.port },
    { ip: m.rtcpAddress ?? m.address, port: m.rtcpPort ?? m.port + 1 },
  ];
};

/**
 * The media of each Call-ID in `messages` (any order). An offer/answer exchange is the SDP bodies
 * of one CSeq number: the requests' (INVITE, UPDATE, or the ACK answering a 2xx's offer) against
 * the responses' (183, 200). Every request body is paired with every response body, so a proxy
 * that rewrites the SDP on one hop (a media relay) gives both hops' pairs.
 * `windowEndUs` ends the span of a call whose BYE was not captured (still in progress).
 */
export function callMedia(
  messages: readonly CallMessage[],
  callIds: readonly string[],
  windowEndUs: number,
): CallMedia[] {
  const enc = new TextEncoder();
  const perCall = new Map<
    string,
    {
      exchanges: Map<number, Exchange>;
      answerUs: number | null;
      byeUs: number | null;
      failUs: number | null;
      answered: boolean;
    }
  >();
  for (const id of callIds)
    perCall.set(id, { exchanges: new Map(), answerUs: null, byeUs: null, failUs: null, answered: false });
  const sorted = [...messages].sort((a, b) => a.timestamp_us - b.timestamp_us);
  for (const msg of sorted) {
    const c = perCall.get(msg.session_id);
    if (!c) continue;
    const bytes = enc.encode(msg.payload);
    const r = parseSip(bytes);
    if (!r.ok) continue;
    const sip = r.value;
    const method = sip.cseqMethod.toUpperCase();
    if (sip.isRequest && method === "BYE") c.byeUs ??= msg.timestamp_us;
    if (!sip.isRequest && method === "INVITE" && sip.statusCode !== undefined) {
      if (sip.statusCode >= 200 && sip.statusCode < 300) c.answered = true;
      else if (sip.statusCode >= 300) c.failUs ??= msg.timestamp_us;
    }
    const media = sipSdp(bytes, sip)?.media ?? [];
    if (media.length === 0) continue;
    let x = c.exchanges.get(sip.cseq);
    if (!x) c.exchanges.set(sip.cseq, (x = { offers: [], answers: [] }));
    const side = sip.isRequest ? x.offers : x.answers;
    side.push(media);
    // The answer completes the exchange: from then on media flows (RFC 3264 §5).
    if (x.offers.length > 0 && x.answers.length > 0) c.answerUs ??= msg.timestamp_us;
  }
  const slackUs = MEDIA_SPAN_SLACK_MS * 1000;
  return [...perCall].map(([call_id, c]) => {
    if (c.answerUs === null) return { call_id, span: null, pairs: [] };
    const endUs = c.byeUs ?? (c.answered ? null : c.failUs) ?? windowEndUs;
    const seen = new Set<string>();
    const pairs: MediaPair[] = [];
    const add = (a: { ip: string; port: number }, b: { ip: string; port: number }) => {
      for (const [s, d] of [
        [a, b],
        [b, a],
      ] as const) {
        const key = `${s.ip}:${s.port}>${d.ip}:${d.port}`;
        if (seen.has(key)) continue;
        seen.add(key);
        pairs.push({ src_ip: s.ip, src_port: s.port, dst_ip: d.ip, dst_port: d.port });
      }
    };
    for (const x of c.exchanges.values()) {
      for (const offer of x.offers) {
        for (const answer of x.answers) {
          offer.forEach((m, i) => {
            const a = ends(m);
            const b = answer[i] ? ends(answer[i]) : [];
            if (a.length === 2 && b.length === 2) {
              add(a[0]!, b[0]!);
              add(a[1]!, b[1]!);
            }
          });
        }
      }
    }
    return { call_id, span: { from_us: c.answerUs - slackUs, to_us: Math.max(endUs, c.answerUs) + slackUs }, pairs };
  });
}

/** Columns of the relation `callMediaSql` reads: one row per Call-ID (addresses NULL) and one per pair direction. */
const MEDIA_COLUMNS = `{"call_id":"VARCHAR","span_from_us":"BIGINT","span_to_us":"BIGINT","src_ip":"VARCHAR","src_port":"BIGINT","dst_ip":"VARCHAR","dst_port":"BIGINT"}`;

/** `calls` as one JSON text (one statement parameter, however many calls): pass it as `json` to `callMediaSql`. */
export function callMediaJson(calls: readonly CallMedia[]): string {
  const rows: unknown[] = [];
  for (const c of calls) {
    rows.push({
      call_id: c.call_id,
      span_from_us: null,
      span_to_us: null,
      src_ip: null,
      src_port: null,
      dst_ip: null,
      dst_port: null,
    });
    for (const p of c.pairs)
      rows.push({ call_id: c.call_id, span_from_us: c.span!.from_us, span_to_us: c.span!.to_us, ...p });
  }
  return JSON.stringify(rows);
}

/** The relation (call_id, span_from_us, span_to_us, src_ip, src_port, dst_ip, dst_port) from the JSON parameter `param` (e.g. `$3`). */
export function callMediaSql(param: string): string {
  return `(SELECT unnest(from_json(${param}::VARCHAR, '[${MEDIA_COLUMNS}]'), recursive := true))`;
}

/** A report row's correlation id: `cid`, else `session_id` (the same for rows that are not SIP), NULL when empty. */
export const reportCorrelationSql = (r: string) => `COALESCE(NULLIF(${r}.cid, ''), NULLIF(${r}.session_id, ''))`;

/** The report `r` names the call of the media row `m` by its correlation id. */
export function reportOfCallByIdSql(r: string, m: string): string {
  return `(${m}.src_ip IS NULL AND ${reportCorrelationSql(r)} = ${m}.call_id)`;
}

/** The report `r` has no correlation id and flows between the addresses of the pair row `m` (in its direction) inside the call's media span. */
export function reportOfCallByAddressSql(r: string, m: string): string {
  return (
    `(${reportCorrelationSql(r)} IS NULL AND ${r}.src_ip = ${m}.src_ip AND ${r}.src_port = ${m}.src_port AND ${r}.dst_ip = ${m}.dst_ip AND ${r}.dst_port = ${m}.dst_port` +
    ` AND epoch_us(${r}."timestamp") BETWEEN ${m}.span_from_us AND ${m}.span_to_us)`
  );
}

/** The whole rule: the report `r` belongs to the call of `m` (the two halves exclude each other). */
export function reportOfCallSql(r: string, m: string): string {
  return `(${reportOfCallByIdSql(r, m)} OR ${reportOfCallByAddressSql(r, m)})`;
}
