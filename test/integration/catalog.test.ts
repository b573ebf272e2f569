/**
 * The DuckLake catalog in SQLite (src/lake/catalog) on real files: one contract run against a fresh
 * catalog and against one closed and reopened between every step, then locking, recovery, repair
 * and crash safety under SIGKILL. Interoperability with the real extension: ducklake-interop.test.ts.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { isAppError } from "../../src/core/index.ts";
import {
  type Catalog,
  type NewDataFile,
  newDataFilePath,
  openCatalog,
  type TableInfo,
} from "../../src/lake/catalog/index.ts";
import { tempDir } from "../harness.ts";

const CATALOG_INDEX = resolve(import.meta.dir, "../../src/lake/catalog/index.ts");

const COLUMNS = [
  { name: "ts", type: "timestamp" as const },
  { name: "date", type: "date" as const },
  { name: "n", type: "int64" as const },
  { name: "callid", type: "varchar" as const },
];

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return isAppError(e) ? e.code : `not an AppError: ${String(e)}`;
  }
  return "no error";
}

/** Writes placeholder bytes where a Parquet file would be and describes it (the catalog checks the size). */
function fakeFile(
  cat: Catalog,
  t: TableInfo,
  day: string,
  rows: number,
  ts: [string, string],
  n: [number, number],
): NewDataFile {
  const path = newDataFilePath(t, t.partitionBy ? day : undefined);
  const abs = join(cat.dataPath, path);
  mkdirSync(dirname(abs), { recursive: true });
  const size = 100 + rows;
  writeFileSync(abs, Buffer.alloc(size, 1));
  return {
    path,
    recordCount: rows,
    fileSizeBytes: size,
    footerSize: 40,
    columnStats: {
      ts: { min: ts[0], max: ts[1], nullCount: 0 },
      date: { min: day, max: day, nullCount: 0 },
      n: { min: String(n[0]), max: String(n[1]), nullCount: 1 },
      callid: { min: "a", max: "z", nullCount: 0, sizeBytes: 10 },
    },
    ...(t.partitionBy ? { partitionValues: { [t.partitionBy]: day } } : {}),
  };
}

const ids = (files: Array<{ dataFileId: number }>) => files.map((f) => f.dataFileId).sort((a, b) => a - b);

