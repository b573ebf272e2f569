/**
 * `loadgen profile check|show|keys|init` (docs/LOADGEN.md "profile subcommand"): the run-profile
 * rules of a run (profile.ts, profile-keys.ts and the engine's own checks) applied to a file without
 * starting an engine, the merged options of each engine, the key table and example files.
 */
import { accessSync, constants } from "node:fs";
import { Engine } from "./engine.ts";
import { LoadgenUsageError, parseDuration, splitHostPort, type LoadgenOptions } from "./options.ts";
import { aliasNames, planAlias, planFlat, rejectDuplicateBinds, type EnginePlan, type RunPlan } from "./profile.ts";
import { exampleProfile, keysTable, PROFILE_FORMS, type ProfileForm } from "./profile-init.ts";
import { checkPlanControlApi } from "./run.ts";

export const PROFILE_HELP = `loadgen profile: check and inspect run-profile files (docs/LOADGEN.md "profile subcommand").

Usage:
  loadgen profile check <file> [flags]          validate every alias (or the flat/composite file) as a run would; one line per alias/engine
  loadgen profile show <file> [<alias>] [flags]  the effective options of each engine as JSON (secrets masked)
  loadgen profile keys                           profile keys, their types and the flag each maps to
  loadgen profile init [alias|flat|composite]    an example profile on stdout (default: alias)

Flags after the file are the run's command line (step 4 of the merge). -config, -run-alias and
-list-aliases belong to the root command: the file is the argument after the verb.`;

/** Reads and parses a profile file (cli.ts's reader: one error message for every command). */
export type ProfileReader = (path: string) => { json: Record<string, unknown>; dir: string };

/** The secrets `show` never prints: option keys, plus the plan's api_token and auth.jwt_secret. */
const SECRET_OPTIONS = ["auth_password", "hep_password", "api_token"] as const;
const MASK = "***";

const mask = (v: string): string => (v === "" ? "" : MASK);

/** Alias file, composite (a top-level server object) or flat: the same tests the planners make. */
export function profileForm(json: Record<string, unknown>): ProfileForm {
  if ("aliases" in json) return "alias";
  return typeof json.server === "object" && json.server !== null && !Array.isArray(json.server) ? "composite" : "flat";
}

/** Runs `fn`; an error that does not name the file yet is prefixed with `where` (file, alias or engine). */
function naming<T>(path: string, where: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof LoadgenUsageError) || e.message.startsWith(`${path}:`)) throw e;
    throw new LoadgenUsageError(`${where}: ${e.message}`);
  }
}

/** Every plan the file can run: one per alias, or the single flat/composite plan; `argv` is the run's command line. */
function plansOf(
  json: Record<string, unknown>,
  path: string,
  dir: string,
  argv: readonly string[],
): Array<{ label: (e: EnginePlan) => string; plan: RunPlan }> {
  if (profileForm(json) !== "alias")
    return [{ label: (e) => `engine ${e.id}`, plan: naming(path, path, () => planFlat(json, path, dir, argv)) }];
  const names = aliasNames(json, path);
  if (names.length === 0) throw new LoadgenUsageError(`${path}: the "aliases" object is empty`);
  return names.map((name) => {
    const where = `${path}: alias ${name}`;
    const plan = naming(path, where, () => {
      const p = planAlias(json, path, dir, name, argv);
      rejectDuplicateBinds(p.engines);
      return p;
    });
    return { label: () => `alias ${name}`, plan };
  });
}

