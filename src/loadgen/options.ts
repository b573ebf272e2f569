/**
 * Load-generator options: the run-profile keys of docs/LOADGEN.md, each with the sipp flag it maps
 * to (same meaning as `sipp -h`), and the parser of a sipp-style command line (`-r 10`, `-m=5`).
 */
import { AppError, parseDuration as parseDurationText, splitHostPort as splitAddress } from "../core/index.ts";

export interface ListenerSpec {
  transport?: string;
  local_ip?: string;
  local_port?: number;
  tls_cert?: string;
  tls_key?: string;
}

export interface LoadgenOptions {
  scenario_file: string;
  scenario_name: string;
  service: string;
  transport: string;
  local_ip: string;
  /** undefined: not given (management mode then uses 5060, load mode an ephemeral port). */
  local_port: number | undefined;
  listeners: ListenerSpec[];
  remote_addr: string;
  auth_username: string;
  auth_password: string;
  rate: number;
  rate_period_ms: number;
  max_concurrent: number;
  total_calls: number;
  users: number;
  pause_ms: number;
  hep_addr: string;
  hep_capture_id: number;
  hep_password: string;
  trace_msg: boolean;
  message_file: string;
  /** sipp's -trace_logs / -log_file: `<log>` actions of -sf scenarios (docs/LOADGEN.md "Scenario actions and variables"). */
  trace_logs: boolean;
  log_file: string;
  summary_json: string;
  stat_period: string;
  recv_timeout_ms: number;
  timeout_s: number;
  no_retrans: boolean;
  injection_file: string;
  ip_field: number;
  api_addr: string;
  api_token: string;
  /** TLS listener certificate and key (PEM files), as sipp's -tls_cert / -tls_key. */
  tls_cert: string;
  tls_key: string;
  log_otel_endpoint: string;
  log_otel_proto: string;
  log_otel_insecure: boolean;
  hep_raw_rtcp: boolean;
  hep_homer_lake_rtcp: boolean;
  send_media_report: boolean;
  server: boolean;
}

export const DEFAULT_OPTIONS: Readonly<LoadgenOptions> = Object.freeze({
  scenario_file: "",
  scenario_name: "",
  service: "service",
  transport: "u1",
  local_ip: "127.0.0.1",
  local_port: undefined,
  listeners: [],
  remote_addr: "",
  auth_username: "",
  auth_password: "password",
  rate: 10,
  rate_period_ms: 1000,
  max_concurrent: 0,
  total_calls: 0,
  users: 0,
  pause_ms: 0,
  hep_addr: "",
  hep_capture_id: 2001,
  hep_password: "",
  trace_msg: false,
  message_file: "",
  trace_logs: false,
  log_file: "",
  summary_json: "",
  stat_period: "",
  recv_timeout_ms: 0,
  timeout_s: 0,
  no_retrans: false,
  injection_file: "",
  ip_field: -1,
  api_addr: "",
  api_token: "",
  tls_cert: "",
  tls_key: "",
  log_otel_endpoint: "",
  log_otel_proto: "http",
  log_otel_insecure: false,
  hep_raw_rtcp: false,
  hep_homer_lake_rtcp: false,
  send_media_report: false,
  server: false,
});

type Kind = "string" | "int" | "number" | "bool" | "ms" | "seconds";
interface FlagDef {
  key: keyof LoadgenOptions;
  kind: Kind;
}

