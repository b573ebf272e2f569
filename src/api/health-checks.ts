import type { StartupState } from "../core/index.ts";
import type { WriterHealth } from "../lake/index.ts";

/**
 * The checks of `GET /health` (health.ts) and their thresholds, each from the state it judges
 * (docs/ARCHITECTURE.md "Health" lists them): the start-up, the lake writer (flushes, maintainer,
 * catalog, store, backlog), rows lost, free disk space, the HEP ingest threads and the forward.
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

/** One HEP ingest thread: when it last handed over, its share of a core, the kernel's drops on its socket. */
export interface IngestThreadState {
  index: number;
  lastHeardMs: number | undefined;
  cpuShare: number | undefined;
  kernelDropsLastMinute: number;
}

/** Store-and-forward to a central as the edge sees it (docs/DEPLOY.md "Watching an edge"). */
export interface ForwardState {
  state: "ok" | "lagging" | "down";
  lagSec: number;
  backlogBytes: number;
  backlogPackets: number;
  droppedPackets: number;
  output?: string;
}

/** The ingest thread hands over every 100 ms; silent this long, it is stuck or gone. */
const THREAD_SILENT_MS = 5_000;
/** An ingest thread using this share of a core or more has no headroom: it falls behind on the next burst. */
const SATURATED_CPU = 0.95;
/** Backlog share of max_buffered_rows from which /health warns (at 100 % new rows are refused). */
const BACKLOG_WARN = 0.8;

/**
 * A server the flushes need (the catalog, the object store) as one check: warn while some table's
 * flushes fail with `reason`, saying since when (the oldest such failure), else pass.
 */
function downCheck(
  failing: ReadonlyArray<{ reason: string; sinceMs: number }>,
  reason: string,
  time: string,
  unit: string,
  output: (sinceIso: string) => string,
): HealthCheck[] {
  const down = failing.filter((f) => f.reason === reason);
  const since = down.length > 0 ? new Date(Math.min(...down.map((f) => f.sinceMs))).toISOString() : "";
  return [
    {
      componentType: "component",
      observedValue: down.length,
      observedUnit: unit,
      status: down.length > 0 ? "warn" : "pass",
      time,
      ...(down.length > 0 ? { output: output(since) } : {}),
    },
  ];
}

/** Starting (warn, naming what still starts) or ready (docs/ARCHITECTURE.md "Start-up"). */
export function startupCheck(startup: StartupState, nowMs: number, time: string): HealthCheck[] {
  const running = startup.running();
  return [
    startup.ready
      ? {
          componentType: "system",
          state: "ready",
          observedValue: startup.readyAfterMs!,
          observedUnit: "ms to start",
          status: "pass",
          time,
        }
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

/** The lake writer's checks: flushes, and with a shared catalog or an object store their servers, and the backlog. */
export function lakeChecks(
  w: WriterHealth,
  m: { isMaintainer: boolean } | undefined,
  store: string | undefined,
  time: string,
): Record<string, HealthCheck[]> {
  const out: Record<string, HealthCheck[]> = {};
  const failing = w.failing;
  out["lake:flush"] = [
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
              .map(
                (f) =>
                  `${f.table}: ${f.reason}, ${f.failures} failed flushes since ${new Date(f.sinceMs).toISOString()}; rows stay buffered and are retried with back-off`,
              )
              .join("; "),
          }
        : {}),
    },
  ];
  if (m) {
    // Informational: one writer of a shared catalog maintains it (docs/DUCKLAKE.md "PostgreSQL catalog").
    out["lake:maintainer"] = [
      {
        componentType: "component",
        observedValue: m.isMaintainer ? 1 : 0,
        observedUnit: "is maintainer",
        status: "pass",
        time,
        output: m.isMaintainer
          ? "this process is the lake maintainer (compaction, expiry, retention, orphan sweep)"
          : "another writer of the shared catalog is the maintainer",
      },
    ];
    // A shared catalog is a server that can be down: the flushes say so (reason catalog) while
    // the rows stay in the local spool (docs/DUCKLAKE.md "When the catalog is down").
    out["lake:catalog"] = downCheck(
      failing,
      "catalog",
      time,
      "tables whose commits fail",
      (since) =>
        `the catalog (storage.lakehouse.catalog_path) has not taken a commit since ${since}; rows stay in the local spool and are committed once it answers`,
    );
  }
  if (store) {
    // The Parquet files' store can be down: the flushes say so (reason store) while the rows stay
    // in the local spool (docs/STORAGE.md "When the store is down").
    out["lake:store"] = downCheck(
      failing,
      "store",
      time,
      "tables whose uploads fail",
      (since) =>
        `the object store ${store} (storage.lakehouse.data_path) has not taken an upload since ${since}; rows stay in the local spool and are written once it answers`,
    );
  }
  const share = w.maxBufferedRows > 0 ? w.backlogRows / w.maxBufferedRows : 0;
  out["lake:backlog"] = [
    {
      componentType: "component",
      observedValue: w.backlogRows,
      observedUnit: "rows",
      status: share >= 1 ? "fail" : share >= BACKLOG_WARN ? "warn" : "pass",
      time,
      ...(share >= BACKLOG_WARN
        ? {
            output: `${Math.round(share * 100)} % of storage.lakehouse.max_buffered_rows (${w.maxBufferedRows}); new rows are refused at 100 %`,
          }
        : {}),
    },
  ];
  return out;
}

