import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { AppError, type Logger } from "../core/index.ts";

export const JWT_SECRET_FILE = ".svc_jwt_secret";
const MIN_SECRET_CHARS = 32;

export const jwtSecretPath = (settingsDbPath: string): string => join(dirname(settingsDbPath), JWT_SECRET_FILE);

/**
 * The HMAC secret (spec doc 1, JWT rules 1): `coordinator.jwt.secret` when set; otherwise a secret
 * generated once (48 random bytes, base64url) and kept in `.svc_jwt_secret` beside the settings
 * database with mode 0600, so sessions survive a restart. Never empty.
 */
export function loadJwtSecret(configured: string, settingsDbPath: string, logger: Logger): string {
  if (configured !== "") {
    if (configured.length < MIN_SECRET_CHARS) logger.warn("coordinator.jwt.secret is short; use at least 32 random characters");
    return configured;
  }
  const path = jwtSecretPath(settingsDbPath);
  const existing = readSecretFile(path);
  if (existing !== undefined && existing.length >= MIN_SECRET_CHARS) {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      chmodSync(path, 0o600);
      logger.warn("tightened permissions of the JWT secret file to 0600", { path });
    }
    return existing;
  }
  const secret = randomBytes(48).toString("base64url");
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${secret}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `cannot write the JWT secret file ${path} (set coordinator.jwt.secret or make the directory writable)`, {
      cause: e,
    });
  }
  logger.info("generated a JWT secret", { path });
  return secret;
}

function readSecretFile(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new AppError("CONFIG_INVALID", `cannot read the JWT secret file ${path}: ${(e as Error).message}`, { cause: e });
  }
}
