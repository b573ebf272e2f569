import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Password hashes of the `users` table (spec doc 1, Users and settings): bcrypt (`$2a$`, `$2b$`,
 * `$2y$`; every password set through the API) or a 64-character lower-case hex SHA-256 digest
 * (legacy/bootstrap). Both verify at login; the digest comparison is constant-time.
 */
export const MIN_PASSWORD_LENGTH = 8;
/** bcrypt work factor for new hashes: about 50-100 ms per verify on the reference machine. */
export const BCRYPT_COST = 10;

export const sha256Hex = (text: string): string => new Bun.CryptoHasher("sha256").update(text).digest("hex");

/**
 * SHA-256 of "sipcapture", HOMER's historical default admin password. A configured or stored hash
 * equal to it is treated as empty (spec doc 1, Bootstrap rules): no installation ends up with a
 * password everybody knows.
 */
export const LEGACY_DEFAULT_DIGEST = sha256Hex("sipcapture");

export const isSha256Hex = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);
export const isBcryptHash = (s: string): boolean => /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(s);

/** Empty, or the well-known default digest: a row in this state may be repaired at start-up. */
export const isEffectivelyEmpty = (hash: string): boolean => {
  const h = hash.trim().toLowerCase();
  return h === "" || h === LEGACY_DEFAULT_DIGEST;
};

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "bcrypt", cost: BCRYPT_COST });
}

/** True when `password` matches `stored`; any malformed or effectively empty hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isEffectivelyEmpty(stored)) return false;
  if (isBcryptHash(stored)) {
    try {
      return await Bun.password.verify(password, stored, "bcrypt");
    } catch {
      return false;
    }
  }
  const digest = stored.trim().toLowerCase();
  if (!isSha256Hex(digest)) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(password), "hex"), Buffer.from(digest, "hex"));
}

let dummy: Promise<string> | undefined;

/**
 * Spends the time of one bcrypt verify when the user does not exist, so response time does not
 * tell an attacker which usernames are real.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(16).toString("hex"));
  await Bun.password.verify(password, await dummy, "bcrypt");
  return false;
}

/** 24 URL-safe characters (144 bits): the one-time bootstrap password. */
export const randomPassword = (): string => randomBytes(18).toString("base64url");
