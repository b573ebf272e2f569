import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { AppError } from "../core/index.ts";
import { takeLegacyKeys, type IgnoredKey } from "./legacy-keys.ts";
import { pickOauth2Row } from "./oauth2-migration.ts";
import { ConfigSchema, type Config } from "./schema.ts";

/**
 * Load order (docs/API.md "Conventions"): defaults ← JSON file (--config-path) ← SVC_<PATH> env.
 * Unknown keys and wrong types are collected and reported together, each naming its key.
 */
export interface LoadOptions {
  path?: string | undefined;
  /** Parsed JSON instead of a file (tests, embedded defaults). */
  json?: unknown;
  env?: Record<string, string | undefined>;
}

export interface LoadedConfig {
  config: Config;
  /** Non-fatal findings (deprecated keys migrated, keys of the superseded file model ignored) for the caller to log. */
  warnings: string[];
  /** Keys of the superseded file model found in the file, ignored (legacy-keys.ts; `svc show-config` lists them). */
  ignored: IgnoredKey[];
  source: string | undefined;
}

/** SVC_* variables that are not configuration keys (client-side switches, test harness). */
const NON_CONFIG_ENV = [
  /^SVC_INSECURE_TLS$/,
  /^SVC_TEST_/,
  /^SVC_BENCH_/,
  /^SVC_TOKEN$/,
  /^SVC_HOST$/,
  /^SVC_PASSWORD$/,
];

type Schemaish = TSchema & { properties?: Record<string, TSchema>; type?: string; anyOf?: TSchema[] };

const isObjectSchema = (s: Schemaish): boolean => s.type === "object" && s.properties !== undefined;
const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function mergeInto(
  schema: Schemaish,
  target: Record<string, unknown>,
  source: unknown,
  path: string,
  errors: string[],
): void {
  if (!isPlainObject(source)) {
    errors.push(`${path || "(root)"}: expected an object`);
    return;
  }
  for (const [key, value] of Object.entries(source)) {
    const keyPath = path ? `${path}.${key}` : key;
    const child = schema.properties?.[key] as Schemaish | undefined;
    if (!child) {
      errors.push(`${keyPath}: unknown key`);
      continue;
    }
    if (isObjectSchema(child) && isPlainObject(value)) {
      const sub = isPlainObject(target[key]) ? (target[key] as Record<string, unknown>) : {};
      target[key] = sub;
      mergeInto(child, sub, value, keyPath, errors);
    } else {
      target[key] = value;
    }
  }
}

/** docs/API.md "Conventions": `coordinator.auth` may be the string "internal"; `oauth2_providers` (array) is deprecated. */
function normalise(raw: unknown, warnings: string[]): unknown {
  if (!isPlainObject(raw)) return raw;
  const coord = raw.coordinator;
  if (!isPlainObject(coord)) return raw;
  if (typeof coord.auth === "string") coord.auth = { type: coord.auth };
  if (Array.isArray(coord.oauth2_providers)) {
    const row = pickOauth2Row(coord.oauth2_providers.filter(isPlainObject));
    if (row && coord.oauth2_provider === undefined) {
      coord.oauth2_provider = row;
      warnings.push(
        `coordinator.oauth2_providers is deprecated: migrated "${String(row.name)}" (the first usable enabled row by position, then name) to coordinator.oauth2_provider`,
      );
    } else {
      warnings.push(
        row
          ? "coordinator.oauth2_providers is deprecated and was ignored: coordinator.oauth2_provider is set"
          : "coordinator.oauth2_providers is deprecated and was ignored: no enabled row is complete (name, client_id, auth_url, token_url, profile_url, redirect_url, and client_secret unless use_pkce)",
      );
    }
    delete coord.oauth2_providers;
  }
  return raw;
}

/** Resolves SVC_A_B_C against the schema, where keys themselves contain underscores. */
function resolveEnvPath(schema: Schemaish, tokens: string[]): string[] | undefined {
  for (let k = tokens.length; k >= 1; k--) {
    const key = tokens.slice(0, k).join("_");
    const child = schema.properties?.[key] as Schemaish | undefined;
    if (!child) continue;
    if (k === tokens.length) return isObjectSchema(child) ? undefined : [key];
    if (isObjectSchema(child)) {
      const rest = resolveEnvPath(child, tokens.slice(k));
      if (rest) return [key, ...rest];
    }
  }
  return undefined;
}

