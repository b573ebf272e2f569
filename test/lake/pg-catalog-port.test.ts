/**
 * PgCatalog (src/lake/catalog-pg) through every method of the lake's catalog port
 * (src/lake/catalog-port.ts), against a real PostgreSQL (test/peers/postgres.ts), with the semantics
 * of the SQLite catalog. Data files are plain files of the stated size (the catalog checks only the
 * size); the stock extension reading real Parquet is test/integration/ducklake-pg-interop.test.ts
 * and test/lake/pg-catalog-concurrency.test.ts.
 */
import { afterAll, expect } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SQL } from "bun";
import type { NewDataFile } from "../../src/lake/catalog/index.ts";
import { CATALOG_URL_KEY, PgCatalog } from "../../src/lake/catalog-pg/index.ts";
import type { AsyncLakeCatalog } from "../../src/lake/catalog-port.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { freeTcpPort } from "../peers/slapd.ts";

let server: Promise<Postgres> | undefined;
let dbCount = 0;
async function database(): Promise<string> {
  server ??= startPostgres();
  return (await server).createDatabase(`p${++dbCount}`);
}
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

const NEEDS = [postgresPeer];
const T = 60_000;

/** A file of `bytes` bytes at a fresh path of the table, described with stats of column `id`. */
async function file(
  cat: AsyncLakeCatalog,
  dataPath: string,
  tableId: number,
  rows: number,
  idRange: [number, number],
  part?: string,
): Promise<NewDataFile> {
  const path = await cat.newDataFilePath(tableId, part);
  const abs = join(dataPath, path);
  mkdirSync(dirname(abs), { recursive: true });
  const bytes = 100 + rows;
  writeFileSync(abs, Buffer.alloc(bytes));
  return {
    path,
    recordCount: rows,
    fileSizeBytes: bytes,
    footerSize: 10,
    columnStats: { id: { min: String(idRange[0]), max: String(idRange[1]), nullCount: 0 } },
    ...(part === undefined ? {} : { partitionValues: { day: part } }),
  };
}

const EVENTS = {
  name: "Events",
  columns: [
    { name: "id", type: "int64" as const },
    { name: "name", type: "varchar" as const },
  ],
};
const DAYS = {
  name: "days",
  columns: [
    { name: "id", type: "int64" as const },
    { name: "day", type: "date" as const },
  ],
  partitionBy: "day",
};

async function open(dataPath: string, url?: string, owner?: string): Promise<{ cat: PgCatalog; url: string }> {
  const u = url ?? (await database());
  return { cat: await PgCatalog.open({ url: u, dataPath, ...(owner ? { owner } : {}) }), url: u };
}

peerTest(
  "tables, schemas and snapshots through the port",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const { cat } = await open(dir.path);
    const port: AsyncLakeCatalog = cat;
    try {
      expect(await port.currentSnapshotId()).toBe(0);
      expect(await port.listTables()).toEqual([]);
      const t = await port.ensureTable("Main", EVENTS);
      expect(await port.schemaName("MAIN")).toBe("main");
      expect(await port.schemaName("nope")).toBeUndefined();
      expect((await port.getTable("main", "events"))?.tableId).toBe(t.tableId);
      expect(await port.getTable("main", "nope")).toBeUndefined();
      await port.ensureTable("ops", DAYS);
      expect(await port.schemaName("OPS")).toBe("ops");
      expect(
        (await port.listTables()).map(
          (x) => `${x.schemaName}.${x.name}:${x.columns.map((c) => `${c.name}/${c.type}`).join(",")}`,
        ),
      ).toEqual(["main.Events:id/int64,name/varchar", "ops.days:id/int64,day/date"]);
      const snap = await port.currentSnapshotId();
      const ms = await port.snapshotTimeMs(snap);
      expect(ms).toBeGreaterThan(Date.now() - 60_000);
      expect(await port.snapshotTimeMs(9999)).toBeUndefined();
      // snapshotAt: the newest at or before the time; nothing before the first.
      expect(await port.snapshotAt(ms ?? 0)).toBe(snap);
      expect(await port.snapshotAt(Date.now() + 60_000)).toBe(snap);
      expect(await port.snapshotAt(0)).toBeUndefined();
      const first = await port.snapshotTimeMs(1);
      expect(await port.snapshotAt(first ?? 0)).toBeGreaterThanOrEqual(1);
    } finally {
      await cat.close();
    }
  },
  T,
);

