import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Password hashes of the `users` table (docs/API.md "Users and settings"). Three forms verify:
 * - bcrypt (`$2a$`, `$2b$`, `$2y$`): every password set through the API, and every password after
 *   its first successful login (`needsRehash`);
 * - `sha256+<bcrypt>`: bcrypt of the SHA-256 hex digest. This is how a configured
 *   `coordinator.auth.admin_password_hash` (and `--reset-admin-password`) is stored: only the digest
 *   is known until the admin logs in, and an unsalted digest must not sit in the database;
 * - a bare 64-character hex SHA-256 digest (rows written by older builds or other tools); start-up
 *   wraps these into the form above (`wrapLegacyDigests`).
 * Every verification, whatever the stored form and also for a missing user or an empty hash, costs
 * one bcrypt verify, so response time tells nothing about the account (docs/ARCHITECTURE.md, Auth).
 */
export const MIN_PASSWORD_LENGTH = 8;
/** bcrypt work factor for new hashes: about 50-100 ms per verify on the reference machine. */
export const BCRYPT_COST = 10;
/** Prefix of a bcrypt hash of a SHA-256 hex digest. */
export const WRAPPED_DIGEST_PREFIX = "sha256+";

export const sha256Hex = (text: string): string => new Bun.CryptoHasher("sha256").update(text).digest("hex");

/**
 * SHA-256 of "sipcapture", HOMER's historical default admin password. A configured or stored hash
 * equal to it is treated as empty (docs/API.md "Authentication", bootstrap): no installation ends up with a
 * password everybody knows.
 */
export const LEGACY_DEFAULT_DIGEST = sha256Hex("sipcapture");

export const isSha256Hex = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);
export const isBcryptHash = (s: string): boolean => /^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(s);
export const isWrappedDigest = (s: string): boolean =>
  s.startsWith(WRAPPED_DIGEST_PREFIX) && isBcryptHash(s.slice(WRAPPED_DIGEST_PREFIX.length));
/** A bare SHA-256 digest as older builds stored it (either case). */
export const isLegacyDigest = (s: string): boolean => isSha256Hex(s.trim().toLowerCase());

/** Empty, or the well-known default digest: a row in this state may be repaired at start-up. */
export const isEffectivelyEmpty = (hash: string): boolean => {
  const h = hash.trim().toLowerCase();
  return h === "" || h === LEGACY_DEFAULT_DIGEST;
};

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "bcrypt", cost: BCRYPT_COST });
}

/** The stored form of a known SHA-256 digest (lower-case hex) whose password is not known yet. */
export async function wrapDigest(digest: string): Promise<string> {
  return WRAPPED_DIGEST_PREFIX + (await hashPassword(digest.trim().toLowerCase()));
}

/** The same, synchronously, for the one-shot `--reset-admin-password` command. */
export function wrapDigestSync(digest: string): string {
  return (
    WRAPPED_DIGEST_PREFIX +
    Bun.password.hashSync(digest.trim().toLowerCase(), { algorithm: "bcrypt", cost: BCRYPT_COST })
  );
}

/** True when a stored hash should be replaced by `hashPassword(password)` after a successful login. */
export function needsRehash(stored: string): boolean {
  if (!isBcryptHash(stored)) return true;
  return Number(stored.slice(4, 6)) < BCRYPT_COST;
}

async function bcryptVerify(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash, "bcrypt");
  } catch {
    return false;
  }
}

/**
 * True when `password` matches `stored`; any malformed or effectively empty hash never matches.
 * Exactly one bcrypt verify in every case (see the header).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isEffectivelyEmpty(stored)) return verifyAgainstDummy(password);
  if (isBcryptHash(stored)) return bcryptVerify(password, stored);
  if (isWrappedDigest(stored)) return bcryptVerify(sha256Hex(password), stored.slice(WRAPPED_DIGEST_PREFIX.length));
  const digest = stored.trim().toLowerCase();
  await verifyAgainstDummy(password);
  if (!isSha256Hex(digest)) return false;
  return timingSafeEqual(Buffer.from(sha256Hex(password), "hex"), Buffer.from(digest, "hex"));
}

let dummy: Promise<string> | undefined;
let dummyReady = false;

/**
 * Computes the dummy hash ahead of the first login: the auth module starts it without waiting
 * (docs/ARCHITECTURE.md "Start-up"), a login that needs it before it exists waits for it.
 */
export function prepareDummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString("hex")).then((h) => {
    dummyReady = true;
    return h;
  });
  return dummy;
}

/** True once the dummy hash exists. */
export const dummyHashReady = (): boolean => dummyReady;

/**
 * Spends the time of one bcrypt verify when there is nothing real to verify against (unknown
 * user, empty hash), so response time does not tell an attacker which usernames are real.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  await bcryptVerify(password, await prepareDummyHash());
  return false;
}

/** 24 URL-safe characters (144 bits): the one-time bootstrap password. */
export const randomPassword = (): string => randomBytes(18).toString("base64url");
