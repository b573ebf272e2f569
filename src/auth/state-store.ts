import type { RevokedSessionsRepo } from "../settings/index.ts";
import { OnceStore } from "./oauth2/pending.ts";
import { SessionStore } from "./sessions.ts";
import { LoginThrottle } from "./throttle.ts";

/**
 * What every coordinator replica must see alike (docs/AUTH.md "Several coordinators"): the OAuth
 * state with its PKCE verifier and the one-time sign-in tokens (taken once), the sessions issued
 * and revoked (a logout holds everywhere), and the login throttle's counts. The default backend is
 * this process (`MemoryAuthStore`); `coordinator.shared_store.url` selects PostgreSQL
 * (src/auth/state-store-pg.ts). Asynchronous because the shared backend is a database.
 */
export type OnceKind = "oauth_state" | "oauth_token";

/** One admitted login attempt of the shared throttle; exactly one method ends it (src/auth/throttle.ts). */
export interface SharedLoginAttempt {
  failed(): Promise<void>;
  succeeded(): Promise<void>;
  abandoned(): Promise<void>;
}

export type SharedReservation =
  | { allowed: true; attempt: SharedLoginAttempt }
  | { allowed: false; retryAfterSec: number };

export interface AuthSharedStore {
  /** "memory" (this process) or "postgres"; logged at start. */
  readonly backend: "memory" | "postgres";
  /** Where, for logs: the redacted URL of the database (never its password). */
  readonly where: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Keeps `value` under `key` for `ttlMs`; the key is a secret (state, one-time token). */
  putOnce(kind: OnceKind, key: string, value: string, ttlMs: number): Promise<void>;
  /** The value once: a second take, or a take after its expiry, gives undefined (atomic across replicas). */
  takeOnce(kind: OnceKind, key: string): Promise<string | undefined>;
  recordIssued(jti: string, username: string, expMs: number): Promise<void>;
  /** Owner and expiry of an issued session that is neither expired nor revoked. */
  issuedSession(jti: string): Promise<{ username: string; expMs: number } | undefined>;
  revoke(jti: string, username: string, untilMs: number): Promise<void>;
  isRevoked(jti: string): Promise<boolean>;
  /**
   * Counts a login attempt before its password check, or refuses it (429). The in-process backend
   * decides synchronously at the call (nothing interleaves before the verdict is taken).
   */
  reserveLogin(username: string, ip: string): Promise<SharedReservation>;
}

const ONCE_MAX = 10_000;

/** Today's behaviour: everything in this process, revocations also in the settings database. */
export class MemoryAuthStore implements AuthSharedStore {
  readonly backend = "memory" as const;
  readonly where = "this process";
  private readonly once: Record<OnceKind, OnceStore<string>>;
  private readonly sessions: SessionStore;
  private readonly throttle: LoginThrottle;

  constructor(
    revoked: RevokedSessionsRepo | undefined,
    maxFailures: number,
    lockoutSec: number,
    now: () => number = Date.now,
  ) {
    this.once = {
      oauth_state: new OnceStore<string>(60_000, ONCE_MAX, now),
      oauth_token: new OnceStore<string>(60_000, ONCE_MAX, now),
    };
    this.sessions = new SessionStore(revoked, now);
    this.throttle = new LoginThrottle(maxFailures, lockoutSec, now);
  }

  /** Revocations loaded from the settings database at start. */
  revokedLoaded = 0;

  /** Revocations made before a restart stay in force (settings database). */
  async start(): Promise<void> {
    this.revokedLoaded = this.sessions.load();
  }

  async stop(): Promise<void> {}

  async putOnce(kind: OnceKind, key: string, value: string, ttlMs: number): Promise<void> {
    this.once[kind].put(key, value, ttlMs);
  }

  async takeOnce(kind: OnceKind, key: string): Promise<string | undefined> {
    return this.once[kind].take(key);
  }

  async recordIssued(jti: string, username: string, expMs: number): Promise<void> {
    this.sessions.recordIssued(jti, username, expMs);
  }

  async issuedSession(jti: string): Promise<{ username: string; expMs: number } | undefined> {
    return this.sessions.issuedSession(jti);
  }

  async revoke(jti: string, username: string, untilMs: number): Promise<void> {
    this.sessions.revoke(jti, username, untilMs);
  }

  async isRevoked(jti: string): Promise<boolean> {
    return this.sessions.isRevoked(jti);
  }

  /** Synchronous up to the return (an async function runs its body at the call): the slot is taken at once. */
  async reserveLogin(username: string, ip: string): Promise<SharedReservation> {
    const r = this.throttle.reserve(username, ip);
    if (!r.allowed) return r;
    const a = r.attempt;
    return {
      allowed: true,
      attempt: {
        failed: async () => a.failed(),
        succeeded: async () => a.succeeded(),
        abandoned: async () => a.abandoned(),
      },
    };
  }
}
