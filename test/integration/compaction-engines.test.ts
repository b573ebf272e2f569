/**
 * The compaction engines' rules (docs/ARCHITECTURE.md "Compaction engines",
 * "Maintenance") on a real lake: merge caps of the default
 * merge, min_age_sec and target_file_size_bytes of the native engine, the row-group skip, the
 * row-count rollback and the native engine switching itself off on duplicate snapshots.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { asyncBufferFromFile, parquetMetadataAsync, readOffsetIndex } from "hyparquet";
import { join } from "node:path";
import { day, filesByPartition, metricValue, openCatalogDb, openLake, writeFile, KEY } from "./compaction-helpers.ts";
import { PEERS, peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";

const allParquet = (dir: string) => [...new Bun.Glob("**/*.parquet").scanSync({ cwd: join(dir, "lake") })].sort();
const countRows = async (h: { lake: { query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }> } }) =>
  Number((await h.lake.query(`SELECT count(*) AS n FROM svc_lake.main.ce_hep`)).rows[0]!.n);

describe("default merge (engine duckdb)", () => {
  test("at most max_compacted_files outputs and at most 32 merges per table per cycle; files from max_file_size_bytes on stay", async () => {
    await using dir = tempDir();
    const d = day(-1);
    let largest = 0;
    let big: string[] = [];
    {
      await using h = await openLake(dir.path, { enable: false });
      // Two files of 300 rows first (above the limit below), then 80 flush files of 20 rows.
      for (let i = 0; i < 2; i++) await writeFile(h.lake, d.at(0) + i * 1_000_000, 300);
      big = (await h.lake.files(KEY)).map((f) => f.path);
      for (let i = 0; i < 80; i++) await writeFile(h.lake, d.at(1) + i * 1_000_000);
      expect((await h.lake.files(KEY)).length).toBe(82);
      largest = Math.max(...(await h.lake.files(KEY)).filter((f) => f.rows === 20).map((f) => f.bytes));
    }
    // Two flush files fit under max_file_size_bytes, three do not.
    const maxFile = Math.floor(largest * 2.5);
    {
      await using h = await openLake(dir.path, {
        min_age_sec: 0,
        max_file_size_bytes: maxFile,
        max_compacted_files: 3,
      });
      const rows = await countRows(h);
      const r = await h.lake.maintain();
      expect(r.merged).toBe(6);
      expect(metricValue(h.metrics, "svc_lake_compaction_merges_total", { table: KEY, engine: "duckdb" })).toBe(3);
      expect((await h.lake.files(KEY)).length).toBe(82 - 6 + 3);
      expect(await countRows(h)).toBe(rows);
    }
    {
      await using h = await openLake(dir.path, {
        min_age_sec: 0,
        max_file_size_bytes: maxFile,
        max_compacted_files: 100,
      });
      const r = await h.lake.maintain();
      expect(metricValue(h.metrics, "svc_lake_compaction_merges_total", { table: KEY, engine: "duckdb" })).toBe(32);
      expect(r.merged).toBe(64);
      // The files above max_file_size_bytes were never merged.
      const live = await h.lake.files(KEY);
      expect(big.every((p) => live.some((f) => f.path === p))).toBe(true);
      expect(big.length).toBe(2);
    }
  });
});

