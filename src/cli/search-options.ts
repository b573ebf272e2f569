import { UsageError, type FlagSpec, type ParsedFlags } from "./args.ts";
import { parsePostFilter, type PostFilter } from "./post-filter.ts";
import { chartOptions, type ChartOptions } from "./chart-options.ts";
import { checkEventType, defaultEventType, parseProto } from "./proto.ts";
import { FILTERS, type SearchFilters, type SearchQuery } from "./search-request.ts";
import { PROTOCOLS } from "../core/protocols.ts";
import { parseTimeSpec } from "./time-spec.ts";

/**
 * Flags of `svc search` (docs/CLI.md "Search client") and their validation. The interactive form
 * edits the same raw strings (`SearchForm`), so both paths validate in one place.
 */
export const OUTPUT_FORMATS = ["table", "vertical", "csv", "json", "chart", "callflow", "pcap"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
/** The formats `f` cycles through in the interactive view (pcap is a file, never a screen). */
export const SCREEN_FORMATS = ["table", "vertical", "csv", "json", "chart", "callflow"] as const;
export type ScreenFormat = (typeof SCREEN_FORMATS)[number];

const FORMAT_ALIASES: Readonly<Record<string, OutputFormat>> = { flow: "callflow", ladder: "callflow" };

export const MAX_LIMIT = 50_000;
const PROTO_NAMES = PROTOCOLS.flatMap((p) => (p.name ? [p.name] : [])).join(", ");

/**
 * A flag of `svc search`, declared once: the parser reads name, type and help; `label` puts it in
 * the interactive form (in this order); `live` says whether `--live` takes it too (`also`) or only
 * it (`only`); any other flag given with `--live` is refused.
 */
export interface SearchFlag extends FlagSpec {
  label?: string;
  secret?: boolean;
  live?: "also" | "only";
}

export const SEARCH_FLAGS: readonly SearchFlag[] = [
  {
    name: "host",
    type: "string",
    label: "Host",
    live: "also",
    description: "coordinator host:port (required, or SVC_HOST); an https:// prefix selects TLS",
  },
  {
    name: "user",
    type: "string",
    label: "User",
    live: "also",
    description: "user name for login; the JWT is cached in ~/.svc_token",
  },
  {
    name: "pass",
    type: "string",
    label: "Password",
    secret: true,
    live: "also",
    description: "password for login (visible in ps: prefer SVC_PASSWORD or --pass-stdin)",
  },
  {
    name: "pass-stdin",
    type: "boolean",
    live: "also",
    description: "read the password from stdin (first line; hidden on a terminal)",
  },
  {
    name: "token",
    type: "string",
    live: "also",
    description: "a JWT to use instead of logging in (or SVC_TOKEN, unless --user is given)",
  },
  {
    name: "token-header",
    type: "string",
    live: "also",
    description: "send --token raw in this header (a static API token, e.g. Auth-Token) instead of as a Bearer JWT",
  },
  {
    name: "from",
    type: "string",
    label: "From",
    default: "1h",
    description: "start: duration before now (30m, 2h30m, 7d), ISO 8601, YYYY-MM-DD [HH:MM:SS] (UTC) or epoch ms",
  },
  { name: "to", type: "string", label: "To", default: "now", description: "end, same forms as --from" },
  {
    name: "proto",
    type: "string",
    label: "Proto",
    live: "also",
    default: "sip",
    description: `${PROTO_NAMES} or a protocol type number (docs/API.md "Protocol types")`,
  },
  {
    name: "event-type",
    type: "string",
    label: "Event type",
    description:
      "call, registration or default for SIP (default call); default for the others; <schema>__<table> for lp",
  },
  ...FILTERS.map(
    (f): SearchFlag => ({
      name: f.flag,
      type: "string",
      description: f.description,
      ...("label" in f ? { label: f.label } : {}),
      ...("live" in f ? { live: "also" } : {}),
    }),
  ),
  { name: "limit", type: "string", label: "Limit", default: "50", description: `rows, 1-${MAX_LIMIT}` },
  {
    name: "fields",
    type: "string",
    label: "Fields",
    description:
      "comma-separated columns, or all (default: the readable SIP columns in table and csv, every column elsewhere)",
  },
  {
    name: "grep",
    type: "string",
    label: "Grep",
    live: "also",
    description:
      "keep fetched rows matching: text (any field) or field=text; comma = OR (filters only the --limit rows fetched)",
  },
  {
    name: "exclude",
    type: "string",
    label: "Exclude",
    live: "also",
    description: "drop rows matching, same pattern rules as --grep",
  },
  {
    name: "sql",
    type: "string",
    label: "SQL",
    description: "read-only SQL sent to POST /query instead of the structured search",
  },
  {
    name: "format",
    type: "string",
    label: "Format",
    live: "also",
    default: "table",
    description: "table, vertical, csv, json, chart, callflow (flow, ladder) or pcap",
  },
  {
    name: "group-by",
    type: "string",
    description: "chart: none, method (requests by method, responses by class) or status (request, 1xx..6xx)",
  },
  {
    name: "interval",
    type: "string",
    description: "chart: bucket width (30s, 5m, 1h, 1d); default chosen from the range",
  },
  { name: "output", alias: "o", type: "string", description: "write to this file (required with --format pcap)" },
  { name: "interactive", type: "boolean", description: "full-screen form" },
  {
    name: "live",
    type: "boolean",
    live: "also",
    description:
      "follow the live stream instead (GET /stream/hep): one line per event until Ctrl-C; takes --proto (comma list, or all), --method (comma list), --grep, --exclude, --format table|json and the flags below",
  },
  { name: "only-requests", type: "boolean", live: "only", description: "--live: drop SIP responses" },
  {
    name: "include-payload",
    type: "boolean",
    live: "only",
    description: "--live: raw payload (admin, and allowed by the coordinator); shown with --format json",
  },
  {
    name: "history",
    type: "string",
    live: "only",
    description: "--live: first replay up to N buffered matching events",
  },
  { name: "count", type: "string", live: "only", description: "--live: stop after N events" },
  { name: "debug", type: "boolean", live: "also", description: "print requests and responses to stderr" },
  { name: "help", alias: "h", type: "boolean", live: "also", description: "show help" },
];

/** Flags `--live` refuses (a range, paging, SQL, files, filters the stream has not) and the ones only it takes. */
export const NOT_LIVE_FLAGS: readonly string[] = SEARCH_FLAGS.filter((f) => !f.live).map((f) => f.name);
export const LIVE_ONLY_FLAGS: readonly string[] = SEARCH_FLAGS.filter((f) => f.live === "only").map((f) => f.name);

/** Raw text of every string flag, as given or as typed into the form. */
export type SearchForm = Record<string, string>;

export interface SearchOptions {
  host: string;
  user?: string;
  pass?: string;
  token?: string;
  tokenHeader?: string;
  query: SearchQuery;
  sql?: string;
  format: OutputFormat;
  output?: string;
  fields?: string[];
  grep: PostFilter[];
  exclude: PostFilter[];
  /** Filter flags given together with --sql (they do not apply). */
  ignoredWithSql: string[];
  /** `--format chart`: grouping and bucket width of the server histogram (search-chart.ts). */
  chart: ChartOptions;
}

/** String flags of the parsed command line as a form. */
export function formFromFlags(flags: ParsedFlags): SearchForm {
  const form: SearchForm = {};
  for (const s of SEARCH_FLAGS) {
    const v = flags[s.name];
    if (s.type === "string" && typeof v === "string") form[s.name] = v;
  }
  return form;
}

export function parseFormat(text: string): OutputFormat {
  const f = text.trim().toLowerCase();
  const found = FORMAT_ALIASES[f] ?? OUTPUT_FORMATS.find((x) => x === f);
  if (!found)
    throw new UsageError(`--format "${text}" is not one of ${OUTPUT_FORMATS.join(", ")} (aliases flow, ladder)`);
  return found;
}

function time(form: SearchForm, key: "from" | "to", nowMs: number): number {
  const r = parseTimeSpec(form[key] ?? (key === "from" ? "1h" : "now"), nowMs);
  if (!r.ok) throw new UsageError(`--${key}: ${r.detail ?? r.reason}`);
  return r.value;
}

/** Validates the form; every problem is a UsageError naming the flag (exit 2). */
export function searchOptions(form: SearchForm, nowMs: number, mode: { interactive?: boolean } = {}): SearchOptions {
  const get = (k: string) => {
    const v = form[k]?.trim();
    return v === undefined || v === "" ? undefined : v;
  };
  const host = get("host");
  if (!host) throw new UsageError("--host is required (host:port of the coordinator)");
  const protoText = get("proto") ?? "sip";
  const proto = parseProto(protoText);
  if (proto === undefined)
    throw new UsageError(`--proto "${protoText}" is not a protocol name (${PROTO_NAMES}) or a number 0-65535`);
  const eventType = get("event-type") ?? defaultEventType(proto);
  if (eventType === undefined) throw new UsageError("--event-type <schema>__<table> is required with --proto lp");
  const badEvent = checkEventType(proto, eventType);
  if (badEvent) throw new UsageError(badEvent);
  const limitText = get("limit") ?? "50";
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_LIMIT)
    throw new UsageError(`--limit must be an integer from 1 to ${MAX_LIMIT}, got "${limitText}"`);
  const fromMs = time(form, "from", nowMs);
  const toMs = time(form, "to", nowMs);
  if (fromMs > toMs)
    throw new UsageError(`--from (${new Date(fromMs).toISOString()}) is after --to (${new Date(toMs).toISOString()})`);
  const filters: SearchFilters = {};
  for (const f of FILTERS) {
    const v = get(f.flag);
    if (v !== undefined) filters[f.key] = v;
  }
  if (filters.responseCode !== undefined && !/^[1-6]\d\d(;[1-6]\d\d)*$/.test(filters.responseCode)) {
    throw new UsageError(
      `--response-code "${filters.responseCode}" is not a SIP status code (486) or a ;-separated list (486;600;603)`,
    );
  }
  const format = parseFormat(get("format") ?? "table");
  const output = get("output");
  const sql = get("sql");
  // PCAP rules 1-2 (docs/CLI.md "PCAP rules").
  if (format === "pcap") {
    if (mode.interactive) throw new UsageError("--format pcap cannot be used with --interactive (it writes a file)");
    if (!output) throw new UsageError("--format pcap needs --output <file> (binary is never written to stdout)");
    if (output === "-") throw new UsageError("--format pcap writes a file, not stdout: give a path to --output");
    if (proto !== 1) throw new UsageError(`--format pcap is for SIP only (--proto sip), not proto ${proto}`);
  }
  const chart = chartOptions(get("group-by"), get("interval"), { fromMs, toMs });
  if (format !== "chart" && !mode.interactive && (get("group-by") || get("interval")))
    throw new UsageError("--group-by and --interval apply to --format chart only");
  const user = get("user");
  const pass = form.pass; // a password may legitimately be spaces
  if (pass !== undefined && pass !== "" && !user) throw new UsageError("--pass needs --user");
  const tokenHeader = get("token-header");
  if (tokenHeader && !get("token")) throw new UsageError("--token-header needs --token");
  if (tokenHeader && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(tokenHeader))
    throw new UsageError(`--token-header "${tokenHeader}" is not an HTTP header name`);
  const fields = get("fields")
    ?.split(",")
    .map((f) => f.trim())
    .filter((f) => f !== "");
  const grep = get("grep");
  const exclude = get("exclude");
  return {
    host,
    ...(user ? { user } : {}),
    ...(pass !== undefined && pass !== "" ? { pass } : {}),
    ...(get("token") ? { token: get("token")! } : {}),
    ...(tokenHeader ? { tokenHeader } : {}),
    query: { proto, eventType, fromMs, toMs, limit, filters },
    ...(sql ? { sql } : {}),
    format,
    ...(output ? { output } : {}),
    ...(fields?.length ? { fields } : {}),
    grep: grep ? [parsePostFilter(grep)] : [],
    exclude: exclude ? [parsePostFilter(exclude)] : [],
    chart,
    ignoredWithSql: sql ? FILTERS.filter((f) => get(f.flag) !== undefined).map((f) => `--${f.flag}`) : [],
  };
}
