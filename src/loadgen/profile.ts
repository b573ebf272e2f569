/**
 * Run profiles (docs/LOADGEN.md "Run profiles"): alias files (`-config f -run-alias n`), flat files
 * (`loadgen server -config f`) and composite files (`server` + `client`/`clients`), turned into one
 * engine plan each. Merge order, later wins: defaults ← profile values (relative scenario_file,
 * injection_file and listeners' tls_cert/tls_key against the profile's folder) ← extra_args ← the
 * remaining command line.
 */
import { isAbsolute, join } from "node:path";
import {
  DEFAULT_OPTIONS,
  LoadgenUsageError,
  parseCommandLine,
  type ListenerSpec,
  type LoadgenOptions,
} from "./options.ts";
import { checkProfile, inferMode, RESERVED_KEYS, type Mode, type Profile } from "./profile-keys.ts";

export interface EnginePlan {
  id: string;
  mode: Mode;
  opts: LoadgenOptions;
}

export interface RunPlan {
  engines: EnginePlan[];
  /** Control-API users (auth.type internal), sqlite_path resolved against the profile's folder. */
  auth?: { sqlite_path: string; jwt_secret: string };
  /** Control API of the primary (first) engine; "" when off. */
  api_addr: string;
  api_token: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Profile keys that are options of the same name. */
const DIRECT_KEYS = [
  "scenario_file",
  "scenario_name",
  "service",
  "transport",
  "local_ip",
  "local_port",
  "listeners",
  "remote_addr",
  "auth_username",
  "auth_password",
  "rate",
  "max_concurrent",
  "total_calls",
  "users",
  "hep_addr",
  "hep_capture_id",
  "hep_password",
  "trace_msg",
  "summary_json",
  "stat_period",
  "injection_file",
  "ip_field",
  "api_addr",
  "api_token",
  "log_otel_endpoint",
  "log_otel_proto",
  "log_otel_insecure",
  "hep_raw_rtcp",
  "hep_homer_lake_rtcp",
  "send_media_report",
] as const;

/** Steps 1-4 of the merge for one profile; `argv` is the rest of the command line. */
export function mergeOptions(profile: Profile, dir: string, mode: Mode, argv: readonly string[]): LoadgenOptions {
  const opts: Record<string, unknown> = { ...DEFAULT_OPTIONS, listeners: [] };
  for (const k of DIRECT_KEYS) if (profile[k] !== undefined) opts[k] = profile[k];
  // Input files named by the profile are found next to it; summary_json (an output) stays relative to the working directory.
  const near = (v: string) => (v !== "" && !isAbsolute(v) ? join(dir, v) : v);
  for (const k of ["scenario_file", "injection_file"] as const)
    if (typeof opts[k] === "string") opts[k] = near(opts[k]);
  if (Array.isArray(profile.listeners))
    opts.listeners = (profile.listeners as ListenerSpec[]).map((l) => ({
      ...l,
      ...(l.tls_cert === undefined ? {} : { tls_cert: near(l.tls_cert) }),
      ...(l.tls_key === undefined ? {} : { tls_key: near(l.tls_key) }),
    }));
  const extra = parseCommandLine((profile.extra_args as string[] | undefined) ?? []);
  const cli = parseCommandLine(argv);
  Object.assign(opts, extra.values, cli.values);
  const remote = cli.positionals[0] ?? extra.positionals[0];
  if (remote !== undefined) opts.remote_addr = remote;
  if (cli.positionals.length + extra.positionals.length > 1)
    throw new LoadgenUsageError(
      `one remote host:port at most, got ${[...extra.positionals, ...cli.positionals].join(" ")}`,
    );
  // Management mode listens on 5060 unless told otherwise (-p 0: an ephemeral port); api_addr defaults to
  // 127.0.0.1:8080, loopback, since a control API without api_token or auth may not listen beyond it (docs/LOADGEN.md "Control API").
  if (mode === "management") {
    if (opts.local_port === undefined) opts.local_port = 5060;
    if (opts.api_addr === "") opts.api_addr = "127.0.0.1:8080";
  }
  return opts as unknown as LoadgenOptions;
}

/** `auth` of the primary profile when it asks for internal users. */
function internalAuth(profile: Profile, dir: string): RunPlan["auth"] {
  const a = profile.auth as { type?: string; sqlite_path?: string; jwt_secret?: string } | undefined;
  if (a?.type !== "internal") return undefined;
  return {
    sqlite_path: isAbsolute(a.sqlite_path!) ? a.sqlite_path! : join(dir, a.sqlite_path!),
    jwt_secret: a.jwt_secret!,
  };
}

/** Parses the file text; a clear error names the file and JSON's complaint. */
export function parseProfileJson(text: string, path: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new LoadgenUsageError(`${path}: invalid JSON (${(e as Error).message})`);
  }
  if (!isObject(json)) throw new LoadgenUsageError(`${path}: a profile file holds one JSON object`);
  return json;
}