for (const mode of ["fresh", "reopened"] as const) {
  describe(`catalog contract (${mode})`, () => {
    test("tables, commits, time travel, pruning, compaction, retention, expiry", async () => {
      await using dir = tempDir();
      const path = join(dir.path, "catalog.sqlite");
      const dataPath = join(dir.path, "lake");
      let cat = openCatalog({ path, dataPath });
      // In "reopened" mode every step sees a catalog closed and opened again from the file.
      const step = () => {
        if (mode === "reopened") {
          cat.close();
          cat = openCatalog({ path, dataPath });
        }
        return cat;
      };
      try {
        expect(step().currentSnapshot()).toMatchObject({
          snapshotId: 0,
          schemaVersion: 0,
          nextCatalogId: 1,
          nextFileId: 0,
          changes: 'created_schema:"main"',
        });
        const t = step().ensureTable("hep", { name: "calls", columns: COLUMNS, partitionBy: "date" });
        expect(t).toMatchObject({
          tableId: 2,
          schemaId: 1,
          schemaName: "hep",
          name: "calls",
          partitionBy: "date",
          dataDir: "hep/calls/",
        });
        expect(t.columns.map((c) => [c.columnId, c.name, c.type])).toEqual([
          [1, "ts", "timestamp"],
          [2, "date", "date"],
          [3, "n", "int64"],
          [4, "callid", "varchar"],
        ]);
        expect(step().currentSnapshot()).toMatchObject({
          snapshotId: 1,
          schemaVersion: 1,
          nextCatalogId: 4,
          changes: 'created_schema:"hep",created_table:"hep"."calls",altered_table:2',
        });
        // Idempotent: no new snapshot for an existing identical table; a type change is a conflict.
        expect(step().ensureTable("hep", { name: "calls", columns: COLUMNS, partitionBy: "date" }).tableId).toBe(2);
        expect(step().currentSnapshot().snapshotId).toBe(1);
        expect(
          codeOf(() =>
            step().ensureTable("hep", {
              name: "calls",
              columns: [...COLUMNS.slice(0, 2), { name: "n", type: "varchar" }],
              partitionBy: "date",
            }),
          ),
        ).toBe("CONFLICT");

        const f1 = fakeFile(step(), t, "2026-11-20", 10, ["2026-11-20 10:00:00", "2026-11-20 11:00:00"], [1, 9]);
        const f2 = fakeFile(cat, t, "2026-11-21", 20, ["2026-11-21 10:00:00", "2026-11-21 23:59:59.999999"], [10, 100]);
        expect(step().commitDataFiles(t.tableId, [f1, f2])).toEqual({ snapshotId: 2 });
        const f3 = fakeFile(step(), t, "2026-11-22", 5, ["2026-11-22 00:00:00", "2026-11-22 01:00:00"], [-5, 5]);
        expect(step().commitDataFiles(t.tableId, [f3], { writerKey: "hep", watermark: 42 })).toEqual({ snapshotId: 3 });
        expect(step().writerWatermark("hep")).toBe(42);
        expect(step().currentSnapshot()).toMatchObject({
          snapshotId: 3,
          schemaVersion: 1,
          nextFileId: 3,
          changes: "inserted_into_table:2",
        });

        const live = step().listDataFiles(t.tableId);
        expect(live.map((f) => [f.dataFileId, f.path, f.recordCount, f.rowIdStart, f.beginSnapshot])).toEqual([
          [0, f1.path, 10, 0, 2],
          [1, f2.path, 20, 10, 2],
          [2, f3.path, 5, 30, 3],
        ]);
        expect(live[0]?.absolutePath).toBe(join(resolve(dataPath), f1.path));
        expect(live[2]?.partitionValues).toEqual({ date: "2026-11-22" });
        expect(live[1]?.columnStats.n).toEqual({
          min: "10",
          max: "100",
          nullCount: 1,
          valueCount: 19,
          sizeBytes: null,
          containsNan: null,
        });
        expect(live[1]?.columnStats.callid?.sizeBytes).toBe(10);
        // Time travel: snapshot 2 sees the first two files only, snapshot 1 none.
        expect(ids(step().listDataFiles(t.tableId, { snapshotId: 2 }))).toEqual([0, 1]);
        expect(step().listDataFiles(t.tableId, { snapshotId: 1 })).toEqual([]);

        // Pruning: timestamps compare as text in SQLite, integers as numbers ("100" > "9").
        expect(
          ids(
            step().listDataFiles(t.tableId, { column: "ts", min: "2026-11-21 00:00:00", max: "2026-11-21 12:00:00" }),
          ),
        ).toEqual([1]);
        expect(ids(step().listDataFiles(t.tableId, { column: "ts", min: "2026-11-20 11:00:00" }))).toEqual([0, 1, 2]);
        expect(ids(step().listDataFiles(t.tableId, { column: "ts", min: "2026-11-20 11:00:00.000001" }))).toEqual([
          1, 2,
        ]);
        expect(ids(step().listDataFiles(t.tableId, { column: "ts", max: new Date("2026-11-20T10:00:00Z") }))).toEqual([
          0,
        ]);
        expect(ids(step().listDataFiles(t.tableId, { column: "ts", min: 1_795_305_600_000_000n }))).toEqual([2]); // 2026-11-22 00:00 UTC in µs
        expect(ids(step().listDataFiles(t.tableId, { column: "n", min: 50 }))).toEqual([1]);
        expect(ids(step().listDataFiles(t.tableId, { column: "n", max: 0 }))).toEqual([2]);
        expect(ids(step().listDataFiles(t.tableId, { column: "date", min: "2026-11-21", max: "2026-11-21" }))).toEqual([
          1,
        ]);
        expect(codeOf(() => step().listDataFiles(t.tableId, { column: "nope", min: 1 }))).toBe("VALIDATION");

        // Schema evolution: a new column, visible from its snapshot on only.
        const t2 = step().addColumns(t.tableId, [{ name: "extra", type: "float64" }]);
        expect(t2.columns.at(-1)).toEqual({ columnId: 5, name: "extra", type: "float64", order: 5 });
        expect(step().currentSnapshot()).toMatchObject({ snapshotId: 4, schemaVersion: 2, changes: "altered_table:2" });
        expect(
          step()
            .getTable("hep", "calls", { snapshotId: 3 })
            ?.columns.map((c) => c.name),
        ).toEqual(["ts", "date", "n", "callid"]);
        expect(
          step()
            .getTable("hep", "calls")
            ?.columns.map((c) => c.name),
        ).toEqual(["ts", "date", "n", "callid", "extra"]);

        // Compaction: counts must match, else nothing changes.
        const merged = fakeFile(
          step(),
          t2,
          "2026-11-21",
          29,
          ["2026-11-20 10:00:00", "2026-11-21 23:59:59.999999"],
          [1, 100],
        );
        expect(codeOf(() => step().replaceDataFiles(t.tableId, [0, 1], [merged]))).toBe("CONFLICT");
        expect(step().currentSnapshot().snapshotId).toBe(4);
        expect(ids(step().listDataFiles(t.tableId))).toEqual([0, 1, 2]);
        const mergedOk = { ...merged, recordCount: 30, partitionValues: { date: "2026-11-21" } };
        expect(step().replaceDataFiles(t.tableId, [0, 1], [mergedOk])).toEqual({ snapshotId: 5 });
        expect(step().currentSnapshot()).toMatchObject({ changes: "merge_adjacent:2", nextFileId: 4 });
        expect(ids(step().listDataFiles(t.tableId))).toEqual([2, 3]);
        expect(ids(step().listDataFiles(t.tableId, { snapshotId: 4 }))).toEqual([0, 1, 2]);
        expect(
          step()
            .listDataFiles(t.tableId)
            .find((f) => f.dataFileId === 3),
        ).toMatchObject({ rowIdStart: 35, beginSnapshot: 5, recordCount: 30 });
        expect(step().tableStats(t.tableId)).toMatchObject({ recordCount: 35, nextRowId: 65, fileCount: 2 });
        expect(codeOf(() => step().replaceDataFiles(t.tableId, [0], [mergedOk]))).toBe("CONFLICT"); // already retired

        // Retention: only files wholly before the cutoff go; a straddling file stays.
        const kept = step().retireFilesBefore(t.tableId, "ts", "2026-11-22 00:30:00");
        expect(kept.snapshotId).toBe(6);
        expect(ids(kept.files)).toEqual([3]);
        expect(step().currentSnapshot().changes).toBe("deleted_from_table:2");
        expect(ids(step().listDataFiles(t.tableId))).toEqual([2]);
        expect(step().retireFilesBefore(t.tableId, "ts", "2026-11-22 00:30:00")).toEqual({
          snapshotId: null,
          files: [],
        });
        expect(step().tableStats(t.tableId)).toMatchObject({ recordCount: 5, fileCount: 1 });
        expect(step().tableStats(t.tableId).columns.ts).toEqual({
          min: "2026-11-20 10:00:00",
          max: "2026-11-22 01:00:00",
          containsNull: false,
          containsNan: null,
        });

        // snapshotAt: latest at or before a time.
        const s5 = step().getSnapshot(5)!;
        expect(step().snapshotAt(s5.timeMs)?.snapshotId).toBeGreaterThanOrEqual(5);
        const s0 = step().getSnapshot(0)!;
        expect(step().snapshotAt(s0.timeMs - 1000)).toBeNull();
        expect(step().snapshotAt(Date.now() + 60_000)?.snapshotId).toBe(6);

        // Expiry: every old snapshot goes; files no snapshot sees are scheduled for deletion.
        expect(step().expireSnapshots(Date.now() + 60_000)).toEqual({ expiredSnapshots: 6, scheduledFiles: 3 });
        const scheduled = step().listScheduledDeletions();
        expect(scheduled.map((s) => s.path).sort()).toEqual([f1.path, f2.path, merged.path].sort());
        expect(scheduled.every((s) => s.absolutePath.startsWith(resolve(dataPath)) && existsSync(s.absolutePath))).toBe(
          true,
        );
        expect(
          step()
            .referencedPaths()
            .has(join(resolve(dataPath), f3.path)),
        ).toBe(true);
        expect(step().forgetFiles(scheduled.map((s) => s.dataFileId))).toBe(3);
        expect(step().listScheduledDeletions()).toEqual([]);
        expect(step().integrityCheck()).toEqual({ ok: true, problems: [] });
      } finally {
        cat.close();
      }
    });
  });
}

