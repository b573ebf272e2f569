/**
 * PostgreSQL errors of the catalog, classified by SQLSTATE (Bun's PostgresError carries the server's
 * code in `errno`; `code` is Bun's own ERR_POSTGRES_*), never by message text, which the server
 * translates (lc_messages). docs/DUCKLAKE.md "PostgreSQL catalog" lists what is retried and why.
 */
import { AppError, errorMessage } from "../../core/index.ts";

/**
 * SQLSTATEs after which the whole commit transaction is run again on fresh reads:
 * 40001 serialization_failure, 40P01 deadlock_detected, and 23505 unique_violation, which is how a
 * commit that raced another writer ends (two writers took the same next snapshot_id or
 * data_file_id: both are primary keys). The stock extension does not take our advisory lock, so a
 * race with it ends this way; between svc writers the lock prevents it.
 */
export const RETRY_SQLSTATES: ReadonlySet<string> = new Set(["40001", "40P01", "23505"]);

/** The SQLSTATE of a server error, or undefined for anything else (Bun's own errors included). */
export function sqlState(e: unknown): string | undefined {
  // Bun.SQL read here, not imported: the client loads only with a PostgreSQL catalog (docs/ARCHITECTURE.md "Start-up").
  if (!(e instanceof Bun.SQL.PostgresError)) return undefined;
  const s = e.errno;
  return typeof s === "string" && /^[0-9A-Z]{5}$/.test(s) ? s : undefined;
}

export const isRetryable = (e: unknown) => RETRY_SQLSTATES.has(sqlState(e) ?? "");

/** Back-off before attempt `n` (1-based retries): 5 ms doubling to 320 ms, with full jitter. */
export const backoffMs = (n: number) => Math.random() * Math.min(320, 5 * 2 ** (n - 1));

export interface RetryStats {
  /** Attempts that failed with a retryable SQLSTATE and were run again. */
  retries: number;
}

/**
 * Runs `attempt` until it does not fail with a retryable SQLSTATE, at most `maxAttempts` times;
 * then a CONFLICT naming the last SQLSTATE. Other errors pass through `toAppError`.
 */
export async function withRetry<T>(
  what: string,
  maxAttempts: number,
  stats: RetryStats,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!isRetryable(e)) throw toAppError(what, e);
      if (n >= maxAttempts) {
        throw new AppError(
          "CONFLICT",
          `${what}: still conflicting with other catalog writers after ${n} attempts (SQLSTATE ${sqlState(e)})`,
          {
            cause: e,
            details: { sqlstate: sqlState(e), attempts: n },
          },
        );
      }
      stats.retries++;
      await Bun.sleep(backoffMs(n));
    }
  }
}

/**
 * AppErrors pass; a server error keeps its SQLSTATE in details; anything else (connection refused,
 * closed, authentication) is UNAVAILABLE: the catalog server cannot be used right now.
 */
export function toAppError(what: string, e: unknown): AppError {
  if (e instanceof AppError) return e;
  const state = sqlState(e);
  if (state !== undefined)
    return new AppError("DEPENDENCY_FAILED", `${what}: PostgreSQL error ${state}: ${errorMessage(e)}`, {
      cause: e,
      details: { sqlstate: state },
    });
  return new AppError("UNAVAILABLE", `${what}: catalog database unavailable: ${errorMessage(e)}`, { cause: e });
}
