import { statfsSync } from "node:fs";
import { Elysia } from "elysia";
import { rowsLostCounter, type MetricsRegistry, type Module, type StartupState } from "../core/index.ts";
import type { WriterHealth } from "../lake/index.ts";

/**
 * `GET /health` (coordinator and node ports) in the style of the IETF draft "Health Check Response
 * Format for HTTP APIs" (draft-inadarei-api-health-check): `{status, checks}` with `pass`, `warn`
 * (degraded: still storing every row) or `fail` (rows are being lost or are about to be); HTTP 200
 * for pass and warn, 503 for fail. docs/ARCHITECTURE.md "Health" lists the checks and thresholds.
 * Cheap by design (no DuckDB query, no catalog read: counters, writer state, one statfs per
 * directory, cached for a second) and unauthenticated, so it names no path and no secret.
 */
export type HealthStatus = "pass" | "warn" | "fail";

export interface HealthCheck {
  componentId?: string;
  componentType: "component" | "system";
  observedValue?: number;
  observedUnit?: string;
  /** HEP ingest threads: share of one core the thread used over its last seconds. */
  cpu_share?: number;
  /** HEP ingest threads: datagrams the kernel dropped on the thread's socket in the last minute. */
  kernel_drops_last_minute?: number;
  /** forward: ok, lagging or down (docs/DEPLOY.md "Watching an edge"); startup: starting or ready (docs/ARCHITECTURE.md "Start-up"). */
  state?: "ok" | "lagging" | "down" | "starting" | "ready";
  backlog_bytes?: number;
  backlog_packets?: number;
  dropped_packets?: number;
  status: HealthStatus;
  time: string;
  output?: string;
}

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
  ingestThreads?: () => Array<{ index: number; lastHeardMs: number | undefined; cpuShare: number | undefined; kernelDropsLastMinute: number }> | undefined;
  /** Store-and-forward to a central (ingest.forward; docs/DEPLOY.md "Watching an edge"). */
  forward?: () => { state: "ok" | "lagging" | "down"; lagSec: number; backlogBytes: number; backlogPackets: number; droppedPackets: number; output?: string } | undefined;
}

/** Rows lost and thread restarts are judged over this window (a minute: "losing rows now"). */
const WINDOW_MS = 60_000;
const SAMPLE_EVERY_MS = 5_000;
/** The ingest thread hands over every 100 ms; silent this long, it is stuck or gone. */
const THREAD_SILENT_MS = 5_000;
/** An ingest thread using this share of a core or more has no headroom: it falls behind on the next burst. */
const SATURATED_CPU = 0.95;
/** Backlog share of max_buffered_rows from which /health warns (at 100 % new rows are refused). */
const BACKLOG_WARN = 0.8;
const STATFS_CACHE_MS = 1_000;

/**
 * A server the flushes need (the catalog, the object store) as one check: warn while some table's
 * flushes fail with `reason`, saying since when (the oldest such failure), else pass.
 */