peerTest(
  "commits with several writer marks, file listing with pruning, stats columns and file ids",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const { cat, url } = await open(dir.path);
    try {
      const t = await cat.ensureTable("main", EVENTS);
      expect(await cat.writerWatermark("a")).toBe(0);
      const f1 = await file(cat, dir.path, t.tableId, 5, [0, 4]);
      const f2 = await file(cat, dir.path, t.tableId, 5, [10, 14]);
      const f3 = await file(cat, dir.path, t.tableId, 5, [20, 24]);
      const { snapshotId } = await cat.commitDataFiles(
        t.tableId,
        [f1, f2, f3],
        [
          { writerKey: "a", watermark: 7 },
          { writerKey: "b", watermark: 9 },
        ],
      );
      expect(await cat.writerWatermark("a")).toBe(7);
      expect(await cat.writerWatermark("b")).toBe(9);
      // No files: no snapshot, marks unchanged.
      expect((await cat.commitDataFiles(t.tableId, [], [{ writerKey: "a", watermark: 99 }])).snapshotId).toBe(
        snapshotId,
      );
      expect(await cat.writerWatermark("a")).toBe(7);
      const all = await cat.listDataFiles(t.tableId);
      expect(all.map((f) => [f.path, f.recordCount, f.beginSnapshot])).toEqual(
        [f1, f2, f3].map((f) => [f.path, 5, snapshotId]),
      );
      expect(all[0]?.absolutePath).toBe(join(dir.path, f1.path));
      expect(all[1]?.columnStats.id).toEqual({ min: "10", max: "14", nullCount: 0 });
      // A second listing takes the statistics from memory (docs/DUCKLAKE.md "Statistics kept in memory").
      expect(await cat.listDataFiles(t.tableId)).toEqual(all);
      expect((await cat.listDataFiles(t.tableId, { statsColumns: ["id"] }))[1]?.columnStats).toEqual({
        id: { min: "10", max: "14", nullCount: 0 },
      });
      // Integers compare as numbers ("9" < "10"), not as text.
      expect((await cat.listDataFiles(t.tableId, { column: "id", min: "9", max: "12" })).map((f) => f.path)).toEqual([
        f2.path,
      ]);
      expect((await cat.listDataFiles(t.tableId, { column: "id", min: "15" })).map((f) => f.path)).toEqual([f3.path]);
      expect((await cat.listDataFiles(t.tableId, { column: "name" })).length).toBe(0); // no stats row: all NULL
      expect((await cat.listDataFiles(t.tableId, { statsColumns: [] }))[0]?.columnStats).toEqual({});
      const ids = all.map((f) => f.dataFileId);
      expect((await cat.listDataFiles(t.tableId, { fileIds: [ids[2] ?? -1] })).map((f) => f.path)).toEqual([f3.path]);
      await expect(cat.listDataFiles(t.tableId, { column: "id", fileIds: ids })).rejects.toMatchObject({
        code: "VALIDATION",
      });
      await expect(cat.listDataFiles(t.tableId, { column: "nope" })).rejects.toMatchObject({ code: "VALIDATION" });
      // Table statistics fold every file's bounds (typed: "-5" < "0" < "24" < "100").
      await cat.commitDataFiles(t.tableId, [await file(cat, dir.path, t.tableId, 1, [-5, 100])]);
      const sql = new SQL(url, { max: 1 });
      try {
        const ts =
          await sql`SELECT column_id::int AS c, contains_null AS nl, contains_nan AS nan, min_value AS mn, max_value AS mx
          FROM ducklake_table_column_stats WHERE table_id = ${t.tableId} ORDER BY 1`;
        expect([...ts]).toEqual([
          { c: 1, nl: false, nan: null, mn: "-5", mx: "100" },
          { c: 2, nl: true, nan: null, mn: null, mx: null },
        ]);
        const fs =
          await sql`SELECT count(*)::int AS n, count(min_value)::int AS m FROM ducklake_file_column_stats WHERE table_id = ${t.tableId}`;
        expect([...fs]).toEqual([{ n: 4, m: 4 }]);
      } finally {
        await sql.close();
      }
      // Time travel: before the commit there were no files.
      expect(await cat.listDataFiles(t.tableId, { snapshotId: snapshotId - 1 })).toEqual([]);
      expect((await cat.listDataFiles(t.tableId, { snapshotId })).length).toBe(3);
      // A file that is not there, or of another size, is refused and nothing is committed.
      const bad = { ...f1, path: await cat.newDataFilePath(t.tableId) };
      await expect(cat.commitDataFiles(t.tableId, [bad])).rejects.toMatchObject({ code: "VALIDATION" });
      expect(await cat.currentSnapshotId()).toBe(snapshotId + 1);
      // Partitioned: the partition value is stored and listed.
      const d = await cat.ensureTable("main", DAYS);
      const p = await file(cat, dir.path, d.tableId, 3, [1, 3], "2026-11-29");
      expect(p.path).toContain("/day=2026-11-29/");
      await cat.commitDataFiles(d.tableId, [p]);
      expect((await cat.listDataFiles(d.tableId))[0]?.partitionValues).toEqual({ day: "2026-11-29" });
      expect((await cat.listDataFiles(d.tableId))[0]?.partitionValues).toEqual({ day: "2026-11-29" });
    } finally {
      await cat.close();
    }
  },
  T,
);

