import { nowMs, type SettingsDb } from "./db.ts";

/**
 * Revoked session ids (JWT `jti`), kept until `expiresAt` (epoch ms) so a logout survives a
 * restart. The interface keeps revocations in memory (docs/API.md "Authentication", JWT rule 3); persisting them
 * goes beyond it on purpose (docs/ARCHITECTURE.md, Auth).
 */
export interface RevokedSession {
  jti: string;
  username: string;
  expiresAt: number;
}

export class RevokedSessionsRepo {
  constructor(private readonly h: SettingsDb) {}

  /** Idempotent: revoking again keeps the later expiry. */
  add(jti: string, username: string, expiresAt: number): void {
    this.h.db
      .query(
        `INSERT INTO revoked_sessions (jti, username, expires_at, revoked_at) VALUES ($jti, $username, $expiresAt, $now)
         ON CONFLICT (jti) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`,
      )
      .run({ jti, username, expiresAt, now: nowMs() });
  }

  /** Every revocation still in force at `now`. */
  active(now = nowMs()): RevokedSession[] {
    return (
      this.h.db
        .query("SELECT jti, username, expires_at FROM revoked_sessions WHERE expires_at > $now")
        .all({ now }) as Array<{
        jti: string;
        username: string;
        expires_at: number;
      }>
    ).map((r) => ({ jti: r.jti, username: r.username, expiresAt: r.expires_at }));
  }

  isRevoked(jti: string, now = nowMs()): boolean {
    return (
      this.h.db.query("SELECT 1 FROM revoked_sessions WHERE jti = $jti AND expires_at > $now").get({ jti, now }) !==
      null
    );
  }

  deleteExpired(now = nowMs()): number {
    return this.h.db.query("DELETE FROM revoked_sessions WHERE expires_at <= $now").run({ now }).changes;
  }
}
