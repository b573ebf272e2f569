/**
 * Control-API users (docs/LOADGEN.md "Control API", profile `auth` with `type` internal): users
 * live in a settings database at `auth.sqlite_path` (the appliance's own schema, src/settings);
 * the first start creates an administrator `admin` with a random password printed once. A login
 * returns an HS256 JWT signed with `auth.jwt_secret` (src/auth), valid 8 hours; every request
 * checks that the token's user still exists and is active, so deleting or deactivating a user
 * ends their tokens at once, and that the user's password is still the one of the login (the
 * token's `jti` starts with a digest of the stored hash), so a password change ends them too.
 * Usernames and passwords follow the appliance's rules (src/auth).
 */
import { createHash, randomUUID } from "node:crypto";
import {
  hashPassword,
  JwtSigner,
  passwordProblem,
  randomPassword,
  usernameProblem,
  verifyPassword,
} from "../auth/index.ts";
import { AppError } from "../core/index.ts";
import { createSettingsStore, type User } from "../settings/index.ts";

const TOKEN_TTL_SEC = 8 * 3600;

/** 12 hex characters of SHA-256 of the stored bcrypt hash: changes with every password change, tells nothing about the password. */
const passwordStamp = (hash: string): string => createHash("sha256").update(hash).digest("hex").slice(0, 12);

/** Who called: `api_token` counts as an administrator named "api_token". */
export interface Caller {
  username: string;
  admin: boolean;
  /** True for a logged-in internal user (false for `api_token` or an open API). */
  user: boolean;
}

/** A user as the control API shows it: never the password hash. */
export interface ControlUserView {
  username: string;
  admin: boolean;
  active: boolean;
  created_at: string;
  updated_at: string;
}

export interface UserChange {
  password?: string;
  current_password?: string;
  admin?: boolean;
  active?: boolean;
}

export interface ControlUsers {
  login(username: string, password: string): Promise<string | null>;
  /** The user a token belongs to (as stored now), or undefined when the token or its user is not valid. */
  verify(token: string): Promise<{ username: string; admin: boolean } | undefined>;
  list(caller: Caller): ControlUserView[];
  create(caller: Caller, input: { username: string; password: string; admin: boolean }): Promise<ControlUserView>;
  update(caller: Caller, username: string, change: UserChange): Promise<ControlUserView>;
  remove(caller: Caller, username: string): void;
  close(): void;
}

const view = (u: User): ControlUserView => ({
  username: u.username,
  admin: u.isAdmin,
  active: u.isActive,
  created_at: new Date(u.createdAt).toISOString(),
  updated_at: new Date(u.updatedAt).toISOString(),
});

function requireAdmin(caller: Caller, what: string): void {
  if (!caller.admin) throw new AppError("FORBIDDEN", `only an administrator may ${what}`);
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new AppError("BAD_REQUEST", problem);
}

export async function openControlUsers(
  opts: { sqlite_path: string; jwt_secret: string },
  announce: (line: string) => void,
): Promise<ControlUsers> {
  const store = createSettingsStore({ path: opts.sqlite_path, games: false });
  store.db.open();
  if (store.users.countActiveAdmins() === 0) {
    const password = randomPassword();
    store.users.create({
      username: "admin",
      passwordHash: await hashPassword(password),
      isAdmin: true,
      isActive: true,
    });
    announce(`loadgen control API user "admin" created in ${opts.sqlite_path}; password (shown once): ${password}`);
  }
  const signer = new JwtSigner(opts.jwt_secret);
  const find = (username: string): User => {
    const u = store.users.getByUsername(username);
    if (!u) throw new AppError("NOT_FOUND", `no user "${username}"`);
    return u;
  };
  const guardLastAdmin = (target: User, what: string): void => {
    if (target.isAdmin && target.isActive && store.users.countActiveAdmins() <= 1)
      throw new AppError(
        "CONFLICT",
        `cannot ${what} "${target.username}": it is the last active administrator; make another user administrator first`,
      );
  };
  return {
    async login(username, password) {
      const user = store.users.getWithSecret(username);
      // verifyPassword spends the same time on a missing user (a dummy hash), so names do not leak.
      const ok = await verifyPassword(password, user?.isActive ? user.passwordHash : "");
      if (!ok || !user) return null;
      const now = Math.floor(Date.now() / 1000);
      // sub is the user's id: a user deleted and created again under the same name gets no old token back.
      return await signer.sign({
        sub: user.id,
        username: user.username,
        admin: user.isAdmin,
        jti: `${passwordStamp(user.passwordHash)}.${randomUUID()}`,
        iat: now,
        exp: now + TOKEN_TTL_SEC,
        provider: "internal",
      });
    },
    async verify(token) {
      const r = await signer.verify(token);
      if (!r.ok) return undefined;
      const u = store.users.getWithSecret(r.value.username);
      if (!u?.isActive || u.id !== r.value.sub || !r.value.jti.startsWith(`${passwordStamp(u.passwordHash)}.`))
        return undefined;
      // Admin rights come from the stored user, so a demotion applies to tokens already issued.
      return { username: u.username, admin: u.isAdmin };
    },
    list(caller) {
      requireAdmin(caller, "list users");
      const out: ControlUserView[] = [];
      let cursor: string | undefined;
      do {
        const page = store.users.list({}, { limit: 1000, cursor });
        out.push(...page.items.map(view));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return out;
    },
    async create(caller, input) {
      requireAdmin(caller, "add users");
      const problem = usernameProblem(input.username);
      if (problem) throw new AppError("BAD_REQUEST", problem);
      checkPassword(input.password);
      return view(
        store.users.create({
          username: input.username,
          passwordHash: await hashPassword(input.password),
          isAdmin: input.admin,
          isActive: true,
        }),
      );
    },
    async update(caller, username, change) {
      const self = caller.user && caller.username.toLowerCase() === username.toLowerCase();
      if (!caller.admin) {
        if (!self)
          throw new AppError("FORBIDDEN", "a user who is not an administrator may change only their own password");
        if (change.admin !== undefined || change.active !== undefined)
          throw new AppError("FORBIDDEN", "only an administrator may change admin or active");
      }
      const target = find(username);
      if ((change.admin === false && target.isAdmin) || (change.active === false && target.isActive))
        guardLastAdmin(target, change.active === false ? "deactivate" : "demote");
      let passwordHash: string | undefined;
      if (change.password !== undefined) {
        checkPassword(change.password);
        // Like the appliance's users API: changing your own password needs the current one.
        if (
          self &&
          !(await verifyPassword(
            change.current_password ?? "",
            store.users.getWithSecret(target.username)?.passwordHash ?? "",
          ))
        )
          throw new AppError(
            "BAD_REQUEST",
            "current_password: required and must match when changing your own password",
          );
        passwordHash = await hashPassword(change.password);
      }
      return view(store.users.update(target.id, { passwordHash, isAdmin: change.admin, isActive: change.active })!);
    },
    remove(caller, username) {
      requireAdmin(caller, "delete users");
      const target = find(username);
      guardLastAdmin(target, "delete");
      store.users.delete(target.id);
    },
    close: () => store.db.close(),
  };
}