/** Rows lost per reason since `before` (the counters a minute ago): a count above 0 is a failure. */
export function rowsLostCheck(
  now: ReadonlyMap<string, number>,
  before: ReadonlyMap<string, number> | undefined,
  time: string,
): HealthCheck[] {
  const lost: string[] = [];
  let total = 0;
  for (const [reason, v] of now) {
    const d = v - (before?.get(reason) ?? 0);
    if (d > 0) {
      total += d;
      lost.push(`${reason}: ${d}`);
    }
  }
  return [
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

/** Free space per directory against storage.lakehouse.min_free_bytes (warn) and reserve_free_bytes (fail). */
export function diskChecks(
  free: ReadonlyMap<string, { bytes: number } | { error: true }>,
  limits: { minFreeBytes: number; reserveFreeBytes: number },
  time: string,
): HealthCheck[] {
  const { minFreeBytes: min, reserveFreeBytes: reserve } = limits;
  return [...free].map(([name, f]): HealthCheck => {
    if ("error" in f)
      return {
        componentId: name,
        componentType: "system",
        status: "warn",
        time,
        output: "free space could not be read",
      };
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
              status === "fail"
                ? `less free space than storage.lakehouse.reserve_free_bytes (${reserve}): new rows are refused`
                : `less free space than storage.lakehouse.min_free_bytes (${min})`,
          }
        : {}),
    };
  });
}

/** Each HEP ingest thread: silent (fail), restarted in the last minute or behind (warn). */
export function threadChecks(
  threads: readonly IngestThreadState[],
  restarts: number,
  nowMs: number,
  time: string,
): HealthCheck[] {
  return threads.map((t): HealthCheck => {
    const silentMs = t.lastHeardMs === undefined ? undefined : Math.max(0, nowMs - t.lastHeardMs);
    // Behind: the thread uses a whole core, or the kernel dropped datagrams on its socket.
    const behind: string[] = [];
    if (t.cpuShare !== undefined && t.cpuShare >= SATURATED_CPU)
      behind.push(`thread ${t.index} is saturated (${Math.round(t.cpuShare * 100)} % of a core)`);
    if (t.kernelDropsLastMinute > 0)
      behind.push(
        `the kernel dropped ${t.kernelDropsLastMinute} datagrams on thread ${t.index}'s socket in the last minute`,
      );
    const status: HealthStatus =
      silentMs === undefined || silentMs > THREAD_SILENT_MS
        ? "fail"
        : restarts > 0 || behind.length > 0
          ? "warn"
          : "pass";
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

/** The forward to a central: lagging or down is a warning (the edge keeps every packet). */
export function forwardCheck(fwd: ForwardState, time: string): HealthCheck[] {
  // The edge still stores every packet locally: a central out of reach is a warning, not a failure.
  return [
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
