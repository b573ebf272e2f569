/**
 * Session bookkeeping in process memory (spec doc 1: "revocation store is in memory"): which jti
 * this process issued to whom, and which were revoked. Entries live until the token would have
 * expired anyway, then they are dropped.
 */
export class SessionStore {
  private readonly issued = new Map<string, { username: string; expMs: number }>();
  private readonly revoked = new Map<string, number>();
  private writes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  recordIssued(jti: string, username: string, expMs: number): void {
    this.issued.set(jti, { username, expMs });
    this.maybePrune();
  }

  /** Owner of a jti issued by this process and not yet expired. */
  ownerOf(jti: string): string | undefined {
    const s = this.issued.get(jti);
    return s && s.expMs > this.now() ? s.username : undefined;
  }

  revoke(jti: string, expMs: number): void {
    this.revoked.set(jti, expMs);
    this.issued.delete(jti);
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
  }
}
