import { createHash } from "node:crypto";
import type { SQL, TransactionSQL } from "bun";
import { AppError, errorMessage, redactUrl } from "../core/index.ts";
import type { AuthSharedStore, OnceKind, SharedReservation } from "./state-store.ts";
import { countFailure, throttleDecision, throttleKeys, type ThrottleEntry } from "./throttle.ts";

/**
 * The PostgreSQL backend of the shared auth store (docs/AUTH.md "Several coordinators"): every
 * coordinator replica given the same `coordinator.shared_store.url` sees one OAuth state, one set
 * of one-time tokens, one list of revoked sessions and one login throttle.
 *
 * - Secrets are never stored as keys: a state or one-time token is kept under its SHA-256, and
 *   taken with `DELETE … RETURNING`, so of two replicas taking it at once exactly one gets it.
 * - The throttle's counts live in rows that an attempt locks (`INSERT … ON CONFLICT DO UPDATE …
 *   RETURNING` in key order, so two replicas never deadlock) while the same pure rules as the
 *   in-process throttle decide (src/auth/throttle.ts). An attempt in flight on a replica that died
 *   stops counting after `IN_FLIGHT_STALE_MS`.
 * - Rows carry their expiry; expired rows are deleted at start and every `PRUNE_EVERY` writes.
 * - The URL's password never reaches a log or an error: messages carry `redactUrl` of it.
 */
const DDL = [
  `CREATE TABLE IF NOT EXISTS svc_auth_once (kind text NOT NULL, key_hash text NOT NULL, value text NOT NULL, expires_ms bigint NOT NULL, PRIMARY KEY (kind, key_hash))`,
  `CREATE TABLE IF NOT EXISTS svc_auth_sessions (jti text PRIMARY KEY, username text NOT NULL, expires_ms bigint NOT NULL, revoked_until_ms bigint)`,
  `CREATE TABLE IF NOT EXISTS svc_auth_throttle (key text PRIMARY KEY, failures integer NOT NULL, in_flight integer NOT NULL, last_failure_ms bigint NOT NULL, locked_until_ms bigint NOT NULL, touched_ms bigint NOT NULL)`,
];
/** pg_advisory_xact_lock key of the table creation: replicas starting together create the tables once. */
const DDL_LOCK = 0x73766361; // "svca"
const ONCE_MAX = 10_000;
const PRUNE_EVERY = 64;
/** Longer than any password check (LDAP: 5 s connect + 10 s per operation per host). */
export const IN_FLIGHT_STALE_MS = 120_000;

const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

interface ThrottleRow {
  key: string;
  failures: number;
  in_flight: number;
  last_failure_ms: string | number;
  locked_until_ms: string | number;
  touched_ms: string | number;
}

export class PgAuthStore implements AuthSharedStore {
  readonly backend = "postgres" as const;
  readonly where: string;
  private readonly sql: SQL;
  private writes = 0;

