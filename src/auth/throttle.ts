/**
 * Slows repeated failed logins (`coordinator.auth.max_failed_logins`, `lockout_sec`). Three keys are
 * counted: the (user, address) pair locks after `max` failures; the address alone and the user
 * alone lock after `4 × max`, which stops password spraying across usernames and a distributed
 * guess at one account, while another user behind the same address (NAT) keeps logging in.
 * A lock lasts `lockout_sec`; a failure within two lock periods of the previous one keeps counting,
 * so after the first lock every further wrong guess locks again.
 */
export interface ThrottleDecision {
  allowed: boolean;
  retryAfterSec: number;
}

interface Entry {
  failures: number;
  lastFailureMs: number;
  lockedUntilMs: number;
}

const MAX_ENTRIES = 100_000;
const SPREAD_FACTOR = 4;

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxFailures: number,
    private readonly lockoutSec: number,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(username: string, ip: string): Array<[string, number]> {
    const u = username.toLowerCase();
    return [
      [`p\u0000${u}\u0000${ip}`, this.maxFailures],
      [`i\u0000${ip}`, this.maxFailures * SPREAD_FACTOR],
      [`u\u0000${u}`, this.maxFailures * SPREAD_FACTOR],
    ];
  }

  check(username: string, ip: string): ThrottleDecision {
    if (this.lockoutSec <= 0) return { allowed: true, retryAfterSec: 0 };
    const now = this.now();
    let until = 0;
    for (const [key] of this.keys(username, ip)) {
      const e = this.entries.get(key);
      if (e && e.lockedUntilMs > now) until = Math.max(until, e.lockedUntilMs);
    }
    return until > now ? { allowed: false, retryAfterSec: Math.max(1, Math.ceil((until - now) / 1000)) } : { allowed: true, retryAfterSec: 0 };
  }

  failure(username: string, ip: string): void {
    if (this.lockoutSec <= 0) return;
    const now = this.now();
    const window = 2 * this.lockoutSec * 1000;
    for (const [key, limit] of this.keys(username, ip)) {
      let e = this.entries.get(key);
      if (!e || now - e.lastFailureMs > window) e = { failures: 0, lastFailureMs: now, lockedUntilMs: 0 };
      e.failures++;
      e.lastFailureMs = now;
      if (e.failures >= limit) e.lockedUntilMs = now + this.lockoutSec * 1000;
      this.entries.delete(key); // re-insert: Map order becomes least-recently-failed first
      this.entries.set(key, e);
    }
    while (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** A successful login clears the pair, not the address or user totals (a spray keeps counting). */
  success(username: string, ip: string): void {
    const [pair] = this.keys(username, ip);
    if (pair) this.entries.delete(pair[0]);
  }
}
