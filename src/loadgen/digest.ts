/**
 * HTTP Digest for SIP (RFC 3261 §22.4, RFC 2617 §3.2.2, RFC 7616 §3.4): answers a
 * WWW-Authenticate / Proxy-Authenticate challenge with MD5 or SHA-256, qop=auth or no qop.
 */
import { createHash, randomBytes } from "node:crypto";

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  algorithm: string;
  /** "auth" when the server offers it (auth-int is not offered back). */
  qop?: string;
}

/** Parses `Digest realm="…", nonce="…", …`; null when it is not a Digest challenge. */
export function parseDigestChallenge(value: string): DigestChallenge | null {
  const m = /^\s*Digest\s+(.*)$/is.exec(value);
  if (!m) return null;
  const params = new Map<string, string>();
  const re = /([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]+))/g;
  for (let p = re.exec(m[1]!); p; p = re.exec(m[1]!)) params.set(p[1]!.toLowerCase(), p[2] ?? p[3] ?? "");
  const realm = params.get("realm");
  const nonce = params.get("nonce");
  if (realm === undefined || nonce === undefined) return null;
  const qops = (params.get("qop") ?? "").split(",").map((q) => q.trim().toLowerCase());
  const algorithm = params.get("algorithm") ?? "MD5";
  return { realm, nonce, opaque: params.get("opaque"), algorithm, qop: qops.includes("auth") ? "auth" : undefined };
}

function hashFor(algorithm: string): (s: string) => string {
  const name = algorithm.toUpperCase().replace(/-SESS$/, "") === "SHA-256" ? "sha256" : "md5";
  return (s) => createHash(name).update(s).digest("hex");
}

/** The Authorization / Proxy-Authorization value for one request (nonce count `nc`). */
export function digestAuthorization(
  ch: DigestChallenge,
  req: { method: string; uri: string; username: string; password: string; nc?: number; cnonce?: string },
): string {
  const h = hashFor(ch.algorithm);
  const cnonce = req.cnonce ?? randomBytes(8).toString("hex");
  const nc = (req.nc ?? 1).toString(16).padStart(8, "0");
  let ha1 = h(`${req.username}:${ch.realm}:${req.password}`);
  if (/-sess$/i.test(ch.algorithm)) ha1 = h(`${ha1}:${ch.nonce}:${cnonce}`);
  const ha2 = h(`${req.method}:${req.uri}`);
  const response = ch.qop ? h(`${ha1}:${ch.nonce}:${nc}:${cnonce}:${ch.qop}:${ha2}`) : h(`${ha1}:${ch.nonce}:${ha2}`);
  const parts = [
    `Digest username="${req.username}"`,
    `realm="${ch.realm}"`,
    `nonce="${ch.nonce}"`,
    `uri="${req.uri}"`,
    `response="${response}"`,
    `algorithm=${ch.algorithm}`,
  ];
  if (ch.qop) parts.push(`qop=${ch.qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
  if (ch.opaque !== undefined) parts.push(`opaque="${ch.opaque}"`);
  return parts.join(", ");
}