describe("catalog statistics kept in memory", () => {
  test("a listing answers what the catalog holds: subsets, partitions, another file under an id", async () => {
    await using dir = tempDir();
    const path = join(dir.path, "catalog.sqlite");
    const dataPath = join(dir.path, "lake");
    const cat = openCatalog({ path, dataPath });
    try {
      const t = cat.ensureTable("hep", { name: "calls", columns: COLUMNS, partitionBy: "date" });
      const f1 = fakeFile(cat, t, "2026-11-20", 10, ["2026-11-20 10:00:00", "2026-11-20 11:00:00"], [1, 9]);
      const f2 = fakeFile(cat, t, "2026-11-21", 20, ["2026-11-21 10:00:00", "2026-11-21 12:00:00"], [10, 100]);
      cat.commitDataFiles(t.tableId, [f1, f2]);
      const first = cat.listDataFiles(t.tableId);
      // The second listing (from memory) equals the first (from the tables), column for column.
      expect(cat.listDataFiles(t.tableId)).toEqual(first);
      expect(first[1]?.partitionValues).toEqual({ date: "2026-11-21" });
      expect(cat.listDataFiles(t.tableId, { stats: ["n"] }).map((f) => f.columnStats)).toEqual(
        first.map((f) => ({ n: f.columnStats.n! })),
      );
      expect(cat.listDataFiles(t.tableId, { stats: false }).map((f) => f.columnStats)).toEqual([{}, {}]);
      expect(cat.listDataFiles(t.tableId, { column: "n", min: 50 }).map((f) => f.columnStats.n?.max)).toEqual(["100"]);
      // The statistics handed out cannot be changed by a caller (they are shared).
      expect(() => {
        (first[0]!.columnStats.n as { max: string | null }).max = "7";
      }).toThrow();
      // Another file under the same id (what the catalog never does; a rebuilt catalog might):
      // its path and size differ, so its statistics are read again.
      const db = new Database(path);
      db.run("UPDATE ducklake_data_file SET path = path || '.x', file_size_bytes = 999 WHERE data_file_id = 0");
      db.run("UPDATE ducklake_file_column_stats SET max_value = '8' WHERE data_file_id = 0 AND column_id = 3");
      db.close();
      const again = cat.listDataFiles(t.tableId);
      expect(again[0]?.columnStats.n?.max).toBe("8");
      expect(again[0]?.fileSizeBytes).toBe(999);
      expect(again[1]?.columnStats.n).toEqual(first[1]!.columnStats.n!);
    } finally {
      cat.close();
    }
  });
});

