/**
 * The table view is the files view UNION ALL the buffer view (mem_<table>); a seal re-creates only
 * the buffer view, a commit both in one transaction. Queried while rows are written, sealed and
 * flushed all the time, the table view never shows a row twice, never loses one it showed, and
 * mem_<table> shows only what is not in Parquet yet.
 */
import { describe, expect, test } from "bun:test";
import type { TableDef } from "../../src/core/index.ts";
import type { LakeCatalog } from "../../src/lake/catalog-port.ts";
import { liveFiles } from "../../src/lake/view-refresh.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "view_probe",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "k", type: "varchar" },
  ],
  timeColumn: "timestamp",
  sortBy: ["timestamp"],
};

describe("table views during seals and flushes", () => {
  test("no row seen twice or lost between the buffer and Parquet while both change", async () => {
    await using dir = tempDir();
    // Flush at every 200 rows: many commits while the queries run.
    await using a = await startTestAppliance(dir.path, {
      storage: { lakehouse: { batch_size: 200, flush_interval_sec: 0.05 } },
    });
    const lake = a.app.lake!;
    await lake.defineTable(def);
    const key = "main.view_probe";
    const t0 = Date.UTC(2026, 10, 25) * 1000;
    let written = 0;
    let writing = true;
    const writer = (async () => {
      while (writing && written < 20_000) {
        for (let i = 0; i < 100; i++, written++)
          lake
            .row(key)!
            .time(t0 + written)
            .str(`r${written}`)
            .end();
        await lake.sync();
      }
    })();
    let last = 0;
    let checks = 0;
    const seenCommits = new Set<number>();
    // At least 60 queries, and across several commits (bounded: the writer stops at 20 000 rows).
    const deadline = Date.now() + 30_000;
    while ((checks < 60 || seenCommits.size < 6) && Date.now() < deadline) {
      const r = await lake.query(`SELECT count(*) AS n, count(DISTINCT k) AS d FROM svc_lake.main.view_probe`);
      const n = Number(r.rows[0]!.n);
      expect(Number(r.rows[0]!.d)).toBe(n); // never a row twice
      expect(n).toBeGreaterThanOrEqual(last); // never a shown row gone
      expect(n).toBeLessThanOrEqual(written);
      last = n;
      seenCommits.add(a.app.metrics.sumOf("svc_lake_files_written_total"));
      checks++;
    }
    writing = false;
    await writer;
    await lake.sync();
    await lake.flush();
    // Everything in Parquet now: the buffer view is empty, the table view has every row once.
    const all = await lake.query(`SELECT count(*) AS n, count(DISTINCT k) AS d FROM svc_lake.main.view_probe`);
    expect(all.rows[0]).toEqual({ n: written, d: written });
    const mem = await lake.query(`SELECT count(*) AS n FROM svc_lake.main.mem_view_probe`);
    expect(mem.rows[0]).toEqual({ n: 0 });
    // The queries ran across several commits, or the test proved nothing.
    expect(seenCommits.size).toBeGreaterThan(3);
  }, 60_000);
});

describe("files view after a commit", () => {
  test("reads the statistics of the new files only, and lists the same files with the same columns as a full listing", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
    });
    const lake = a.app.lake!;
    await lake.defineTable(def);
    const key = "main.view_probe";
    const t0 = Date.UTC(2026, 10, 25) * 1000;
    const flushRows = async (from: number) => {
      for (let i = from; i < from + 10; i++)
        lake
          .row(key)!
          .time(t0 + i)
          .str(`r${i}`)
          .end();
      await lake.sync();
      await lake.flush();
    };
    for (let f = 0; f < 3; f++) await flushRows(f * 10);
    // The lake's own catalog, read as the refresher reads it; `calls` records what each listing asked for.
    const catalog = (lake as unknown as { parts: { catalog: LakeCatalog } }).parts.catalog;
    const tableId = (await catalog.getTable("main", "view_probe"))!.tableId;
    const calls: unknown[] = [];
    const recording = new Proxy(catalog, {
      get: (target, prop) =>
        prop === "listDataFiles"
          ? (id: number, opts?: object) => {
              calls.push(opts ?? {});
              return target.listDataFiles(id, opts);
            }
          : Reflect.get(target, prop, target),
    });
    const shape = (files: Awaited<ReturnType<LakeCatalog["listDataFiles"]>>) =>
      files.map((f) => ({ id: f.dataFileId, path: f.absolutePath, columns: Object.keys(f.columnStats).sort() }));
    const first = await liveFiles(recording, tableId, await catalog.currentSnapshotId(), []);
    expect(first).toHaveLength(3);
    expect(shape(first)).toEqual(shape(await catalog.listDataFiles(tableId)));
    expect(shape(first)[0]!.columns).toEqual(["k", "timestamp"]);
    await flushRows(30);
    calls.length = 0;
    const snapshotId = await catalog.currentSnapshotId();
    const next = await liveFiles(recording, tableId, snapshotId, first);
    const full = await catalog.listDataFiles(tableId);
    expect(shape(next)).toEqual(shape(full));
    const newId = full.find((f) => !first.some((o) => o.dataFileId === f.dataFileId))!.dataFileId;
    // One bare listing, then the statistics of the one new file.
    expect(calls).toEqual([
      { snapshotId, statsColumns: [] },
      { snapshotId, fileIds: [newId] },
    ]);
    expect((await catalog.listDataFiles(tableId, { fileIds: [newId] })).map((f) => f.dataFileId)).toEqual([newId]);
    // The views read through the refresher show every row once.
    const r = await lake.query(`SELECT count(*) AS n, count(DISTINCT k) AS d FROM svc_lake.main.view_probe`);
    expect(r.rows[0]).toEqual({ n: 40, d: 40 });
  });
});
