import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AppError, type Logger } from "../core/index.ts";

export const JWT_SECRET_FILE = ".svc_jwt_secret";
/**
 * Shortest accepted HMAC secret, in UTF-8 bytes: a short secret can be brute-forced offline from
 * any one token (RFC 7518 §3.2 asks for a key at least as long as the hash, 256 bits).
 */
export const MIN_SECRET_BYTES = 32;

export const jwtSecretPath = (settingsDbPath: string): string => join(dirname(settingsDbPath), JWT_SECRET_FILE);

/**
 * A configured `coordinator.jwt.secret` must have at least `MIN_SECRET_BYTES` UTF-8 bytes; empty
 * means "generate". Called when the auth module is built, so a bad secret stops the start before
 * any listener binds.
 */
export function checkConfiguredJwtSecret(configured: string): string {
  const bytes = Buffer.byteLength(configured, "utf8");
  if (configured !== "" && bytes < MIN_SECRET_BYTES) {
    throw new AppError(
      "CONFIG_INVALID",
      `coordinator.jwt.secret: must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes}); use a random value (openssl rand -base64 48) or leave it empty to generate one`,
    );
  }
  return configured;
}

/**
 * The HMAC secret (docs/API.md "Authentication", JWT rule 1): `coordinator.jwt.secret` when set; otherwise a secret
 * generated once (48 random bytes, base64url) and kept in `.svc_jwt_secret` beside the settings
 * database with mode 0600, so sessions survive a restart. Never shorter than `MIN_SECRET_BYTES`:
 * a short configured secret stops the start (CONFIG_INVALID naming the key); a short or damaged
 * secret file is replaced by a new one.
 */
export function loadJwtSecret(configured: string, settingsDbPath: string, logger: Logger): string {
  if (configured !== "") return checkConfiguredJwtSecret(configured);
  const path = jwtSecretPath(settingsDbPath);
  const existing = readSecretFile(path);
  if (existing !== undefined && Buffer.byteLength(existing, "utf8") >= MIN_SECRET_BYTES) {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      chmodSync(path, 0o600);
      logger.warn("tightened permissions of the JWT secret file to 0600", { path });
    }
    return existing;
  }
  // 48 random bytes → 64 base64url characters (ASCII), well above MIN_SECRET_BYTES.
  const secret = randomBytes(48).toString("base64url");
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${secret}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (e) {
    throw new AppError(
      "CONFIG_INVALID",
      `cannot write the JWT secret file ${path} (set coordinator.jwt.secret or make the directory writable)`,
      {
        cause: e,
      },
    );
  }
  logger.info("generated a JWT secret", { path });
  return secret;
}

function readSecretFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new AppError("CONFIG_INVALID", `cannot read the JWT secret file ${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}