function schemaAt(path: string[]): Schemaish {
  let s = ConfigSchema as Schemaish;
  for (const p of path) s = s.properties?.[p] as Schemaish;
  return s;
}

function parseEnvValue(schema: Schemaish, raw: string): unknown {
  // A word or a number ("auto" or 4): a number when it reads as one and the union takes numbers.
  if (schema.anyOf?.some((m) => (m as Schemaish).type === "integer" || (m as Schemaish).type === "number")) {
    const n = Number(raw.trim());
    return raw.trim() !== "" && !Number.isNaN(n) ? n : raw;
  }
  switch (schema.type) {
    case "integer":
    case "number": {
      const n = Number(raw.trim());
      return raw.trim() === "" || Number.isNaN(n) ? raw : n;
    }
    case "boolean": {
      const v = raw.trim().toLowerCase();
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off", ""].includes(v)) return false;
      return raw;
    }
    case "array":
      if (raw.trim().startsWith("[")) {
        try {
          return JSON.parse(raw);
        } catch {
          return raw;
        }
      }
      return raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    default:
      return raw;
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const errors: string[] = [];
  const warnings: string[] = [];
  const merged: Record<string, unknown> = {};

  // A copy: legacy keys are taken out of it (legacy-keys.ts), the caller's object stays as it was.
  let fileJson: unknown = opts.json === undefined ? undefined : structuredClone(opts.json);
  if (opts.path !== undefined) {
    let text: string;
    try {
      text = require("node:fs").readFileSync(opts.path, "utf8") as string;
    } catch (e) {
      throw new AppError("CONFIG_INVALID", `cannot read config file ${opts.path}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    try {
      // JSONC: the shipped appliance/svc.json explains each section with // and /* */ comments.
      fileJson = Bun.JSONC.parse(text);
    } catch (e) {
      throw new AppError(
        "CONFIG_INVALID",
        `config file ${opts.path} is not valid JSON (comments allowed): ${(e as Error).message}`,
        { cause: e },
      );
    }
  }
  const ignored = fileJson !== undefined ? takeLegacyKeys(fileJson) : [];
  for (const i of ignored) warnings.push(`${i.key} ${i.reason}`);
  if (fileJson !== undefined) mergeInto(ConfigSchema as Schemaish, merged, normalise(fileJson, warnings), "", errors);

  const env = opts.env ?? process.env;
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("SVC_") || value === undefined) continue;
    if (NON_CONFIG_ENV.some((re) => re.test(name))) continue;
    const path = resolveEnvPath(ConfigSchema as Schemaish, name.slice(4).toLowerCase().split("_"));
    if (!path) {
      errors.push(`${name}: environment variable names no configuration key`);
      continue;
    }
    let cursor = merged;
    for (const p of path.slice(0, -1)) {
      if (!isPlainObject(cursor[p])) cursor[p] = {};
      cursor = cursor[p] as Record<string, unknown>;
    }
    cursor[path[path.length - 1]!] = parseEnvValue(schemaAt(path), value);
  }

  const withDefaults = Value.Default(ConfigSchema, merged) as unknown;
  for (const e of Value.Errors(ConfigSchema, withDefaults)) {
    const key = e.path.replace(/^\//, "").replace(/\//g, ".") || "(root)";
    const msg = `${key}: ${e.message}${e.value === undefined ? "" : ` (got ${JSON.stringify(e.value)})`}`;
    if (!errors.some((x) => x.startsWith(`${key}:`))) errors.push(msg);
  }
  if (errors.length > 0) {
    throw new AppError("CONFIG_INVALID", `invalid configuration:\n  ${errors.join("\n  ")}`, { details: { errors } });
  }
  return { config: deepFreeze(withDefaults as Config), warnings, ignored, source: opts.path };
}
