import { AppError, type Logger } from "../core/index.ts";
import { SettingsDb, UsersRepo } from "../settings/index.ts";
import {
  LEGACY_DEFAULT_DIGEST,
  hashPassword,
  isEffectivelyEmpty,
  isSha256Hex,
  randomPassword,
  wrapDigest,
  wrapDigestSync,
} from "./passwords.ts";
import type { CoordinatorConfig } from "./providers.ts";

/** The configured admin digest, lower-cased; "" when unset or the well-known default. */
function configuredDigest(c: CoordinatorConfig, logger?: Logger): string {
  const digest = c.auth.admin_password_hash.trim().toLowerCase();
  if (digest === "") return "";
  if (!isSha256Hex(digest)) {
    throw new AppError(
      "CONFIG_INVALID",
      "coordinator.auth.admin_password_hash: must be a 64-character hex SHA-256 digest",
    );
  }
  if (digest === LEGACY_DEFAULT_DIGEST) {
    logger?.warn(
      "coordinator.auth.admin_password_hash is the well-known default digest and is ignored; a random password is used instead",
    );
    return "";
  }
  return digest;
}

export type BootstrapOutcome = "created" | "repaired" | "kept";

/** The administrator and the password the bootstrap generated: shown once, in the first-run banner. */
export interface FirstRunAdmin {
  username: string;
  password: string;
}

export interface BootstrapResult {
  outcome: BootstrapOutcome;
  /** Present when a random password was generated (no configured digest). */
  generated?: FirstRunAdmin;
}

/**
 * Bootstrap rules (docs/API.md "Authentication", password login): when no row has the admin name, one is inserted
 * once (admin, active) with the configured digest, or else a random password stored as bcrypt and
 * returned, for `svc serve` to print once in the first-run banner on stderr (the journal under
 * systemd); the log line says that it happened, never the password (docs/INSTALL.md "First login"). A row with a non-empty hash is never changed; a row with an empty (or well-known
 * default) hash is repaired the same way. The configured digest is stored as bcrypt of the digest
 * (`wrapDigest`), never bare: a bare SHA-256 is unsalted and verifies in microseconds, which both
 * exposes it and made this account answer faster than every other one.
 */
export async function bootstrapAdmin(users: UsersRepo, c: CoordinatorConfig, logger: Logger): Promise<BootstrapResult> {
  const username = c.auth.admin_user.trim();
  if (username === "") throw new AppError("CONFIG_INVALID", "coordinator.auth.admin_user: must not be empty");
  const digest = configuredDigest(c, logger);
  const existing = users.getWithSecret(username);
  if (existing && !isEffectivelyEmpty(existing.passwordHash)) return { outcome: "kept" };

  let hash: string;
  let generated: string | undefined;
  if (digest === "") {
    generated = randomPassword();
    hash = await hashPassword(generated);
  } else {
    hash = await wrapDigest(digest);
  }
  // A generated password was shown in a banner and maybe a journal: the dashboard asks for a new
  // one at first login (docs/AUTH.md "First login: change the generated password").
  const mustChangePassword = generated !== undefined;
  if (existing) users.update(existing.id, { passwordHash: hash, mustChangePassword });
  else users.create({ username, passwordHash: hash, isAdmin: true, isActive: true, mustChangePassword });
  const outcome: BootstrapOutcome = existing ? "repaired" : "created";
  if (generated !== undefined) {
    logger.warn(
      "bootstrap administrator password generated: printed once in the first-run banner on stderr; log in and change it",
      { username, outcome },
    );
    return { outcome, generated: { username, password: generated } };
  }
  logger.info("bootstrap administrator set from coordinator.auth.admin_password_hash", { username, outcome });
  return { outcome };
}

/**
 * Wraps every bare SHA-256 digest left by an older build (or written by another tool) into bcrypt
 * of the digest, the same password in a slow salted form. One bcrypt hash per such row, once.
 */
export async function wrapLegacyDigests(users: UsersRepo, logger: Logger): Promise<number> {
  let wrapped = 0;
  for (const row of users.withBareDigest()) {
    if (isEffectivelyEmpty(row.passwordHash)) continue; // never matches; bootstrap repairs the admin's
    if (users.replacePasswordHash(row.id, row.passwordHash, await wrapDigest(row.passwordHash))) wrapped++;
  }
  if (wrapped > 0) logger.info("stored SHA-256 password digests rehashed with bcrypt", { users: wrapped });
  return wrapped;
}

/**
 * `svc --config-path <file> --reset-admin-password`: writes the configured digest (as bcrypt of
 * the digest, like the bootstrap) for `admin_user` into `users` of the settings database (creating the row if needed) and returns the
 * confirmation line. Missing requirements are CONFIG_INVALID (exit 2).
 */
export function resetAdminPassword(c: CoordinatorConfig): string {
  if (c.auth.admin_password_hash.trim() === "") {
    throw new AppError(
      "CONFIG_INVALID",
      "--reset-admin-password needs coordinator.auth.admin_password_hash (SHA-256 hex of the new password); `svc reset-admin-password` sets a random or typed one instead",
    );
  }
  if (c.settings_db_path.trim() === "")
    throw new AppError("CONFIG_INVALID", "--reset-admin-password needs coordinator.settings_db_path");
  const digest = configuredDigest(c);
  if (digest === "") {
    throw new AppError(
      "CONFIG_INVALID",
      "coordinator.auth.admin_password_hash is the well-known default digest; choose another password",
    );
  }
  const username = c.auth.admin_user.trim();
  if (username === "") throw new AppError("CONFIG_INVALID", "coordinator.auth.admin_user: must not be empty");
  const db = new SettingsDb(c.settings_db_path);
  db.open();
  try {
    const users = new UsersRepo(db);
    const existing = users.getByUsername(username);
    const hash = wrapDigestSync(digest);
    if (existing) users.update(existing.id, { passwordHash: hash, isAdmin: true, isActive: true });
    else users.create({ username, passwordHash: hash, isAdmin: true, isActive: true });
    return `password of administrator "${username}" ${existing ? "reset" : "set (user created)"} in ${c.settings_db_path}`;
  } finally {
    db.close();
  }
}

/**
 * `svc reset-admin-password`: gives `admin_user` the password `password` (bcrypt), creating the
 * row if needed and making it an active administrator, without a configured digest (the way back
 * when the first-run password is lost). Sessions issued before end (users-repo update).
 */
export async function setAdminPassword(
  c: CoordinatorConfig,
  password: string,
): Promise<{ username: string; created: boolean }> {
  if (c.settings_db_path.trim() === "")
    throw new AppError("CONFIG_INVALID", "reset-admin-password needs coordinator.settings_db_path");
  const username = c.auth.admin_user.trim();
  if (username === "") throw new AppError("CONFIG_INVALID", "coordinator.auth.admin_user: must not be empty");
  const hash = await hashPassword(password);
  const db = new SettingsDb(c.settings_db_path);
  db.open();
  try {
    const users = new UsersRepo(db);
    const existing = users.getByUsername(username);
    if (existing) users.update(existing.id, { passwordHash: hash, isAdmin: true, isActive: true });
    else users.create({ username, passwordHash: hash, isAdmin: true, isActive: true });
    return { username, created: !existing };
  } finally {
    db.close();
  }
}
