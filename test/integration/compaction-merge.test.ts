/**
 * The windowed merge (src/lake/compaction/merge.ts) on real Parquet files written by the lake: a
 * merge cut into windows of the sort key writes exactly the rows of its sources, in exactly the
 * order one ORDER BY over all of them gives (for HEP tables the 5-minute bucket, session_id,
 * timestamp; NULLs last), also when one bucket holds most rows, keys repeat, and keys or times are NULL.
 */
import { describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { join } from "node:path";
import type { TableDef } from "../../src/core/index.ts";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { Lake } from "../../src/lake/index.ts";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import { CompactionDb } from "../../src/lake/compaction/duck.ts";
import { FooterCache } from "../../src/lake/compaction/footers.ts";
import { mergeFiles } from "../../src/lake/compaction/merge.ts";
import { testConfig } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const HEP_LIKE: TableDef = {
  schema: "main",
  name: "cm_hep",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "date", type: "date", derived: "date_of:timestamp" },
    { name: "session_id", type: "varchar" },
    { name: "payload", type: "varchar" },
  ],
  timeColumn: "timestamp",
  partitionBy: "date",
  sortBy: ["session_id", "timestamp"],
  clusterSec: 300,
};

const LP_LIKE: TableDef = {
  schema: "main",
  name: "cm_lp",
  columns: [
    { name: "time", type: "timestamp" },
    { name: "k", type: "varchar" },
    { name: "v", type: "varchar" },
  ],
  timeColumn: "time",
  sortBy: ["time"],
};

type Row = [number | null, string | null, string];
const BUCKET_US = 300_000_000;

/** Writes each batch as its own flush (one Parquet file per batch), then stops the lake. */
async function writeFiles(dir: string, def: TableDef, batches: Row[][]): Promise<void> {
  const config = testConfig(dir, { storage: { lakehouse: { flush_interval_sec: 3600, retention: { days: 0 }, compaction: { enable: false } } } });
  const lake = new Lake({ config: config.storage.lakehouse, logger: createLogger({ test: true }), metrics: new MetricsRegistry() });
  await lake.start();
  try {
    await lake.defineTable(def);
    const key = `${def.schema}.${def.name}`;
    for (const batch of batches) {
      for (const [ts, k, v] of batch) lake.row(key)!.time(ts).str(k).str(v).end();
      await lake.sync();
      await lake.flush();
    }
  } finally {
    await lake.stop();
  }
}

/** Merges every file of the table with windows of about `share` of its uncompressed bytes. */
async function mergeAll(dir: string, def: TableDef, share: number) {
  const cat = openLakeCatalog({ path: join(dir, "catalog.sqlite"), dataPath: join(dir, "lake") });
  const db = await CompactionDb.open({ memoryLimit: "128MB", tempDirectory: join(dir, "tmp"), dataPath: join(dir, "lake") });
  try {
    const info = cat.getTable(def.schema, def.name)!;
    const files = cat.listDataFiles(info.tableId);
    const footers = await new FooterCache(db).get(files.map((f) => f.absolutePath));
    const uncompressed = [...footers.values()].reduce((s, f) => s + f.uncompressedBytes, 0);
    const partition = def.partitionBy ? files[0]!.partitionValues[def.partitionBy] : undefined;
    const r = await mergeFiles(db, {
      def,
      info,
      files,
      uncompressedBytes: uncompressed,
      dataPath: join(dir, "lake"),
      relPath: cat.newDataFilePath(info.tableId, partition),
      rowGroupRows: 1024,
      windowBytes: Math.ceil(uncompressed * share),
      ...(partition !== undefined ? { partitionValue: partition } : {}),
    });
    return { ...r, sources: files.map((f) => f.absolutePath), out: join(dir, "lake", r.file.path) };
  } finally {
    db.close();
    cat.close();
  }
}

