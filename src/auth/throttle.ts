/**
 * Slows repeated failed logins (`coordinator.auth.max_failed_logins`, `lockout_sec`). Three keys are
 * counted: the (user, address) pair locks after `max` failures; the address alone and the user
 * alone lock after `4 × max`, which stops password spraying across usernames and a distributed
 * guess at one account, while another user behind the same address (NAT) keeps logging in.
 * A lock lasts `lockout_sec`; a failure within two lock periods of the previous one keeps counting,
 * so after the first lock every further wrong guess locks again.
 *
 * An attempt is counted when it starts, not when its (slow) password check ends: `reserve` takes a
 * slot synchronously, and an attempt is admitted only while failures + attempts in flight stay
 * under each key's limit (one at a time once a key has reached it). So N concurrent guesses never
 * get more password checks than the limit, and a right password sent inside a throttled burst is
 * refused like the wrong ones (docs/ARCHITECTURE.md, Auth).
 */
export interface ThrottleDecision {
  allowed: boolean;
  retryAfterSec: number;
}

/** One admitted attempt; exactly one of its methods ends it (later calls do nothing). */
export interface LoginAttempt {
  /** Wrong credentials: counts a failure on every key. */
  failed(): void;
  /** Logged in: clears the pair, not the address or user totals (a spray keeps counting). */
  succeeded(): void;
  /** Ended without a verdict (an internal error): frees the slot, counts nothing. */
  abandoned(): void;
}

export type Reservation = { allowed: true; attempt: LoginAttempt } | { allowed: false; retryAfterSec: number };

/** The counts of one key (pair, address or user); a shared store keeps the same fields in a row. */
export interface ThrottleEntry {
  failures: number;
  /** Attempts admitted whose verdict is not known yet. */
  inFlight: number;
  lastFailureMs: number;
  lockedUntilMs: number;
}

type Entry = ThrottleEntry;

const MAX_ENTRIES = 100_000;
const SPREAD_FACTOR = 4;
const NO_OP_ATTEMPT: LoginAttempt = { failed() {}, succeeded() {}, abandoned() {} };

/** The three keys of an attempt with their limits; the first is the (user, address) pair. */
export function throttleKeys(username: string, ip: string, maxFailures: number): Array<[string, number]> {
  const u = username.toLowerCase();
  return [
    [`p\u0000${u}\u0000${ip}`, maxFailures],
    [`i\u0000${ip}`, maxFailures * SPREAD_FACTOR],
    [`u\u0000${u}`, maxFailures * SPREAD_FACTOR],
  ];
}

/** Failures still counting at `now` (they expire two lock periods after the last one). */
export const liveFailures = (e: Entry, now: number, lockoutSec: number): number =>
  now - e.lastFailureMs > 2 * lockoutSec * 1000 ? 0 : e.failures;

/** Whether an attempt is admitted, given each key's entry (absent: no history) and limit. */
export function throttleDecision(
  entries: ReadonlyArray<readonly [Entry | undefined, number]>,
  now: number,
  lockoutSec: number,
): ThrottleDecision {
  if (lockoutSec <= 0) return { allowed: true, retryAfterSec: 0 };
  let until = 0;
  let full = false;
  for (const [e, limit] of entries) {
    if (!e) continue;
    if (e.lockedUntilMs > now) until = Math.max(until, e.lockedUntilMs);
    const failures = liveFailures(e, now, lockoutSec);
    // Below the limit: the remaining failures may be in flight; at or above it, one at a time.
    const budget = failures < limit ? limit - failures : 1;
    if (e.inFlight >= budget) full = true;
  }
  if (until > now) return { allowed: false, retryAfterSec: Math.max(1, Math.ceil((until - now) / 1000)) };
  // Refused only until the attempts in flight end; a client retries after a second.
  if (full) return { allowed: false, retryAfterSec: 1 };
  return { allowed: true, retryAfterSec: 0 };
}

/** One more failure on a key: counts it and locks the key when it reaches its limit. */
export function countFailure(e: Entry, limit: number, now: number, lockoutSec: number): void {
  e.failures = liveFailures(e, now, lockoutSec) + 1;
  e.lastFailureMs = now;
  if (e.failures >= limit) e.lockedUntilMs = now + lockoutSec * 1000;
}

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxFailures: number,
    private readonly lockoutSec: number,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(username: string, ip: string): Array<[string, number]> {
    return throttleKeys(username, ip, this.maxFailures);
  }

  /** Whether an attempt would be admitted now, without taking a slot. */
  check(username: string, ip: string): ThrottleDecision {
    return throttleDecision(
      this.keys(username, ip).map(([key, limit]) => [this.entries.get(key), limit] as const),
      this.now(),
      this.lockoutSec,
    );
  }

  /** Admits an attempt and counts it at once, or refuses it; synchronous, so nothing interleaves. */
  reserve(username: string, ip: string): Reservation {
    const d = this.check(username, ip);
    if (!d.allowed) return { allowed: false, retryAfterSec: d.retryAfterSec };
    if (this.lockoutSec <= 0) return { allowed: true, attempt: NO_OP_ATTEMPT };
    const keys = this.keys(username, ip).map(([k]) => k);
    for (const key of keys) this.entry(key).inFlight++;
    this.evict();
    let open = true;
    const end = (verdict: () => void) => {
      if (!open) return;
      open = false;
      for (const key of keys) {
        const e = this.entries.get(key);
        if (e) e.inFlight = Math.max(0, e.inFlight - 1);
      }
      verdict();
      for (const key of keys) {
        const e = this.entries.get(key);
        if (e && e.inFlight === 0 && e.failures === 0 && e.lockedUntilMs === 0) this.entries.delete(key);
      }
    };
    return {
      allowed: true,
      attempt: {
        failed: () => end(() => this.recordFailure(username, ip)),
        succeeded: () =>
          end(() => {
            const pair = this.entries.get(keys[0]!);
            if (pair) Object.assign(pair, { failures: 0, lockedUntilMs: 0 });
          }),
        abandoned: () => end(() => {}),
      },
    };
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { failures: 0, inFlight: 0, lastFailureMs: 0, lockedUntilMs: 0 };
      this.entries.set(key, e);
    }
    return e;
  }

  private recordFailure(username: string, ip: string): void {
    const now = this.now();
    for (const [key, limit] of this.keys(username, ip)) {
      const e = this.entry(key);
      countFailure(e, limit, now, this.lockoutSec);
      this.entries.delete(key); // re-insert: Map order becomes least-recently-failed first
      this.entries.set(key, e);
    }
    this.evict();
  }

  private evict(): void {
    while (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
