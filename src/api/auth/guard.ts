import { Elysia } from "elysia";
import type { AuthService, CoordinatorConfig, Identity } from "../../auth/index.ts";
import { AppError } from "../../core/index.ts";
import { SESSION_COOKIE, isHttps, cookieValue } from "./cookies.ts";
import { TOKEN_ACCESS_DISABLED } from "../tokens/access.ts";

/**
 * Authentication for the whole v4 API, protected by default.
 *
 * `authGuard` runs in `onRequest` (before routing, for every request of the app): any path under
 * `{api_prefix}/api/v4` that is not in `OPEN_ROUTES` needs a credential, so a route added later by
 * any feature plugin is protected without doing anything. Feature plugins read the caller with
 *
 * ```ts
 * new Elysia({ name: "svc-search" })
 *   .use(authContext)                       // types and resolves `auth` in the handler context
 *   .post("/users", ({ body }) => ..., { admin: true, body: ... })
 * ```
 *
 * `auth` is `{ username, isAdmin, via: "jwt" | "cookie" | "token", provider, jti?, tokenId? }`.
 * `authOf(request)` gives the same outside a handler (WebSocket `open`, for example). A route
 * that must be reachable without login is added to `OPEN_ROUTES` here, deliberately; a WebSocket
 * route that takes `?access_token=` is added to `WEBSOCKET_ROUTES`.
 */
export interface AuthContext extends Identity {
  via: "jwt" | "cookie" | "token";
}

/** Open operations (docs/API.md "Authentication") plus the API description. Paths relative to the v4 base. */
export const OPEN_ROUTES: ReadonlyArray<{ method: "GET" | "POST"; path: RegExp }> = [
  { method: "POST", path: /^\/auth\/sessions$/ },
  { method: "GET", path: /^\/auth\/providers$/ },
  { method: "GET", path: /^\/auth\/oauth2\/[^/]+\/redirect$/ },
  { method: "GET", path: /^\/auth\/oauth2\/[^/]+\/callback$/ },
  { method: "POST", path: /^\/auth\/oauth2\/token$/ },
  { method: "GET", path: /^\/openapi\.json$/ },
  { method: "GET", path: /^\/openapi$/ },
  // Deliberately open: a share link's download (docs/API.md "Exports and share links": "the public
  // PCAP and text downloads"). The 256-bit token in the path is the credential; only its hash is stored
  // and it expires (src/api/exports).
  { method: "GET", path: /^\/share\/[A-Za-z0-9_-]+\/(?:pcap|text)$/ },
  // Deliberately open to the login guard: an edge's announcement carries the enrolment token
  // instead, checked by the route in constant time, which exists only with coordinator.enrollment.enable
  // (docs/DEPLOY.md "Finding the edges"; src/api/enrollment).
  { method: "POST", path: /^\/cluster\/enroll$/ },
];

/** The router ignores one trailing slash, so the route lists do too. */
const withoutTrailingSlash = (relPath: string): string => (relPath.length > 1 ? relPath.replace(/\/$/, "") : relPath);

/**
 * The WebSocket endpoints (docs/API.md "Authentication"), relative to the v4
 * base: the only routes where `?access_token=` is read, and only on a GET upgrade request (a
 * browser cannot set an Authorization header on a WebSocket handshake; docs/API.md
 * "Authentication"). A route opts in by being listed here, deliberately, like `OPEN_ROUTES`; a query
 * token anywhere else is ignored, whatever the headers say, because tokens in URLs end up in proxy
 * logs and browser history.
 */
export const WEBSOCKET_ROUTES: readonly RegExp[] = [/^\/stream\/hep$/, /^\/games\/netris$/, /^\/games\/netchess$/];

/** The query-string token applies to this request: a GET WebSocket upgrade of a listed route. */
export function acceptsQueryToken(request: Request, relPath: string): boolean {
  if (request.method !== "GET" || request.headers.get("upgrade")?.toLowerCase() !== "websocket") return false;
  const p = withoutTrailingSlash(relPath);
  return WEBSOCKET_ROUTES.some((r) => r.test(p));
}

export const v4Base = (c: CoordinatorConfig): string => `${c.http_server.api_prefix.replace(/\/+$/, "")}/api/v4`;

/** Whether `relPath` (relative to the v4 base) is one of `OPEN_ROUTES` for `method`. */
export function isOpenRoute(method: string, relPath: string): boolean {
  const m = method === "HEAD" ? "GET" : method;
  const p = withoutTrailingSlash(relPath);
  return OPEN_ROUTES.some((r) => r.method === m && r.path.test(p));
}

const identities = new WeakMap<Request, AuthContext>();

/** The authenticated caller of a request that passed the guard; 401 otherwise (fail closed). */
export function authOf(request: Request): AuthContext {
  const a = identities.get(request);
  if (!a) throw new AppError("UNAUTHORIZED", "authentication required");
  return a;
}

export function requireAdmin(auth: AuthContext): void {
  if (!auth.isAdmin) throw new AppError("FORBIDDEN", "administrator rights required");
}