async function readRows(paths: string[], def: TableDef, inFileOrder: boolean): Promise<Row[]> {
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  try {
    const [ts, k, v] = def.columns.filter((c) => c.derived === undefined).map((c) => `"${c.name}"`);
    const list = paths.map((p) => `'${p}'`).join(", ");
    const r = await con.runAndReadAll(
      `SELECT epoch_us(${ts}) AS ts, ${k} AS k, ${v} AS v FROM read_parquet([${list}], file_row_number = true, filename = true)${inFileOrder ? " ORDER BY filename, file_row_number" : ""}`,
    );
    return r.getRowObjectsJson().map((o) => [o.ts === null ? null : Number(o.ts), o.k === null ? null : String(o.k), String(o.v)]);
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

/** ORDER BY semantics: ascending, NULLs last, strings by bytes (ASCII here). */
function cmp(a: number | string | null, b: number | string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
const hepKey = (r: Row) => [r[0] === null ? null : Math.floor(r[0] / BUCKET_US), r[1], r[0]] as const;
const lpKey = (r: Row) => [r[0]] as const;
const sortedBy = (rows: Row[], key: (r: Row) => readonly (number | string | null)[]) =>
  [...rows].sort((x, y) => {
    const a = key(x);
    const b = key(y);
    for (let i = 0; i < a.length; i++) {
      const c = cmp(a[i]!, b[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
const canonical = (rows: Row[]) => sortedBy(rows, (r) => [r[0], r[1], r[2]]);

/** Noise that does not compress away, so the files have some size. */
const pad = (i: number) => Bun.hash(String(i)).toString(16).repeat(6);

describe("windowed compaction merge", () => {
  test("HEP order (bucket, session_id, timestamp): windows give exactly the rows and order of one sort", async () => {
    await using dir = tempDir();
    const day = Math.floor(Date.now() / 86_400_000) - 1; // yesterday, 10:00 UTC: recent, one partition
    const t0 = (day * 86_400_000 + 10 * 3_600_000) * 1000;
    const batches: Row[][] = [];
    let n = 0;
    // Six flushes in arrival order: most rows in one bucket (it must be cut by session_id),
    // repeated (session_id, timestamp) keys, NULL session ids, a few rows in two later buckets.
    for (let b = 0; b < 6; b++) {
      const batch: Row[] = [];
      for (let i = 0; i < 700; i++, n++) {
        const bucket = i % 50 === 0 ? 1 + (i % 2) : 0;
        const ts = t0 + bucket * BUCKET_US + ((n * 7919) % 290_000_000);
        const session = i % 97 === 0 ? null : `call-${(n * 31) % 180}`;
        batch.push([ts, session, pad(n)]);
        if (i % 100 === 0) batch.push([ts, session, pad(n) + "-twin"]);
      }
      batches.push(batch);
    }
    await writeFiles(dir.path, HEP_LIKE, batches);
    const m = await mergeAll(dir.path, HEP_LIKE, 1 / 12);
    expect(m.windows).toBeGreaterThanOrEqual(6);
    const source = await readRows(m.sources, HEP_LIKE, false);
    const merged = await readRows([m.out], HEP_LIKE, true);
    expect(m.file.recordCount).toBe(source.length);
    expect(canonical(merged)).toEqual(canonical(source));
    expect(merged.map(hepKey)).toEqual(sortedBy(source, hepKey).map(hepKey));
  });

  test("time-only order with repeated and NULL times (line-protocol tables)", async () => {
    await using dir = tempDir();
    const t0 = (Date.now() - 3_600_000) * 1000;
    const batches: Row[][] = [];
    let n = 0;
    for (let b = 0; b < 4; b++) {
      const batch: Row[] = [];
      for (let i = 0; i < 600; i++, n++) batch.push([i % 40 === 0 ? null : t0 + ((n * 13) % 25) * 1_000_000, "x", pad(n)]);
      batches.push(batch);
    }
    await writeFiles(dir.path, LP_LIKE, batches);
    const m = await mergeAll(dir.path, LP_LIKE, 1 / 8);
    expect(m.windows).toBeGreaterThanOrEqual(4);
    const source = await readRows(m.sources, LP_LIKE, false);
    const merged = await readRows([m.out], LP_LIKE, true);
    expect(canonical(merged)).toEqual(canonical(source));
    expect(merged.map(lpKey)).toEqual(sortedBy(source, lpKey).map(lpKey));
    expect(merged.at(-1)![0]).toBeNull();
  });
});