/** Alias names, sorted, for `-list-aliases`. */
export function aliasNames(json: Record<string, unknown>, path: string): string[] {
  if (!isObject(json.aliases))
    throw new LoadgenUsageError(
      `${path}: no "aliases" object (a flat profile runs with: loadgen server -config ${path})`,
    );
  return Object.keys(json.aliases).sort();
}

/** `-config f -run-alias name`: one engine; `server: true` in the alias requests management mode. */
export function planAlias(
  json: Record<string, unknown>,
  path: string,
  dir: string,
  alias: string,
  argv: readonly string[],
): RunPlan {
  const names = aliasNames(json, path);
  for (const k of Object.keys(json))
    if (k !== "aliases")
      throw new LoadgenUsageError(`${path}: unknown top-level key "${k}" in an alias file (only "aliases")`);
  const profile = (json.aliases as Record<string, unknown>)[alias];
  if (profile === undefined)
    throw new LoadgenUsageError(`${path}: unknown alias "${alias}" (known: ${names.join(", ") || "none"})`);
  const where = `${path}: alias ${alias}`;
  if (!isObject(profile)) throw new LoadgenUsageError(`${where} must be an object`);
  checkProfile(where, profile);
  const mode: Mode =
    profile.server === true ? "management" : profile.server === false ? "load" : inferOrLoad(where, profile);
  const opts = mergeOptions(profile, dir, mode, argv);
  return {
    engines: [{ id: String(profile.id ?? alias), mode, opts }],
    api_addr: opts.api_addr,
    api_token: opts.api_token,
    auth: internalAuth(profile, dir),
  };
}

/** Aliases default to load when the flat-profile inference cannot tell (the alias says `server` otherwise). */
function inferOrLoad(where: string, p: Profile): Mode {
  try {
    return inferMode(where, p);
  } catch {
    return "load";
  }
}

/** `loadgen server -config f`: a flat profile, or a composite server + client(s) file. */
export function planFlat(json: Record<string, unknown>, path: string, dir: string, argv: readonly string[]): RunPlan {
  if ("aliases" in json)
    throw new LoadgenUsageError(
      `${path}: a flat profile has no "aliases" key; run an alias with: loadgen -config ${path} -run-alias <name>`,
    );
  if ("workloads" in json)
    throw new LoadgenUsageError(
      `${path}: the top-level "workloads" key was removed; write a composite file with a "server" object and "clients" (or "client") instead (docs/LOADGEN.md)`,
    );
  const plan = isObject(json.server) ? planComposite(json, path, dir, argv) : planSingleFlat(json, path, dir, argv);
  rejectDuplicateBinds(plan.engines);
  return plan;
}

function planSingleFlat(json: Record<string, unknown>, path: string, dir: string, argv: readonly string[]): RunPlan {
  if ("clients" in json || "client" in json)
    throw new LoadgenUsageError(`${path}: "clients"/"client" need a top-level "server" object`);
  checkProfile(path, json);
  const mode = inferMode(path, json);
  const opts = mergeOptions(json, dir, mode, argv);
  return {
    engines: [{ id: String(json.id ?? (mode === "management" ? "server" : "client")), mode, opts }],
    api_addr: opts.api_addr,
    api_token: opts.api_token,
    auth: internalAuth(json, dir),
  };
}