describe("catalog validation", () => {
  test("bad files are refused and roll back", async () => {
    await using dir = tempDir();
    using cat = openCatalog({ path: join(dir.path, "new/dir/c.sqlite"), dataPath: join(dir.path, "lake") });
    const t = cat.ensureTable("main", { name: "m", columns: COLUMNS, partitionBy: "date" });
    const good = fakeFile(cat, t, "2026-01-01", 3, ["2026-01-01 00:00:00", "2026-01-01 00:00:01"], [1, 2]);
    const before = cat.currentSnapshot().snapshotId;
    expect(codeOf(() => cat.commitDataFiles(t.tableId, [good, { ...good, path: "main/m/missing.parquet" }]))).toBe(
      "VALIDATION",
    );
    expect(codeOf(() => cat.commitDataFiles(t.tableId, [{ ...good, fileSizeBytes: 1 }]))).toBe("VALIDATION");
    expect(
      codeOf(() =>
        cat.commitDataFiles(t.tableId, [{ ...good, columnStats: { nope: { min: null, max: null, nullCount: 0 } } }]),
      ),
    ).toBe("VALIDATION");
    const { partitionValues: _dropped, ...unpartitioned } = good;
    expect(codeOf(() => cat.commitDataFiles(t.tableId, [unpartitioned]))).toBe("VALIDATION");
    expect(
      codeOf(() =>
        cat.commitDataFiles(t.tableId, [{ ...good, columnStats: { n: { min: "x", max: "2", nullCount: 0 } } }]),
      ),
    ).toBe("VALIDATION");
    expect(codeOf(() => cat.commitDataFiles(999, [good]))).toBe("NOT_FOUND");
    expect(cat.currentSnapshot().snapshotId).toBe(before);
    expect(cat.listDataFiles(t.tableId)).toEqual([]);
    expect(cat.commitDataFiles(t.tableId, [])).toEqual({ snapshotId: before });
    expect(
      codeOf(() => cat.ensureTable("main", { name: "x", columns: [{ name: "a", type: "int64" }], partitionBy: "b" })),
    ).toBe("VALIDATION");
    const schemaId = cat.ensureSchema("other");
    expect(cat.currentSnapshot()).toMatchObject({
      snapshotId: before + 1,
      changes: 'created_schema:"other"',
      schemaVersion: 2,
    });
    expect(cat.ensureSchema("other")).toBe(schemaId);
    expect(cat.currentSnapshot().snapshotId).toBe(before + 1);
    expect(cat.getTable("other", "m")).toBeNull();
    // DuckDB resolves identifiers case-insensitively, so must we: one table, not two.
    expect(cat.ensureTable("MAIN", { name: "M", columns: COLUMNS, partitionBy: "date" }).tableId).toBe(t.tableId);
    expect(cat.ensureSchema("Other")).toBe(schemaId);
    expect(cat.listTables({ snapshotId: 0 })).toEqual([]);
    expect(cat.listTables().map((x) => `${x.schemaName}.${x.name}`)).toEqual(["main.m"]);
  });

  test("open errors: missing, not a database, other DuckLake version", async () => {
    await using dir = tempDir();
    const dataPath = join(dir.path, "lake");
    expect(codeOf(() => openCatalog({ path: join(dir.path, "none.sqlite"), dataPath, create: false }))).toBe(
      "NOT_FOUND",
    );
    expect(existsSync(join(dir.path, "none.sqlite.lock"))).toBe(false);
    writeFileSync(join(dir.path, "junk.sqlite"), "this is not a database, just some text long enough to have a header");
    expect(codeOf(() => openCatalog({ path: join(dir.path, "junk.sqlite"), dataPath }))).toBe("CATALOG_CORRUPT");
    const old = join(dir.path, "old.sqlite");
    openCatalog({ path: old, dataPath }).close();
    const db = new Database(old);
    db.run("UPDATE ducklake_metadata SET value = '0.3' WHERE key = 'version'");
    db.close();
    expect(codeOf(() => openCatalog({ path: old, dataPath }))).toBe("UNSUPPORTED");
    const partial = join(dir.path, "partial.sqlite");
    new Database(partial).run("CREATE TABLE ducklake_metadata(key VARCHAR)");
    expect(codeOf(() => openCatalog({ path: partial, dataPath }))).toBe("CATALOG_CORRUPT");
  });
});

