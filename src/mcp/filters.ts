/**
 * The natural-language filter envelope (docs/MCP.md "Filters"; spec doc 3 "Natural-language filter
 * envelope") and the regex parser that is always available. Pure: no I/O.
 */
export interface NlFilters {
  method?: string;
  src_ip?: string;
  dst_ip?: string;
  call_id?: string;
  from_user?: string;
  to_user?: string;
  /** `last_hour`, `today`, `yesterday`, `last_<n>_minutes|hours|days` or `custom` (from_ms/to_ms). */
  time_range_label?: string;
  from_ms?: number;
  to_ms?: number;
}

export const FILTER_TEXT_KEYS = ["method", "src_ip", "dst_ip", "call_id", "from_user", "to_user"] as const;
export type FilterTextKey = (typeof FILTER_TEXT_KEYS)[number];

/** SIP methods the parsers know (spec doc 3). */
export const SIP_METHODS = ["INVITE", "BYE", "REGISTER", "OPTIONS", "ACK", "CANCEL", "PRACK", "UPDATE", "INFO", "REFER", "SUBSCRIBE", "NOTIFY", "PUBLISH", "MESSAGE"] as const;
/** Also common English words: recognised only in capitals or after `method`. */
const ENGLISH_WORDS = new Set(["ACK", "UPDATE", "INFO", "MESSAGE"]);

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const IP = String.raw`([0-9]{1,3}(?:\.[0-9]{1,3}){3}|\[?[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}\]?)`;
const SEP = String.raw`(?:\s*(?:[:=]|\bis\b)\s*|\s+)`;
const VALUE = String.raw`("[^"]+"|'[^']+'|[^\s,]+)`;

const unquote = (v: string): string => (/^(["']).*\1$/.test(v) ? v.slice(1, -1) : v.replace(/[.)]+$/, ""));

function methodsOf(text: string): string[] {
  const found: string[] = [];
  const explicit = new RegExp(String.raw`\bmethods?${SEP}([A-Za-z]+)`, "gi");
  for (const m of text.matchAll(explicit)) {
    const up = m[1]!.toUpperCase();
    if ((SIP_METHODS as readonly string[]).includes(up)) found.push(up);
  }
  for (const name of SIP_METHODS) {
    const re = new RegExp(String.raw`(?<![\w@.-])(${name})S?(?![\w@-])`, ENGLISH_WORDS.has(name) ? "g" : "gi");
    if (re.test(text)) found.push(name);
  }
  return [...new Set(found)];
}

function firstValue(text: string, label: string): string | undefined {
  const m = new RegExp(String.raw`(?<![\w-])(?:${label})${SEP}${VALUE}`, "i").exec(text);
  return m ? unquote(m[1]!) : undefined;
}

/** The time words (English and German); undefined when the text names no range. */
export function timeRange(text: string, nowMs: number): Pick<NlFilters, "time_range_label" | "from_ms" | "to_ms"> | undefined {
  const t = text.toLowerCase();
  const n = /\b(?:last|past|letzten?)\s+(\d{1,4})\s*(minutes?|mins?|minuten|hours?|stunden?|days?|tagen?|tage)\b/.exec(t);
  if (n) {
    const unit = n[2]!.startsWith("m") ? "minutes" : /^(h|s)/.test(n[2]!) ? "hours" : "days";
    const ms = Number(n[1]) * (unit === "minutes" ? 60_000 : unit === "hours" ? HOUR_MS : DAY_MS);
    return { time_range_label: `last_${n[1]}_${unit}`, from_ms: nowMs - ms, to_ms: nowMs };
  }
  const midnight = Math.floor(nowMs / DAY_MS) * DAY_MS;
  if (/\b(yesterday|gestern)\b/.test(t)) return { time_range_label: "yesterday", from_ms: midnight - DAY_MS, to_ms: midnight - 1 };
  if (/\b(today|heute)\b/.test(t)) return { time_range_label: "today", from_ms: midnight, to_ms: nowMs };
  if (/\b(?:last|past)\s+hour\b|\b(?:letzte[nr]?|vergangenen?)\s+stunde\b/.test(t)) return { time_range_label: "last_hour", from_ms: nowMs - HOUR_MS, to_ms: nowMs };
  return undefined;
}

/** Regex parser (spec doc 3 "Parser strategies"): always answers; the range defaults to the last hour. */
export function parseWithRegex(text: string, nowMs: number): NlFilters {
  const out: NlFilters = {};
  const methods = methodsOf(text);
  if (methods.length > 0) out.method = methods.join(";");
  const src = new RegExp(String.raw`(?<![\w-])(?:src|source)[ _-]?(?:ip|address|addr)${SEP}${IP}`, "i").exec(text);
  if (src) out.src_ip = src[1]!.replace(/^\[|\]$/g, "");
  const dst = new RegExp(String.raw`(?<![\w-])(?:dst|dest|destination)[ _-]?(?:ip|address|addr)${SEP}${IP}`, "i").exec(text);
  if (dst) out.dst_ip = dst[1]!.replace(/^\[|\]$/g, "");
  const callId = firstValue(text, String.raw`call[-_ ]?id|session[-_]id`);
  if (callId !== undefined) out.call_id = callId;
  const from = firstValue(text, String.raw`from[-_ ]user|caller`);
  if (from !== undefined) out.from_user = from;
  const to = firstValue(text, String.raw`to[-_ ]user|callee`);
  if (to !== undefined) out.to_user = to;
  Object.assign(out, timeRange(text, nowMs) ?? { time_range_label: "last_hour", from_ms: nowMs - HOUR_MS, to_ms: nowMs });
  return out;
}

/** The model's filters, every member it omitted filled from the regex parser (spec doc 3). */
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
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "the model's answer is not a JSON object";
  const v = value as Record<string, unknown>;
  const out: NlFilters = {};
  for (const k of FILTER_TEXT_KEYS) {
    const x = v[k];
    if (x === undefined || x === null || x === "") continue;
    if (typeof x !== "string" && typeof x !== "number") return `the model's ${k} is not a string`;
    out[k] = k === "method" ? String(x).toUpperCase() : String(x);
  }
  if (typeof v.time_range_label === "string" && v.time_range_label !== "") out.time_range_label = v.time_range_label;
  for (const k of ["from_ms", "to_ms"] as const) {
    const x = v[k];
    if (x === undefined || x === null) continue;
    if (typeof x !== "number" || !Number.isSafeInteger(x)) return `the model's ${k} is not an integer of epoch milliseconds`;
    out[k] = x;
  }
  return out;
}
