import { fail, ok, type Result } from "../../core/index.ts";

/**
 * Where the browser goes after the OAuth callback (docs/AUTH.md "Redirect safety"). The
 * rules stop the login from being an open redirect that hands a one-time token to another site:
 *
 * 0. Every `redirect_uri` is a safe path on this site (`sitePath`): no whitespace or control
 *    characters, no backslash, no encoded slash or backslash (also double-encoded), no `//` and no
 *    `.`/`..` segment in the path; it is resolved against a placeholder origin, which must not
 *    change, and only path, query and fragment of the resolved URL are kept.
 * 1. `callback_url` set: it is used; an optional `redirect_uri` must be a relative path on the
 *    same site (it then replaces the path of `callback_url`).
 * 2. `callback_url` empty: only a relative `redirect_uri` (starts with `/`, not `//`) is allowed.
 * 3. An absolute `redirect_uri` without `callback_url` is refused (400).
 * 4. An absolute `callback_url` with an absolute `redirect_uri`: scheme and host must match.
 *
 * Without either the browser returns to the dashboard at `/`.
 */
/** Which rule refused; the message is in `detail`. */
export type ReturnTargetRefusal = "rule0" | "rule1" | "rule2" | "rule3" | "rule4";

/** Resolving against this origin shows whether a path stays on the site: any other origin means it left. */
const PLACEHOLDER_ORIGIN = "http://same.invalid";

/** Whitespace (a tab or newline inside is dropped by URL parsers, so `/\t/evil` becomes `//evil`) and C0/C1 control characters. */
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;
/** `%2F` and `%5C`, also encoded again (`%252F`, `%25252F`, …): a later decoding step would turn them into `/` or `\`. */
const ENCODED_SLASH = /%(?:25)*(?:2f|5c)/i;
/** `%2E` in any depth of encoding: URL parsers read `%2e%2e` as a `..` segment. */
const ENCODED_DOT = /%(?:25)*2e/gi;

/**
 * The path, query and fragment of `raw` when it is a safe path on this site (rule 0 above), in the
 * normal form the URL parser gives it; else the reason in words. `raw` must start with `/`.
 */
export function sitePath(raw: string): Result<string, "rule0"> {
  const refuse = (why: string) => fail("rule0" as const, `redirect_uri ${why}`);
  if (WHITESPACE_OR_CONTROL.test(raw))
    return refuse("must not contain spaces, tabs, newlines or other control characters");
  // Browsers read `\` as `/` in http(s) URLs, so `/\evil.example` is `//evil.example`.
  if (raw.includes("\\")) return refuse("must not contain a backslash");
  if (ENCODED_SLASH.test(raw))
    return refuse("must not contain an encoded slash or backslash (%2F, %5C, also double-encoded)");
  if (!raw.startsWith("/")) return refuse("must be a path on this site starting with /");
  const path = raw.split(/[?#]/, 1)[0] ?? "";
  // `//host` is another site (protocol-relative), wherever dot segments or a proxy's normalising put it.
  if (path.includes("//")) return refuse("must not contain // in its path");
  const segments = path.replace(ENCODED_DOT, ".").split("/");
  if (segments.some((s) => s === "." || s === "..")) return refuse("must not contain . or .. path segments");
  let u: URL;
  try {
    u = new URL(raw, PLACEHOLDER_ORIGIN);
  } catch {
    return refuse("is not a valid URL path");
  }
  const out = `${u.pathname}${u.search}${u.hash}`;
  // The checks above already imply both; this is the rule itself, kept should a check ever miss a case.
  if (u.origin !== PLACEHOLDER_ORIGIN || !out.startsWith("/") || out.startsWith("//"))
    return refuse("must stay on this site");
  return ok(out);
}

function absolute(v: string): URL | undefined {
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:" ? u : undefined;
  } catch {
    return undefined;
  }
}

/** `scheme://authority` or `//authority` at the start of an absolute or protocol-relative URL. */
const SCHEME_AND_AUTHORITY = /^(?:[a-z][a-z0-9+.-]*:)?\/\/[^/?#]*/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

export function resolveReturnTarget(
  callbackUrl: string,
  redirectUri: string | undefined,
): Result<string, ReturnTargetRefusal> {
  const cb = callbackUrl.trim();
  const wanted = redirectUri === undefined || redirectUri === "" ? undefined : redirectUri;
  if (wanted === undefined) return ok(cb === "" ? "/" : cb);
  const cbAbs = cb === "" ? undefined : absolute(cb);
  const isPath = wanted.startsWith("/") && !wanted.startsWith("//");
  if (isPath || WHITESPACE_OR_CONTROL.test(wanted) || wanted.includes("\\") || ENCODED_SLASH.test(wanted)) {
    const path = sitePath(wanted);
    if (!path.ok) return path;
    return ok(cbAbs ? `${cbAbs.origin}${path.value}` : path.value);
  }
  if (cb === "") {
    if (absolute(wanted) || wanted.startsWith("//") || HAS_SCHEME.test(wanted)) {
      return fail(
        "rule3" as const,
        "redirect_uri must be a relative path (starting with /) because coordinator.oauth2_provider.callback_url is not set",
      );
    }
    return fail("rule2" as const, "redirect_uri must be a relative path starting with / (not //)");
  }
  const wantedAbs =
    absolute(wanted) ?? (wanted.startsWith("//") && cbAbs ? absolute(`${cbAbs.protocol}${wanted}`) : undefined);
  if (cbAbs && wantedAbs) {
    if (wantedAbs.origin !== cbAbs.origin)
      return fail(
        "rule4" as const,
        `redirect_uri must be on the site of the callback URL (${cbAbs.origin}), not ${wantedAbs.origin}`,
      );
    // Same site: its path is held to rule 0 as a relative one would be.
    const rest = wanted.replace(SCHEME_AND_AUTHORITY, "");
    const path = sitePath(rest.startsWith("/") ? rest : `/${rest}`);
    return path.ok ? ok(`${cbAbs.origin}${path.value}`) : path;
  }
  return fail("rule1" as const, "redirect_uri must be a relative path on the same site as the callback URL");
}

/** Adds `name=value` to the query of `target` (absolute or a relative path), before its `#fragment`. */
export function withQuery(target: string, name: string, value: string): string {
  const rel = !absolute(target);
  const u = new URL(target, PLACEHOLDER_ORIGIN);
  u.searchParams.set(name, value);
  if (!rel) return u.href;
  const out = `${u.pathname}${u.search}${u.hash}`;
  // A relative target was checked by `sitePath`; `//…` here would send the parameter to another host.
  if (u.origin !== PLACEHOLDER_ORIGIN || out.startsWith("//"))
    throw new Error(`unsafe return target ${JSON.stringify(target)}`);
  return out;
}
