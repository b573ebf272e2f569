import { createHash } from "node:crypto";

/**
 * The session cookie `svc_session` (spec doc 1, Authentication: "HttpOnly cookie, sent by browsers
 * on the WebSocket handshake"): HttpOnly so scripts cannot read it, SameSite=Lax so cross-site
 * sub-requests do not carry it, Secure when the request came over HTTPS.
 */
export const SESSION_COOKIE = "svc_session";

export function parseCookies(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

export function sessionCookie(token: string, maxAgeSec: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeSec))}${secure ? "; Secure" : ""}`;
}

export const clearedSessionCookie = (secure: boolean): string => `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT${secure ? "; Secure" : ""}`;

/** HTTPS as the browser saw it: the request URL, or a TLS-terminating proxy's X-Forwarded-Proto. */
export const isHttps = (request: Request): boolean => request.url.startsWith("https:") || request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase() === "https";

/**
 * The OAuth browser binding (docs/AUTH.md "Browser binding"): one cookie per started
 * sign-in, so two tabs signing in at once do not overwrite each other's. The name comes from a hash
 * of the state (the callback's `state` is client input and never reaches a header as such).
 */
export const oauthBindingCookieName = (state: string): string => `svc_oauth2_${createHash("sha256").update(state).digest("hex").slice(0, 24)}`;

/** HttpOnly; SameSite=Lax (sent on the provider's top-level redirect back, not on cross-site sub-requests); only to the callback path. */
export const oauthBindingCookie = (state: string, binding: string, path: string, maxAgeSec: number, secure: boolean): string =>
  `${oauthBindingCookieName(state)}=${binding}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeSec))}${secure ? "; Secure" : ""}`;

export const clearedOauthBindingCookie = (state: string, path: string, secure: boolean): string =>
  `${oauthBindingCookieName(state)}=; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT${secure ? "; Secure" : ""}`;