/**
 * Adds `auth` to the context of the routes a plugin registers after `.use(authContext)`. Unnamed on
 * purpose: a named plugin is deduplicated, and its scoped resolve would then leak into whichever
 * parent used it first instead of applying to each feature plugin that asks for it.
 */
export const authContext = new Elysia()
  .resolve({ as: "scoped" }, ({ request }) => ({ auth: authOf(request) }))
  // `admin: true` on a route: 403 for a caller who is not an administrator, checked once the
  // request is validated and before the handler runs (docs/AUTH.md "Administrator routes").
  .macro({
    admin: (on: boolean) => ({
      beforeHandle({ request }: { request: Request }) {
        if (on) requireAdmin(authOf(request));
      },
    }),
  });

const unauthorized = (message: string) => new AppError("UNAUTHORIZED", message);
const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The origin (scheme, host, port) the browser used for this request: the request URL's, with the
 * scheme a TLS-terminating proxy reports in X-Forwarded-Proto (a cross-site page cannot set that
 * header on a browser request).
 */
export function ownOrigin(request: Request): string {
  const u = new URL(request.url);
  if (u.protocol === "http:" && isHttps(request)) u.protocol = "https:";
  return u.origin;
}

/**
 * CSRF defence for cookie sessions: a write must come from the server's own origin (scheme, host
 * and port all equal: http://host is another origin than https://host, RFC 6454) or a
 * `coordinator.http_server.trusted_origins` entry. Bearer and API-token callers are not checked:
 * a browser never attaches those by itself.
 */
export function checkSameOrigin(request: Request, trusted: ReadonlySet<string>): void {
  const raw = request.headers.get("origin") ?? request.headers.get("referer");
  let origin: URL | undefined;
  try {
    origin = raw && raw !== "null" ? new URL(raw) : undefined;
  } catch {
    origin = undefined;
  }
  if (!origin)
    throw new AppError(
      "FORBIDDEN",
      "cross-site request refused: cookie-authenticated writes need an Origin or Referer header",
    );
  if (origin.origin === ownOrigin(request) || trusted.has(origin.origin)) return;
  throw new AppError(
    "FORBIDDEN",
    `cross-site request refused: origin ${origin.origin} is not trusted (coordinator.http_server.trusted_origins)`,
  );
}

async function authenticate(
  request: Request,
  url: URL,
  relPath: string,
  service: AuthService,
  c: CoordinatorConfig,
  trusted: ReadonlySet<string>,
): Promise<AuthContext> {
  const authz = request.headers.get("authorization");
  if (authz !== null) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) throw unauthorized("Authorization header must be: Bearer <token>");
    const r = await service.verifySession(m[1]!);
    if (!r.ok) throw unauthorized(r.reason === "revoked" ? "session has been revoked" : "invalid or expired token");
    return { ...r.value, via: "jwt" };
  }
  const apiToken = request.headers.get(c.api_settings.auth_token_header);
  if (apiToken !== null && apiToken.trim() !== "") {
    const r = service.verifyApiToken(apiToken);
    if (!r.ok)
      throw unauthorized(
        r.reason === "disabled" ? TOKEN_ACCESS_DISABLED : "invalid, inactive, expired or exhausted API token",
      );
    return { ...r.value, via: "token" };
  }
  const cookie = cookieValue(request.headers.get("cookie"), SESSION_COOKIE);
  if (cookie) {
    const r = await service.verifySession(cookie);
    if (!r.ok) throw unauthorized("session cookie is invalid, expired or revoked; log in again");
    if (UNSAFE.has(request.method)) checkSameOrigin(request, trusted);
    return { ...r.value, via: "cookie" };
  }
  // Query tokens leak into proxy logs and history: only on the WebSocket routes (WEBSOCKET_ROUTES).
  const queryToken = url.searchParams.get("access_token");
  if (queryToken && acceptsQueryToken(request, relPath)) {
    const r = await service.verifySession(queryToken);
    if (!r.ok) throw unauthorized("invalid or expired access_token");
    return { ...r.value, via: "jwt" };
  }
  throw unauthorized("authentication required");
}

/** Mount once, first among the v4 plugins (it is a no-op for paths outside the v4 base). */
export function authGuard(service: AuthService, c: CoordinatorConfig) {
  const base = v4Base(c);
  const trusted = new Set(
    c.http_server.trusted_origins.flatMap((o) => {
      try {
        return [new URL(o).origin];
      } catch {
        return [];
      }
    }),
  );
  return new Elysia({ name: "svc-auth-guard" }).onRequest(async ({ request, set }) => {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path !== base && !path.startsWith(`${base}/`)) return;
    const relPath = path.slice(base.length) || "/";
    if (isOpenRoute(request.method, relPath)) return;
    try {
      identities.set(request, await authenticate(request, url, relPath, service, c, trusted));
    } catch (e) {
      if (e instanceof AppError && e.code === "UNAUTHORIZED") set.headers["www-authenticate"] = 'Bearer realm="svc"';
      throw e;
    }
  });
}
