/**
 * The catalog port's contract (src/lake/catalog-port.ts; docs/DUCKLAKE.md "The catalog port"):
 * what every backend must do, written from the DuckLake semantics in docs/DUCKLAKE.md ("Tables and
 * what we write in them", "Paths and file layout", "Reading", "Maintenance semantics"), not from
 * what one implementation happens to return. A backend's runner file calls
 *   catalogContract("sqlite", async () => ({ catalog, dataPath, close }))
 * `open` gives a fresh, empty catalog over an empty data path each time; `close` closes the catalog
 * and removes what `open` made.
 *
 * The catalog checks that a committed file exists with the stated size, not that it is Parquet:
 * `put` writes placeholder bytes of that size at the path.
 *
 * Over 400 lines on purpose: one suite per port method group, shared helpers; split in files the
 * single export a runner needs would become several.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isAppError } from "../../src/core/index.ts";
import type { LakeCatalog, NewDataFile, TableInfo } from "../../src/lake/catalog-port.ts";
import { type Peer, peerTest, waitFor } from "../harness.ts";

export interface OpenedCatalog {
  catalog: LakeCatalog;
  dataPath: string;
  close(): Promise<void>;
}

const COLUMNS = [
  { name: "ts", type: "timestamp" as const },
  { name: "date", type: "date" as const },
  { name: "k", type: "varchar" as const },
  { name: "n", type: "int64" as const },
];

/** Runs `fn` on a fresh catalog and closes it whatever happens. */
async function withCatalog(open: () => Promise<OpenedCatalog>, fn: (c: OpenedCatalog) => Promise<void>): Promise<void> {
  const c = await open();
  try {
    await fn(c);
  } finally {
    await c.close();
  }
}

/** The AppError code of a rejected promise (fails the test when it resolves). */
async function rejectionOf(p: Promise<unknown>): Promise<{ code: string; reason: unknown }> {
  try {
    await p;
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { code: e.code, reason: e.details?.reason };
  }
  throw new Error("expected a rejection");
}

/** A committed-to-be file: a reserved path with placeholder bytes of `bytes` and the given stats. */
async function put(
  c: OpenedCatalog,
  t: TableInfo,
  o: { rows: number; bytes?: number; stats?: NewDataFile["columnStats"]; partition?: string },
): Promise<NewDataFile> {
  const path = await c.catalog.newDataFilePath(t.tableId, o.partition);
  const bytes = o.bytes ?? 100 + o.rows;
  mkdirSync(dirname(join(c.dataPath, path)), { recursive: true });
  writeFileSync(join(c.dataPath, path), new Uint8Array(bytes));
  return {
    path,
    recordCount: o.rows,
    fileSizeBytes: bytes,
    footerSize: 8,
    columnStats: o.stats ?? {},
    ...(o.partition !== undefined ? { partitionValues: { date: o.partition } } : {}),
  };
}

/** Stats of a file whose `ts` spans [lo, hi] (timestamp texts) and whose `k` spans [klo, khi]. */
const spans = (
  lo: string,
  hi: string,
  klo: string | null = "a",
  khi: string | null = "z",
  nulls = 0,
): NewDataFile["columnStats"] => ({
  ts: { min: lo, max: hi, nullCount: 0 },
  k: { min: klo, max: khi, nullCount: nulls },
});

const ids = (files: Array<{ dataFileId: number }>) => files.map((f) => f.dataFileId).sort((a, b) => a - b);

/** The clock has moved past `ms` (snapshot times are compared in ms; no sleep, docs/STYLE.md). */
const clockPast = (ms: number) => waitFor("the clock to move", () => Date.now() > ms + 2);

/**
 * Registers the contract's tests for one backend. `peers`: programs the backend needs (a database
 * server); without them the tests skip with one line, or fail under SVC_TEST_REQUIRE_PEERS=1.
 */
