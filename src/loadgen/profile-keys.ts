/**
 * Run-profile keys (docs/LOADGEN.md "Run-profile fields"): their JSON types, the check of one
 * profile object, and the management-vs-load inference of a flat profile.
 */
import { LoadgenUsageError, parseDuration } from "./options.ts";

type KeyType = "string" | "int" | "number" | "bool" | "listeners" | "auth" | "strings" | "server";

export const PROFILE_KEYS: Record<string, KeyType> = {
  id: "string",
  scenario_file: "string",
  scenario_name: "string",
  role: "string",
  service: "string",
  transport: "string",
  local_ip: "string",
  local_port: "int",
  listeners: "listeners",
  remote_addr: "string",
  auth_username: "string",
  auth_password: "string",
  rate: "number",
  max_concurrent: "int",
  total_calls: "int",
  users: "int",
  hep_addr: "string",
  hep_capture_id: "number",
  hep_password: "string",
  hep_raw_rtcp: "bool",
  hep_homer_lake_rtcp: "bool",
  send_media_report: "bool",
  trace_msg: "bool",
  summary_json: "string",
  stat_period: "string",
  injection_file: "string",
  ip_field: "int",
  log_otel_endpoint: "string",
  log_otel_proto: "string",
  log_otel_insecure: "bool",
  api_addr: "string",
  api_token: "string",
  auth: "auth",
  server: "server",
  extra_args: "strings",
};

/** Keys a file may carry at its top level but that never reach a merged profile. */
export const RESERVED_KEYS = ["server", "clients", "client", "workloads", "aliases"] as const;

/** Accepted keys this build does not act on: refused when set, never silently ignored. */
export const NOT_BUILT: Record<string, string> = {};

export type Profile = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function checkType(where: string, key: string, type: KeyType, v: unknown): void {
  const bad = (want: string) => new LoadgenUsageError(`${where}: "${key}" must be ${want}`);
  switch (type) {
    case "string":
      if (typeof v !== "string") throw bad("a string");
      return;
    case "int":
      if (!Number.isInteger(v) || (v as number) < 0) throw bad("a whole number ≥ 0");
      return;
    case "number":
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw bad("a number ≥ 0");
      return;
    case "bool":
      if (typeof v !== "boolean") throw bad("true or false");
      return;
    case "strings":
      if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) throw bad("an array of strings");
      return;
    case "server":
      if (typeof v !== "boolean")
        throw bad("true or false (a server object belongs at the top level of a composite file)");
      return;
    case "auth": {
      if (!isObject(v)) throw bad("an object");
      const type = v.type ?? "none";
      if (type !== "internal" && type !== "none")
        throw new LoadgenUsageError(`${where}: auth.type must be "internal" or "none", got ${JSON.stringify(type)}`);
      for (const k of Object.keys(v))
        if (!["type", "sqlite_path", "jwt_secret"].includes(k))
          throw new LoadgenUsageError(`${where}: unknown key auth.${k}`);
      if (type === "internal") {
        if (typeof v.jwt_secret !== "string" || v.jwt_secret.length < 16)
          throw new LoadgenUsageError(
            `${where}: auth.jwt_secret must be at least 16 characters when auth.type is internal`,
          );
        if (typeof v.sqlite_path !== "string" || v.sqlite_path === "")
          throw new LoadgenUsageError(
            `${where}: auth.sqlite_path (the users database) is required when auth.type is internal`,
          );
      }
      return;
    }
    case "listeners": {
      if (!Array.isArray(v)) throw bad("an array of objects");
      v.forEach((l, i) => {
        if (!isObject(l)) throw bad("an array of objects");
        for (const [k, x] of Object.entries(l)) {
          const t = {
            transport: "string",
            local_ip: "string",
            local_port: "int",
            tls_cert: "string",
            tls_key: "string",
          }[k] as KeyType | undefined;
          if (!t) throw new LoadgenUsageError(`${where}: unknown key listeners[${i}].${k}`);
          checkType(where, `listeners[${i}].${k}`, t, x);
        }
      });
      return;
    }
  }
}

/** Checks every key of one profile (an alias, a flat file, a merged server or client). */
export function checkProfile(where: string, p: Profile): void {
  for (const [key, v] of Object.entries(p)) {
    const type = PROFILE_KEYS[key];
    if (!type)
      throw new LoadgenUsageError(
        `${where}: unknown key "${key}" (flags outside the profile fields go through extra_args)`,
      );
    checkType(where, key, type, v);
    if (NOT_BUILT[key] && v !== false && v !== "" && v !== -1)
      throw new LoadgenUsageError(`${where}: "${key}" (${NOT_BUILT[key]}) is not built yet (docs/LOADGEN.md)`);
  }
  if (typeof p.stat_period === "string" && p.stat_period !== "") parseDuration(p.stat_period);
  checkOtelProto(where, p.log_otel_proto);
}

/** OTLP over HTTP (JSON) or gRPC (protobuf). */
export function checkOtelProto(where: string, proto: unknown): void {
  if (proto === undefined || proto === "http") return;
  if (proto === "grpc") return;
  throw new LoadgenUsageError(`${where}: log_otel_proto must be http or grpc, got ${JSON.stringify(proto)}`);
}

export type Mode = "management" | "load";

/**
 * Flat-profile inference (docs/LOADGEN.md "Management or load"): `role`, then `"server": true`
 * (management) or `false` (load); else management on listeners, a top-level server object, api_addr, or scenario_name management/uas;
 * else load on a remote_addr with scenario_name uac or empty; else an error asking for `role`.
 */
export function inferMode(where: string, p: Profile, topLevelServerObject = false): Mode {
  const role = p.role;
  if (role !== undefined) {
    const r = String(role).toLowerCase();
    if (r === "management" || r === "server") return "management";
    if (r === "load" || r === "client" || r === "uac") return "load";
    throw new LoadgenUsageError(
      `${where}: role must be management, server, load, client or uac, got ${JSON.stringify(role)}`,
    );
  }
  if (p.server === true) return "management";
  if (p.server === false) return "load";
  const scenario = String(p.scenario_name ?? "").toLowerCase();
  const listeners = Array.isArray(p.listeners) && p.listeners.length > 0;
  if (
    listeners ||
    topLevelServerObject ||
    (typeof p.api_addr === "string" && p.api_addr !== "") ||
    scenario === "management" ||
    scenario === "uas"
  )
    return "management";
  const remote = typeof p.remote_addr === "string" && p.remote_addr !== "";
  if (remote && (scenario === "uac" || scenario === "")) return "load";
  throw new LoadgenUsageError(
    `${where}: cannot tell a management profile from a load profile; set "role" to "management" or "load"`,
  );
}