describe("catalog writer lock", () => {
  test("a second writer is refused, readers are not, close releases", async () => {
    await using dir = tempDir();
    const path = join(dir.path, "c.sqlite");
    const dataPath = join(dir.path, "lake");
    const first = openCatalog({ path, dataPath });
    let err: unknown;
    try {
      openCatalog({ path, dataPath });
    } catch (e) {
      err = e;
    }
    expect(isAppError(err) && err.code).toBe("CATALOG_LOCKED");
    expect(String((err as Error).message)).toContain(`pid ${process.pid}`);
    expect(String((err as Error).message)).toContain(`${path}.lock`);
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8"))).toMatchObject({ pid: process.pid, hostname: hostname() });
    const reader = openCatalog({ path, dataPath, readOnly: true });
    expect(reader.currentSnapshot().snapshotId).toBe(0);
    expect(codeOf(() => reader.ensureSchema("x"))).toBe("FORBIDDEN");
    reader.close();
    first.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    openCatalog({ path, dataPath }).close();
  });

  test("a stale lock from a dead pid is taken over", async () => {
    await using dir = tempDir();
    const path = join(dir.path, "c.sqlite");
    // Far above any pid_max: certainly not running.
    const dead = { pid: 2_000_000_000, hostname: hostname(), startedAt: new Date().toISOString() };
    writeFileSync(`${path}.lock`, JSON.stringify(dead));
    const cat = openCatalog({ path, dataPath: join(dir.path, "lake") });
    expect(JSON.parse(readFileSync(`${path}.lock`, "utf8")).pid).toBe(process.pid);
    cat.close();
    // A lock held by a live process on another host is never taken over.
    writeFileSync(`${path}.lock`, JSON.stringify({ ...dead, hostname: `not-${hostname()}` }));
    expect(codeOf(() => openCatalog({ path, dataPath: join(dir.path, "lake") }))).toBe("CATALOG_LOCKED");
  });
});

