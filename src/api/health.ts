import { statfsSync } from "node:fs";
import { Elysia } from "elysia";
import { rowsLostCounter, type MetricsRegistry, type Module, type StartupState } from "../core/index.ts";
import type { WriterHealth } from "../lake/index.ts";
import {
  diskChecks,
  forwardCheck,
  lakeChecks,
  rowsLostCheck,
  startupCheck,
  threadChecks,
  type ForwardState,
  type HealthCheck,
  type HealthStatus,
  type IngestThreadState,
} from "./health-checks.ts";

export type { HealthCheck, HealthStatus } from "./health-checks.ts";

/**
 * `GET /health` (coordinator and node ports) in the style of the IETF draft "Health Check Response
 * Format for HTTP APIs" (draft-inadarei-api-health-check): `{status, checks}` with `pass`, `warn`
 * (degraded: still storing every row) or `fail` (rows are being lost or are about to be); HTTP 200
 * for pass and warn, 503 for fail. docs/ARCHITECTURE.md "Health" lists the checks and thresholds.
 * Cheap by design (no DuckDB query, no catalog read: counters, writer state, one statfs per
 * directory, cached for a second) and unauthenticated, so it names no path and no secret.
 */
export interface HealthReport {
  status: HealthStatus;
  description: string;
  /** warn/fail only: the checks that are not pass, `name: output` joined by "; " (the draft's top-level `output`). */
  output?: string;
  checks: Record<string, HealthCheck[]>;
}

export interface HealthSources {
  metrics: MetricsRegistry;
  /** The two-phase start (docs/ARCHITECTURE.md "Start-up"): a `startup` check, `warn` while the lake and the ingest still start. */
  startup?: StartupState;
  /** The lake writer's state (flush failures, backlog); absent without a lake in this process. */
  writer?: () => WriterHealth | undefined;
  /** Directories the lake writes to, by a name that may be shown (never the path itself). */
  /** With a shared (PostgreSQL) catalog: whether this process is the lake's maintainer; undefined with SQLite. */
  maintainer?: () => { isMaintainer: boolean } | undefined;
  /** With an s3:// or az:// data_path: the store's location (`s3://bucket/prefix/`); undefined for a local one. */
  objectStore?: () => string | undefined;
  storage?: { dirs: () => Record<string, string>; minFreeBytes: number; reserveFreeBytes: number };
  /** The HEP ingest threads (last message, CPU share, kernel drops); absent when ingest runs on the main thread. */
  ingestThreads?: () => IngestThreadState[] | undefined;
  /** Store-and-forward to a central (ingest.forward; docs/DEPLOY.md "Watching an edge"). */
  forward?: () => ForwardState | undefined;
}

/** Rows lost and thread restarts are judged over this window (a minute: "losing rows now"). */
const WINDOW_MS = 60_000;
const SAMPLE_EVERY_MS = 5_000;
const STATFS_CACHE_MS = 1_000;

const RANK: Record<HealthStatus, number> = { pass: 0, warn: 1, fail: 2 };
const worst = (a: HealthStatus, b: HealthStatus): HealthStatus => (RANK[b] > RANK[a] ? b : a);

interface Sample {
  atMs: number;
  lost: Map<string, number>;
  restarts: number;
}

