import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { Gauge, Logger, MetricsRegistry } from "../../core/index.ts";
import { RateLimitedLog, type FlushFailureReason } from "./flush-retry.ts";

/**
 * Whether the lake can store rows right now, for operators (docs/OPERATIONS.md "Disk full, I/O
 * errors and engine memory"): `svc_lake_write_blocked` and the free bytes of its file systems on
 * /metrics, the same in the node stats (`GET /api/v1/metadata/stats`, `storage`), one log line
 * when a condition starts and one a minute while it lasts (with the path and its free space), and
 * "lake writes resumed" when rows flow again. The writer reports; this class keeps the state.
 */

/** Why rows do not reach Parquet now: a failing flush (its reason), or the spool refusing rows. */
export type BlockReason = FlushFailureReason | "reserve" | "spool_write_failed";

export interface WriteBlock {
  reason: BlockReason;
  sinceMs: number;
}

export interface WriteStatusSnapshot {
  blocked?: WriteBlock;
  lastError?: { reason: BlockReason; atMs: number };
  /** Free bytes for svc (statfs `bavail`) of the Parquet directory and of the catalog and spool directory. */
  freeBytes: { data?: number; state?: number };
}

/** Free bytes an unprivileged writer may use on the file system holding `path` (its nearest existing ancestor). */
export function freeBytesAt(path: string): number | undefined {
  for (let p = path; ; p = dirname(p)) {
    try {
      const s = statfsSync(p);
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

/**
 * The file a failure names: `path` of a node:fs error, the quoted absolute path in a DuckDB message
 * (`Could not write file "/…/ducklake-….parquet": No space left on device`), else `fallback`.
 */
export function failurePath(e: unknown, fallback: string): string {
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 5; depth++) {
    if (typeof c !== "object") break;
    const o = c as { path?: unknown; message?: unknown; cause?: unknown };
    if (typeof o.path === "string" && o.path.startsWith("/")) return o.path;
    const quoted = typeof o.message === "string" ? /"(\/[^"\n]+)"/.exec(o.message) : null;
    if (quoted) return quoted[1]!;
    c = o.cause;
  }
  return fallback;
}

/** What an operator can do, per reason (in the log line). */
export const ADVICE: Record<BlockReason, string> = {
  no_space:
    "free space on that file system; rows stay in the spool (up to storage.lakehouse.max_buffered_rows) and are written by themselves once there is room",
  io: "check the disk (dmesg, SMART); rows stay in the spool and the flush is retried with back-off",
  out_of_memory:
    "DuckDB's memory cap (tuning.memory_limit under storage.lakehouse or node.lakehouse) is too small for this flush; rows stay in the spool and are retried in smaller pieces; if it goes on, raise memory_limit and restart svc: the spool is written after the restart",
  store:
    "the object store of storage.lakehouse.data_path did not take the Parquet file (see the error: credentials, endpoint, bucket); rows stay in the spool and the upload is retried with back-off",
  catalog:
    "the catalog of storage.lakehouse.catalog_path does not answer or refused the commit (see the error); rows stay in the spool (up to storage.lakehouse.max_buffered_rows) and are committed by themselves once it answers",
  other: "rows stay in the spool and the flush is retried with back-off",
  reserve:
    "new rows are refused to keep storage.lakehouse.reserve_free_bytes for Parquet; free space on that file system",
  spool_write_failed: "the rows of that batch are lost (svc_lake_rows_lost_total); free space on that file system",
};

export interface WriteStatusMetrics {
  blocked: Gauge;
  lastError: Gauge<"reason">;
  freeBytes: Gauge<"dir">;
}

export function writeStatusMetrics(reg: MetricsRegistry): WriteStatusMetrics {
  return {
    blocked: reg.gauge(
      "svc_lake_write_blocked",
      "1 while rows do not reach Parquet: a flush failing (no_space, io, out_of_memory, store, catalog, other) or the spool refusing rows (reserve_free_bytes, spool writes failing); rows stay buffered up to max_buffered_rows and are written by themselves when the cause is gone.",
    ),
    lastError: reg.gauge(
      "svc_lake_write_error_last_timestamp_seconds",
      "Time of the last failed flush or spool write (or row refused for the reserve), per reason.",
      ["reason"],
    ),
    freeBytes: reg.gauge(
      "svc_lake_free_bytes",
      "Free bytes (statfs, available to svc) of the file system of data_path (dir=data) and of the catalog and spool directory (dir=state).",
      ["dir"],
    ),
  };
}

const FREE_EVERY_MS = 1_000;

export class WriteStatus {
  private block: WriteBlock | undefined;
  private lastError: { reason: BlockReason; atMs: number } | undefined;
  private free: { data?: number; state?: number } = {};
  private freeAtMs = Number.NEGATIVE_INFINITY;
  /** Log lines of failures: one when a condition starts, then one a minute (per key). */
  readonly log = new RateLimitedLog();

  constructor(
    private readonly dirs: { data: string; state: string },
    private readonly metrics: WriteStatusMetrics,
    private readonly logger: Logger,
  ) {}

  error(reason: BlockReason, nowMs: number): void {
    this.lastError = { reason, atMs: nowMs };
    this.metrics.lastError.set(nowMs / 1000, { reason });
  }

  /** Every writer tick: the reason rows are blocked now (undefined: they flow). */
  update(reason: BlockReason | undefined, nowMs: number): void {
    let changed = false;
    if (reason && !this.block) {
      this.block = { reason, sinceMs: nowMs };
      changed = true;
    } else if (reason && this.block) this.block.reason = reason;
    else if (!reason && this.block) {
      this.logger.info("lake writes resumed", {
        blocked_reason: this.block.reason,
        blocked_ms: nowMs - this.block.sinceMs,
        ...this.freeBytes(nowMs, true),
      });
      this.block = undefined;
      this.log.clearPrefix("");
    }
    // Read the free space at once when rows stop flowing: the reason is likely there.
    this.freeBytes(nowMs, changed);
    this.metrics.blocked.set(this.block ? 1 : 0);
  }

  /** Free bytes of both directories, read at most once a second (`force`: now). */
  private freeBytes(nowMs: number, force = false): { data_free_bytes?: number; state_free_bytes?: number } {
    if (force || nowMs - this.freeAtMs >= FREE_EVERY_MS) {
      this.freeAtMs = nowMs;
      const data = freeBytesAt(this.dirs.data);
      const state = freeBytesAt(this.dirs.state);
      this.free = { ...(data !== undefined ? { data } : {}), ...(state !== undefined ? { state } : {}) };
      if (data !== undefined) this.metrics.freeBytes.set(data, { dir: "data" });
      if (state !== undefined) this.metrics.freeBytes.set(state, { dir: "state" });
    }
    return {
      ...(this.free.data !== undefined ? { data_free_bytes: this.free.data } : {}),
      ...(this.free.state !== undefined ? { state_free_bytes: this.free.state } : {}),
    };
  }

  snapshot(): WriteStatusSnapshot {
    return {
      ...(this.block ? { blocked: { ...this.block } } : {}),
      ...(this.lastError ? { lastError: { ...this.lastError } } : {}),
      freeBytes: { ...this.free },
    };
  }
}