/** sipp flag (without the dash) → option key. */
export const FLAGS: Record<string, FlagDef> = {
  sf: { key: "scenario_file", kind: "string" },
  sn: { key: "scenario_name", kind: "string" },
  s: { key: "service", kind: "string" },
  t: { key: "transport", kind: "string" },
  i: { key: "local_ip", kind: "string" },
  p: { key: "local_port", kind: "int" },
  rsa: { key: "remote_addr", kind: "string" },
  au: { key: "auth_username", kind: "string" },
  ap: { key: "auth_password", kind: "string" },
  r: { key: "rate", kind: "number" },
  rp: { key: "rate_period_ms", kind: "ms" },
  l: { key: "max_concurrent", kind: "int" },
  m: { key: "total_calls", kind: "int" },
  users: { key: "users", kind: "int" },
  d: { key: "pause_ms", kind: "ms" },
  hep_addr: { key: "hep_addr", kind: "string" },
  hep_capture_id: { key: "hep_capture_id", kind: "int" },
  hep_password: { key: "hep_password", kind: "string" },
  trace_msg: { key: "trace_msg", kind: "bool" },
  message_file: { key: "message_file", kind: "string" },
  trace_logs: { key: "trace_logs", kind: "bool" },
  log_file: { key: "log_file", kind: "string" },
  summary_json: { key: "summary_json", kind: "string" },
  stat_period: { key: "stat_period", kind: "string" },
  recv_timeout: { key: "recv_timeout_ms", kind: "ms" },
  timeout: { key: "timeout_s", kind: "seconds" },
  nr: { key: "no_retrans", kind: "bool" },
  inf: { key: "injection_file", kind: "string" },
  ip_field: { key: "ip_field", kind: "int" },
  ipfield: { key: "ip_field", kind: "int" },
  api_addr: { key: "api_addr", kind: "string" },
  api_token: { key: "api_token", kind: "string" },
  tls_cert: { key: "tls_cert", kind: "string" },
  tls_key: { key: "tls_key", kind: "string" },
  log_otel_endpoint: { key: "log_otel_endpoint", kind: "string" },
  log_otel_proto: { key: "log_otel_proto", kind: "string" },
  log_otel_insecure: { key: "log_otel_insecure", kind: "bool" },
  hep_raw_rtcp: { key: "hep_raw_rtcp", kind: "bool" },
  hep_homer_lake_rtcp: { key: "hep_homer_lake_rtcp", kind: "bool" },
  send_media_report: { key: "send_media_report", kind: "bool" },
};

export class LoadgenUsageError extends AppError {
  constructor(message: string) {
    super("VALIDATION", message);
  }
}

/**
 * "500", "500ms", "2s", "1m30s" → milliseconds: a bare number is in `unit` (sipp's default units),
 * anything else is a duration as everywhere in svc (src/core/time.ts).
 */
export function parseDuration(text: string, unit: "ms" | "s" = "ms"): number {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * (unit === "s" ? 1000 : 1);
  const ms = parseDurationText(t);
  if (ms === undefined) throw new LoadgenUsageError(`invalid duration "${text}" (examples: 500ms, 5s, 1m30s)`);
  return ms;
}

function convert(flag: string, def: FlagDef, raw: string): unknown {
  switch (def.kind) {
    case "string":
      return raw;
    case "int": {
      if (!/^-?\d+$/.test(raw)) throw new LoadgenUsageError(`-${flag} needs a whole number, got "${raw}"`);
      return Number(raw);
    }
    case "number": {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n) || n < 0)
        throw new LoadgenUsageError(`-${flag} needs a non-negative number, got "${raw}"`);
      return n;
    }
    case "bool":
      return raw;
    case "ms":
      return parseDuration(raw, "ms");
    case "seconds":
      return parseDuration(raw, "s");
  }
}

export interface ParsedCommandLine {
  values: Partial<LoadgenOptions>;
  positionals: string[];
}

/**
 * sipp-style flags: one or two dashes, value as the next argument or after `=`. Boolean flags take
 * no value (`-trace_msg`), or an explicit `=true/false`. Unknown flags are errors naming the flag.
 */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    const def = FLAGS[name];
    if (!def)
      throw new LoadgenUsageError(
        `unknown flag -${name} (see loadgen -h; other sipp flags are not built yet, docs/LOADGEN.md)`,
      );
    if (def.kind === "bool") {
      const v = eq < 0 ? "true" : body.slice(eq + 1);
      if (!/^(true|false|1|0)$/i.test(v))
        throw new LoadgenUsageError(`-${name} is a switch (true or false), got "${v}"`);
      values[def.key] = /^(true|1)$/i.test(v);
      continue;
    }
    let raw: string | undefined;
    if (eq >= 0) raw = body.slice(eq + 1);
    else raw = argv[++i];
    if (raw === undefined) throw new LoadgenUsageError(`-${name} needs a value`);
    values[def.key] = convert(name, def, raw);
  }
  return { values: values as Partial<LoadgenOptions>, positionals };
}

/** host:port → parts; IPv6 in brackets; `defaultPort` when the port is absent (src/core/net.ts). */
export function splitHostPort(text: string, defaultPort: number, what: string): { host: string; port: number } {
  const a = splitAddress(text, defaultPort);
  if (!a || a.port > 65535) throw new LoadgenUsageError(`${what} "${text}" is not host:port`);
  return { host: a.hostname, port: a.port };
}