describe("catalog recovery", () => {
  test("repair removes injected duplicates keeping the most recent row", async () => {
    await using dir = tempDir();
    const path = join(dir.path, "c.sqlite");
    const dataPath = join(dir.path, "lake");
    const cat = openCatalog({ path, dataPath });
    const t = cat.ensureTable("main", { name: "m", columns: COLUMNS });
    cat.commitDataFiles(t.tableId, [
      fakeFile(cat, t, "2026-01-01", 3, ["2026-01-01 00:00:00", "2026-01-01 00:00:01"], [1, 2]),
    ]);
    cat.close();
    // What an interrupted foreign writer leaves: duplicated rows, and a snapshot table without its key.
    const db = new Database(path);
    db.run(
      "INSERT INTO ducklake_table SELECT table_id, table_uuid, begin_snapshot, end_snapshot, schema_id, 'm', path, path_is_relative FROM ducklake_table",
    );
    db.run(
      "INSERT INTO ducklake_table_stats SELECT table_id, record_count + 1, next_row_id, file_size_bytes FROM ducklake_table_stats",
    );
    db.run("INSERT INTO ducklake_file_column_stats SELECT * FROM ducklake_file_column_stats WHERE column_id = 1");
    db.run("ALTER TABLE ducklake_snapshot RENAME TO old_snapshot");
    db.run(
      "CREATE TABLE ducklake_snapshot(snapshot_id BIGINT, snapshot_time VARCHAR, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
    );
    db.run("INSERT INTO ducklake_snapshot SELECT * FROM old_snapshot");
    db.run(
      "INSERT INTO ducklake_snapshot SELECT * FROM old_snapshot WHERE snapshot_id = (SELECT max(snapshot_id) FROM old_snapshot)",
    );
    db.run("DROP TABLE old_snapshot");
    db.close();
    const again = openCatalog({ path, dataPath });
    const report = again.integrityCheck();
    expect(report.ok).toBe(false);
    expect(report.problems.join("\n")).toContain("ducklake_snapshot");
    expect(report.problems.join("\n")).toContain("ducklake_table");
    expect(again.repair().removed).toEqual({
      ducklake_snapshot: 1,
      ducklake_table: 1,
      ducklake_table_stats: 1,
      ducklake_file_column_stats: 1,
    });
    expect(again.integrityCheck()).toEqual({ ok: true, problems: [] });
    expect(again.tableStats(t.tableId).recordCount).toBe(4); // the most recent (injected last) row
    expect(again.listTables().map((x) => x.name)).toEqual(["m"]);
    expect(again.repair().removed).toEqual({});
    again.close();
  });

  test("backup is a consistent copy; prune keeps the newest", async () => {
    await using dir = tempDir();
    const path = join(dir.path, "c.sqlite");
    const dataPath = join(dir.path, "lake");
    using cat = openCatalog({ path, dataPath });
    cat.ensureTable("main", { name: "m", columns: COLUMNS });
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push(cat.backup(`${path}.bak-2026010${i}T000000000Z`));
    expect(cat.listBackups()).toEqual([...made].reverse());
    expect(cat.pruneBackups(3)).toEqual([made[0]!]);
    expect(cat.listBackups()).toHaveLength(3);
    const auto = cat.backup();
    expect(auto.startsWith(`${path}.bak-`)).toBe(true);
    using copy = openCatalog({ path: auto, dataPath, readOnly: true });
    expect(copy.getTable("main", "m")?.columns).toHaveLength(4);
    expect(copy.currentSnapshot().snapshotId).toBe(cat.currentSnapshot().snapshotId);
  });
});

