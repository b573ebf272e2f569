import type { Database } from "bun:sqlite";
import { AppError } from "../core/index.ts";

/**
 * Versioned schema of the settings database. `PRAGMA user_version` holds the last applied step;
 * each step runs in its own transaction, so a crash leaves the file at a whole version. Steps are
 * append-only: a released step is never edited, a change is a new step.
 *
 * Times are epoch milliseconds (INTEGER); JSON documents are TEXT; ids are UUIDv7 strings
 * (time-ordered, not guessable from a neighbour). Per-user rows are keyed by `username` rather
 * than a foreign key because LDAP and OAuth users may have no `users` row (docs/API.md "Authentication", password
 * login: LDAP never reads `users` for a password and never inserts a row).
 */
export const MIGRATIONS: readonly string[] = [
  // 1: the core tables of docs/API.md (users and settings, dashboards, mapping rows, tokens, aliases,
  // HEP subscriptions, agents, share links, export jobs).
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT NOT NULL DEFAULT '',
    email TEXT NOT NULL DEFAULT '',
    first_name TEXT NOT NULL DEFAULT '',
    last_name TEXT NOT NULL DEFAULT '',
    user_group TEXT NOT NULL DEFAULT '',
    is_admin INTEGER NOT NULL DEFAULT 0,
    is_active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE user_settings (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL COLLATE NOCASE,
    category TEXT NOT NULL,
    param TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (username, category, param)
  );
  CREATE TABLE dashboards (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL COLLATE NOCASE,
    name TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0,
    layout TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX dashboards_by_user ON dashboards (username, position);
  CREATE TABLE mapping_schema (
    guid TEXT PRIMARY KEY,
    hepid INTEGER NOT NULL,
    profile TEXT NOT NULL,
    hep_alias TEXT NOT NULL DEFAULT '',
    fields_mapping TEXT NOT NULL DEFAULT '[]',
    fields_settings TEXT NOT NULL DEFAULT '{}',
    schema_mapping TEXT NOT NULL DEFAULT '{}',
    mapping_settings TEXT NOT NULL DEFAULT '{}',
    retention INTEGER NOT NULL DEFAULT 0,
    partition_step INTEGER NOT NULL DEFAULT 0,
    auto_generated INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (hepid, profile)
  );
  CREATE TABLE user_mapping (
    username TEXT NOT NULL COLLATE NOCASE,
    mapping_key TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (username, mapping_key)
  );
  CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    token_prefix TEXT NOT NULL,
    username TEXT NOT NULL COLLATE NOCASE,
    owner_is_admin INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    expires_at INTEGER,
    limit_calls INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    last_used_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX api_tokens_by_user ON api_tokens (username);
  CREATE TABLE ip_aliases (
    id TEXT PRIMARY KEY,
    ip TEXT NOT NULL,
    name TEXT NOT NULL,
    alias_group TEXT NOT NULL DEFAULT '',
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE hep_subscriptions (
    id TEXT PRIMARY KEY,
    hepid INTEGER NOT NULL,
    profile TEXT NOT NULL,
    hep_alias TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL DEFAULT 1,
    mapping TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (hepid, profile)
  );
  CREATE TABLE agents (
    node_id TEXT NOT NULL,
    ip TEXT NOT NULL,
    node_name TEXT NOT NULL DEFAULT '',
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    packets INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (node_id, ip)
  );
  CREATE TABLE share_links (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL COLLATE NOCASE,
    request TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER
  );
  CREATE TABLE export_jobs (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL COLLATE NOCASE,
    format TEXT NOT NULL,
    request TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    file_path TEXT NOT NULL DEFAULT '',
    bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX export_jobs_by_user ON export_jobs (username, created_at);
  `,
  // 2: who owns a mapping row's generated content (fields_mapping, hep_alias, fields_settings,
  // schema_mapping): 'seed' (built-in protocol mappings, refreshed at start), 'sync' (line-protocol
  // tables, docs/LINE-PROTOCOL.md), or 'user' (created or edited by an administrator; never rewritten automatically).
  // auto_generated stays as the 0/1 view of it (source <> 'user').
  `
  ALTER TABLE mapping_schema ADD COLUMN source TEXT NOT NULL DEFAULT 'user' CHECK (source IN ('seed', 'sync', 'user'));
  UPDATE mapping_schema SET source = 'sync' WHERE auto_generated = 1;
  `,
  // 3: revoked sessions (JWT ids) survive a restart until the token could no longer verify anyway
  // (expires_at = token exp + the verifier's leeway); src/auth/sessions.ts prunes expired rows.
  `
  CREATE TABLE revoked_sessions (
    jti TEXT PRIMARY KEY,
    username TEXT NOT NULL COLLATE NOCASE,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER NOT NULL
  );
  CREATE INDEX revoked_sessions_by_expiry ON revoked_sessions (expires_at);
  `,
  // 4: an IP alias may name one port and/or one HEP capture id (NULL = every port / every capture
  // point); the most specific matching row names a host (docs/ADMIN.md, "IP aliases").
  `
  ALTER TABLE ip_aliases ADD COLUMN port INTEGER CHECK (port IS NULL OR (port BETWEEN 1 AND 65535));
  ALTER TABLE ip_aliases ADD COLUMN capture_id INTEGER CHECK (capture_id IS NULL OR (capture_id BETWEEN 1 AND 4294967295));
  `,
  // 5: a password change ends the user's older sessions: a session JWT whose iat (epoch seconds)
  // is below this is refused (docs/AUTH.md "Password change ends older sessions").
  `
  ALTER TABLE users ADD COLUMN sessions_valid_after INTEGER NOT NULL DEFAULT 0;
  `,
  // 6: the bootstrap's generated administrator password must be changed at first login; any
  // password change of the row clears it (docs/AUTH.md "First login: change the generated password").
  `
  ALTER TABLE users ADD COLUMN must_change_password INTEGER NOT NULL DEFAULT 0;
  `,
  // 7: an export job over coordinator.nodes that missed a node names it (with why) beside its file
  // (docs/ARCHITECTURE.md "Reads over several nodes"); '' when every node answered.
  `
  ALTER TABLE export_jobs ADD COLUMN partial TEXT NOT NULL DEFAULT '';
  `,
  // 8: edges that announced themselves to this coordinator (docs/DEPLOY.md "Finding the edges"):
  // their node URL and node token, pending until an administrator approves them when
  // coordinator.enrollment.approval is on.
  `
  CREATE TABLE enrolled_nodes (
    name TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    token TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved')),
    enrolled_at INTEGER NOT NULL,
    last_seen INTEGER NOT NULL
  );
  `,
];

/** Applies pending steps; refuses a file written by a newer build (its schema is unknown here). */
export function migrate(db: Database): { fromVersion: number; toVersion: number } {
  const row = db.query("PRAGMA user_version").get() as { user_version: number } | null;
  const fromVersion = row?.user_version ?? 0;
  if (fromVersion > MIGRATIONS.length) {
    throw new AppError(
      "CONFIG_INVALID",
      `settings database is at schema version ${fromVersion}, newer than this build knows (${MIGRATIONS.length}); upgrade svc`,
    );
  }
  for (let v = fromVersion; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      // PRAGMA takes no bound parameters; v is our own integer.
      db.exec(`PRAGMA user_version = ${v + 1}`);
    }).immediate();
  }
  return { fromVersion, toVersion: MIGRATIONS.length };
}
