import { errorMessage } from "../../core/index.ts";

/**
 * What the writer does when a table's flush fails (docs/ARCHITECTURE.md "When a flush fails"):
 * - back off: no new attempt before `retryAtMs`; the delay starts at 250 ms, doubles per failure
 *   up to 30 s (half of it random, so tables and appliances do not retry in step), and goes back
 *   to 0 at the first success. Without it a full disk was retried 4 times a second (75 % of a core).
 * - flush in pieces that fit: a failure for lack of space, an I/O error or DuckDB running out of
 *   memory (a wide table: the flush of 9600 rows of 1000 columns failed at memory_limit 1GB, and
 *   every retry of the same files would fail again) halves the number of
 *   spool files the next attempt takes, down to one; each success doubles it again. Partial free
 *   space then commits what fits instead of failing all-or-nothing for ever.
 * Logging is rate-limited per condition, not per table (`RateLimitedLog` below): a full disk fails
 * every table's flush at once. Pure state, no I/O: the writer owns the clock and the logger.
 */
export type FlushFailureReason = "no_space" | "io" | "out_of_memory" | "store" | "catalog" | "other";

/** The code of an error the writer raises when the object store refused or did not take a file (docs/STORAGE.md). */
export const STORE_FAILED = "ESVCSTORE";

/**
 * The code of an error the writer raises when the catalog did not take a reservation or a commit
 * (a PostgreSQL catalog that is down or refuses: docs/DUCKLAKE.md "When the catalog is down").
 */
export const CATALOG_FAILED = "ESVCCATALOG";

export const RETRY_BASE_MS = 250;
export const RETRY_MAX_MS = 30_000;
/** A condition that goes on (a full disk) is logged when it starts, then once a minute. */
export const LOG_EVERY_MS = 60_000;

/** ENOSPC / EDQUOT, DuckDB's "No space left on device", SQLite's "database or disk is full" → no_space. */
export function flushFailureReason(e: unknown): FlushFailureReason {
  const texts: string[] = [];
  const codes: unknown[] = [];
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 5; depth++) {
    texts.push(errorMessage(c));
    codes.push(typeof c === "object" ? (c as { code?: unknown }).code : undefined);
    c = typeof c === "object" ? (c as { cause?: unknown }).cause : undefined;
  }
  const text = texts.join("\n");
  if (
    codes.some((c) => c === "ENOSPC" || c === "EDQUOT" || c === "SQLITE_FULL") ||
    /no space left|disk is full|quota exceeded|ENOSPC/i.test(text)
  )
    return "no_space";
  if (
    codes.some((c) => c === "EIO" || (typeof c === "string" && c.startsWith("SQLITE_IOERR"))) ||
    /\bIO Error\b|I\/O error|\bEIO\b/i.test(text)
  )
    return "io";
  if (/\bOut of Memory Error\b/.test(text)) return "out_of_memory";
  if (codes.includes(STORE_FAILED)) return "store";
  if (codes.includes(CATALOG_FAILED)) return "catalog";
  return "other";
}

/** What the caller should log after a failure: the first of a streak, a periodic summary, or nothing. */
export type FailureLog = { kind: "first" } | { kind: "summary"; failures: number } | undefined;

/**
 * One log line when a condition starts (`first`), then at most one per `LOG_EVERY_MS` with the
 * number of failures since the last line (`summary`), per key (e.g. `no_space:/var/lib/svc/lake`):
 * a full disk fails the flushes of every table and the spool writes at once, 10 times a second.
 */
export class RateLimitedLog {
  private readonly open = new Map<string, { loggedAtMs: number; unlogged: number }>();

  hit(key: string, nowMs: number): FailureLog {
    const s = this.open.get(key);
    if (!s) {
      this.open.set(key, { loggedAtMs: nowMs, unlogged: 0 });
      return { kind: "first" };
    }
    s.unlogged++;
    if (nowMs - s.loggedAtMs < LOG_EVERY_MS) return undefined;
    const failures = s.unlogged;
    s.loggedAtMs = nowMs;
    s.unlogged = 0;
    return { kind: "summary", failures };
  }

  /** The condition ended: the next failure of `key` is logged at once again. */
  clear(key: string): void {
    this.open.delete(key);
  }

  /** Ends every open condition whose key starts with `prefix`; true when there was one. */
  clearPrefix(prefix: string): boolean {
    let had = false;
    for (const k of [...this.open.keys()]) {
      if (k.startsWith(prefix)) {
        this.open.delete(k);
        had = true;
      }
    }
    return had;
  }
}

export class FlushRetry {
  /** No attempt before this (epoch ms); 0 = now. */
  retryAtMs = 0;
  /** The last back-off delay (ms, before jitter); 0 after a success. */
  delayMs = 0;
  /** Spool files the next flush takes (oldest first); Infinity = the whole buffer. */
  pieceFiles = Number.POSITIVE_INFINITY;
  /** Consecutive failures and when the streak began (undefined: flushes work). */
  streak = 0;
  failingSinceMs: number | undefined;
  lastReason: FlushFailureReason | undefined;

  constructor(private readonly random: () => number = Math.random) {}

  mayAttempt(nowMs: number): boolean {
    return nowMs >= this.retryAtMs;
  }

  /** A flush of `filesTried` spool files failed at `nowMs`. */
  failed(nowMs: number, reason: FlushFailureReason, filesTried: number): void {
    this.delayMs = this.delayMs === 0 ? RETRY_BASE_MS : Math.min(RETRY_MAX_MS, this.delayMs * 2);
    this.retryAtMs = nowMs + Math.round(this.delayMs * (0.5 + 0.5 * this.random()));
    if (reason !== "other") this.pieceFiles = Math.max(1, Math.floor(filesTried / 2));
    this.streak++;
    this.lastReason = reason;
    this.failingSinceMs ??= nowMs;
  }

  /**
   * A flush succeeded; `remainingFiles` spool files are still buffered. Returns the length of the
   * failure streak it ended (0 when there was none), for one "flushes work again" line.
   */
  succeeded(remainingFiles: number): number {
    const ended = this.streak;
    this.retryAtMs = 0;
    this.delayMs = 0;
    this.streak = 0;
    this.failingSinceMs = undefined;
    this.lastReason = undefined;
    if (Number.isFinite(this.pieceFiles))
      this.pieceFiles = this.pieceFiles * 2 >= remainingFiles ? Number.POSITIVE_INFINITY : this.pieceFiles * 2;
    return ended;
  }
}
