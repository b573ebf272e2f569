import { randomBytes } from "node:crypto";
import { sha256Hex } from "./passwords.ts";

/**
 * Static API token secrets: `svc_` + 32 random bytes (base64url). The prefix makes a leaked token
 * easy to recognise in logs and secret scanners; only the SHA-256 is stored (a 256-bit random
 * value needs no slow hash). The secret is shown once, in the create response.
 */
export const API_TOKEN_PREFIX = "svc_";

export function generateApiToken(): { secret: string; hash: string; displayPrefix: string } {
  const secret = `${API_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { secret, hash: hashApiToken(secret), displayPrefix: secret.slice(0, API_TOKEN_PREFIX.length + 4) };
}

export const hashApiToken = (secret: string): string => sha256Hex(secret);
