import { AppError } from "../core/index.ts";
import { newId, nowMs, toBool, updateColumns, type SettingsDb } from "./db.ts";
import { addEquals, emptyFilter, likeContains, pageRequest, queryPage, type Page, type PageInput } from "./page.ts";

/**
 * The `users` table (spec doc 1, Users and settings). `passwordHash` is one of the forms of
 * src/auth/passwords.ts (bcrypt, bcrypt of a SHA-256 digest, a legacy bare digest); it leaves this module only through `UserWithSecret`, which the API never
 * serialises.
 */
export interface User {
  id: string;
  username: string;
  email: string;
  firstName: string;
  lastName: string;
  userGroup: string;
  isAdmin: boolean;
  isActive: boolean;
  createdAt: number;
  updatedAt: number;
  /** Session JWTs issued (iat, epoch seconds) before this are refused: set by every password change. */
  sessionsValidAfterSec: number;
}

export interface UserWithSecret extends User {
  passwordHash: string;
}

export interface UserCreate {
  username: string;
  passwordHash: string;
  email?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  userGroup?: string | undefined;
  isAdmin?: boolean | undefined;
  isActive?: boolean | undefined;
}

export type UserUpdate = Partial<Omit<UserCreate, "username">>;

export interface UserFilters {
  username?: string | undefined;
  email?: string | undefined;
  group?: string | undefined;
  enabled?: boolean | undefined;
}

interface UserRow {
  id: string;
  username: string;
  password_hash: string;
  email: string;
  first_name: string;
  last_name: string;
  user_group: string;
  is_admin: number;
  is_active: number;
  created_at: number;
  updated_at: number;
  sessions_valid_after: number;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  username: r.username,
  email: r.email,
  firstName: r.first_name,
  lastName: r.last_name,
  userGroup: r.user_group,
  isAdmin: toBool(r.is_admin),
  isActive: toBool(r.is_active),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  sessionsValidAfterSec: r.sessions_valid_after ?? 0,
});

const toUserWithSecret = (r: UserRow): UserWithSecret => ({ ...toUser(r), passwordHash: r.password_hash });

export const USER_SORTS = {
  username: "username",
  email: "email",
  created_at: "created_at",
  updated_at: "updated_at",
  is_admin: "is_admin",
} as const;

const COLUMNS: Record<keyof UserUpdate, string> = {
  passwordHash: "password_hash",
  email: "email",
  firstName: "first_name",
  lastName: "last_name",
  userGroup: "user_group",
  isAdmin: "is_admin",
  isActive: "is_active",
};

export class UsersRepo {
  constructor(private readonly h: SettingsDb) {}

  list(filters: UserFilters, paging: PageInput, onlyUsername?: string): Page<User> {
    const page = pageRequest(paging, USER_SORTS, "username");
    const f = emptyFilter();
    if (onlyUsername !== undefined) {
      f.where.push("username = $only");
      f.params.only = onlyUsername;
    }
    addEquals(f, "username", filters.username);
    addEquals(f, "user_group", filters.group);
    addEquals(f, "is_active", filters.enabled);
    if (filters.email) {
      f.where.push("email = $email COLLATE NOCASE");
      f.params.email = filters.email;
    }
    if (page.search) {
      f.where.push("(username LIKE $q ESCAPE '\\' OR email LIKE $q ESCAPE '\\' OR first_name LIKE $q ESCAPE '\\' OR last_name LIKE $q ESCAPE '\\')");
      f.params.q = likeContains(page.search);
    }
    return queryPage<UserRow, User>(this.h.db, "users", f, page, USER_SORTS, toUser);
  }

  getById(id: string): User | undefined {
    const r = this.h.db.query("SELECT * FROM users WHERE id = $id").get({ id }) as UserRow | null;
    return r ? toUser(r) : undefined;
  }

