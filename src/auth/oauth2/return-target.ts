import { fail, ok, type Result } from "../../core/index.ts";

/**
 * Where the browser goes after the OAuth callback (docs/AUTH.md "OAuth 2.0", redirect safety). The
 * rules stop the login from being an open redirect that hands a one-time token to another site:
 *
 * 1. `callback_url` set: it is used; an optional `redirect_uri` must be a relative path on the
 *    same site (it then replaces the path of `callback_url`).
 * 2. `callback_url` empty: only a relative `redirect_uri` (starts with `/`, not `//`) is allowed.
 * 3. An absolute `redirect_uri` without `callback_url` is refused (400).
 * 4. An absolute `callback_url` with an absolute `redirect_uri`: scheme and host must match.
 *
 * Without either the browser returns to the dashboard at `/`.
 */
/** Which rule refused; the message is in `detail`. */
export type ReturnTargetRefusal = "rule1" | "rule2" | "rule3" | "rule4";

/** A path on this site: `/` then not `/` or `\` (browsers read `/\evil` as `//evil`), no control characters. */
export function isRelativePath(v: string): boolean {
  return v.startsWith("/") && !v.startsWith("//") && !v.startsWith("/\\") && !/[\u0000-\u001f\u007f]/.test(v);
}

function absolute(v: string): URL | undefined {
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:" ? u : undefined;
  } catch {
    return undefined;
  }
}

export function resolveReturnTarget(callbackUrl: string, redirectUri: string | undefined): Result<string, ReturnTargetRefusal> {
  const cb = callbackUrl.trim();
  const wanted = redirectUri === undefined || redirectUri === "" ? undefined : redirectUri;
  if (cb === "") {
    if (wanted === undefined) return ok("/");
    if (isRelativePath(wanted)) return ok(wanted);
    if (absolute(wanted) || wanted.startsWith("//") || /^[a-z][a-z0-9+.-]*:/i.test(wanted)) {
      return fail("rule3" as const, "redirect_uri must be a relative path (starting with /) because coordinator.oauth2_provider.callback_url is not set");
    }
    return fail("rule2" as const, "redirect_uri must be a relative path starting with / (not //)");
  }
  if (wanted === undefined) return ok(cb);
  const cbAbs = absolute(cb);
  if (isRelativePath(wanted)) return ok(cbAbs ? new URL(wanted, cbAbs.origin).href : wanted);
  const wantedAbs = absolute(wanted) ?? (wanted.startsWith("//") && cbAbs ? absolute(`${cbAbs.protocol}${wanted}`) : undefined);
  if (cbAbs && wantedAbs) {
    if (wantedAbs.origin === cbAbs.origin) return ok(wantedAbs.href);
    return fail("rule4" as const, `redirect_uri must be on the site of the callback URL (${cbAbs.origin}), not ${wantedAbs.origin}`);
  }
  return fail("rule1" as const, "redirect_uri must be a relative path on the same site as the callback URL");
}

/** Adds `name=value` to the query of `target` (absolute or a relative path), before its `#fragment`. */
export function withQuery(target: string, name: string, value: string): string {
  const rel = !absolute(target);
  const u = new URL(target, "http://relative.invalid");
  u.searchParams.set(name, value);
  return rel ? `${u.pathname}${u.search}${u.hash}` : u.href;
}