peerTest(
  "in-flight reservations are shared: each writer clears its own, the sweep keeps the others'",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const { cat: a, url } = await open(dir.path, undefined, "host-a");
    const { cat: b } = await open(dir.path, url, "host-b");
    try {
      const t = await a.ensureTable("main", EVENTS);
      const before = Date.now();
      const pa = await a.newDataFilePath(t.tableId);
      const pb = await b.newDataFilePath(t.tableId);
      expect(pa).toMatch(/^main\/Events\/ducklake-[0-9a-f-]+\.parquet$/);
      expect(await a.inflightPaths()).toEqual(new Set([pa]));
      expect(await b.inflightPaths()).toEqual(new Set([pb]));
      const res = await a.inflightReservations();
      expect(res.map((r) => [r.path, r.owner])).toEqual(
        [
          [pa, "host-a"],
          [pb, "host-b"],
        ].sort((x, y) => (x[1] ?? "").localeCompare(y[1] ?? "")),
      );
      for (const r of res) expect(r.reservedAtMs).toBeGreaterThanOrEqual(before - 5_000);
      // A's orphan sweep must keep B's file: it counts as referenced for A, not for B.
      expect((await a.referencedPaths()).has(join(dir.path, pb))).toBe(true);
      expect((await a.referencedPaths()).has(join(dir.path, pa))).toBe(false);
      // Committing settles the reservation in the same transaction.
      mkdirSync(join(dir.path, "main/Events"), { recursive: true });
      writeFileSync(join(dir.path, pb), Buffer.alloc(50));
      await b.commitDataFiles(t.tableId, [
        { path: pb, recordCount: 1, fileSizeBytes: 50, footerSize: 1, columnStats: {} },
      ]);
      expect(await b.inflightPaths()).toEqual(new Set());
      expect((await a.referencedPaths()).has(join(dir.path, pb))).toBe(true); // now a catalog file
      const pb2 = await b.newDataFilePath(t.tableId);
      // clearInflight forgets this owner's only.
      expect(await a.clearInflight()).toBe(1);
      expect(await a.inflightPaths()).toEqual(new Set());
      expect(await b.inflightPaths()).toEqual(new Set([pb2]));
    } finally {
      await a.close();
      await b.close();
    }
  },
  T,
);

