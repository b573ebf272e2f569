/**
 * In-process coordinator for the auth/users/settings/dashboards/tokens integration tests: the real
 * app built by `createCoordinator` (as main.ts builds it) over a real SQLite file, settings and
 * auth modules started, routes called with `app.handle(new Request(...))`.
 */
import { loadConfig, type Config } from "../../src/config/index.ts";
import { MetricsRegistry, createLogger, startAll, stopAll } from "../../src/core/index.ts";
import { createCoordinator, type RunningApp } from "../../src/main.ts";
import { startTestAppliance } from "../appliance.ts";
import { sha256Hex } from "../../src/auth/index.ts";

export const ADMIN_PASSWORD = "admin-pass-for-tests";

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface Core extends AsyncDisposable {
  config: Config;
  dir: string;
  core: ReturnType<typeof createCoordinator>;
  /** Every response body text seen by `call`, for secret scans. */
  bodies: string[];
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
  /** Logs in; fails the test unless it answers 201. */
  login(
    username: string,
    password: string,
  ): Promise<{ token: string; jti: string; cookie: string; body: Record<string, unknown> }>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] = isObject(v) && isObject(out[k]) ? merge(out[k] as Record<string, unknown>, v) : v;
  return out;
}

export function testConfig(dir: string, overrides: Record<string, unknown> = {}): Config {
  const base = {
    coordinator: {
      settings_db_path: `${dir}/settings.db`,
      http_server: { listen: "127.0.0.1:0" },
      auth: { admin_password_hash: sha256Hex(ADMIN_PASSWORD) },
    },
  };
  return loadConfig({ json: merge(base, overrides), env: {} }).config;
}

/** A v4 API request on `base` (JSON body, bearer token), in-process or over the network. */
function apiRequest(base: string, method: string, path: string, opts: CallOptions): Request {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  return new Request(`${base}/api/v4${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) } : {}),
  });
}

/** Status, headers, text and (when it parses) JSON of an answer. */
async function readResult(res: Response): Promise<CallResult> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function startCore(dir: string, overrides: Record<string, unknown> = {}): Promise<Core> {
  const config = testConfig(dir, overrides);
  const logger = createLogger({ test: true });
  const core = createCoordinator(config, logger, new MetricsRegistry());
  await startAll(core.modules, logger);
  const bodies: string[] = [];
  const call = async (method: string, path: string, opts: CallOptions = {}): Promise<CallResult> => {
    const result = await readResult(await core.app.handle(apiRequest("http://localhost", method, path, opts)));
    bodies.push(result.text);
    return result;
  };
  return {
    config,
    dir,
    core,
    bodies,
    call,
    async login(username, password) {
      const r = await call("POST", "/auth/sessions", { body: { username, password } });
      if (r.status !== 201) throw new Error(`login ${username} → ${r.status} ${r.text}`);
      const body = r.json as Record<string, unknown>;
      const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      return { token: String(body.token), jti: String(body.jti), cookie, body };
    },
    async [Symbol.asyncDispose]() {
      await stopAll(core.modules, logger);
    },
  };
}

/** `data` of a JSON response, typed loosely for assertions. */
export const dataOf = (r: CallResult): Record<string, unknown> => (r.json as { data: Record<string, unknown> }).data;
export const itemsOf = (r: CallResult): Array<Record<string, unknown>> =>
  (dataOf(r).items as Array<Record<string, unknown>>) ?? [];

export interface Server extends AsyncDisposable {
  /** Base URL of the coordinator, e.g. http://127.0.0.1:40123 (no /api/v4). */
  url: string;
  app: RunningApp;
  /** A real HTTP request to `/api/v4${path}`; the JSON body is parsed when there is one. */
  fetch(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
}

/**
 * The appliance as `svc serve` runs it (test/appliance.ts), without the lake, with the test admin
 * password: a real HTTP listener on 127.0.0.1 port 0, for tests that need real sockets
 * (concurrency, client addresses, TLS-less origin checks).
 */
export async function startServer(dir: string, overrides: Record<string, unknown> = {}): Promise<Server> {
  const base = {
    coordinator: { auth: { admin_password_hash: sha256Hex(ADMIN_PASSWORD) } },
    storage: { lakehouse: { enable: false } },
  };
  const appliance = await startTestAppliance(dir, merge(base, overrides));
  const app = appliance.app;
  const url = app.coordinatorUrl;
  if (!url) throw new Error("coordinator did not start");
  return {
    url,
    app,
    async fetch(method, path, opts = {}) {
      return await readResult(await fetch(apiRequest(url, method, path, opts)));
    },
    [Symbol.asyncDispose]: () => appliance[Symbol.asyncDispose](),
  };
}
