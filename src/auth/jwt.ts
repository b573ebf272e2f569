import { fail, ok, type Result } from "../core/index.ts";

/**
 * HS256 JSON Web Tokens (RFC 7519, RFC 7515 §A.1) with WebCrypto. Only `alg: HS256` is accepted:
 * a token claiming `none` or an asymmetric algorithm is rejected before any key is used
 * (RFC 8725 §3.1). Claims follow spec doc 1, "JWT rules".
 */
export interface SessionClaims {
  /** Subject: the username (stable; usernames cannot be renamed). */
  sub: string;
  username: string;
  admin: boolean;
  /** The session id (`DELETE /auth/sessions/{jti}`). */
  jti: string;
  iat: number;
  exp: number;
  /** How the user logged in: `internal`, `ldap` or `oauth2`. */
  provider: string;
}

export type JwtFailure = "malformed" | "unsupported_alg" | "bad_signature" | "expired" | "bad_claims";

const enc = new TextEncoder();
const dec = new TextDecoder();
const b64url = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString("base64url");
const HEADER = b64url(enc.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));

/** Allowed clock difference between issuer and verifier (seconds). */
export const LEEWAY_SEC = 30;

function decodeJson(part: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  try {
    return JSON.parse(dec.decode(Buffer.from(part, "base64url")));
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
  private readonly key: Promise<CryptoKey>;

  /** `secret` is used as its UTF-8 bytes, so any HS256 library verifies with the same string. */
  constructor(secret: string) {
    if (secret === "") throw new Error("JWT secret must not be empty");
    this.key = crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  }

  async sign(claims: SessionClaims): Promise<string> {
    const body = `${HEADER}.${b64url(enc.encode(JSON.stringify(claims)))}`;
    const sig = await crypto.subtle.sign("HMAC", await this.key, enc.encode(body));
    return `${body}.${b64url(sig)}`;
  }

  async verify(token: string, nowSec = Math.floor(Date.now() / 1000)): Promise<Result<SessionClaims, JwtFailure>> {
    const parts = token.split(".");
    if (parts.length !== 3 || token.length > 8192) return fail("malformed");
    const [h, p, s] = parts as [string, string, string];
    const header = decodeJson(h) as { alg?: unknown; typ?: unknown } | undefined;
    if (!header || typeof header !== "object") return fail("malformed");
    if (header.alg !== "HS256") return fail("unsupported_alg");
    if (!/^[A-Za-z0-9_-]+$/.test(s)) return fail("malformed");
    // crypto.subtle.verify compares the MAC in constant time.
    const valid = await crypto.subtle.verify("HMAC", await this.key, Buffer.from(s, "base64url"), enc.encode(`${h}.${p}`));
    if (!valid) return fail("bad_signature");
    const claims = decodeJson(p);
    if (!isClaims(claims)) return fail("bad_claims");
    if (claims.exp + LEEWAY_SEC <= nowSec) return fail("expired");
    if (claims.iat - LEEWAY_SEC > nowSec) return fail("bad_claims");
    return ok(claims);
  }
}
