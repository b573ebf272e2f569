import { isOtlp } from "./proto.ts";

/**
 * Command-line filters → the body of `POST /api/v4/transactions/search` (docs/API.md "Search form
 * request", docs/CLI.md "Generic filter mapping for OTLP"). Pure. Values pass through untouched where
 * the coordinator already implements the rule (`;` OR-lists and `%` wildcards of --call-id,
 * --from-user, --to-user).
 */
/**
 * The filter flags of `svc search`, each declared once: its flag, its key in `SearchFilters`, the
 * SIP/HEP filter id it sends (docs/API.md "Search filters"), its label in the interactive form and
 * its help. search-options.ts makes the flag table from it; the live mode takes only `--method`.
 */
export const FILTERS = [
  {
    key: "method",
    flag: "method",
    id: "method",
    label: "Method",
    live: true,
    description: "SIP method of requests (INVITE, BYE…); responses carry none",
  },
  {
    key: "responseCode",
    flag: "response-code",
    id: "response_code",
    description: "SIP status code of responses: 486, or 486;600;603",
  },
  {
    key: "cseqMethod",
    flag: "cseq-method",
    id: "cseq_method",
    description: "method a response answers (its CSeq): INVITE for a call's answers",
  },
  {
    key: "callId",
    flag: "call-id",
    id: "call_id",
    label: "Call-ID",
    description: "Call-ID / session id; a;b means a OR b; % is a wildcard",
  },
  {
    key: "fromUser",
    flag: "from-user",
    id: "from_user",
    label: "From user",
    description: "caller user (same ; and % rules)",
  },
  { key: "toUser", flag: "to-user", id: "to_user", label: "To user", description: "callee user (same ; and % rules)" },
  { key: "srcIp", flag: "src-ip", id: "src_ip", label: "Source IP", description: "source address, exact" },
  { key: "dstIp", flag: "dst-ip", id: "dst_ip", label: "Dest IP", description: "destination address, exact" },
  { key: "node", flag: "node", id: "node", label: "Node", description: "capture node name or id" },
  {
    key: "userAgent",
    flag: "user-agent",
    id: "user_agent",
    label: "User-Agent",
    description: "User-Agent substring (service_name for OTLP)",
  },
  { key: "payload", flag: "payload", id: "payload", label: "Payload", description: "payload substring" },
] as const satisfies ReadonlyArray<{
  key: string;
  flag: string;
  id: string;
  label?: string;
  live?: boolean;
  description: string;
}>;

export type FilterKey = (typeof FILTERS)[number]["key"];
/** Filter values as given; `responseCode` is `486` or `486;600;603`, `cseqMethod` the method a response answers. */
export type SearchFilters = Partial<Record<FilterKey, string>>;

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
export const FILTER_FLAGS = Object.fromEntries(FILTERS.map((f) => [f.key, `--${f.flag}`])) as Readonly<
  Record<FilterKey, string>
>;

/** SIP/HEP filter id of each filter. */
const HEP_KEYS = Object.fromEntries(FILTERS.map((f) => [f.key, f.id])) as Readonly<Record<FilterKey, string>>;

/** A LIKE pattern: the text as a substring unless the user already wrote `%`. */
export const likePattern = (v: string) => (v.includes("%") ? v : `%${v}%`);

/**
 * OTLP (docs/CLI.md "Generic filter mapping for OTLP"): traces and logs take --call-id as `trace_id` equality, metrics as a
 * `name` LIKE; --payload is `name` (traces, metrics) or `body` (logs) LIKE plus `raw` LIKE;
 * --user-agent is `service_name` LIKE; every SIP-only flag is ignored. When a metrics search has
 * both --call-id and --payload, `name` belongs to --call-id and --payload keeps only `raw`.
 */
const OTLP_FILTERS: ReadonlySet<FilterKey> = new Set(["callId", "payload", "userAgent"]);

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
  for (const { key } of FILTERS) if (!OTLP_FILTERS.has(key) && f[key]) ignored.push(FILTER_FLAGS[key]);
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
    for (const { key } of FILTERS) if (key !== "payload" && f[key]) ignored.push(FILTER_FLAGS[key]);
  } else {
    for (const { key } of FILTERS) {
      const v = f[key];
      if (v) filter[HEP_KEYS[key]] = key === "method" || key === "cseqMethod" ? v.toUpperCase() : v;
    }
  }
  return { body: { filter, param: { limit: q.limit }, timestamp: { from: q.fromMs, to: q.toMs } }, ignored };
}