describe("catalog crash safety", () => {
  test("SIGKILL at random moments during commits never corrupts the catalog", async () => {
    await using dir = tempDir();
    const path = join(dir.path, "c.sqlite");
    const dataPath = join(dir.path, "lake");
    const child = `
      import { openCatalog, newDataFilePath } from ${JSON.stringify(CATALOG_INDEX)};
      import { mkdirSync, writeFileSync } from "node:fs";
      import { dirname, join } from "node:path";
      const cat = openCatalog({ path: ${JSON.stringify(path)}, dataPath: ${JSON.stringify(dataPath)} });
      let t = cat.ensureTable("main", { name: "m", columns: [{ name: "ts", type: "timestamp" }, { name: "date", type: "date" }], partitionBy: "date" });
      for (let i = 0; ; i++) {
        const files = [0, 1].map(() => {
          const p = newDataFilePath(t, "2026-01-01");
          mkdirSync(dirname(join(cat.dataPath, p)), { recursive: true });
          writeFileSync(join(cat.dataPath, p), "x".repeat(64));
          return { path: p, recordCount: 7, fileSizeBytes: 64, footerSize: 8, partitionValues: { date: "2026-01-01" },
            columnStats: { ts: { min: "2026-01-01 00:00:00", max: "2026-01-01 00:00:0" + (i % 10), nullCount: 0 } } };
        });
        cat.commitDataFiles(t.tableId, files);
        if (i % 7 === 3) t = cat.addColumns(t.tableId, [{ name: "c" + process.pid + "_" + i, type: "varchar" }]);
        process.stdout.write(i + "\\n");
      }
    `;
    for (let round = 0; round < 20; round++) {
      const proc = Bun.spawn([process.execPath, "-e", child], { stdout: "pipe", stderr: "pipe" });
      const target = 1 + Math.floor(Math.random() * 25);
      const reader = proc.stdout.getReader();
      let lines = 0;
      while (lines < target) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`child exited early: ${await new Response(proc.stderr).text()}`);
        lines += new TextDecoder().decode(value).split("\n").length - 1;
      }
      proc.kill("SIGKILL");
      await proc.exited;
      reader.releaseLock();
      expect(proc.signalCode).toBe("SIGKILL");

      const cat = openCatalog({ path, dataPath });
      try {
        expect(cat.integrityCheck()).toEqual({ ok: true, problems: [] });
        const db = new Database(path, { readonly: true });
        const snaps = db
          .query<{ snapshot_id: number }, []>("SELECT snapshot_id FROM ducklake_snapshot ORDER BY snapshot_id")
          .all()
          .map((r) => r.snapshot_id);
        const changes = db.query<{ n: number }, []>("SELECT count(*) AS n FROM ducklake_snapshot_changes").get()?.n;
        db.close();
        expect(snaps).toEqual(snaps.map((_, i) => i));
        expect(changes).toBe(snaps.length);
        const t = cat.getTable("main", "m")!;
        const files = cat.listDataFiles(t.tableId);
        expect(files.every((f) => existsSync(f.absolutePath))).toBe(true);
        expect(cat.tableStats(t.tableId).recordCount).toBe(files.reduce((s, f) => s + f.recordCount, 0));
        expect(files.length % 2).toBe(0); // both files of a commit or neither
      } finally {
        cat.close();
      }
    }
  }, 120_000);
});