function readable(what: string, file: string): void {
  try {
    accessSync(file, constants.R_OK);
  } catch (e) {
    throw new LoadgenUsageError(
      `cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/**
 * What a run checks before it opens a socket: the engine's constructor (scenario and injection files,
 * scenario name, transport, TLS listener needs, remote address, OTLP endpoint), the address syntax
 * of remote_addr, hep_addr and api_addr, stat_period, TLS certificate files and the auth rule.
 * Names are not resolved and ports not bound: that depends on the machine the run starts on.
 */
function checkEngine(e: EnginePlan): Engine {
  const engine = new Engine({ opts: e.opts, mode: e.mode, id: e.id });
  const o = e.opts;
  if (engine.client) splitHostPort(o.remote_addr, 5060, "-rsa");
  if (o.hep_addr) splitHostPort(o.hep_addr, 9060, "-hep_addr");
  if (o.stat_period) parseDuration(o.stat_period);
  for (const b of engine.bindSpecs()) {
    if (b.mode.kind !== "tls" || engine.client) continue;
    readable("tls_cert", b.tls_cert);
    readable("tls_key", b.tls_key);
  }
  return engine;
}

function describeEngine(label: string, e: EnginePlan, engine: Engine, apiAddr: string): string {
  const o = e.opts;
  const parts = [`${label}:`, `mode=${e.mode}`, `scenario=${engine.scenario}`, `transport=${o.transport}`];
  if (engine.client) {
    parts.push(`remote=${o.remote_addr}`);
    parts.push(
      o.users > 0 ? `users=${o.users}` : `rate=${o.rate}/${o.rate_period_ms === 1000 ? "s" : `${o.rate_period_ms}ms`}`,
    );
    parts.push(`total=${o.total_calls === 0 ? "unlimited" : o.total_calls}`);
  } else
    parts.push(
      `binds=${engine
        .bindSpecs()
        .map((b) => `${b.mode.kind}/${b.ip}:${b.port}`)
        .join(",")}`,
    );
  if (apiAddr) parts.push(`api=${apiAddr}`);
  return parts.join(" ");
}

/** `profile check`: one line per alias or engine; the first broken rule throws, naming file and alias/engine. */
export function checkProfileFile(
  json: Record<string, unknown>,
  path: string,
  dir: string,
  argv: readonly string[] = [],
): string[] {
  const lines: string[] = [];
  for (const { label, plan } of plansOf(json, path, dir, argv)) {
    plan.engines.forEach((e, i) => {
      const where = `${path}: ${label(e)}`;
      const engine = naming(path, where, () => checkEngine(e));
      const api = i === 0 ? plan.api_addr : "";
      naming(path, where, () => {
        if (i === 0) checkPlanControlApi(plan);
        if (api) splitHostPort(api, 8080, "api_addr");
      });
      lines.push(describeEngine(label(e), e, engine, api));
    });
  }
  return lines;
}

function maskedOptions(o: LoadgenOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = v === undefined ? null : v;
  for (const k of SECRET_OPTIONS) out[k] = mask(o[k]);
  return out;
}

/** `profile show`: the plan a run would start, as JSON, with secrets masked. */
export function showProfileFile(
  json: Record<string, unknown>,
  path: string,
  dir: string,
  argv: readonly string[],
): string {
  const form = profileForm(json);
  let alias: string | undefined;
  let plan: RunPlan;
  if (form === "alias") {
    const names = aliasNames(json, path);
    alias = argv[0];
    if (alias === undefined || alias.startsWith("-"))
      throw new LoadgenUsageError(
        `${path}: name the alias to show after the file (known: ${names.join(", ") || "none"})`,
      );
    const name = alias;
    plan = naming(path, `${path}: alias ${name}`, () => planAlias(json, path, dir, name, argv.slice(1)));
    naming(path, `${path}: alias ${name}`, () => rejectDuplicateBinds(plan.engines));
  } else plan = naming(path, path, () => planFlat(json, path, dir, argv));
  const shown = {
    file: path,
    form,
    ...(alias === undefined ? {} : { alias }),
    engines: plan.engines.map((e) => ({ id: e.id, mode: e.mode, options: maskedOptions(e.opts) })),
    api_addr: plan.api_addr,
    api_token: mask(plan.api_token),
    ...(plan.auth ? { auth: { type: "internal", sqlite_path: plan.auth.sqlite_path, jwt_secret: MASK } } : {}),
  };
  return JSON.stringify(shown, null, 2);
}

/** `loadgen profile <verb> …`: the lines to print; a usage error throws (exit 2, one line). */
export function profileCommand(argv: readonly string[], read: ProfileReader): { print: string[] } {
  const [verb, ...rest] = argv;
  const help = ["-h", "--help", "-help"];
  if (verb === undefined || verb === "help" || argv.some((a) => help.includes(a))) return { print: [PROFILE_HELP] };
  const file = (): { path: string; json: Record<string, unknown>; dir: string } => {
    const path = rest[0];
    if (path === undefined || path.startsWith("-"))
      throw new LoadgenUsageError(
        `usage: loadgen profile ${verb} <file>${verb === "show" ? " [<alias>]" : ""} [flags]`,
      );
    // `check a.json b.json` would take b.json as the remote host of every alias: one file per command.
    const second = rest.slice(1).find((a) => /\.json$/i.test(a));
    if (second !== undefined)
      throw new LoadgenUsageError(
        `profile ${verb} takes one file, got also "${second}" (the arguments after the file are the run's flags)`,
      );
    return { path, ...read(path) };
  };
  switch (verb) {
    case "check": {
      const f = file();
      return { print: checkProfileFile(f.json, f.path, f.dir, rest.slice(1)) };
    }
    case "show": {
      const f = file();
      return { print: [showProfileFile(f.json, f.path, f.dir, rest.slice(1))] };
    }
    case "keys":
      if (rest.length > 0) throw new LoadgenUsageError(`profile keys takes no arguments, got "${rest[0]}"`);
      return { print: keysTable() };
    case "init": {
      const form = rest[0] ?? "alias";
      if (!(PROFILE_FORMS as readonly string[]).includes(form))
        throw new LoadgenUsageError(`profile init takes alias, flat or composite, got "${form}"`);
      if (rest.length > 1) throw new LoadgenUsageError(`profile init takes one form, got also "${rest[1]}"`);
      return { print: [JSON.stringify(exampleProfile(form as ProfileForm), null, 2)] };
    }
    default:
      throw new LoadgenUsageError(`unknown profile command "${verb}" (check, show, keys, init; loadgen profile -h)`);
  }
}