export class HealthMonitor implements Module {
  readonly name = "health";
  private samples: Sample[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private statfsCache: { atMs: number; free: Map<string, { bytes: number } | { error: true }> } | undefined;

  constructor(private readonly src: HealthSources) {}

  async start(): Promise<void> {
    this.sample(Date.now());
    this.timer = setInterval(() => this.sample(Date.now()), SAMPLE_EVERY_MS);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Rows lost per reason so far: the writer's `svc_lake_rows_lost_total` (spool writes failed,
   * unreadable spool, rows from the ingest thread for an unknown table…) and HEP packets dropped
   * because the backlog was full (`svc_hep_packets_dropped_total{reason="backlog_full"}`, counted
   * by the pipeline and the ingest thread). The registry returns the counters registered by them.
   */
  private lostNow(): Map<string, number> {
    const m = this.src.metrics;
    const out = new Map<string, number>();
    for (const [key, v] of rowsLostCounter(m).series()) {
      const reason = /reason="([^"]*)"/.exec(key)?.[1] ?? "unknown";
      out.set(reason, (out.get(reason) ?? 0) + v);
    }
    const backlogFull = m
      .counter(
        "svc_hep_packets_dropped_total",
        "HEP packets not stored, per reason (decode errors by reason, auth_failed, backlog_full, table_pending).",
        ["reason"],
      )
      .get({ reason: "backlog_full" });
    if (backlogFull > 0) out.set("backlog_full", (out.get("backlog_full") ?? 0) + backlogFull);
    return out;
  }

  private restartsNow(): number {
    return this.src.metrics.sumOf("svc_hep_ingest_thread_restarts_total");
  }

  private sample(nowMs: number): void {
    this.samples.push({ atMs: nowMs, lost: this.lostNow(), restarts: this.restartsNow() });
    // Keep the newest sample at least WINDOW_MS old as the baseline; drop older ones.
    while (this.samples.length > 1 && this.samples[1]!.atMs <= nowMs - WINDOW_MS) this.samples.shift();
  }

  /** The oldest sample inside the window (the start of the process, at first). */
  private baseline(nowMs: number): Sample | undefined {
    return this.samples.find((s) => s.atMs >= nowMs - WINDOW_MS) ?? this.samples[this.samples.length - 1];
  }

  private freeSpace(nowMs: number, dirs: Record<string, string>): Map<string, { bytes: number } | { error: true }> {
    if (this.statfsCache && nowMs - this.statfsCache.atMs < STATFS_CACHE_MS) return this.statfsCache.free;
    const free = new Map<string, { bytes: number } | { error: true }>();
    for (const [name, dir] of Object.entries(dirs)) {
      try {
        const s = statfsSync(dir);
        free.set(name, { bytes: Number(s.bavail) * Number(s.bsize) });
      } catch {
        free.set(name, { error: true });
      }
    }
    this.statfsCache = { atMs: nowMs, free };
    return free;
  }

  report(nowMs = Date.now()): HealthReport {
    const time = new Date(nowMs).toISOString();
    const checks: Record<string, HealthCheck[]> = {};
    const base = this.baseline(nowMs);

    const startup = this.src.startup;
    if (startup) checks.startup = startupCheck(startup, nowMs, time);
    const w = this.src.writer?.();
    if (w) Object.assign(checks, lakeChecks(w, this.src.maintainer?.(), this.src.objectStore?.(), time));
    if (this.src.writer) checks["lake:rows_lost"] = rowsLostCheck(this.lostNow(), base?.lost, time);
    const storage = this.src.storage;
    if (storage) checks["disk:free"] = diskChecks(this.freeSpace(nowMs, storage.dirs()), storage, time);
    const threads = this.src.ingestThreads?.();
    if (threads)
      checks["ingest:thread"] = threadChecks(threads, this.restartsNow() - (base?.restarts ?? 0), nowMs, time);
    const fwd = this.src.forward?.();
    if (fwd) checks.forward = forwardCheck(fwd, time);

    let status: HealthStatus = "pass";
    const problems: string[] = [];
    for (const [name, list] of Object.entries(checks)) {
      for (const c of list) {
        status = worst(status, c.status);
        if (c.status !== "pass")
          problems.push(`${name}${c.componentId ? ` (${c.componentId})` : ""}: ${c.output ?? c.status}`);
      }
    }
    return {
      status,
      description: "svc appliance",
      ...(problems.length > 0 ? { output: problems.join("; ") } : {}),
      checks,
    };
  }
}

/** The `/health` route; without a monitor (tests, a process without storage) it always passes. */
export function healthRoute(report?: () => HealthReport) {
  return new Elysia().get("/health", () => {
    const r: HealthReport = report ? report() : { status: "pass", description: "svc appliance", checks: {} };
    return new Response(JSON.stringify(r), {
      status: r.status === "fail" ? 503 : 200,
      headers: { "content-type": "application/health+json", "cache-control": "no-store" },
    });
  });
}