export function catalogContract(name: string, open: () => Promise<OpenedCatalog>, peers: Peer[] = []): void {
  const it = (title: string, fn: () => Promise<void>, timeout?: number) =>
    peers.length === 0 ? test(title, fn, timeout) : peerTest(title, peers, fn, timeout);
  const run = (fn: (c: OpenedCatalog) => Promise<void>) => () => withCatalog(open, fn);
  const table = (c: OpenedCatalog, tableName = "t", partitionBy?: string) =>
    c.catalog.ensureTable("main", { name: tableName, columns: COLUMNS, ...(partitionBy ? { partitionBy } : {}) });

  describe(`catalog contract (${name}): tables`, () => {
    it(
      "ensureTable creates once: the same call again answers the same table and columns, ids 1.. in order",
      run(async (c) => {
        const a = await table(c);
        expect(a.schemaName).toBe("main");
        expect(a.name).toBe("t");
        expect(a.columns.map((x) => [x.columnId, x.name, x.type])).toEqual([
          [1, "ts", "timestamp"],
          [2, "date", "date"],
          [3, "k", "varchar"],
          [4, "n", "int64"],
        ]);
        const again = await table(c);
        expect(again).toEqual(a);
        expect((await c.catalog.listTables()).filter((x) => x.name === "t")).toHaveLength(1);
      }),
    );

    it(
      "ensureTable adds missing columns with new ids (never reused), keeps existing ones, refuses a type change and another partitioning",
      run(async (c) => {
        const a = await table(c, "p", "date");
        const grown = await c.catalog.ensureTable("main", {
          name: "p",
          columns: [...COLUMNS, { name: "extra", type: "float64" }],
          partitionBy: "date",
        });
        expect(grown.tableId).toBe(a.tableId);
        expect(grown.columns.map((x) => [x.columnId, x.name])).toEqual([
          ...a.columns.map((x) => [x.columnId, x.name]),
          [5, "extra"],
        ]);
        // A definition without some stored columns leaves them in place.
        const fewer = await c.catalog.ensureTable("main", {
          name: "p",
          columns: COLUMNS.slice(0, 2),
          partitionBy: "date",
        });
        expect(fewer.columns.map((x) => x.name)).toEqual(["ts", "date", "k", "n", "extra"]);
        const retyped = COLUMNS.map((x) => (x.name === "n" ? { name: "n", type: "varchar" as const } : x));
        expect(
          (await rejectionOf(c.catalog.ensureTable("main", { name: "p", columns: retyped, partitionBy: "date" }))).code,
        ).toBe("CONFLICT");
        expect((await rejectionOf(c.catalog.ensureTable("main", { name: "p", columns: COLUMNS }))).code).toBe(
          "CONFLICT",
        );
        expect((await c.catalog.getTable("main", "p"))!.columns.map((x) => x.type)).toEqual([
          "timestamp",
          "date",
          "varchar",
          "int64",
          "float64",
        ]);
      }),
    );

    it(
      "getTable and schemaName match names case-insensitively and answer the stored spelling; unknown names are undefined",
      run(async (c) => {
        const t = await c.catalog.ensureTable("Metrics", { name: "Cpu", columns: COLUMNS });
        expect((await c.catalog.getTable("metrics", "CPU"))?.tableId).toBe(t.tableId);
        expect((await c.catalog.getTable("METRICS", "cpu"))?.name).toBe("Cpu");
        expect(await c.catalog.getTable("metrics", "mem")).toBeUndefined();
        expect(await c.catalog.getTable("nope", "cpu")).toBeUndefined();
        expect(await c.catalog.schemaName("METRICS")).toBe("Metrics");
        expect(await c.catalog.schemaName("main")).toBe("main");
        expect(await c.catalog.schemaName("nope")).toBeUndefined();
        // The same name in another case is the same table, not a second one.
        expect((await c.catalog.ensureTable("metrics", { name: "CPU", columns: COLUMNS })).tableId).toBe(t.tableId);
        const listed = await c.catalog.listTables();
        expect(listed.filter((x) => x.name.toLowerCase() === "cpu")).toHaveLength(1);
        expect(listed.find((x) => x.tableId === t.tableId)?.schemaName).toBe("Metrics");
      }),
    );
  });

  describe(`catalog contract (${name}): commits and writer marks`, () => {
    it(
      "commitDataFiles makes one new snapshot holding the files; the current snapshot id moves to it",
      run(async (c) => {
        const t = await table(c);
        const before = await c.catalog.currentSnapshotId();
        const f1 = await put(c, t, { rows: 10 });
        const f2 = await put(c, t, { rows: 5 });
        const { snapshotId } = await c.catalog.commitDataFiles(t.tableId, [f1, f2]);
        expect(snapshotId).toBe(before + 1);
        expect(await c.catalog.currentSnapshotId()).toBe(snapshotId);
        const live = await c.catalog.listDataFiles(t.tableId);
        expect(live.map((f) => [f.path, f.recordCount, f.fileSizeBytes, f.beginSnapshot])).toEqual([
          [f1.path, 10, f1.fileSizeBytes, snapshotId],
          [f2.path, 5, f2.fileSizeBytes, snapshotId],
        ]);
        expect(live.every((f) => f.absolutePath === join(c.dataPath, f.path))).toBe(true);
        // Nothing to commit: no snapshot.
        expect((await c.catalog.commitDataFiles(t.tableId, [])).snapshotId).toBe(snapshotId);
        expect(await c.catalog.currentSnapshotId()).toBe(snapshotId);
      }),
    );

    it(
      "a file that is not on disk with the stated size is refused (VALIDATION) and nothing is committed",
      run(async (c) => {
        const t = await table(c);
        const f = await put(c, t, { rows: 3 });
        const before = await c.catalog.currentSnapshotId();
        expect(
          (await rejectionOf(c.catalog.commitDataFiles(t.tableId, [{ ...f, fileSizeBytes: f.fileSizeBytes + 1 }])))
            .code,
        ).toBe("VALIDATION");
        expect(await c.catalog.currentSnapshotId()).toBe(before);
        expect(await c.catalog.listDataFiles(t.tableId)).toEqual([]);
      }),
    );

    it(
      "every writer mark of a commit is recorded with it; a later commit moves only its own marks; unknown keys read 0",
      run(async (c) => {
        const t = await table(c);
        expect(await c.catalog.writerWatermark("main.t")).toBe(0);
        await c.catalog.commitDataFiles(
          t.tableId,
          [await put(c, t, { rows: 1 })],
          [{ writerKey: "main.t", watermark: 100 }],
        );
        expect(await c.catalog.writerWatermark("main.t")).toBe(100);
        await c.catalog.commitDataFiles(
          t.tableId,
          [await put(c, t, { rows: 1 })],
          [
            { writerKey: "main.t", watermark: 250 },
            { writerKey: "relay:sender-a", watermark: 7 },
            { writerKey: "relay:sender-b", watermark: 9 },
          ],
        );
        expect(await c.catalog.writerWatermark("main.t")).toBe(250);
        expect(await c.catalog.writerWatermark("relay:sender-a")).toBe(7);
        expect(await c.catalog.writerWatermark("relay:sender-b")).toBe(9);
        await c.catalog.commitDataFiles(
          t.tableId,
          [await put(c, t, { rows: 1 })],
          [{ writerKey: "relay:sender-a", watermark: 8 }],
        );
        expect(await c.catalog.writerWatermark("relay:sender-a")).toBe(8);
        expect(await c.catalog.writerWatermark("relay:sender-b")).toBe(9);
        expect(await c.catalog.writerWatermark("main.t")).toBe(250);
        // A marks-only call without files commits nothing, marks included.
        await c.catalog.commitDataFiles(t.tableId, [], [{ writerKey: "main.t", watermark: 999 }]);
        expect(await c.catalog.writerWatermark("main.t")).toBe(250);
        expect(await c.catalog.writerWatermark("nobody")).toBe(0);
      }),
    );

    it(
      "commitMarks records marks alone, without a new snapshot; the other marks stay",
      run(async (c) => {
        const t = await table(c);
        await c.catalog.commitDataFiles(
          t.tableId,
          [await put(c, t, { rows: 1 })],
          [{ writerKey: "forward:a", watermark: 5 }],
        );
        const before = await c.catalog.currentSnapshotId();
        await c.catalog.commitMarks([
          { writerKey: "forward:a", watermark: 12 },
          { writerKey: "forward:b", watermark: 3 },
        ]);
        expect(await c.catalog.writerWatermark("forward:a")).toBe(12);
        expect(await c.catalog.writerWatermark("forward:b")).toBe(3);
        expect(await c.catalog.currentSnapshotId()).toBe(before);
        await c.catalog.commitMarks([]);
        expect(await c.catalog.writerWatermark("forward:a")).toBe(12);
      }),
    );

    it(
      "commitInserts commits several tables' files in one snapshot with the marks; one bad file commits nothing",
      run(async (c) => {
        const a = await table(c);
        const b = await table(c, "other");
        const before = await c.catalog.currentSnapshotId();
        const fa = await put(c, a, { rows: 2 });
        const fb = await put(c, b, { rows: 3 });
        const bad = await put(c, b, { rows: 1 });
        await rejectionOf(
          c.catalog.commitInserts(
            [
              { tableId: a.tableId, files: [fa] },
              { tableId: b.tableId, files: [{ ...bad, fileSizeBytes: 1 }] },
            ],
            [{ writerKey: "forward:edge-a", watermark: 5 }],
          ),
        );
        expect(await c.catalog.writerWatermark("forward:edge-a")).toBe(0);
        expect(await c.catalog.currentSnapshotId()).toBe(before);
        const { snapshotId } = await c.catalog.commitInserts(
          [
            { tableId: a.tableId, files: [fa] },
            { tableId: b.tableId, files: [fb] },
          ],
          [
            { writerKey: "forward:edge-a", watermark: 5 },
            { writerKey: "forward:edge-b", watermark: 11 },
          ],
        );
        expect(snapshotId).toBe(await c.catalog.currentSnapshotId());
        expect((await c.catalog.listDataFiles(a.tableId)).map((f) => [f.recordCount, f.beginSnapshot])).toEqual([
          [2, snapshotId],
        ]);
        expect((await c.catalog.listDataFiles(b.tableId)).map((f) => [f.recordCount, f.beginSnapshot])).toEqual([
          [3, snapshotId],
        ]);
        expect(await c.catalog.writerWatermark("forward:edge-a")).toBe(5);
        expect(await c.catalog.writerWatermark("forward:edge-b")).toBe(11);
      }),
    );

    it(
      "a refused commit records none of its marks",
      run(async (c) => {
        const t = await table(c);
        const f = await put(c, t, { rows: 2 });
        await rejectionOf(
          c.catalog.commitDataFiles(t.tableId, [{ ...f, fileSizeBytes: 1 }], [{ writerKey: "main.t", watermark: 5 }]),
        );
        expect(await c.catalog.writerWatermark("main.t")).toBe(0);
      }),
    );
  });

  describe(`catalog contract (${name}): paths and files in flight`, () => {
    it(
      "newDataFilePath lays files out as DuckLake does and reserves each path until the commit registers it; clearInflight forgets the rest",
      run(async (c) => {
        const t = await table(c);
        const p = await table(c, "parted", "date");
        const plain = await c.catalog.newDataFilePath(t.tableId);
        expect(plain).toMatch(
          /^main\/t\/ducklake-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.parquet$/,
        );
        const parted = await c.catalog.newDataFilePath(p.tableId, "a b/c=d");
        expect(parted).toMatch(/^main\/parted\/date=a%20b%2Fc%3Dd\/ducklake-[0-9a-f-]{36}\.parquet$/);
        expect(await c.catalog.newDataFilePath(t.tableId)).not.toBe(plain);
        const inflight = await c.catalog.inflightPaths();
        expect(inflight.has(plain)).toBe(true);
        expect(inflight.has(parted)).toBe(true);
        expect(inflight.size).toBe(3);
        const f = await put(c, t, { rows: 4 });
        expect((await c.catalog.inflightPaths()).has(f.path)).toBe(true);
        await c.catalog.commitDataFiles(t.tableId, [f]);
        expect((await c.catalog.inflightPaths()).has(f.path)).toBe(false);
        expect(await c.catalog.clearInflight()).toBe(3);
        expect((await c.catalog.inflightPaths()).size).toBe(0);
        expect(await c.catalog.clearInflight()).toBe(0);
      }),
    );
    it(
      "forgetInflight forgets the named reservations only, and a path not reserved is no error",
      run(async (c) => {
        const t = await table(c);
        const [a, b, k] = [
          await c.catalog.newDataFilePath(t.tableId),
          await c.catalog.newDataFilePath(t.tableId),
          await c.catalog.newDataFilePath(t.tableId),
        ];
        expect(await c.catalog.forgetInflight([a, b, "main/t/ducklake-never-reserved.parquet"])).toBe(2);
        expect([...(await c.catalog.inflightPaths())]).toEqual([k]);
        expect(await c.catalog.forgetInflight([])).toBe(0);
      }),
    );
  });

  describe(`catalog contract (${name}): listing`, () => {
    it(
      "listDataFiles prunes by a column's [min, max]: no overlap pruned, unknown bounds kept, a column without a stats row (all NULL) pruned",
      run(async (c) => {
        const t = await table(c);
        const early = await put(c, t, { rows: 3, stats: spans("2026-11-20 10:00:00", "2026-11-20 11:00:00") });
        const mid = await put(c, t, { rows: 3, stats: spans("2026-11-21 10:00:00", "2026-11-21 11:00:00") });
        const late = await put(c, t, { rows: 3, stats: spans("2026-11-22 10:00:00", "2026-11-22 11:00:00") });
        const unknown = await put(c, t, { rows: 3, stats: { ts: { min: null, max: null, nullCount: 1 } } });
        const absent = await put(c, t, { rows: 3, stats: { k: { min: "a", max: "b", nullCount: 0 } } });
        await c.catalog.commitDataFiles(t.tableId, [early, mid, late, unknown, absent]);
        const all = await c.catalog.listDataFiles(t.tableId);
        const id = (f: NewDataFile) => all.find((x) => x.path === f.path)!.dataFileId;
        const range = (min?: string, max?: string) =>
          c.catalog.listDataFiles(t.tableId, { column: "ts", ...(min ? { min } : {}), ...(max ? { max } : {}) });
        expect(ids(await range("2026-11-21 10:30:00", "2026-11-21 10:40:00"))).toEqual(
          [id(mid), id(unknown)].sort((a, b) => a - b),
        );
        expect(ids(await range("2026-11-21 11:00:00"))).toEqual([id(mid), id(late), id(unknown)].sort((a, b) => a - b));
        expect(ids(await range(undefined, "2026-11-20 10:00:00"))).toEqual(
          [id(early), id(unknown)].sort((a, b) => a - b),
        );
        expect(ids(await range("2026-12-01 00:00:00"))).toEqual([id(unknown)]);
        // VARCHAR bounds compare as text.
        const byK = await c.catalog.listDataFiles(t.tableId, { column: "k", min: "c", max: "c" });
        expect(ids(byK)).toEqual([id(early), id(mid), id(late)].sort((a, b) => a - b));
      }),
    );

    it(
      "statsColumns loads the named columns' statistics only; fileIds lists only those files; the statistics read back as committed",
      run(async (c) => {
        const t = await table(c);
        const a = await put(c, t, {
          rows: 4,
          stats: {
            ...spans("2026-11-20 10:00:00", "2026-11-20 10:00:00.5", "a", "m", 1),
            n: { min: "-3", max: "42", nullCount: 2 },
          },
        });
        const b = await put(c, t, { rows: 2, stats: spans("2026-11-21 10:00:00", "2026-11-21 12:00:00") });
        await c.catalog.commitDataFiles(t.tableId, [a, b]);
        const full = await c.catalog.listDataFiles(t.tableId);
        const fa = full.find((f) => f.path === a.path)!;
        expect(fa.columnStats).toEqual({
          ts: { min: "2026-11-20 10:00:00", max: "2026-11-20 10:00:00.5", nullCount: 0 },
          k: { min: "a", max: "m", nullCount: 1 },
          n: { min: "-3", max: "42", nullCount: 2 },
        });
        const bare = await c.catalog.listDataFiles(t.tableId, { statsColumns: [] });
        expect(ids(bare)).toEqual(ids(full));
        expect(bare.every((f) => Object.keys(f.columnStats).length === 0)).toBe(true);
        const tsOnly = await c.catalog.listDataFiles(t.tableId, { statsColumns: ["ts"] });
        expect(tsOnly.map((f) => Object.keys(f.columnStats))).toEqual([["ts"], ["ts"]]);
        const one = await c.catalog.listDataFiles(t.tableId, { fileIds: [fa.dataFileId] });
        expect(one.map((f) => [f.dataFileId, f.path, f.recordCount])).toEqual([[fa.dataFileId, a.path, 4]]);
        expect(one[0]!.columnStats).toEqual(fa.columnStats);
        expect(await c.catalog.listDataFiles(t.tableId, { fileIds: [] })).toEqual([]);
      }),
    );

    it(
      "partition values are listed; snapshotId lists the files live at that snapshot (time travel)",
      run(async (c) => {
        const t = await table(c, "parted", "date");
        const f1 = await put(c, t, { rows: 2, partition: "2026-11-20" });
        const s1 = (await c.catalog.commitDataFiles(t.tableId, [f1])).snapshotId;
        const f2 = await put(c, t, { rows: 3, partition: "2026-11-21" });
        const s2 = (await c.catalog.commitDataFiles(t.tableId, [f2])).snapshotId;
        expect((await c.catalog.listDataFiles(t.tableId)).map((f) => [f.path, f.partitionValues])).toEqual([
          [f1.path, { date: "2026-11-20" }],
          [f2.path, { date: "2026-11-21" }],
        ]);
        expect((await c.catalog.listDataFiles(t.tableId, { snapshotId: s1 })).map((f) => f.path)).toEqual([f1.path]);
        expect((await c.catalog.listDataFiles(t.tableId, { snapshotId: s2 })).map((f) => f.path)).toEqual([
          f1.path,
          f2.path,
        ]);
        // fileIds at a snapshot: only those live then.
        const ids2 = ids(await c.catalog.listDataFiles(t.tableId));
        expect(
          (await c.catalog.listDataFiles(t.tableId, { snapshotId: s1, fileIds: ids2 })).map((f) => f.path),
        ).toEqual([f1.path]);
      }),
    );
  });

  describe(`catalog contract (${name}): snapshots in time`, () => {
    it(
      "snapshotAt answers the newest snapshot at or before a time, undefined before the first; snapshotTimeMs the commit time",
      run(async (c) => {
        const t = await table(c);
        const s1 = (await c.catalog.commitDataFiles(t.tableId, [await put(c, t, { rows: 1 })])).snapshotId;
        const t1 = (await c.catalog.snapshotTimeMs(s1))!;
        expect(Math.abs(t1 - Date.now())).toBeLessThan(60_000);
        await clockPast(t1);
        const s2 = (await c.catalog.commitDataFiles(t.tableId, [await put(c, t, { rows: 1 })])).snapshotId;
        const t2 = (await c.catalog.snapshotTimeMs(s2))!;
        expect(t2).toBeGreaterThan(t1);
        expect(await c.catalog.snapshotAt(t1)).toBe(s1);
        expect(await c.catalog.snapshotAt(t2 - 1)).toBe(s1);
        expect(await c.catalog.snapshotAt(t2)).toBe(s2);
        expect(await c.catalog.snapshotAt(t2 + 3_600_000)).toBe(s2);
        expect(await c.catalog.snapshotAt(Date.UTC(2000, 0, 1))).toBeUndefined();
        expect(await c.catalog.snapshotTimeMs(s2 + 100)).toBeUndefined();
      }),
    );

    it(
      "a clean catalog has no snapshot anomalies and no inlined rows",
      run(async (c) => {
        const t = await table(c);
        await c.catalog.commitDataFiles(t.tableId, [await put(c, t, { rows: 1 })]);
        expect(await c.catalog.snapshotAnomalies()).toEqual({ duplicateRows: 0, latestRows: 1 });
        expect(await c.catalog.hasInlinedRows()).toBe(false);
      }),
    );
  });

  describe(`catalog contract (${name}): compaction swaps`, () => {
    it(
      "replaceDataFiles ends the old files and adds the merged one in one snapshot; the snapshot before still sees the old files",
      run(async (c) => {
        const t = await table(c);
        const olds = [await put(c, t, { rows: 3 }), await put(c, t, { rows: 4 })];
        const before = (await c.catalog.commitDataFiles(t.tableId, olds)).snapshotId;
        const oldIds = ids(await c.catalog.listDataFiles(t.tableId));
        const merged = await put(c, t, { rows: 7, stats: spans("2026-11-20 10:00:00", "2026-11-20 12:00:00") });
        const { snapshotId } = await c.catalog.replaceDataFiles(t.tableId, oldIds, [merged]);
        expect(snapshotId).toBe(before + 1);
        const live = await c.catalog.listDataFiles(t.tableId);
        expect(live.map((f) => [f.path, f.recordCount, f.beginSnapshot])).toEqual([[merged.path, 7, snapshotId]]);
        expect(live[0]!.columnStats.ts).toEqual({
          min: "2026-11-20 10:00:00",
          max: "2026-11-20 12:00:00",
          nullCount: 0,
        });
        expect(ids(await c.catalog.listDataFiles(t.tableId, { snapshotId: before }))).toEqual(oldIds);
        expect((await c.catalog.inflightPaths()).has(merged.path)).toBe(false);
      }),
    );

    it(
      "a record count that differs is CONFLICT (row_count) and changes nothing",
      run(async (c) => {
        const t = await table(c);
        await c.catalog.commitDataFiles(t.tableId, [await put(c, t, { rows: 3 }), await put(c, t, { rows: 4 })]);
        const snap = await c.catalog.currentSnapshotId();
        const oldIds = ids(await c.catalog.listDataFiles(t.tableId));
        const wrong = await put(c, t, { rows: 6 });
        expect(await rejectionOf(c.catalog.replaceDataFiles(t.tableId, oldIds, [wrong]))).toEqual({
          code: "CONFLICT",
          reason: "row_count",
        });
        expect(await c.catalog.currentSnapshotId()).toBe(snap);
        expect(ids(await c.catalog.listDataFiles(t.tableId))).toEqual(oldIds);
      }),
    );

    it(
      "with a guard, a partition whose live files changed since the plan is CONFLICT (partition_changed); the planned set swaps",
      run(async (c) => {
        const t = await table(c, "parted", "date");
        const day = "2026-11-20";
        await c.catalog.commitDataFiles(t.tableId, [
          await put(c, t, { rows: 2, partition: day }),
          await put(c, t, { rows: 3, partition: day }),
        ]);
        const planned = ids(await c.catalog.listDataFiles(t.tableId));
        // A flush lands in the partition after the plan.
        await c.catalog.commitDataFiles(t.tableId, [await put(c, t, { rows: 1, partition: day })]);
        const snap = await c.catalog.currentSnapshotId();
        const merged = await put(c, t, { rows: 5, partition: day });
        const guard = { partitionValue: day, liveFileIds: planned };
        expect(await rejectionOf(c.catalog.replaceDataFiles(t.tableId, planned, [merged], guard))).toEqual({
          code: "CONFLICT",
          reason: "partition_changed",
        });
        expect(await c.catalog.currentSnapshotId()).toBe(snap);
        expect(await c.catalog.listDataFiles(t.tableId)).toHaveLength(3);
        // Planned again with every live file of the partition: it swaps.
        const all = ids(await c.catalog.listDataFiles(t.tableId));
        const merged6 = await put(c, t, { rows: 6, partition: day });
        await c.catalog.replaceDataFiles(t.tableId, all, [merged6], { partitionValue: day, liveFileIds: all });
        expect((await c.catalog.listDataFiles(t.tableId)).map((f) => [f.path, f.recordCount])).toEqual([
          [merged6.path, 6],
        ]);
      }),
    );

    it(
      "a file no longer live cannot be replaced twice",
      run(async (c) => {
        const t = await table(c);
        await c.catalog.commitDataFiles(t.tableId, [await put(c, t, { rows: 1 }), await put(c, t, { rows: 1 })]);
        const oldIds = ids(await c.catalog.listDataFiles(t.tableId));
        await c.catalog.replaceDataFiles(t.tableId, oldIds, [await put(c, t, { rows: 2 })]);
        const snap = await c.catalog.currentSnapshotId();
        await rejectionOf(c.catalog.replaceDataFiles(t.tableId, oldIds, [await put(c, t, { rows: 2 })]));
        expect(await c.catalog.currentSnapshotId()).toBe(snap);
        expect((await c.catalog.listDataFiles(t.tableId)).map((f) => f.recordCount)).toEqual([2]);
      }),
    );
  });

  describe(`catalog contract (${name}): retention, expiry, deletion`, () => {
    it(
      "retireFilesBefore ends files whose maximum is below the cutoff in one snapshot; a straddling file stays",
      run(async (c) => {
        const t = await table(c);
        const old = await put(c, t, { rows: 2, stats: spans("2026-11-01 00:00:00", "2026-11-01 23:59:59") });
        const straddle = await put(c, t, { rows: 2, stats: spans("2026-11-09 00:00:00", "2026-11-11 00:00:00") });
        const fresh = await put(c, t, { rows: 2, stats: spans("2026-11-20 00:00:00", "2026-11-20 01:00:00") });
        const committed = (await c.catalog.commitDataFiles(t.tableId, [old, straddle, fresh])).snapshotId;
        const r = await c.catalog.retireFilesBefore(t.tableId, "ts", "2026-11-10 00:00:00");
        expect(r.files).toBe(1);
        expect(r.snapshotId).toBe(committed + 1);
        expect((await c.catalog.listDataFiles(t.tableId)).map((f) => f.path)).toEqual([straddle.path, fresh.path]);
        expect((await c.catalog.listDataFiles(t.tableId, { snapshotId: committed })).map((f) => f.path)).toEqual([
          old.path,
          straddle.path,
          fresh.path,
        ]);
        expect(await c.catalog.retireFilesBefore(t.tableId, "ts", "2026-11-10 00:00:00")).toEqual({
          snapshotId: null,
          files: 0,
        });
        expect(await c.catalog.currentSnapshotId()).toBe(committed + 1);
      }),
    );

    it(
      "expireSnapshots drops older snapshots (never the newest), schedules the files none still sees; forgetFiles removes them from the catalog",
      run(async (c) => {
        const t = await table(c);
        const keep = await put(c, t, { rows: 1 });
        const gone = [await put(c, t, { rows: 2 }), await put(c, t, { rows: 3 })];
        await c.catalog.commitDataFiles(t.tableId, [keep, ...gone]);
        const goneIds = ids((await c.catalog.listDataFiles(t.tableId)).filter((f) => f.path !== keep.path));
        await c.catalog.replaceDataFiles(t.tableId, goneIds, [await put(c, t, { rows: 5 })]);
        const newest = await c.catalog.currentSnapshotId();
        const referencedBefore = await c.catalog.referencedPaths();
        for (const f of [keep, ...gone]) expect(referencedBefore.has(join(c.dataPath, f.path))).toBe(true);
        // Nothing is that old yet.
        expect(await c.catalog.expireSnapshots(Date.UTC(2000, 0, 1))).toEqual({
          expiredSnapshots: 0,
          scheduledFiles: 0,
        });
        expect(await c.catalog.listScheduledDeletions()).toEqual([]);
        const r = await c.catalog.expireSnapshots(Date.now() + 3_600_000);
        expect(r.expiredSnapshots).toBe(newest); // snapshots 0 .. newest-1
        expect(r.scheduledFiles).toBe(2);
        expect(await c.catalog.currentSnapshotId()).toBe(newest);
        expect(await c.catalog.snapshotTimeMs(newest - 1)).toBeUndefined();
        const scheduled = await c.catalog.listScheduledDeletions();
        expect(scheduled.map((d) => d.dataFileId).sort((a, b) => a - b)).toEqual(goneIds);
        expect(scheduled.map((d) => d.absolutePath).sort()).toEqual(gone.map((f) => join(c.dataPath, f.path)).sort());
        // Scheduled files are still referenced (the start must not take them for orphans) until forgotten.
        expect((await c.catalog.referencedPaths()).has(join(c.dataPath, gone[0]!.path))).toBe(true);
        // The live files are untouched.
        expect((await c.catalog.listDataFiles(t.tableId)).map((f) => f.recordCount).sort()).toEqual([1, 5]);
        expect(await c.catalog.forgetFiles(goneIds)).toBe(2);
        expect(await c.catalog.listScheduledDeletions()).toEqual([]);
        const referenced = await c.catalog.referencedPaths();
        for (const f of gone) expect(referenced.has(join(c.dataPath, f.path))).toBe(false);
        expect(referenced.has(join(c.dataPath, keep.path))).toBe(true);
        expect(await c.catalog.forgetFiles(goneIds)).toBe(0);
        // Only the newest snapshot is left: expiring again changes nothing.
        expect(await c.catalog.expireSnapshots(Date.now() + 3_600_000)).toEqual({
          expiredSnapshots: 0,
          scheduledFiles: 0,
        });
      }),
    );

    it(
      "a retired file becomes scheduled once the snapshots that saw it expire",
      run(async (c) => {
        const t = await table(c);
        const old = await put(c, t, { rows: 2, stats: spans("2026-11-01 00:00:00", "2026-11-01 01:00:00") });
        await c.catalog.commitDataFiles(t.tableId, [old]);
        await c.catalog.retireFilesBefore(t.tableId, "ts", "2026-11-02 00:00:00");
        await c.catalog.expireSnapshots(Date.now() + 3_600_000);
        expect((await c.catalog.listScheduledDeletions()).map((d) => d.absolutePath)).toEqual([
          join(c.dataPath, old.path),
        ]);
      }),
    );
  });
}
