/**
 * Control API of a running loadgen (docs/LOADGEN.md "Control API"): the HTTP server, the caller's
 * identity (`api_token` or a JWT of an internal user) and the dispatch to the routes, which live in
 * control-routes.ts (stats, control) and their own files.
 */
import { timingSafeEqual } from "node:crypto";
import { LoginThrottle } from "../auth/index.ts";
import { AppError } from "../core/index.ts";
import { errorResponse, json, readJson, requireMethod, responseFor, type Caller, type Route } from "./control-http.ts";
import { statsRoutes } from "./control-routes.ts";
import { userRoutes } from "./control-user-routes.ts";
import type { ControlUsers } from "./control-users.ts";
import type { Engine } from "./engine.ts";
import { LoadgenUsageError, splitHostPort } from "./options.ts";

export { parseControl } from "./control-change.ts";

export interface ControlApi {
  readonly port: number;
  stop(): void;
}

const ROUTES: Route[] = [...statsRoutes, ...userRoutes];

function bearer(header: string | null): string | undefined {
  return /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1];
}

function tokenMatches(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The caller, or undefined when the API is protected and the bearer token is missing or wrong. */
async function identify(
  header: string | null,
  token: string,
  users: ControlUsers | undefined,
): Promise<Caller | undefined> {
  if (!token && !users) return { username: "", admin: true, user: false };
  const given = bearer(header);
  if (given === undefined) return undefined;
  if (token && tokenMatches(given, token)) return { username: "api_token", admin: true, user: false };
  const u = users ? await users.verify(given) : undefined;
  return u ? { username: u.username, admin: u.admin, user: true } : undefined;
}

/** Failed logins per user and address before a 30 s lock, as the appliance's defaults (src/auth LoginThrottle). */
const MAX_FAILED_LOGINS = 5;
const LOCKOUT_SEC = 30;

async function login(
  req: Request,
  users: ControlUsers | undefined,
  throttle: LoginThrottle,
  ip: string,
): Promise<Response> {
  if (!users) throw new AppError("NOT_FOUND", "no control-API users (auth.type internal) in this run");
  requireMethod(req, "POST");
  const body = (await readJson(req).catch(() => null)) as { username?: unknown; password?: unknown } | null;
  if (typeof body?.username !== "string" || typeof body.password !== "string")
    throw new AppError("BAD_REQUEST", 'the body must be {"username": "…", "password": "…"}');
  const r = throttle.reserve(body.username, ip);
  if (!r.allowed) {
    const res = errorResponse(429, "RATE_LIMITED", `too many failed logins; try again in ${r.retryAfterSec} s`);
    res.headers.set("retry-after", String(r.retryAfterSec));
    return res;
  }
  let jwt: string | null;
  try {
    jwt = await users.login(body.username, body.password);
  } catch (e) {
    r.attempt.abandoned();
    throw e;
  }
  if (!jwt) {
    r.attempt.failed();
    throw new AppError("UNAUTHORIZED", "wrong username or password");
  }
  r.attempt.succeeded();
  return json(200, { token: jwt });
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`: only this host reaches them. A wildcard or any other name is not loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^::ffff:/, "");
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Without `api_token` or `auth` anyone who reaches the control API can change the run, so it then
 * listens on loopback only (docs/LOADGEN.md "Control API"); elsewhere that is a start-up error.
 */
export function refuseOpenBeyondLoopback(addr: string, isProtected: boolean): void {
  if (isProtected) return;
  const { host } = splitHostPort(addr, 8080, "api_addr");
  if (!isLoopbackHost(host))
    throw new LoadgenUsageError(
      `api_addr ${addr} listens beyond loopback without api_token or auth: set api_token (-api_token) or auth (type internal), or bind 127.0.0.1`,
    );
}

export function startControlApi(
  addr: string,
  token: string,
  engines: readonly Engine[],
  users?: ControlUsers,
): ControlApi {
  refuseOpenBeyondLoopback(addr, token !== "" || users !== undefined);
  const { host, port } = splitHostPort(addr, 8080, "api_addr");
  const throttle = new LoginThrottle(MAX_FAILED_LOGINS, LOCKOUT_SEC);
  let server: ReturnType<typeof Bun.serve>;
  const handle = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (path === "/api/v1/login") return login(req, users, throttle, server.requestIP(req)?.address ?? "");
    const caller = await identify(req.headers.get("authorization"), token, users);
    if (!caller)
      return errorResponse(
        401,
        "UNAUTHORIZED",
        users
          ? "missing or wrong bearer token (api_token or a token from POST /api/v1/login)"
          : "missing or wrong bearer token (api_token)",
      );
    for (const r of ROUTES) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      let params: string[];
      try {
        params = m.slice(1).map((p) => decodeURIComponent(p));
      } catch {
        throw new AppError("BAD_REQUEST", "the path is not valid percent-encoding");
      }
      return await r.handle(req, { engines, users, caller }, params);
    }
    throw new AppError("NOT_FOUND", `no route ${path} (${ROUTES.map((r) => r.label).join(", ")})`);
  };
  try {
    server = Bun.serve({
      hostname: host,
      port,
      reusePort: false,
      fetch: (req) => handle(req).catch(responseFor),
      error: () => errorResponse(500, "INTERNAL", "internal error"),
    });
  } catch (e) {
    throw new LoadgenUsageError(`cannot listen on api_addr ${addr}: ${(e as Error).message}`);
  }
  return {
    port: server.port ?? port,
    stop: () => void server.stop(true),
  };
}
