import { createHash } from "node:crypto";

/**
 * The session cookie `svc_session` (docs/API.md "Authentication": browsers send it, also
 * on a WebSocket handshake): HttpOnly so scripts cannot read it, SameSite=Lax so cross-site
 * sub-requests do not carry it, Secure when the request came over HTTPS.
 */
export const SESSION_COOKIE = "svc_session";

/**
 * The value of cookie `name` in a Cookie header (Bun's cookie parser: the first of several with
 * that name, percent-escapes decoded); surrounding double quotes, which RFC 6265 allows around a
 * value, are dropped. Undefined when absent.
 */
export function cookieValue(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  const v = new Bun.CookieMap(header).get(name);
  if (v === null) return undefined;
  return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
}

/** HttpOnly, SameSite=Lax and Secure over HTTPS, as every cookie svc sets; Max-Age 0 with an old Expires clears it. */
function cookie(name: string, value: string, path: string, maxAgeSec: number, secure: boolean): string {
  const cleared = maxAgeSec <= 0;
  return new Bun.Cookie(name, value, {
    path,
    httpOnly: true,
    sameSite: "lax",
    secure,
    maxAge: Math.max(0, Math.floor(maxAgeSec)),
    ...(cleared ? { expires: new Date(0) } : {}),
  }).serialize();
}

export const sessionCookie = (token: string, maxAgeSec: number, secure: boolean): string =>
  cookie(SESSION_COOKIE, token, "/", maxAgeSec, secure);

export const clearedSessionCookie = (secure: boolean): string => cookie(SESSION_COOKIE, "", "/", 0, secure);

/** HTTPS as the browser saw it: the request URL, or a TLS-terminating proxy's X-Forwarded-Proto. */
export const isHttps = (request: Request): boolean =>
  request.url.startsWith("https:") ||
  request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";

/**
 * The OAuth browser binding (docs/AUTH.md "Browser binding"): one cookie per started
 * sign-in, so two tabs signing in at once do not overwrite each other's. The name comes from a hash
 * of the state (the callback's `state` is client input and never reaches a header as such).
 */
export const oauthBindingCookieName = (state: string): string =>
  `svc_oauth2_${createHash("sha256").update(state).digest("hex").slice(0, 24)}`;

/** HttpOnly; SameSite=Lax (sent on the provider's top-level redirect back, not on cross-site sub-requests); only to the callback path. */
export const oauthBindingCookie = (
  state: string,
  binding: string,
  path: string,
  maxAgeSec: number,
  secure: boolean,
): string => cookie(oauthBindingCookieName(state), binding, path, maxAgeSec, secure);

export const clearedOauthBindingCookie = (state: string, path: string, secure: boolean): string =>
  cookie(oauthBindingCookieName(state), "", path, 0, secure);
