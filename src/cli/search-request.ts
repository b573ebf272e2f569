import { isOtlp } from "./proto.ts";

/**
 * Command-line filters → the body of `POST /api/v4/transactions/search` (docs/API.md "Search form
 * request", docs/CLI.md "Generic filter mapping for OTLP"). Pure. Values pass through untouched where
 * the coordinator already implements the rule (`;` OR-lists and `%` wildcards of --call-id,
 * --from-user, --to-user).
 */
export interface SearchFilters {
  callId?: string;
  fromUser?: string;
  toUser?: string;
  method?: string;
  /** SIP status code(s) of responses, `486` or `486;600;603`. */
  responseCode?: string;
  /** The CSeq method a response answers (INVITE for a call's answers). */
  cseqMethod?: string;
  srcIp?: string;
  dstIp?: string;
  node?: string;
  userAgent?: string;
  payload?: string;
}

export interface SearchQuery {
  proto: number;
  eventType: string;
  fromMs: number;
  toMs: number;
  limit: number;
  filters: SearchFilters;
}

export interface SearchBody {
  filter: Record<string, string | number>;
  param: { limit: number };
  timestamp: { from: number; to: number };
}

/** Flag name of each filter, for messages about ignored flags. */
export const FILTER_FLAGS: Readonly<Record<keyof SearchFilters, string>> = {
  callId: "--call-id",
  fromUser: "--from-user",
  toUser: "--to-user",
  method: "--method",
  responseCode: "--response-code",
  cseqMethod: "--cseq-method",
  srcIp: "--src-ip",
  dstIp: "--dst-ip",
  node: "--node",
  userAgent: "--user-agent",
  payload: "--payload",
};

/** SIP/HEP filter id of each flag (docs/API.md "Search form request", SIP field ids). */
const HEP_KEYS: Readonly<Record<keyof SearchFilters, string>> = {
  callId: "call_id",
  fromUser: "from_user",
  toUser: "to_user",
  method: "method",
  responseCode: "response_code",
  cseqMethod: "cseq_method",
  srcIp: "src_ip",
  dstIp: "dst_ip",
  node: "node",
  userAgent: "user_agent",
  payload: "payload",
};

/** A LIKE pattern: the text as a substring unless the user already wrote `%`. */
export const likePattern = (v: string) => (v.includes("%") ? v : `%${v}%`);

/**
 * OTLP (docs/CLI.md "Generic filter mapping for OTLP"): traces and logs take --call-id as `trace_id` equality, metrics as a
 * `name` LIKE; --payload is `name` (traces, metrics) or `body` (logs) LIKE plus `raw` LIKE;
 * --user-agent is `service_name` LIKE; every SIP-only flag is ignored. When a metrics search has
 * both --call-id and --payload, `name` belongs to --call-id and --payload keeps only `raw`.
 */
function otlpFilter(proto: number, f: SearchFilters, filter: Record<string, string | number>, ignored: string[]): void {
  if (f.callId) {
    if (proto === 201) filter.name = likePattern(f.callId);
    else filter.trace_id = f.callId;
  }
  if (f.payload) {
    const textKey = proto === 202 ? "body" : "name";
    if (filter[textKey] === undefined) filter[textKey] = likePattern(f.payload);
    filter.raw = likePattern(f.payload);
  }
  if (f.userAgent) filter.service_name = likePattern(f.userAgent);
  for (const k of ["fromUser", "toUser", "method", "responseCode", "cseqMethod", "srcIp", "dstIp", "node"] as const) if (f[k]) ignored.push(FILTER_FLAGS[k]);
}

/** The request body and the flags that do not apply to this protocol (printed as a note). */
export function buildSearchBody(q: SearchQuery): { body: SearchBody; ignored: string[] } {
  const filter: Record<string, string | number> = { proto_type: q.proto, event_type: q.eventType };
  const ignored: string[] = [];
  const f = q.filters;
  if (isOtlp(q.proto)) otlpFilter(q.proto, f, filter, ignored);
  else if (q.proto === 300) {
    // Line protocol: only a payload substring over the whole row (docs/API.md "Search form request", rule 4).
    if (f.payload) filter.payload = f.payload;
    for (const k of Object.keys(HEP_KEYS) as Array<keyof SearchFilters>) if (k !== "payload" && f[k]) ignored.push(FILTER_FLAGS[k]);
  } else {
    for (const k of Object.keys(HEP_KEYS) as Array<keyof SearchFilters>) {
      const v = f[k];
      if (v) filter[HEP_KEYS[k]] = k === "method" || k === "cseqMethod" ? v.toUpperCase() : v;
    }
  }
  return { body: { filter, param: { limit: q.limit }, timestamp: { from: q.fromMs, to: q.toMs } }, ignored };
}