describe("paged merged files (rows_per_page)", () => {
  /** Data pages of each chunk of a file: column → pages per row group (from its offset index; none without one). */
  const pagesOf = async (path: string) => {
    const file = await asyncBufferFromFile(path);
    const md = await parquetMetadataAsync(file);
    const out = new Map<string, number[]>([["rows", md.row_groups.map((rg) => Number(rg.num_rows))]]);
    for (const rg of md.row_groups)
      for (const c of rg.columns) {
        const name = c.meta_data!.path_in_schema[0]!;
        const at = c.offset_index_offset === undefined ? undefined : Number(c.offset_index_offset);
        const n =
          at === undefined
            ? 0
            : readOffsetIndex({ view: new DataView(await file.slice(at, at + c.offset_index_length!)), offset: 0 })
                .page_locations.length;
        out.set(name, [...(out.get(name) ?? []), n]);
      }
    return out;
  };
  const rowsOf = async (h: { lake: { query(sql: string): Promise<{ rows: Array<Record<string, unknown>> }> } }) =>
    (
      await h.lake.query(
        `SELECT session_id, payload, epoch_us(timestamp) AS t FROM svc_lake.main.ce_hep ORDER BY t, payload`,
      )
    ).rows;

  test("a merge cuts the PLAIN chunks into pages with an offset index; 0 keeps DuckDB's one page per chunk", async () => {
    for (const rowsPerPage of [256, 0]) {
      await using dir = tempDir();
      const d = day(-1);
      {
        await using h = await openLake(dir.path, { enable: false });
        for (let i = 0; i < 4; i++) await writeFile(h.lake, d.at(1) + i * 1_000_000, 450);
      }
      await using h = await openLake(
        dir.path,
        { min_age_sec: 0, rows_per_page: rowsPerPage },
        { row_group_rows: 1024 },
      );
      const before = await rowsOf(h);
      expect((await h.lake.maintain()).merged).toBe(4);
      const live = await h.lake.files(KEY);
      expect(live.length).toBe(1);
      expect(await rowsOf(h)).toEqual(before);
      const pages = await pagesOf(join(dir.path, "lake", live[0]!.path));
      // Every chunk has an offset index (pages of 256 rows, or 8 KiB: a few here), or none at all.
      const groups = pages.get("rows")!;
      expect(groups.reduce((a, b) => a + b, 0)).toBe(1800);
      for (const n of pages.get("payload") ?? [])
        if (rowsPerPage) expect(n).toBeGreaterThan(0);
        else expect(n).toBe(0);
      if (rowsPerPage) expect(Math.max(...pages.get("payload")!)).toBeGreaterThan(1);
    }
  });

  test("a merged file is written in time slices of calls, each slice sorted by Call-ID", async () => {
    for (const rowsPerPage of [256, 0]) {
      await using dir = tempDir();
      const d = day(-1);
      // 900 calls of 4 rows, one begun every 10 µs, each lasting 2 000 µs (so about 200 calls
      // overlap); Call-IDs are hashes, so Call-ID order is not time order. Four flushes.
      const callId = (k: number) => `c-${Bun.hash(`call${k}`).toString(16).padStart(16, "0")}`;
      {
        await using h = await openLake(dir.path, { enable: false });
        const rows = Array.from({ length: 900 }, (_, k) =>
          [0, 600, 1200, 2000].map((dt) => [d.at(1) + k * 10 + dt, k] as const),
        )
          .flat()
          .sort((a, b) => a[0] - b[0]);
        for (let f = 0; f < 4; f++) {
          for (const [t, k] of rows.slice(f * 900, (f + 1) * 900))
            h.lake.row(KEY)!.time(t).str(callId(k)).str(`m${t}`).end();
          await h.lake.sync();
          await h.lake.flush();
        }
      }
      await using h = await openLake(
        dir.path,
        { min_age_sec: 0, rows_per_page: rowsPerPage },
        { row_group_rows: 1024 },
      );
      expect((await h.lake.maintain()).merged).toBe(4);
      const live = await h.lake.files(KEY);
      expect(live.length).toBe(1);
      const path = join(dir.path, "lake", live[0]!.path).replaceAll("'", "''");
      const rows = (
        await h.lake.query(
          `SELECT session_id AS s, epoch_us(timestamp) AS t FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
        )
      ).rows.map((r) => ({ s: String(r.s), t: Number(r.t) }));
      expect(rows.length).toBe(3600);
      // Each call's 4 rows side by side, in time order.
      const calls: Array<{ s: string; first: number }> = [];
      for (let i = 0; i < rows.length; i += 4) {
        const call = rows.slice(i, i + 4);
        expect(call.map((r) => r.s)).toEqual([call[0]!.s, call[0]!.s, call[0]!.s, call[0]!.s]);
        expect(call.map((r) => r.t - call[0]!.t)).toEqual([0, 600, 1200, 2000]);
        calls.push({ s: call[0]!.s, first: call[0]!.t });
      }
      // Slices: runs of ascending Call-IDs; every call of a slice began before every call of the next.
      const slices: Array<typeof calls> = [[]];
      for (const c of calls) {
        const cur = slices.at(-1)!;
        if (cur.length > 0 && c.s < cur.at(-1)!.s) slices.push([c]);
        else cur.push(c);
      }
      expect(slices.length).toBeGreaterThanOrEqual(3);
      expect(slices.length).toBeLessThanOrEqual(5);
      for (let k = 1; k < slices.length; k++)
        expect(Math.min(...slices[k]!.map((c) => c.first))).toBeGreaterThan(
          Math.max(...slices[k - 1]!.map((c) => c.first)),
        );
    }
  });
});

peerTest(
  "the stock ducklake extension reads a lake of paged merged files row for row",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir();
    const d = day(-1);
    {
      await using h = await openLake(dir.path, { enable: false });
      for (let i = 0; i < 3; i++) await writeFile(h.lake, d.at(2) + i * 1_000_000, 3000);
    }
    await using h = await openLake(dir.path, { min_age_sec: 0, rows_per_page: 1024 });
    expect((await h.lake.maintain()).merged).toBe(3);
    const ours = (
      await h.lake.query(
        `SELECT session_id, payload, epoch_us(timestamp) AS t FROM svc_lake.main.ce_hep ORDER BY t, payload`,
      )
    ).rows;
    const sql = `SELECT session_id, payload, epoch_us(timestamp) AS t FROM l.main.ce_hep ORDER BY t, payload`;
    const p = Bun.spawnSync(
      [
        pyPeersPython(),
        join(import.meta.dir, "../peers/ducklake_queries.py"),
        join(dir.path, "catalog.sqlite"),
        join(dir.path, "lake") + "/",
        "ro",
        JSON.stringify({ rows: sql }),
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(p.stderr.toString()).toBe("");
    const theirs = (JSON.parse(p.stdout.toString()) as { rows: Record<string, unknown>[] }).rows;
    expect(theirs.length).toBe(9000);
    expect(theirs.map((r) => ({ ...r, t: Number(r.t) }))).toEqual(ours.map((r) => ({ ...r, t: Number(r.t) })));
  },
);

describe("native engine", () => {
  test("a partition touched within min_age_sec is left whole; a settled one is merged into files up to target_file_size_bytes", async () => {
    await using dir = tempDir();
    const a = day(-1);
    const b = day(-2);
    let largest = 0;
    let touchedAt = 0;
    let bFiles: string[] = [];
    {
      await using h = await openLake(dir.path, { enable: false });
      // Payloads of 1 KB a row: the files' size is their rows, not their Parquet footers.
      for (let i = 0; i < 3; i++) await writeFile(h.lake, b.at(3) + i * 1_000_000, 20, 64);
      for (let i = 0; i < 12; i++) await writeFile(h.lake, a.at(3) + i * 1_000_000, 20, 64);
      touchedAt = Date.now();
      largest = Math.max(...(await h.lake.files(KEY)).map((f) => f.bytes));
      await waitFor("the clock to pass the last commit of partition a", () => Date.now() > touchedAt + 2);
      // A late row for partition b: b was touched after every file of a.
      await writeFile(h.lake, b.at(4), 20, 64);
      bFiles = (await filesByPartition(h.lake)).get(b.date)!.map((f) => f.path);
    }
    // Five files fit in the target, six do not: 12 files → 5 + 5 + 2.
    const target = largest * 5;
    await using h = await openLake(dir.path, { engine: "native", min_age_sec: 300, target_file_size_bytes: target });
    const rows = await countRows(h);
    // 300 s after a's last commit, less than 300 s after b's.
    const r = await h.lake.maintain(touchedAt + 300_000);
    expect(r.merged).toBe(12);
    const parts = await filesByPartition(h.lake);
    expect(
      parts
        .get(a.date)!
        .map((f) => f.rows)
        .sort((x, y) => x - y),
    ).toEqual([40, 100, 100]);
    expect(parts.get(b.date)!.map((f) => f.path)).toEqual(bFiles);
    expect(metricValue(h.metrics, "svc_lake_compaction_merges_total", { engine: "native" })).toBe(3);
    expect(metricValue(h.metrics, "svc_lake_compaction_skipped_total", { reason: "young" })).toBe(1);
    expect(await countRows(h)).toBe(rows);
    // Once b settles too, it is merged; a's merged files are not merged again.
    const aFiles = parts
      .get(a.date)!
      .map((f) => f.path)
      .sort();
    await h.lake.maintain(Date.now() + 301_000);
    const later = await filesByPartition(h.lake);
    expect(later.get(b.date)!.map((f) => f.rows)).toEqual([80]);
    expect(
      later
        .get(a.date)!
        .map((f) => f.path)
        .sort(),
    ).toEqual(aFiles);
    expect(await countRows(h)).toBe(rows);
  });

  test("row groups above max_row_group_bytes: native skips the whole partition, the default merge only that file", async () => {
    await using dir = tempDir();
    const a = day(-1);
    const b = day(-2);
    let bigFile = "";
    {
      await using h = await openLake(dir.path, { enable: false });
      for (let i = 0; i < 3; i++) await writeFile(h.lake, a.at(2) + i * 1_000_000);
      // 20 rows of 64 KB: one row group of about 1.3 MB uncompressed.
      await writeFile(h.lake, a.at(3), 20, 4096);
      const largestBytes = Math.max(...(await h.lake.files(KEY)).map((x) => x.bytes));
      bigFile = (await filesByPartition(h.lake)).get(a.date)!.find((f) => f.bytes === largestBytes)!.path;
      for (let i = 0; i < 3; i++) await writeFile(h.lake, b.at(2) + i * 1_000_000);
    }
    const limit = 200_000;
    {
      await using h = await openLake(dir.path, { engine: "native", min_age_sec: 0, max_row_group_bytes: limit });
      await h.lake.maintain();
      const parts = await filesByPartition(h.lake);
      expect(parts.get(a.date)!.length).toBe(4);
      expect(parts.get(b.date)!.length).toBe(1);
      expect(metricValue(h.metrics, "svc_lake_compaction_skipped_total", { reason: "row_group_bytes" })).toBe(1);
    }
    {
      await using h = await openLake(dir.path, { engine: "duckdb", min_age_sec: 0, max_row_group_bytes: limit });
      await h.lake.maintain();
      const files = (await filesByPartition(h.lake)).get(a.date)!;
      expect(files.length).toBe(2);
      expect(files.map((f) => f.path)).toContain(bigFile);
      expect(metricValue(h.metrics, "svc_lake_compaction_skipped_total", { reason: "row_group_bytes" })).toBe(1);
    }
  });

  test("duplicate snapshots in the catalog switch the native engine off until restart; the default merge takes over", async () => {
    await using dir = tempDir();
    const a = day(-1);
    await using h = await openLake(dir.path, { engine: "native", min_age_sec: 0 });
    for (let i = 0; i < 3; i++) await writeFile(h.lake, a.at(5) + i * 1_000_000);
    const rows = await countRows(h);
    // A catalog whose snapshot table lacks the primary key (another tool made it) and a second
    // writer committed the same snapshot id.
    const db = openCatalogDb(dir.path);
    try {
      db.transaction(() => {
        db.run(
          "CREATE TABLE snap_copy(snapshot_id BIGINT, snapshot_time VARCHAR, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
        );
        db.run("INSERT INTO snap_copy SELECT * FROM ducklake_snapshot");
        db.run("DROP TABLE ducklake_snapshot");
        db.run("ALTER TABLE snap_copy RENAME TO ducklake_snapshot");
        db.run(
          "INSERT INTO ducklake_snapshot SELECT * FROM ducklake_snapshot WHERE snapshot_id = (SELECT max(snapshot_id) FROM ducklake_snapshot)",
        );
      })();
    } finally {
      db.close();
    }
    await h.lake.maintain();
    expect(metricValue(h.metrics, "svc_lake_compaction_merges_total", { engine: "native" })).toBe(1);
    expect(metricValue(h.metrics, "svc_lake_compaction_native_disabled")).toBe(1);
    for (let i = 0; i < 2; i++) await writeFile(h.lake, a.at(6) + i * 1_000_000);
    await h.lake.maintain();
    expect(metricValue(h.metrics, "svc_lake_compaction_merges_total", { engine: "native" })).toBe(1);
    expect(metricValue(h.metrics, "svc_lake_compaction_merges_total", { engine: "duckdb" })).toBe(1);
    expect((await filesByPartition(h.lake)).get(a.date)!.length).toBe(1);
    expect(await countRows(h)).toBe(rows + 40);
  });
});

describe.each(["native", "duckdb"] as const)("engine %s", (engine) => {
  test("a merged row count that differs from the catalog's rolls the swap back; retried every cycle until it matches", async () => {
    await using dir = tempDir();
    const a = day(-1);
    await using h = await openLake(dir.path, { engine, min_age_sec: 0 });
    for (let i = 0; i < 3; i++) await writeFile(h.lake, a.at(7) + i * 1_000_000);
    const rows = await countRows(h);
    const before = (await h.lake.files(KEY)).map((f) => f.path).sort();
    const db = openCatalogDb(dir.path);
    try {
      // The catalog claims one row more for a file than the file holds (a damaged or foreign count).
      const forge = (by: number) =>
        db.run(
          "UPDATE ducklake_data_file SET record_count = record_count + ? WHERE data_file_id = (SELECT min(data_file_id) FROM ducklake_data_file WHERE end_snapshot IS NULL)",
          [by],
        );
      forge(1);
      for (let cycle = 1; cycle <= 2; cycle++) {
        const r = await h.lake.maintain();
        expect(r.merged).toBe(0);
        expect(metricValue(h.metrics, "svc_lake_compaction_rollbacks_total", { reason: "row_count" })).toBe(cycle);
        expect((await h.lake.files(KEY)).map((f) => f.path).sort()).toEqual(before);
        // The merged file of the rolled-back swap is gone again.
        expect(allParquet(dir.path)).toEqual(before);
        expect(await countRows(h)).toBe(rows);
      }
      forge(-1);
    } finally {
      db.close();
    }
    const r = await h.lake.maintain();
    expect(r.merged).toBe(3);
    expect((await h.lake.files(KEY)).length).toBe(1);
    expect(await countRows(h)).toBe(rows);
  });
});

test("svc serve refuses compaction settings that would do nothing, naming the key and the reason", async () => {
  await using dir = tempDir();
  const root = join(import.meta.dir, "../..");
  const serve = async (lakehouse: Record<string, unknown>) => {
    const cfg = join(dir.path, "svc.json");
    await Bun.write(
      cfg,
      JSON.stringify({
        coordinator: { settings_db_path: join(dir.path, "settings.db"), http_server: { listen: "127.0.0.1:0" } },
        node: { http_server: { listen: "127.0.0.1:0" } },
        ingest: { hep: { enable: false }, line_protocol: { enable: false } },
        storage: { lakehouse: { catalog_path: join(dir.path, "catalog.sqlite"), ...lakehouse } },
      }),
    );
    const p = Bun.spawnSync([process.execPath, join(root, "src/main.ts"), "serve", "--config-path", cfg], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "" },
      timeout: 30_000, // a start that does not refuse would serve until killed
    });
    return { err: p.stderr.toString(), code: p.exitCode };
  };
  const native = await serve({ data_path: join(dir.path, "site=a", "lake"), compaction: { engine: "native" } });
  expect(native.err).toContain("storage.lakehouse.compaction.engine: native refuses data_path");
  expect(native.err).toContain("site=a");
  expect(native.code).toBe(2);
  const target = await serve({
    data_path: join(dir.path, "lake"),
    compaction: { target_file_size_bytes: 100_000_000 },
  });
  expect(target.err).toContain("storage.lakehouse.compaction.target_file_size_bytes applies to engine native only");
  expect(target.code).toBe(2);
  expect(readdirSync(dir.path).filter((n) => n === "lake")).toEqual([]);
});
