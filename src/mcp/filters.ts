/**
 * The natural-language filter envelope (docs/MCP.md "Filters"): the
 * keys of the structured search (src/api/search/filters.ts) that the parsers fill.
 * The regex parser is in phrases.ts, the time words in time-words.ts. Pure: no I/O.
 */
export interface NlFilters {
  method?: string;
  src_ip?: string;
  dst_ip?: string;
  /** Either end of the message (the search's `ip` key). */
  ip?: string;
  call_id?: string;
  from_user?: string;
  to_user?: string;
  /** Codes or classes (`486;600`, `4xx;5xx`). */
  response_code?: string;
  /** The method a response answers (busy, failed, answered… calls: INVITE). */
  cseq_method?: string;
  /** Substring of the User-Agent header (case-sensitive, as the search matches it). */
  user_agent?: string;
  /** `last_hour`, `today`, `yesterday`, `last_<n>_minutes|hours|days`, `since_HH:MM`, `since_yesterday`, `between_HH:MM_and_HH:MM` or `custom` (from_ms/to_ms). */
  time_range_label?: string;
  from_ms?: number;
  to_ms?: number;
}

export const FILTER_TEXT_KEYS = [
  "method",
  "src_ip",
  "dst_ip",
  "ip",
  "call_id",
  "from_user",
  "to_user",
  "response_code",
  "cseq_method",
  "user_agent",
] as const;
export type FilterTextKey = (typeof FILTER_TEXT_KEYS)[number];

/** SIP methods the parsers know (docs/MCP.md "Filters"). */
export const SIP_METHODS = [
  "INVITE",
  "BYE",
  "REGISTER",
  "OPTIONS",
  "ACK",
  "CANCEL",
  "PRACK",
  "UPDATE",
  "INFO",
  "REFER",
  "SUBSCRIBE",
  "NOTIFY",
  "PUBLISH",
  "MESSAGE",
] as const;

const or = (v: string) => v.split(";").join(" or ");
const OUTCOME_NAMES: Record<string, string> = {
  "486;600": "busy",
  "4xx;5xx;6xx": "failed",
  "200": "answered",
  "487": "cancelled",
  "403;603": "rejected",
};

function rangeText(f: NlFilters, timeDefault: boolean): string {
  const l = f.time_range_label ?? "custom";
  const n = /^last_(\d+)_(minutes|hours|days)$/.exec(l);
  const text =
    l === "last_hour"
      ? "last 1 h"
      : n
        ? `last ${n[1]} ${n[2] === "minutes" ? "min" : n[2] === "hours" ? "h" : n[1] === "1" ? "day" : "days"}`
        : l === "today" || l === "yesterday"
          ? `${l} (UTC)`
          : /^since_\d/.test(l)
            ? `since ${l.slice(6)} UTC`
            : /^between_/.test(l)
              ? `${l.slice(8).replace("_and_", "–")} UTC`
              : l === "since_yesterday"
                ? "since yesterday (UTC)"
                : `${new Date(f.from_ms ?? 0).toISOString()} – ${new Date(f.to_ms ?? 0).toISOString()}`;
  return timeDefault ? `${text} (default)` : text;
}

/** What the filters ask, in words: "method INVITE, from user 1001, last 1 h" (docs/MCP.md "Answers"). */
export function describeFilters(f: NlFilters, timeDefault = false): string {
  const parts: string[] = [];
  if (f.method) parts.push(`method ${or(f.method)}`);
  if (f.response_code) {
    const outcome = f.cseq_method === "INVITE" ? OUTCOME_NAMES[f.response_code] : undefined;
    const codes = `${or(f.response_code)}${f.cseq_method ? ` to ${or(f.cseq_method)}` : ""}`;
    parts.push(outcome ? `${outcome} calls (${codes})` : `response ${codes}`);
  } else if (f.cseq_method) parts.push(`responses to ${or(f.cseq_method)}`);
  if (f.call_id) parts.push(`Call-ID ${or(f.call_id)}`);
  if (f.from_user) parts.push(`from user ${or(f.from_user)}`);
  if (f.to_user) parts.push(`to user ${or(f.to_user)}`);
  if (f.src_ip) parts.push(`from IP ${or(f.src_ip)}`);
  if (f.dst_ip) parts.push(`to IP ${or(f.dst_ip)}`);
  if (f.ip) parts.push(`IP ${or(f.ip)} (either end)`);
  if (f.user_agent) parts.push(`user agent ${or(f.user_agent)}`);
  parts.push(rangeText(f, timeDefault));
  return parts.join(", ");
}

/** The line every answer carries: "Understood: … · Ignored: 'please'", or why nothing ran. */
export function summaryOf(f: NlFilters, ignored: string[], understood: boolean, timeDefault: boolean): string {
  const quoted = ignored.map((w) => `'${w}'`).join(", ");
  if (!understood)
    return `Not understood: no word maps to a filter (ignored: ${quoted}); nothing was searched. Try e.g. "INVITEs from 1001 in the last hour" or "busy calls today"`;
  return `Understood: ${describeFilters(f, timeDefault)}${ignored.length > 0 ? ` · Ignored: ${quoted}` : ""}`;
}

/** The model's filters, every member it omitted filled from the regex parser (docs/MCP.md "Language model"). */
export function mergeFilters(model: NlFilters, regex: NlFilters): NlFilters {
  const out: NlFilters = { ...regex };
  for (const k of FILTER_TEXT_KEYS) if (model[k] !== undefined) out[k] = model[k];
  if (model.from_ms !== undefined && model.to_ms !== undefined && model.from_ms <= model.to_ms) {
    out.from_ms = model.from_ms;
    out.to_ms = model.to_ms;
    out.time_range_label = model.time_range_label ?? "custom";
  }
  return out;
}

/** Checks a decoded model answer member by member: strings for the text keys, integers for the range. */
export function filtersFromModel(value: unknown): NlFilters | string {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return "the model's answer is not a JSON object";
  const v = value as Record<string, unknown>;
  const out: NlFilters = {};
  for (const k of FILTER_TEXT_KEYS) {
    const x = v[k];
    if (x === undefined || x === null || x === "") continue;
    if (typeof x !== "string" && typeof x !== "number") return `the model's ${k} is not a string`;
    out[k] = k === "method" || k === "cseq_method" ? String(x).toUpperCase() : String(x);
  }
  if (typeof v.time_range_label === "string" && v.time_range_label !== "") out.time_range_label = v.time_range_label;
  for (const k of ["from_ms", "to_ms"] as const) {
    const x = v[k];
    if (x === undefined || x === null) continue;
    if (typeof x !== "number" || !Number.isSafeInteger(x))
      return `the model's ${k} is not an integer of epoch milliseconds`;
    out[k] = x;
  }
  return out;
}
