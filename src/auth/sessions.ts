import type { RevokedSessionsRepo } from "../settings/index.ts";

/**
 * Session bookkeeping: which jti this process issued to whom (memory), and which were revoked.
 * Revocations are kept in memory (docs/API.md "Authentication", JWT rule 3); here they are also written
 * to the settings database and loaded at start, so a logout survives a restart
 * (docs/ARCHITECTURE.md, Auth). A revocation lives until the token could no longer verify anyway
 * (its `exp` plus the verifier's leeway), then it is pruned from memory and from the database.
 */
export class SessionStore {
  private readonly issued = new Map<string, { username: string; expMs: number }>();
  private readonly revoked = new Map<string, number>();
  private writes = 0;

  constructor(
    private readonly repo?: RevokedSessionsRepo,
    private readonly now: () => number = Date.now,
  ) {}

  /** At start, after the settings database opened: drops expired rows, loads the others. */
  load(): number {
    if (!this.repo) return 0;
    const now = this.now();
    this.repo.deleteExpired(now);
    for (const r of this.repo.active(now)) this.revoked.set(r.jti, r.expiresAt);
    return this.revoked.size;
  }

  recordIssued(jti: string, username: string, expMs: number): void {
    this.issued.set(jti, { username, expMs });
    this.maybePrune();
  }

  /** Owner and expiry of a jti issued by this process and not yet expired. */
  issuedSession(jti: string): { username: string; expMs: number } | undefined {
    const s = this.issued.get(jti);
    return s && s.expMs > this.now() ? s : undefined;
  }

  /**
   * In force in this process at once, then stored. A revocation that cannot be stored fails the
   * request with a server error (it would not survive a restart), never silently.
   */
  revoke(jti: string, username: string, untilMs: number): void {
    this.revoked.set(jti, Math.max(untilMs, this.revoked.get(jti) ?? 0));
    this.issued.delete(jti);
    this.repo?.add(jti, username, untilMs);
    this.maybePrune();
  }

  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  private maybePrune(): void {
    if (++this.writes % 256 !== 0) return;
    const now = this.now();
    for (const [k, v] of this.issued) if (v.expMs <= now) this.issued.delete(k);
    for (const [k, exp] of this.revoked) if (exp <= now) this.revoked.delete(k);
    this.repo?.deleteExpired(now);
  }
}
