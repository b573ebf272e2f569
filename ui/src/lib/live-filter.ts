/**
 * The search form's filters applied to the results widget's Live mode (docs/STREAM.md "In the
 * dashboard"). The stream itself filters by protocol, method and Call-ID; the rest of what a live
 * frame carries (users, addresses, ports, status codes) is matched here with the search's own
 * rules: `;` separates values, user and Call-ID values with `%` are LIKE patterns, a method
 * matches requests only (an answer to an INVITE carries no method in a search). A filter a frame
 * cannot answer (User-Agent, payload, node, …) is named in `notApplied`, never dropped silently.
 * Pure; see live-filter.test.ts.
 */
import type { LiveFrame } from "./live-stream.ts";

export interface LiveFilter {
  /** Query of /api/v4/stream/hep (`proto=1&method=INVITE&callid=…`). */
  query: string;
  /** Whether a frame passes every applied filter. */
  match(f: LiveFrame): boolean;
  /** What is applied, for the widget's note (`method INVITE`, `from user 1001`). */
  applied: string[];
  /** Filter keys of the search that the live view cannot apply. */
  notApplied: string[];
}

/** Methods the stream's `method` parameter accepts (docs/STREAM.md, the query table). */
const STREAM_METHODS = new Set([
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
]);
/** The stream's limits on `callid` values. */
const MAX_CALLIDS = 32;
const MAX_CALLID_LEN = 256;

const ADDRESS_KEYS = new Set(["src_ip", "dst_ip", "src_port", "dst_port"]);
/** Keys of a search body's filter that are not filters (or are the protocol itself). */
const NOT_FILTERS = new Set(["proto_type", "event_type"]);

/** The search's value list: strings or arrays, `;` separated, trimmed, empty ones left out. */
export function filterValues(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : [v];
  return raw
    .flatMap((x) => (x === null || x === undefined || typeof x === "object" ? [] : String(x).split(";")))
    .flatMap((s) => (s.trim() === "" ? [] : [s.trim()]));
}

/** Exact, or a SQL LIKE pattern when the value has `%` (`_` stays literal, as users type it). */
function likeOrEquals(values: readonly string[]): (s: string | undefined) => boolean {
  const tests = values.map((v) => {
    if (!v.includes("%")) return (s: string) => s === v;
    const re = new RegExp(
      `^${v
        .split("%")
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
      "s",
    );
    return (s: string) => re.test(s);
  });
  return (s) => s !== undefined && tests.some((t) => t(s));
}

const cseqMethod = (cseq: string) => cseq.trim().split(/\s+/)[1]?.toUpperCase() ?? "";

export function liveFilter(protoType: number, filter: Readonly<Record<string, unknown>> | undefined): LiveFilter {
  const params: string[] = [`proto=${protoType}`];
  const checks: Array<(f: LiveFrame) => boolean> = [];
  const applied: string[] = [];
  const notApplied: string[] = [];
  const sip = protoType === 1;
  for (const [key, raw] of Object.entries(filter ?? {})) {
    if (NOT_FILTERS.has(key)) continue;
    if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
      // `virtual`: fields read from data_extra, which a live frame does not carry.
      for (const [k, v] of Object.entries(raw)) if (filterValues(v).length > 0) notApplied.push(k);
      continue;
    }
    const values = filterValues(raw);
    if (values.length === 0) continue;
    const list = values.join(", ");
    // Addresses and ports are on every frame; the rest only on SIP frames.
    switch (sip || ADDRESS_KEYS.has(key) ? key : "") {
      case "method":
      case "methods": {
        const ms = values.map((m) => m.toUpperCase());
        if (ms.every((m) => STREAM_METHODS.has(m))) for (const m of ms) params.push(`method=${encodeURIComponent(m)}`);
        checks.push((f) => !!f.sip && f.sip.resp_code === "" && ms.includes(f.sip.method.toUpperCase()));
        applied.push(`method ${ms.join(", ")}`);
        break;
      }
      case "call_id":
      case "session_id":
      case "sid": {
        if (values.length <= MAX_CALLIDS && values.every((v) => !v.includes("%") && v.length <= MAX_CALLID_LEN))
          for (const v of values) params.push(`callid=${encodeURIComponent(v)}`);
        const m = likeOrEquals(values);
        checks.push((f) => m(f.sip?.callid));
        applied.push(`Call-ID ${list}`);
        break;
      }
      case "from_user":
      case "caller": {
        const m = likeOrEquals(values);
        checks.push((f) => m(f.sip?.from_user));
        applied.push(`from user ${list}`);
        break;
      }
      case "to_user":
      case "callee": {
        const m = likeOrEquals(values);
        checks.push((f) => m(f.sip?.to_user));
        applied.push(`to user ${list}`);
        break;
      }
      case "src_ip":
      case "dst_ip": {
        const side = key === "src_ip" ? "src_ip" : "dst_ip";
        checks.push((f) => values.includes(f[side] ?? ""));
        applied.push(`${key === "src_ip" ? "source" : "destination"} IP ${list}`);
        break;
      }
      case "src_port":
      case "dst_port": {
        const ports = values.map(Number);
        const side = key === "src_port" ? "src_port" : "dst_port";
        checks.push((f) => ports.includes(f[side] ?? -1));
        applied.push(`${key === "src_port" ? "source" : "destination"} port ${list}`);
        break;
      }
      case "response_code":
      case "response_codes":
        checks.push((f) => !!f.sip && values.includes(f.sip.resp_code));
        applied.push(`status ${list}`);
        break;
      case "cseq_method": {
        const ms = values.map((m) => m.toUpperCase());
        checks.push((f) => !!f.sip && ms.includes(cseqMethod(f.sip.cseq)));
        applied.push(`CSeq method ${ms.join(", ")}`);
        break;
      }
      default:
        notApplied.push(key);
    }
  }
  return { query: params.join("&"), match: (f) => checks.every((c) => c(f)), applied, notApplied };
}