peerTest(
  "compaction swap: partition guard, CONFLICT on a row-count mismatch, nothing changed on refusal",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const { cat } = await open(dir.path);
    try {
      const t = await cat.ensureTable("main", DAYS);
      const day = "2026-11-29";
      await cat.commitDataFiles(t.tableId, [await file(cat, dir.path, t.tableId, 2, [0, 1], day)]);
      await cat.commitDataFiles(t.tableId, [await file(cat, dir.path, t.tableId, 3, [2, 4], day)]);
      await cat.commitDataFiles(t.tableId, [await file(cat, dir.path, t.tableId, 4, [5, 8], "2026-11-30")]);
      const live = await cat.listDataFiles(t.tableId);
      const inDay = live.filter((f) => f.partitionValues.day === day).map((f) => f.dataFileId);
      const snap = await cat.currentSnapshotId();
      await expect(
        cat.replaceDataFiles(t.tableId, inDay, [await file(cat, dir.path, t.tableId, 4, [0, 4], day)]),
      ).rejects.toMatchObject({
        code: "CONFLICT",
        details: { reason: "row_count" },
      });
      await expect(
        cat.replaceDataFiles(t.tableId, inDay, [await file(cat, dir.path, t.tableId, 5, [0, 4], day)], {
          partitionValue: day,
          liveFileIds: inDay.slice(0, 1),
        }),
      ).rejects.toMatchObject({
        code: "CONFLICT",
        details: { reason: "partition_changed" },
      });
      await expect(cat.replaceDataFiles(t.tableId, [], [])).rejects.toMatchObject({ code: "VALIDATION" });
      expect(await cat.currentSnapshotId()).toBe(snap);
      const merged = await file(cat, dir.path, t.tableId, 5, [0, 4], day);
      const { snapshotId } = await cat.replaceDataFiles(t.tableId, inDay, [merged], {
        partitionValue: day,
        liveFileIds: inDay,
      });
      expect(snapshotId).toBe(snap + 1);
      expect((await cat.listDataFiles(t.tableId)).map((f) => [f.recordCount, f.partitionValues.day])).toEqual([
        [4, "2026-11-30"],
        [5, day],
      ]);
      expect(await cat.inflightPaths()).not.toContain(merged.path);
      // The swapped-out files are ended, not gone: time travel still sees them.
      expect((await cat.listDataFiles(t.tableId, { snapshotId: snap })).length).toBe(3);
      await expect(cat.replaceDataFiles(t.tableId, inDay, [merged])).rejects.toMatchObject({ code: "CONFLICT" });
    } finally {
      await cat.close();
    }
  },
  T,
);

peerTest(
  "retention, snapshot expiry, scheduled deletions, referenced paths, anomalies, inlined rows",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const { cat, url } = await open(dir.path);
    try {
      const t = await cat.ensureTable("main", EVENTS);
      const old = await file(cat, dir.path, t.tableId, 2, [1, 5]);
      const young = await file(cat, dir.path, t.tableId, 2, [50, 90]);
      await cat.commitDataFiles(t.tableId, [old, young]);
      expect(await cat.retireFilesBefore(t.tableId, "id", "1")).toEqual({ snapshotId: null, files: 0 });
      const r = await cat.retireFilesBefore(t.tableId, "id", "10");
      expect(r.files).toBe(1);
      expect((await cat.listDataFiles(t.tableId)).map((f) => f.path)).toEqual([young.path]);
      await expect(cat.retireFilesBefore(t.tableId, "nope", "1")).rejects.toMatchObject({ code: "VALIDATION" });
      const refs = await cat.referencedPaths();
      expect(refs.has(join(dir.path, old.path)) && refs.has(join(dir.path, young.path))).toBe(true);
      // Expire everything before now: the newest snapshot stays; the retired file is scheduled.
      expect(await cat.expireSnapshots(0)).toEqual({ expiredSnapshots: 0, scheduledFiles: 0 });
      const top = await cat.currentSnapshotId();
      const cut = ((await cat.snapshotTimeMs(top)) ?? 0) + 1;
      const e = await cat.expireSnapshots(cut);
      expect(e).toEqual({ expiredSnapshots: top, scheduledFiles: 1 });
      expect(await cat.currentSnapshotId()).toBe(top);
      const sched = await cat.listScheduledDeletions();
      expect(sched.map((s) => s.absolutePath)).toEqual([join(dir.path, old.path)]);
      expect((await cat.referencedPaths()).has(join(dir.path, old.path))).toBe(true);
      expect(await cat.forgetFiles(sched.map((s) => s.dataFileId))).toBe(1);
      expect(await cat.listScheduledDeletions()).toEqual([]);
      expect((await cat.referencedPaths()).has(join(dir.path, old.path))).toBe(false);
      expect((await cat.listDataFiles(t.tableId)).map((f) => f.path)).toEqual([young.path]);
      expect(await cat.snapshotAnomalies()).toEqual({ duplicateRows: 0, latestRows: 1 });
      expect(await cat.hasInlinedRows()).toBe(false);
      // Rows another writer inlined into the catalog (DuckLake "Data Inlining").
      const sql = new SQL(url, { max: 1 });
      try {
        await sql`CREATE TABLE ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, id BIGINT)`;
        await sql`INSERT INTO ducklake_inlined_data_tables VALUES (${t.tableId}, 'ducklake_inlined_data_1_1', 1)`;
        expect(await cat.hasInlinedRows()).toBe(false);
        await sql`INSERT INTO ducklake_inlined_data_1_1 VALUES (0, 1, NULL, 7)`;
        expect(await cat.hasInlinedRows()).toBe(true);
      } finally {
        await sql.close();
      }
    } finally {
      await cat.close();
    }
  },
  T,
);