function planComposite(json: Record<string, unknown>, path: string, dir: string, argv: readonly string[]): RunPlan {
  if ("clients" in json && "client" in json)
    throw new LoadgenUsageError(`${path}: use "clients" or "client", not both`);
  let clients: unknown[] = [];
  if ("clients" in json) {
    if (!Array.isArray(json.clients)) throw new LoadgenUsageError(`${path}: "clients" must be an array of objects`);
    clients = json.clients;
  } else if ("client" in json) clients = Array.isArray(json.client) ? json.client : [json.client];
  const root: Profile = {};
  for (const [k, v] of Object.entries(json)) if (!(RESERVED_KEYS as readonly string[]).includes(k)) root[k] = v;
  if ("role" in root)
    throw new LoadgenUsageError(`${path}: "role" applies to flat profiles only, not to a composite file`);
  const serverWhere = `${path}: server`;
  const server: Profile = { ...root, ...(json.server as Profile) };
  checkProfile(serverWhere, server);
  if ("role" in server) throw new LoadgenUsageError(`${serverWhere}: "role" applies to flat profiles only`);
  if (inferOrLoad(serverWhere, server) !== "management")
    throw new LoadgenUsageError(
      `${serverWhere}: the server profile must be a management profile (give it listeners, api_addr, or scenario_name uas)`,
    );
  const serverOpts = mergeOptions(server, dir, "management", argv);
  const engines: EnginePlan[] = [{ id: String(server.id ?? "server"), mode: "management", opts: serverOpts }];
  clients.forEach((c, i) => {
    const where = `${path}: client ${i + 1}`;
    if (!isObject(c)) throw new LoadgenUsageError(`${where} must be an object`);
    // api_addr/api_token belong to the server only: root values are not copied into clients.
    const { api_addr: _a, api_token: _t, auth: _u, ...rootForClient } = root;
    const profile: Profile = { ...rootForClient, ...c };
    checkProfile(where, profile);
    if ("role" in profile) throw new LoadgenUsageError(`${where}: "role" applies to flat profiles only`);
    if (profile.api_addr || profile.api_token || profile.auth)
      throw new LoadgenUsageError(`${where}: api_addr, api_token and auth apply to the server only`);
    if (Array.isArray(profile.listeners) && profile.listeners.length > 0)
      throw new LoadgenUsageError(`${where}: a client has one outbound stack, no listeners`);
    if (!profile.remote_addr || inferOrLoad(where, profile) !== "load")
      throw new LoadgenUsageError(`${where}: a client needs remote_addr (and scenario_name uac or none)`);
    // The command line targets the primary engine; clients take defaults ← profile ← extra_args.
    const opts = mergeOptions(profile, dir, "load", []);
    engines.push({ id: String(profile.id ?? `client-${i + 1}`), mode: "load", opts });
  });
  const ids = new Set<string>();
  for (const e of engines) {
    if (ids.has(e.id)) throw new LoadgenUsageError(`${path}: engine id "${e.id}" is used twice`);
    ids.add(e.id);
  }
  return { engines, api_addr: serverOpts.api_addr, api_token: serverOpts.api_token, auth: internalAuth(server, dir) };
}

const TRANSPORT_KIND: Record<string, string> = { u1: "udp", un: "udp", t1: "tcp", tn: "tcp", l1: "tls", ln: "tls" };

/** Two engines (or two listeners) on the same transport + IP + port would steal each other's packets. */
export function rejectDuplicateBinds(engines: readonly EnginePlan[]): void {
  const seen = new Map<string, string>();
  for (const e of engines) {
    const o = e.opts;
    const binds =
      o.listeners.length > 0
        ? o.listeners.map((l) => ({
            t: l.transport ?? o.transport,
            ip: l.local_ip ?? o.local_ip,
            port: l.local_port ?? o.local_port ?? 0,
          }))
        : [{ t: o.transport, ip: o.local_ip, port: o.local_port ?? 0 }];
    for (const b of binds) {
      if (b.port === 0) continue; // ephemeral ports never collide
      const key = `${TRANSPORT_KIND[b.t] ?? b.t} ${b.ip}:${b.port}`;
      const other = seen.get(key);
      if (other !== undefined) throw new LoadgenUsageError(`duplicate bind ${key} (${other} and ${e.id})`);
      seen.set(key, e.id);
    }
  }
}