  /** Case-insensitive (the column is NOCASE): `Admin` and `admin` are one account. */
  getByUsername(username: string): User | undefined {
    const r = this.findRow(username);
    return r ? toUser(r) : undefined;
  }

  /** For password checks only. */
  getWithSecret(username: string): UserWithSecret | undefined {
    const r = this.findRow(username);
    return r ? toUserWithSecret(r) : undefined;
  }

  private findRow(username: string): UserRow | null {
    return this.h.db.query("SELECT * FROM users WHERE username = $username").get({ username }) as UserRow | null;
  }

  /** Rows still holding a bare 64-character hex SHA-256 digest (written by older builds or tools). */
  withBareDigest(): Array<{ id: string; username: string; passwordHash: string }> {
    return (
      this.h.db.query("SELECT id, username, password_hash FROM users WHERE length(password_hash) = 64 AND password_hash NOT GLOB '*[^0-9a-fA-F]*'").all() as Array<
        Pick<UserRow, "id" | "username" | "password_hash">
      >
    ).map((r) => ({ id: r.id, username: r.username, passwordHash: r.password_hash }));
  }

  /**
   * Replaces a password hash only if it is still `expected` (compare and set): a rehash after login
   * never overwrites a password changed meanwhile. True when the row was changed.
   */
  replacePasswordHash(id: string, expected: string, next: string): boolean {
    return this.h.db.query("UPDATE users SET password_hash = $next, updated_at = $now WHERE id = $id AND password_hash = $expected").run({ id, expected, next, now: nowMs() }).changes === 1;
  }

  countActiveAdmins(): number {
    return (this.h.db.query("SELECT COUNT(*) AS n FROM users WHERE is_admin = 1 AND is_active = 1").get() as { n: number }).n;
  }

  create(input: UserCreate): User {
    const now = nowMs();
    const id = newId();
    try {
      this.h.db
        .query(
          `INSERT INTO users (id, username, password_hash, email, first_name, last_name, user_group, is_admin, is_active, created_at, updated_at)
           VALUES ($id, $username, $hash, $email, $first, $last, $group, $admin, $active, $now, $now)`,
        )
        .run({
          id,
          username: input.username,
          hash: input.passwordHash,
          email: input.email ?? "",
          first: input.firstName ?? "",
          last: input.lastName ?? "",
          group: input.userGroup ?? "",
          admin: input.isAdmin ? 1 : 0,
          active: input.isActive === false ? 0 : 1,
          now,
        });
    } catch (e) {
      if (String((e as Error).message).includes("UNIQUE")) {
        throw new AppError("CONFLICT", `user "${input.username}" already exists`, { details: { fields: ["username"] } });
      }
      throw e;
    }
    return this.getById(id)!;
  }

  /**
   * A new password hash ends every session issued before it (docs/AUTH.md "Password change ends
   * older sessions"): `sessions_valid_after` becomes the next whole second, so a token signed in
   * this second, before the change, is refused too. The rehash of the same password
   * (`replacePasswordHash`) keeps sessions.
   */
  update(id: string, patch: UserUpdate): User | undefined {
    this.h.tx(() => {
      updateColumns(this.h, "users", { column: "id", value: id }, { ...patch }, COLUMNS);
      if (patch.passwordHash !== undefined) {
        this.h.db.query("UPDATE users SET sessions_valid_after = $after WHERE id = $id").run({ id, after: Math.ceil((nowMs() + 1) / 1000) });
      }
    });
    return this.getById(id);
  }

  /** Removes the user and every per-user row, in one transaction. */
  delete(id: string): boolean {
    return this.h.tx(() => {
      const u = this.getById(id);
      if (!u) return false;
      for (const table of ["user_settings", "dashboards", "user_mapping", "api_tokens", "share_links", "export_jobs"]) {
        this.h.db.query(`DELETE FROM ${table} WHERE username = $username`).run({ username: u.username });
      }
      this.h.db.query("DELETE FROM users WHERE id = $id").run({ id });
      return true;
    });
  }
}