peerTest(
  "the maintainer lock: one holder; closing it lets the other take over",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const { cat: a, url } = await open(dir.path);
    const { cat: b } = await open(dir.path, url);
    const { cat: c } = await open(dir.path, url);
    const la = a.maintainerLock();
    const lb = b.maintainerLock();
    const lc = c.maintainerLock();
    try {
      expect(await la.tryBecomeMaintainer()).toBe(true);
      expect(await la.tryBecomeMaintainer()).toBe(true);
      expect(la.isMaintainer).toBe(true);
      expect(await lb.tryBecomeMaintainer()).toBe(false);
      expect(lb.isMaintainer).toBe(false);
      // The holder keeps committing on its pool's other connection.
      await a.ensureTable("main", EVENTS);
      // The holder stops: closing its catalog gives the lock up at once.
      await a.close();
      expect(la.isMaintainer).toBe(false);
      expect(await waitFor("b takes over", () => lb.tryBecomeMaintainer())).toBe(true);
      expect(await lc.tryBecomeMaintainer()).toBe(false);
      // A holder whose connection the server ended learns it on the next try.
      const pid = await lb.backendPid();
      const admin = new SQL(url, { max: 1 });
      await admin`SELECT pg_terminate_backend(${pid})`;
      await admin.close();
      expect(await waitFor("c takes over", () => lc.tryBecomeMaintainer())).toBe(true);
      expect(await lb.tryBecomeMaintainer()).toBe(false);
      expect(lb.isMaintainer).toBe(false);
      await lc.release();
      expect(lc.isMaintainer).toBe(false);
      expect(await lb.tryBecomeMaintainer()).toBe(true);
      await lb.release();
    } finally {
      await b.close();
      await c.close();
    }
  },
  T,
);

peerTest(
  "open errors name storage.lakehouse.catalog_path and never carry the password",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgport-");
    const url = await database();
    const wrong = new URL(url);
    wrong.password = "wrong-secret-Pa55";
    const closed = new URL(url);
    closed.port = String(freeTcpPort());
    closed.password = "unreachable-secret-Pa55";
    for (const [u, secret, code] of [
      [wrong.toString(), "wrong-secret-Pa55", "DEPENDENCY_FAILED"],
      [closed.toString(), "unreachable-secret-Pa55", "UNAVAILABLE"],
      // A host name that does not resolve; the password has a character URLs encode.
      ["postgres://svc:no%40host-secret@host.invalid:5432/lake", "host-secret", "UNAVAILABLE"],
    ] as const) {
      const e = (await PgCatalog.open({ url: u, dataPath: dir.path }).catch((x: unknown) => x)) as Error & {
        code: string;
        details: Record<string, unknown>;
      };
      expect(e).toMatchObject({ code, details: { key: CATALOG_URL_KEY } });
      expect(e.message).toContain(CATALOG_URL_KEY);
      expect(e.message).toContain("***");
      let text = `${e.message} ${JSON.stringify(e.details)}`;
      for (let c: unknown = e.cause; c instanceof Error; c = c.cause)
        text += ` ${c.message} ${JSON.stringify((c as { details?: unknown }).details ?? null)}`;
      expect(text).not.toContain(secret);
    }
  },
  T,
);