  constructor(
    url: string,
    private readonly maxFailures: number,
    private readonly lockoutSec: number,
    private readonly now: () => number = Date.now,
  ) {
    this.where = redactUrl(url);
    if (!/^postgres(ql)?:\/\//.test(url))
      throw new AppError("CONFIG_INVALID", `coordinator.shared_store.url: ${this.where} is not a postgres:// URL`);
    try {
      // Bun.SQL, not an import: the client loads only with a shared store (docs/ARCHITECTURE.md "Start-up").
      this.sql = new Bun.SQL(url, { max: 2, idleTimeout: 60, connectionTimeout: 10 });
    } catch (e) {
      // The client's own message may quote the URL: only the redacted one is shown.
      throw new AppError("CONFIG_INVALID", `coordinator.shared_store.url: ${this.where} cannot be used`, { cause: e });
    }
    this.password = safePassword(url);
  }

  private readonly password: string;

  /** A database failure as a 503 naming the store, without the password or the statement's values. */
  private async run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof AppError) throw e;
      let why = errorMessage(e);
      if (this.password !== "") why = why.replaceAll(this.password, "***");
      throw new AppError("UNAVAILABLE", `the shared auth store ${this.where} failed (${what}): ${why}`);
    }
  }

  async start(): Promise<void> {
    await this.run("creating its tables", () =>
      this.sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${DDL_LOCK})`;
        for (const ddl of DDL) await tx.unsafe(ddl);
      }),
    );
    await this.prune();
  }

  async stop(): Promise<void> {
    await this.sql.close({ timeout: 5 });
  }

  /** Expired rows go: once-values past expiry, sessions past their token's lifetime, idle throttle keys. */
  private async prune(): Promise<void> {
    const now = this.now();
    const idle = now - Math.max(2 * this.lockoutSec * 1000, IN_FLIGHT_STALE_MS);
    await this.run("removing expired rows", async () => {
      await this.sql`DELETE FROM svc_auth_once WHERE expires_ms <= ${now}`;
      await this.sql`DELETE FROM svc_auth_sessions WHERE GREATEST(expires_ms, COALESCE(revoked_until_ms, 0)) <= ${now}`;
      await this.sql`DELETE FROM svc_auth_throttle WHERE touched_ms <= ${idle} AND locked_until_ms <= ${now}`;
      // A flood of started sign-ins cannot grow the table without limit (as OnceStore's bound).
      for (const kind of ["oauth_state", "oauth_token"] as const) {
        await this
          .sql`DELETE FROM svc_auth_once WHERE kind = ${kind} AND key_hash IN (SELECT key_hash FROM svc_auth_once WHERE kind = ${kind} ORDER BY expires_ms DESC OFFSET ${ONCE_MAX})`;
      }
    });
  }

  private async wrote(): Promise<void> {
    if (++this.writes % PRUNE_EVERY === 0) await this.prune();
  }

  async putOnce(kind: OnceKind, key: string, value: string, ttlMs: number): Promise<void> {
    const expires = this.now() + ttlMs;
    await this.run(
      "keeping a sign-in value",
      () =>
        this
          .sql`INSERT INTO svc_auth_once (kind, key_hash, value, expires_ms) VALUES (${kind}, ${sha256Hex(key)}, ${value}, ${expires})`,
    );
    await this.wrote();
  }

  async takeOnce(kind: OnceKind, key: string): Promise<string | undefined> {
    const rows: Array<{ value: string; expires_ms: string | number }> = await this.run(
      "taking a sign-in value",
      () =>
        this
          .sql`DELETE FROM svc_auth_once WHERE kind = ${kind} AND key_hash = ${sha256Hex(key)} RETURNING value, expires_ms`,
    );
    const r = rows[0];
    return r && Number(r.expires_ms) > this.now() ? r.value : undefined;
  }

  async recordIssued(jti: string, username: string, expMs: number): Promise<void> {
    await this.run(
      "recording a session",
      () =>
        this
          .sql`INSERT INTO svc_auth_sessions (jti, username, expires_ms) VALUES (${jti}, ${username}, ${expMs}) ON CONFLICT (jti) DO NOTHING`,
    );
    await this.wrote();
  }

  async issuedSession(jti: string): Promise<{ username: string; expMs: number } | undefined> {
    const rows: Array<{ username: string; expires_ms: string | number }> = await this.run(
      "reading a session",
      () =>
        this
          .sql`SELECT username, expires_ms FROM svc_auth_sessions WHERE jti = ${jti} AND revoked_until_ms IS NULL AND expires_ms > ${this.now()}`,
    );
    const r = rows[0];
    return r ? { username: r.username, expMs: Number(r.expires_ms) } : undefined;
  }

  async revoke(jti: string, username: string, untilMs: number): Promise<void> {
    await this.run(
      "revoking a session",
      () =>
        this
          .sql`INSERT INTO svc_auth_sessions (jti, username, expires_ms, revoked_until_ms) VALUES (${jti}, ${username}, ${untilMs}, ${untilMs})
          ON CONFLICT (jti) DO UPDATE SET revoked_until_ms = GREATEST(COALESCE(svc_auth_sessions.revoked_until_ms, 0), EXCLUDED.revoked_until_ms)`,
    );
    await this.wrote();
  }

  async isRevoked(jti: string): Promise<boolean> {
    const rows: unknown[] = await this.run(
      "checking a session",
      () => this.sql`SELECT 1 FROM svc_auth_sessions WHERE jti = ${jti} AND revoked_until_ms IS NOT NULL`,
    );
    return rows.length > 0;
  }

  /** The rows of `keys`, created when absent and locked until the transaction ends, in key order. */
  private async lockRows(tx: TransactionSQL, keys: string[], now: number): Promise<Map<string, ThrottleEntry>> {
    const out = new Map<string, ThrottleEntry>();
    for (const key of [...keys].sort()) {
      const [r] =
        (await tx`INSERT INTO svc_auth_throttle (key, failures, in_flight, last_failure_ms, locked_until_ms, touched_ms) VALUES (${key}, 0, 0, 0, 0, ${now})
        ON CONFLICT (key) DO UPDATE SET key = EXCLUDED.key RETURNING *`) as ThrottleRow[];
      if (!r) continue;
      // Attempts in flight on a replica that stopped mid-check would otherwise hold their slots.
      const stale = now - Number(r.touched_ms) > IN_FLIGHT_STALE_MS;
      out.set(key, {
        failures: r.failures,
        inFlight: stale ? 0 : r.in_flight,
        lastFailureMs: Number(r.last_failure_ms),
        lockedUntilMs: Number(r.locked_until_ms),
      });
    }
    return out;
  }

  private async saveRows(tx: TransactionSQL, rows: Map<string, ThrottleEntry>, now: number): Promise<void> {
    for (const [key, e] of rows) {
      await tx`UPDATE svc_auth_throttle SET failures = ${e.failures}, in_flight = ${e.inFlight}, last_failure_ms = ${e.lastFailureMs}, locked_until_ms = ${e.lockedUntilMs}, touched_ms = ${now} WHERE key = ${key}`;
    }
  }

  async reserveLogin(username: string, ip: string): Promise<SharedReservation> {
    if (this.lockoutSec <= 0)
      return {
        allowed: true,
        attempt: { failed: async () => {}, succeeded: async () => {}, abandoned: async () => {} },
      };
    // Stored under their SHA-256: a fixed length, and a login name with a NUL byte (which
    // PostgreSQL text refuses) is counted like any other instead of failing the request.
    const keyed = throttleKeys(username, ip, this.maxFailures).map(
      ([k, limit]) => [sha256Hex(k), limit] as [string, number],
    );
    const keys = keyed.map(([k]) => k);
    const decision = await this.run("counting a login attempt", () =>
      this.sql.begin(async (tx) => {
        const now = this.now();
        const rows = await this.lockRows(tx, keys, now);
        const d = throttleDecision(
          keyed.map(([k, limit]) => [rows.get(k), limit] as const),
          now,
          this.lockoutSec,
        );
        // A refused attempt changes nothing: a flood against a locked key costs no writes.
        if (!d.allowed) return d;
        for (const e of rows.values()) e.inFlight++;
        await this.saveRows(tx, rows, now);
        return d;
      }),
    );
    if (!decision.allowed) return { allowed: false, retryAfterSec: decision.retryAfterSec };
    let open = true;
    const end = async (verdict: (rows: Map<string, ThrottleEntry>, now: number) => void) => {
      if (!open) return;
      open = false;
      await this.run("ending a login attempt", () =>
        this.sql.begin(async (tx) => {
          const now = this.now();
          const rows = await this.lockRows(tx, keys, now);
          for (const e of rows.values()) e.inFlight = Math.max(0, e.inFlight - 1);
          verdict(rows, now);
          await this.saveRows(tx, rows, now);
        }),
      );
      await this.wrote();
    };
    return {
      allowed: true,
      attempt: {
        failed: () =>
          end((rows, now) => {
            for (const [key, limit] of keyed) {
              const e = rows.get(key);
              if (e) countFailure(e, limit, now, this.lockoutSec);
            }
          }),
        // Logged in: clears the pair, not the address or user totals (src/auth/throttle.ts).
        succeeded: () =>
          end((rows) => {
            const pair = rows.get(keys[0]!);
            if (pair) Object.assign(pair, { failures: 0, lockedUntilMs: 0 });
          }),
        abandoned: () => end(() => {}),
      },
    };
  }
}

function safePassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}