function downCheck(failing: ReadonlyArray<{ reason: string; sinceMs: number }>, reason: string, time: string, unit: string, output: (sinceIso: string) => string): HealthCheck[] {
  const down = failing.filter((f) => f.reason === reason);
  const since = down.length > 0 ? new Date(Math.min(...down.map((f) => f.sinceMs))).toISOString() : "";
  return [{ componentType: "component", observedValue: down.length, observedUnit: unit, status: down.length > 0 ? "warn" : "pass", time, ...(down.length > 0 ? { output: output(since) } : {}) }];
}

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
      .counter("svc_hep_packets_dropped_total", "HEP packets not stored, per reason (decode errors by reason, auth_failed, backlog_full, table_pending).", ["reason"])
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
    if (startup) {
      const running = startup.running();
      checks.startup = [
        startup.ready
          ? { componentType: "system", state: "ready", observedValue: startup.readyAfterMs!, observedUnit: "ms to start", status: "pass", time }
          : {
              componentType: "system",
              state: "starting",
              observedValue: Math.max(0, nowMs - startup.startedAtMs),
              observedUnit: "ms since start",
              status: "warn",
              time,
              output: `still starting: ${running.join(", ") || "the last module"}; routes that need the lake answer 503 with Retry-After until then`,
            },
      ];
    }

    const w = this.src.writer?.();
    if (w) {
      const failing = w.failing;
      checks["lake:flush"] = [
        {
          componentType: "component",
          observedValue: failing.length,
          observedUnit: "tables failing",
          status: failing.length > 0 ? "warn" : "pass",
          time,
          ...(failing.length > 0
            ? {
                output: failing
                  .slice(0, 5)
                  .map((f) => `${f.table}: ${f.reason}, ${f.failures} failed flushes since ${new Date(f.sinceMs).toISOString()}; rows stay buffered and are retried with back-off`)
                  .join("; "),
              }
            : {}),
        },
      ];
      const m = this.src.maintainer?.();
      if (m) {
        // Informational: one writer of a shared catalog maintains it (docs/DUCKLAKE.md "PostgreSQL catalog").
        checks["lake:maintainer"] = [
          {
            componentType: "component",
            observedValue: m.isMaintainer ? 1 : 0,
            observedUnit: "is maintainer",
            status: "pass",
            time,
            output: m.isMaintainer ? "this process is the lake maintainer (compaction, expiry, retention, orphan sweep)" : "another writer of the shared catalog is the maintainer",
          },
        ];
        // A shared catalog is a server that can be down: the flushes say so (reason catalog) while
        // the rows stay in the local spool (docs/DUCKLAKE.md "When the catalog is down").
        checks["lake:catalog"] = downCheck(
          failing,
          "catalog",
          time,
          "tables whose commits fail",
          (since) => `the catalog (storage.lakehouse.catalog_path) has not taken a commit since ${since}; rows stay in the local spool and are committed once it answers`,
        );
      }
      const store = this.src.objectStore?.();
      if (store) {
        // The Parquet files' store can be down: the flushes say so (reason store) while the rows stay
        // in the local spool (docs/STORAGE.md "When the store is down").
        checks["lake:store"] = downCheck(
          failing,
          "store",
          time,
          "tables whose uploads fail",
          (since) => `the object store ${store} (storage.lakehouse.data_path) has not taken an upload since ${since}; rows stay in the local spool and are written once it answers`,
        );
      }
      const share = w.maxBufferedRows > 0 ? w.backlogRows / w.maxBufferedRows : 0;
      checks["lake:backlog"] = [
        {
          componentType: "component",
          observedValue: w.backlogRows,
          observedUnit: "rows",
          status: share >= 1 ? "fail" : share >= BACKLOG_WARN ? "warn" : "pass",
          time,
          ...(share >= BACKLOG_WARN ? { output: `${Math.round(share * 100)} % of storage.lakehouse.max_buffered_rows (${w.maxBufferedRows}); new rows are refused at 100 %` } : {}),
        },
      ];
    }

    if (this.src.writer) {
      const now = this.lostNow();
      const lost: string[] = [];
      let total = 0;
      for (const [reason, v] of now) {
        const d = v - (base?.lost.get(reason) ?? 0);
        if (d > 0) {
          total += d;
          lost.push(`${reason}: ${d}`);
        }
      }
      checks["lake:rows_lost"] = [
        {
          componentType: "component",
          observedValue: total,
          observedUnit: "rows in the last minute",
          status: total > 0 ? "fail" : "pass",
          time,
          ...(total > 0 ? { output: `rows lost by reason: ${lost.join(", ")}` } : {}),
        },
      ];
    }

    const storage = this.src.storage;
    if (storage) {
      const { minFreeBytes: min, reserveFreeBytes: reserve } = storage;
      checks["disk:free"] = [...this.freeSpace(nowMs, storage.dirs())].map(([name, f]): HealthCheck => {
        if ("error" in f) return { componentId: name, componentType: "system", status: "warn", time, output: "free space could not be read" };
        const status: HealthStatus = f.bytes <= 0 || f.bytes < reserve ? "fail" : f.bytes < min ? "warn" : "pass";
        return {
          componentId: name,
          componentType: "system",
          observedValue: f.bytes,
          observedUnit: "bytes",
          status,
          time,
          ...(status !== "pass"
            ? {
                output:
                  status === "fail" ? `less free space than storage.lakehouse.reserve_free_bytes (${reserve}): new rows are refused` : `less free space than storage.lakehouse.min_free_bytes (${min})`,
              }
            : {}),
        };
      });
    }

    const threads = this.src.ingestThreads?.();
    if (threads) {
      const restarts = this.restartsNow() - (base?.restarts ?? 0);
      checks["ingest:thread"] = threads.map((t): HealthCheck => {
        const silentMs = t.lastHeardMs === undefined ? undefined : Math.max(0, nowMs - t.lastHeardMs);
        // Behind: the thread uses a whole core, or the kernel dropped datagrams on its socket.
        const behind: string[] = [];
        if (t.cpuShare !== undefined && t.cpuShare >= SATURATED_CPU) behind.push(`thread ${t.index} is saturated (${Math.round(t.cpuShare * 100)} % of a core)`);
        if (t.kernelDropsLastMinute > 0) behind.push(`the kernel dropped ${t.kernelDropsLastMinute} datagrams on thread ${t.index}'s socket in the last minute`);
        const status: HealthStatus = silentMs === undefined || silentMs > THREAD_SILENT_MS ? "fail" : restarts > 0 || behind.length > 0 ? "warn" : "pass";
        const output =
          status === "fail"
            ? threads.length > 1
              ? `HEP ingest thread ${t.index} is not running or not responding`
              : "the HEP ingest thread is not running or not responding"
            : [...(restarts > 0 ? [`restarted ${restarts} times in the last minute`] : []), ...behind].join("; ");
        return {
          componentType: "component",
          ...(threads.length > 1 ? { componentId: `thread-${t.index}` } : {}),
          ...(silentMs !== undefined ? { observedValue: silentMs, observedUnit: "ms since last hand-over" } : {}),
          ...(t.cpuShare !== undefined ? { cpu_share: Math.round(t.cpuShare * 1000) / 1000 } : {}),
          kernel_drops_last_minute: t.kernelDropsLastMinute,
          status,
          time,
          ...(output ? { output } : {}),
        };
      });
    }

    const fwd = this.src.forward?.();
    if (fwd) {
      // The edge still stores every packet locally: a central out of reach is a warning, not a failure.
      checks.forward = [
        {
          componentType: "component",
          state: fwd.state,
          observedValue: Math.round(fwd.lagSec * 10) / 10,
          observedUnit: "s lag",
          backlog_bytes: fwd.backlogBytes,
          backlog_packets: fwd.backlogPackets,
          dropped_packets: fwd.droppedPackets,
          status: fwd.state === "ok" ? "pass" : "warn",
          time,
          ...(fwd.output ? { output: fwd.output } : {}),
        },
      ];
    }

    let status: HealthStatus = "pass";
    const problems: string[] = [];
    for (const [name, list] of Object.entries(checks)) {
      for (const c of list) {
        status = worst(status, c.status);
        if (c.status !== "pass") problems.push(`${name}${c.componentId ? ` (${c.componentId})` : ""}: ${c.output ?? c.status}`);
      }
    }
    return { status, description: "svc appliance", ...(problems.length > 0 ? { output: problems.join("; ") } : {}), checks };
  }
}

/** The `/health` route; without a monitor (tests, a process without storage) it always passes. */
export function healthRoute(report?: () => HealthReport) {
  return new Elysia().get("/health", () => {
    const r: HealthReport = report ? report() : { status: "pass", description: "svc appliance", checks: {} };
    return new Response(JSON.stringify(r), { status: r.status === "fail" ? 503 : 200, headers: { "content-type": "application/health+json", "cache-control": "no-store" } });
  });
}
