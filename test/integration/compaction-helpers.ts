/**
 * A real Lake module with one HEP-like table (partitioned by date, sorted by session_id,
 * timestamp, grouped by session_id) for the compaction tests: each `writeFile` is one flush, so one Parquet
 * file per partition it touches, and `maintain(nowMs)` runs one maintenance cycle.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { TableDef } from "../../src/core/index.ts";
import { lakeConfig } from "../../src/config/index.ts";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { Lake } from "../../src/lake/index.ts";
import { testConfig } from "../appliance.ts";

export const DEF: TableDef = {
  schema: "main",
  name: "ce_hep",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "date", type: "date", derived: "date_of:timestamp" },
    { name: "session_id", type: "varchar" },
    { name: "payload", type: "varchar" },
  ],
  timeColumn: "timestamp",
  partitionBy: "date",
  sortBy: ["session_id", "timestamp"],
  groupedBy: "session_id",
};
export const KEY = "main.ce_hep";
export const DAY_MS = 86_400_000;

export interface LakeHandle extends AsyncDisposable {
  lake: Lake;
  metrics: MetricsRegistry;
}

type Json = Record<string, unknown>;

/** Starts the lake on `dir` with these compaction settings (timer effectively off: tests call maintain). */
export async function openLake(dir: string, compaction: Json, lakehouse: Json = {}): Promise<LakeHandle> {
  const config = testConfig(dir, {
    storage: {
      lakehouse: {
        flush_interval_sec: 3600,
        retention: { days: 0 },
        ...lakehouse,
        compaction: { check_interval_sec: 86_400, ...compaction },
      },
    },
  });
  const metrics = new MetricsRegistry();
  const lake = new Lake({ config: lakeConfig(config), logger: createLogger({ test: true }), metrics });
  await lake.start();
  try {
    await lake.defineTable(DEF);
  } catch (e) {
    await lake.stop();
    throw e;
  }
  return { lake, metrics, [Symbol.asyncDispose]: () => lake.stop() };
}

let serial = 0;
/** Noise that does not compress away: files of a similar, predictable size. */
export const pad = (i: number, parts = 6) =>
  Array.from({ length: parts }, (_, j) => Bun.hash(`p${i}.${j}`).toString(16).padStart(16, "0")).join("");

/** One flush of `n` rows at `tsUs` (+1 µs each); `payloadParts` × 16 hex characters of payload per row. */
export async function writeFile(lake: Lake, tsUs: number, n = 20, payloadParts = 6): Promise<void> {
  for (let i = 0; i < n; i++, serial++)
    lake
      .row(KEY)!
      .time(tsUs + i)
      .str(`call-${serial % 50}`)
      .str(pad(serial, payloadParts))
      .end();
  await lake.sync();
  await lake.flush();
}

/** Live files per date partition, oldest partition first. */
export async function filesByPartition(
  lake: Lake,
): Promise<Map<string, Array<{ path: string; rows: number; bytes: number }>>> {
  const out = new Map<string, Array<{ path: string; rows: number; bytes: number }>>();
  for (const f of await lake.files(KEY)) {
    const d = /date=(\d{4}-\d{2}-\d{2})/.exec(f.path)?.[1] ?? "";
    out.set(d, [...(out.get(d) ?? []), f]);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The value of one series of a metric (0 when absent), from the Prometheus text. */
export function metricValue(m: MetricsRegistry, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of m.render().split("\n")) {
    const mm = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!mm || mm[1] !== name) continue;
    const have = Object.fromEntries([...(mm[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(mm[3]);
  }
  return total;
}

/** The catalog's SQLite file opened beside the running lake (WAL), to damage it as a test needs. */
export function openCatalogDb(dir: string): Database {
  const db = new Database(join(dir, "catalog.sqlite"));
  db.run("PRAGMA busy_timeout = 10000");
  return db;
}

/** `YYYY-MM-DD` of `days` from today (UTC), and epoch µs of `hour`:00 UTC on it. */
export function day(days: number): { date: string; at: (hour: number) => number } {
  const start = Math.floor(Date.now() / DAY_MS) * DAY_MS + days * DAY_MS;
  return { date: new Date(start).toISOString().slice(0, 10), at: (hour: number) => (start + hour * 3_600_000) * 1000 };
}
