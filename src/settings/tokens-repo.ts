import { newId, nowMs, toBool, updateColumns, type SettingsDb } from "./db.ts";
import { addEquals, emptyFilter, likeContains, pageRequest, queryPage, type Page, type PageInput } from "./page.ts";

/**
 * Static API tokens (docs/API.md "Authentication": active, unexpired and under its `limit_calls`).
 * Only the SHA-256 of the secret is stored; `tokenPrefix` (the first characters) lets a user tell
 * tokens apart without the secret ever being readable again.
 */
export interface ApiToken {
  id: string;
  name: string;
  tokenPrefix: string;
  username: string;
  /** The owner's admin flag when the token was created; used only for owners without a users row. */
  ownerIsAdmin: boolean;
  active: boolean;
  expiresAt: number | null;
  /** 0 = unlimited. */
  limitCalls: number;
  calls: number;
  lastUsedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface ApiTokenCreate {
  name: string;
  tokenHash: string;
  tokenPrefix: string;
  username: string;
  ownerIsAdmin: boolean;
  active?: boolean | undefined;
  expiresAt?: number | null | undefined;
  limitCalls?: number | undefined;
}

export interface ApiTokenUpdate {
  name?: string | undefined;
  active?: boolean | undefined;
  expiresAt?: number | null | undefined;
  limitCalls?: number | undefined;
}

interface Row {
  id: string;
  name: string;
  token_prefix: string;
  username: string;
  owner_is_admin: number;
  active: number;
  expires_at: number | null;
  limit_calls: number;
  calls: number;
  last_used_at: number | null;
  created_at: number;
  updated_at: number;
}

const toToken = (r: Row): ApiToken => ({
  id: r.id,
  name: r.name,
  tokenPrefix: r.token_prefix,
  username: r.username,
  ownerIsAdmin: toBool(r.owner_is_admin),
  active: toBool(r.active),
  expiresAt: r.expires_at,
  limitCalls: r.limit_calls,
  calls: r.calls,
  lastUsedAt: r.last_used_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const TOKEN_SORTS = {
  name: "name",
  created_at: "created_at",
  expires_at: "expires_at",
  calls: "calls",
  username: "username",
} as const;

/** Every column but the hash: the hash never leaves the repository. */
const PUBLIC_COLUMNS =
  "id, name, token_prefix, username, owner_is_admin, active, expires_at, limit_calls, calls, last_used_at, created_at, updated_at";

export class TokensRepo {
  constructor(private readonly h: SettingsDb) {}

  create(t: ApiTokenCreate): ApiToken {
    const id = newId();
    const now = nowMs();
    this.h.db
      .query(
        `INSERT INTO api_tokens (id, name, token_hash, token_prefix, username, owner_is_admin, active, expires_at, limit_calls, calls, created_at, updated_at)
         VALUES ($id, $name, $hash, $prefix, $username, $admin, $active, $expires, $limit, 0, $now, $now)`,
      )
      .run({
        id,
        name: t.name,
        hash: t.tokenHash,
        prefix: t.tokenPrefix,
        username: t.username,
        admin: t.ownerIsAdmin ? 1 : 0,
        active: t.active === false ? 0 : 1,
        expires: t.expiresAt ?? null,
        limit: t.limitCalls ?? 0,
        now,
      });
    return this.get(id)!;
  }

  /** `username` set: only that owner's tokens (non-admin callers). */
  list(filters: { username?: string | undefined; active?: boolean | undefined }, paging: PageInput): Page<ApiToken> {
    const page = pageRequest(paging, TOKEN_SORTS, "-created_at");
    const f = emptyFilter();
    addEquals(f, "username", filters.username);
    addEquals(f, "active", filters.active);
    if (page.search) {
      f.where.push("name LIKE $q ESCAPE '\\'");
      f.params.q = likeContains(page.search);
    }
    return queryPage<Row, ApiToken>(
      this.h.db,
      `(SELECT ${PUBLIC_COLUMNS} FROM api_tokens)`,
      f,
      page,
      TOKEN_SORTS,
      toToken,
    );
  }

  get(id: string): ApiToken | undefined {
    const r = this.h.db.query(`SELECT ${PUBLIC_COLUMNS} FROM api_tokens WHERE id = $id`).get({ id }) as Row | null;
    return r ? toToken(r) : undefined;
  }

  update(id: string, u: ApiTokenUpdate): ApiToken | undefined {
    updateColumns(
      this.h,
      "api_tokens",
      { column: "id", value: id },
      { ...u },
      { name: "name", active: "active", expiresAt: "expires_at", limitCalls: "limit_calls" },
    );
    return this.get(id);
  }

  delete(id: string): boolean {
    return this.h.db.query("DELETE FROM api_tokens WHERE id = $id").run({ id }).changes > 0;
  }

  /**
   * Accepts one call: in a single statement the token must be active, unexpired and under its
   * limit, and `calls` is incremented — two concurrent calls cannot both take the last slot.
   */
  consume(tokenHash: string, now = nowMs()): ApiToken | undefined {
    const r = this.h.db
      .query(
        `UPDATE api_tokens SET calls = calls + 1, last_used_at = $now
         WHERE token_hash = $hash AND active = 1 AND (expires_at IS NULL OR expires_at > $now) AND (limit_calls = 0 OR calls < limit_calls)
         RETURNING ${PUBLIC_COLUMNS}`,
      )
      .get({ hash: tokenHash, now }) as Row | null;
    return r ? toToken(r) : undefined;
  }
}
