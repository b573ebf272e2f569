import { AppError } from "../core/index.ts";

/**
 * The filter query of both stream endpoints (docs/STREAM.md "Query"): repeated
 * `proto` and `method`, `only_requests`, `include_payload`, `history`, and our repeated `callid`
 * (one call's messages, for the dashboard's live ladder). Every value is checked
 * before the WebSocket upgrade: a typo answers 400 naming the parameter instead of a silent,
 * empty stream.
 */
export interface StreamFilter {
  /** HEP protocol types (chunk 0x000b); undefined = all. */
  protos?: ReadonlySet<number>;
  /** SIP methods, upper case; undefined = all. Applies to SIP events only (others pass). */
  methods?: ReadonlySet<string>;
  /** SIP Call-IDs, compared exactly (RFC 3261 section 20.8); undefined = all. SIP events only (others pass). */
  callIds?: ReadonlySet<string>;
  /** Drop SIP responses. */
  onlyRequests: boolean;
  /** Raw payload in each frame: what the client asked, narrowed by the endpoint's payload policy. */
  includePayload: boolean;
  /** Buffered matching events replayed on connect (already capped by the endpoint). */
  history: number;
}

/**
 * SIP methods a filter accepts (IANA "Methods and Response Codes" registry, RFC 3261 and its
 * extensions): a method outside it is a typo far more often than an extension method.
 */
export const SIP_METHODS = [
  "ACK",
  "BYE",
  "CANCEL",
  "INFO",
  "INVITE",
  "MESSAGE",
  "NOTIFY",
  "OPTIONS",
  "PRACK",
  "PUBLISH",
  "REFER",
  "REGISTER",
  "SUBSCRIBE",
  "UPDATE",
] as const;
const KNOWN_METHODS: ReadonlySet<string> = new Set(SIP_METHODS);

/** Query parameters of the filter, plus `access_token` (docs/API.md "Authentication": WebSocket clients may send the JWT there). */
export const FILTER_PARAMS = ["proto", "method", "callid", "only_requests", "include_payload", "history"] as const;
/** `callid` values at most, and characters each (a call and its correlated legs; Call-IDs are short). */
export const MAX_CALLIDS = 32;
export const MAX_CALLID_CHARS = 256;
const ACCEPTED = new Set<string>([...FILTER_PARAMS, "access_token"]);

const bad = (message: string, param: string) => new AppError("VALIDATION", message, { details: { fields: [param] } });

function flag(values: string[], name: string): boolean {
  if (values.length > 1 && new Set(values).size > 1) throw bad(`${name} is given twice with different values`, name);
  const v = (values[0] ?? "").trim().toLowerCase();
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false" || values.length === 0) return false;
  throw bad(`${name} must be 1 or 0 (true or false), got "${values[0]}"`, name);
}

/**
 * Parses and checks the query; throws AppError VALIDATION (400) naming the first bad parameter.
 * `history` above `historyLimit` is capped, not refused (docs/STREAM.md "Query": the coordinator caps it).
 */
export function parseStreamFilter(params: URLSearchParams, opts: { historyLimit: number }): StreamFilter {
  for (const k of new Set(params.keys())) {
    if (!ACCEPTED.has(k)) throw bad(`unknown parameter "${k}": the stream takes ${FILTER_PARAMS.join(", ")}`, k);
  }
  let protos: Set<number> | undefined;
  for (const raw of params.getAll("proto")) {
    const v = raw.trim();
    const n = Number(v);
    if (!/^\d{1,3}$/.test(v) || n > 255)
      throw bad(
        `proto "${raw}" is not a HEP protocol type: an integer 0-255 (1 SIP, 5 RTCP, 6 RTP, 34 RTCP-XR, ...)`,
        "proto",
      );
    (protos ??= new Set()).add(n);
  }
  let methods: Set<string> | undefined;
  for (const raw of params.getAll("method")) {
    const v = raw.trim().toUpperCase();
    if (!KNOWN_METHODS.has(v))
      throw bad(`method "${raw}" is not a SIP method (one of ${SIP_METHODS.join(", ")})`, "method");
    (methods ??= new Set()).add(v);
  }
  const callValues = params.getAll("callid");
  if (callValues.length > MAX_CALLIDS)
    throw bad(`callid is given ${callValues.length} times: at most ${MAX_CALLIDS}`, "callid");
  let callIds: Set<string> | undefined;
  for (const raw of callValues) {
    const v = raw.trim();
    if (v === "") throw bad("callid must not be empty", "callid");
    if ([...v].length > MAX_CALLID_CHARS) throw bad(`callid is longer than ${MAX_CALLID_CHARS} characters`, "callid");
    (callIds ??= new Set()).add(v);
  }
  const history = params.getAll("history");
  if (history.length > 1) throw bad("history may be given once", "history");
  const h = history[0]?.trim() ?? "0";
  if (!/^\d{1,9}$/.test(h))
    throw bad(`history must be a whole number of events (0 or more), got "${history[0]}"`, "history");
  return {
    ...(protos ? { protos } : {}),
    ...(methods ? { methods } : {}),
    ...(callIds ? { callIds } : {}),
    onlyRequests: flag(params.getAll("only_requests"), "only_requests"),
    includePayload: flag(params.getAll("include_payload"), "include_payload"),
    history: Math.min(Number(h), opts.historyLimit),
  };
}

/** The same filter as a query string (the coordinator asks each node for what its client asked). */
export function filterQuery(f: StreamFilter): string {
  const q = new URLSearchParams();
  for (const p of f.protos ?? []) q.append("proto", String(p));
  for (const m of f.methods ?? []) q.append("method", m);
  for (const c of f.callIds ?? []) q.append("callid", c);
  if (f.onlyRequests) q.set("only_requests", "1");
  if (f.includePayload) q.set("include_payload", "1");
  if (f.history > 0) q.set("history", String(f.history));
  return q.toString();
}
