import { jwt } from "@elysiajs/jwt";
import { fail, ok, type Result } from "../core/index.ts";

/**
 * HS256 JSON Web Tokens (RFC 7519) signed and verified by `@elysiajs/jwt`, which is jose
 * underneath (docs/ARCHITECTURE.md "Auth"). Only `alg: HS256` is accepted: a token claiming `none`
 * or another algorithm is refused before the key is used (RFC 8725 §3.1). Claims follow docs/API.md
 * "Authentication" (JWT rules). The plugin answers `false` for every failure; the reason (counted in
 * `svc_auth_credential_checks_total`) is told apart here without parsing the signature by hand.
 */
export interface SessionClaims {
  /** Subject: the username (stable; usernames cannot be renamed). */
  sub: string;
  username: string;
  admin: boolean;
  /** The session id (`DELETE /auth/sessions/{jti}`). */
  jti: string;
  /** Issued at: the plugin writes the signing time (jose `setIssuedAt()`). */
  iat: number;
  exp: number;
  /** How the user logged in: `internal`, `ldap` or `oauth2`. */
  provider: string;
}

export type JwtFailure = "malformed" | "unsupported_alg" | "bad_signature" | "expired" | "bad_claims";

/** Allowed clock difference between issuer and verifier (seconds). */
export const LEEWAY_SEC = 30;
/** Longer tokens are refused unread (ours are about 350 bytes). */
const MAX_TOKEN_CHARS = 8192;
const ALGORITHMS = ["HS256"];

function decodePart(part: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

function isClaims(v: unknown): v is SessionClaims {
  const c = v as Partial<SessionClaims> | null;
  return (
    typeof c === "object" &&
    c !== null &&
    typeof c.sub === "string" &&
    typeof c.username === "string" &&
    c.username !== "" &&
    typeof c.admin === "boolean" &&
    typeof c.jti === "string" &&
    c.jti !== "" &&
    typeof c.iat === "number" &&
    typeof c.exp === "number" &&
    typeof c.provider === "string"
  );
}

export class JwtSigner {
  private readonly tokens;

  /** `secret` is used as its UTF-8 bytes, so every HS256 library verifies with the same string. */
  constructor(secret: string) {
    if (secret === "") throw new Error("JWT secret must not be empty");
    // The plugin's decorator (`ctx.jwt` in a route) is used directly: sessions are also checked
    // outside a request context (WebSocket upgrades, the OAuth token exchange).
    this.tokens = jwt({ name: "jwt", secret, alg: "HS256" }).decorator.jwt;
  }

  /** `iat` is set to the signing time by the plugin; every other claim is written as given. */
  async sign(claims: SessionClaims): Promise<string> {
    const { iat: _iat, ...rest } = claims;
    return await this.tokens.sign(rest);
  }

  async verify(token: string, nowSec = Math.floor(Date.now() / 1000)): Promise<Result<SessionClaims, JwtFailure>> {
    const parts = token.split(".");
    if (parts.length !== 3 || token.length > MAX_TOKEN_CHARS) return fail("malformed");
    const header = decodePart(parts[0]!) as { alg?: unknown } | undefined;
    if (!header || typeof header !== "object") return fail("malformed");
    if (header.alg !== "HS256") return fail("unsupported_alg");
    if (!/^[A-Za-z0-9_-]+$/.test(parts[2]!)) return fail("malformed");
    const at = (sec: number) => ({
      algorithms: ALGORITHMS,
      clockTolerance: LEEWAY_SEC,
      currentDate: new Date(sec * 1000),
    });
    const payload = await this.tokens.verify(token, at(nowSec));
    if (payload === false) {
      // Expired or forged: an expired token still verifies at a moment before its `exp`.
      const exp = (decodePart(parts[1]!) as { exp?: unknown } | undefined)?.exp;
      if (
        typeof exp === "number" &&
        exp + LEEWAY_SEC <= nowSec &&
        (await this.tokens.verify(token, at(exp - 1))) !== false
      )
        return fail("expired");
      return fail("bad_signature");
    }
    if (!isClaims(payload)) return fail("bad_claims");
    if (payload.iat - LEEWAY_SEC > nowSec) return fail("bad_claims");
    return ok(payload);
  }
}
