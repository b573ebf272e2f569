/**
 * Control-API users (docs/LOADGEN.md "Control API", profile `auth` with `type` internal): users
 * live in a settings database at `auth.sqlite_path` (the appliance's own schema, src/settings);
 * the first start creates an administrator `admin` with a random password printed once. A login
 * returns an HS256 JWT signed with `auth.jwt_secret` (src/auth), valid 8 hours.
 */
import { randomUUID } from "node:crypto";
import { hashPassword, JwtSigner, randomPassword, verifyPassword } from "../auth/index.ts";
import { createSettingsStore } from "../settings/index.ts";

const TOKEN_TTL_SEC = 8 * 3600;

export interface ControlUsers {
  login(username: string, password: string): Promise<string | null>;
  /** The user a token belongs to, or undefined when the token is not valid. */
  verify(token: string): Promise<{ username: string; admin: boolean } | undefined>;
  close(): void;
}

export async function openControlUsers(opts: { sqlite_path: string; jwt_secret: string }, announce: (line: string) => void): Promise<ControlUsers> {
  const store = createSettingsStore({ path: opts.sqlite_path, games: false });
  store.db.open();
  if (store.users.countActiveAdmins() === 0) {
    const password = randomPassword();
    store.users.create({ username: "admin", passwordHash: await hashPassword(password), isAdmin: true, isActive: true });
    announce(`loadgen control API user "admin" created in ${opts.sqlite_path}; password (shown once): ${password}`);
  }
  const signer = new JwtSigner(opts.jwt_secret);
  return {
    async login(username, password) {
      const user = store.users.getWithSecret(username);
      // verifyPassword spends the same time on a missing user (a dummy hash), so names do not leak.
      const ok = await verifyPassword(password, user?.isActive ? user.passwordHash : "");
      if (!ok || !user) return null;
      const now = Math.floor(Date.now() / 1000);
      return await signer.sign({ sub: user.username, username: user.username, admin: user.isAdmin, jti: randomUUID(), iat: now, exp: now + TOKEN_TTL_SEC, provider: "internal" });
    },
    async verify(token) {
      const r = await signer.verify(token);
      return r.ok ? { username: r.value.username, admin: r.value.admin } : undefined;
    },
    close: () => store.db.close(),
  };
}
