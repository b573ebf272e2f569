/**
 * Interoperability with the reference implementation: a stock DuckDB 1.5.5 with the ducklake and
 * sqlite extensions (Python venv from scripts/python-peers.sh, driven by test/peers/ducklake_read.py).
 * 1. It reads what our catalog API and @duckdb/node-api Parquet files make, time travel included,
 *    then writes into our catalog, and we read its rows back (proves our rows are consistent).
 * 2. We open and list a catalog it made, derive the same file stats it stored, and add a file to it.
 */
import { Database } from "bun:sqlite";
import { expect } from "bun:test";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { existsSync, mkdirSync, openSync, readSync, closeSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  type Catalog,
  columnStatsFromParquet,
  type NewDataFile,
  newDataFilePath,
  openCatalog,
  type ParquetChunkStats,
  parquetFooterSize,
  type TableInfo,
  typeHasNan,
} from "../../src/lake/catalog/index.ts";
import { PEERS, peerTest, pyPeersPython, tempDir } from "../harness.ts";

const SCRIPT = resolve(import.meta.dir, "../peers/ducklake_read.py");

interface ReadResult {
  snapshots: Array<[number, string]>;
  current: number;
  tables: string[];
  columns: Array<[string, string]>;
  count: number;
  rows: Array<Record<string, unknown>>;
  at: Record<string, { count: number; rows: Array<Record<string, unknown>>; columns: Array<[string, string]> }>;
}

function py<T>(args: string[]): T {
  const r = Bun.spawnSync([pyPeersPython(), SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`ducklake_read.py ${args[0]} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as T;
}

const sqlStr = (s: string) => `'${s.replaceAll("'", "''")}'`;

async function rowsOf(con: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  return (await con.runAndReadAll(sql)).getRowObjects() as Array<Record<string, unknown>>;
}

/**
 * Writes `select` to a Parquet file the way the lake writer must (zstd, field id = column_id) and
 * describes it for commitDataFiles from its own metadata.
 */
async function writeParquet(
  con: DuckDBConnection,
  cat: Catalog,
  t: TableInfo,
  partition: string | undefined,
  select: string,
): Promise<NewDataFile> {
  const path = newDataFilePath(t, partition);
  const abs = join(cat.dataPath, path);
  mkdirSync(dirname(abs), { recursive: true });
  const fieldIds = t.columns.map((c) => `${sqlStr(c.name)}: ${c.columnId}`).join(", ");
  await con.run(`COPY (${select}) TO ${sqlStr(abs)} (FORMAT parquet, COMPRESSION zstd, FIELD_IDS {${fieldIds}})`);
  return describeParquet(con, t, abs, path, partition);
}

async function describeParquet(
  con: DuckDBConnection,
  t: TableInfo,
  abs: string,
  path: string,
  partition: string | undefined,
): Promise<NewDataFile> {
  const chunks = (await rowsOf(
    con,
    `SELECT path_in_schema, stats_min_value, stats_max_value, stats_null_count, num_values, total_compressed_size FROM parquet_metadata(${sqlStr(abs)})`,
  )) as unknown as ParquetChunkStats[];
  const present = new Set(chunks.map((c) => c.path_in_schema));
  const nan = new Set<string>();
  for (const c of t.columns.filter((c) => typeHasNan(c.type) && present.has(c.name))) {
    const r = await rowsOf(
      con,
      `SELECT coalesce(bool_or(isnan("${c.name}")), false) AS nan FROM read_parquet(${sqlStr(abs)})`,
    );
    if (r[0]?.nan === true) nan.add(c.name);
  }
  const count = await rowsOf(con, `SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlStr(abs)})`);
  const size = statSync(abs).size;
  const tail = new Uint8Array(8);
  const fd = openSync(abs, "r");
  readSync(fd, tail, 0, 8, size - 8);
  closeSync(fd);
  return {
    path,
    recordCount: Number(count[0]?.n),
    fileSizeBytes: size,
    footerSize: parquetFooterSize(tail),
    columnStats: columnStatsFromParquet(t, chunks, nan),
    ...(partition !== undefined && t.partitionBy !== undefined
      ? { partitionValues: { [t.partitionBy]: partition } }
      : {}),
  };
}

const COLUMNS = [
  { name: "ts", type: "timestamp" as const },
  { name: "tstz", type: "timestamptz" as const },
  { name: "b", type: "int64" as const },
  { name: "i", type: "int32" as const },
  { name: "v", type: "varchar" as const },
  { name: "d", type: "float64" as const },
  { name: "ok", type: "boolean" as const },
  { name: "date", type: "date" as const },
];
const CASTS =
  "ts::TIMESTAMP AS ts, tstz::TIMESTAMPTZ AS tstz, b::BIGINT AS b, i::INTEGER AS i, v::VARCHAR AS v, d::DOUBLE AS d, ok::BOOLEAN AS ok, date::DATE AS date";
const VALUES_1 = `('2026-11-22 10:00:00.123456', '2026-11-22 10:00:00+00', 1, 2, 'a', 1.5::DOUBLE, true, '2026-11-22'),
  ('2026-11-22 11:00:00', '2026-11-22 11:00:00.5+00', 10, 20, 'zz', -2.5, false, '2026-11-22'),
  ('2026-11-22 12:00:00', NULL, NULL, 3, NULL, 'nan', NULL, '2026-11-22')`;
const VALUES_2 = `('2026-11-23 01:00:00', '2026-11-23 01:00:00+00', 5, 6, 'q', 3.0, true, '2026-11-23'),
  ('2026-11-23 02:00:00', '2026-11-23 02:00:00+00', 7, 8, 'r', 4.0, true, '2026-11-23')`;
const select = (values: string, extra = "") =>
  `SELECT ${CASTS}${extra} FROM (VALUES ${values}) v(ts, tstz, b, i, v, d, ok, date${extra ? ", extra" : ""})`;

/** The same rows with the partition column named `day` (as in the extension-made table). */
const asDay = (sql: string) => `SELECT ts, tstz, b, i, v, d, ok, date AS day FROM (${sql})`;

const row = (
  ts: string,
  tstz: string | null,
  b: number | null,
  i: number,
  v: string | null,
  d: number | string,
  ok: boolean | null,
  date: string,
) => ({ ts, tstz, b, i, v, d, ok, date });
const R1 = row("2026-11-22 10:00:00.123456", "2026-11-22 10:00:00+00", 1, 2, "a", 1.5, true, "2026-11-22");
const R2 = row("2026-11-22 11:00:00", "2026-11-22 11:00:00.5+00", 10, 20, "zz", -2.5, false, "2026-11-22");
const R3 = row("2026-11-22 12:00:00", null, null, 3, null, "nan", null, "2026-11-22");
const R4 = row("2026-11-23 01:00:00", "2026-11-23 01:00:00+00", 5, 6, "q", 3, true, "2026-11-23");
const R5 = row("2026-11-23 02:00:00", "2026-11-23 02:00:00+00", 7, 8, "r", 4, true, "2026-11-23");
const R6 = {
  ...row("2026-11-23 03:00:00", "2026-11-23 03:00:00+00", 9, 10, "s", 5.5, false, "2026-11-23"),
  extra: "x",
};
const R7 = {
  ...row("2026-11-24 00:00:00", "2026-11-24 00:00:00+00", 11, 12, "t", 6.5, true, "2026-11-24"),
  extra: "y",
};
const R8 = {
  ...row("2026-11-24 01:00:00", "2026-11-24 01:00:00+00", 13, 14, "u", 7.5, false, "2026-11-24"),
  extra: "z",
};
type Row = Record<string, unknown>;
/** Rows read through a table version that has the `extra` column: NULL where the file lacks it. */
const withExtra = (r: Row): Row => ({ extra: null, ...r });

const DESCRIBED: Array<[string, string]> = [
  ["ts", "TIMESTAMP"],
  ["tstz", "TIMESTAMP WITH TIME ZONE"],
  ["b", "BIGINT"],
  ["i", "INTEGER"],
  ["v", "VARCHAR"],
  ["d", "DOUBLE"],
  ["ok", "BOOLEAN"],
  ["date", "DATE"],
];

async function duck(): Promise<{ con: DuckDBConnection; close: () => void }> {
  const instance = await DuckDBInstance.create(":memory:", {
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  const con = await instance.connect();
  await con.run("SET TimeZone = 'UTC'");
  return {
    con,
    close: () => {
      con.closeSync();
      instance.closeSync();
    },
  };
}

peerTest(
  "DuckDB's ducklake extension reads our catalog (time travel, schema evolution, compaction) and writes into it",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir();
    const path = join(dir.path, "catalog.sqlite");
    const dataPath = join(dir.path, "lake");
    const db = await duck();
    let cat = openCatalog({ path, dataPath });
    try {
      const t = cat.ensureTable("lp", { name: "metrics", columns: COLUMNS, partitionBy: "date" });
      const f1 = await writeParquet(db.con, cat, t, "2026-11-22", select(VALUES_1));
      // DuckDB's Parquet writer leaves min/max out of a chunk with NaN: unknown bounds (never pruned).
      expect(f1.columnStats.d).toMatchObject({ min: null, max: null, containsNan: true, nullCount: 0, valueCount: 3 });
      expect(f1.columnStats.ok).toMatchObject({ min: "0", max: "1", nullCount: 1, valueCount: 2 });
      const s1 = cat.commitDataFiles(t.tableId, [f1]).snapshotId;
      const s2 = cat.commitDataFiles(t.tableId, [
        await writeParquet(db.con, cat, t, "2026-11-23", select(VALUES_2)),
      ]).snapshotId;
      const t2 = cat.addColumns(t.tableId, [{ name: "extra", type: "varchar" }]);
      const s3 = cat.currentSnapshot().snapshotId;
      const f3 = await writeParquet(
        db.con,
        cat,
        t2,
        "2026-11-23",
        select(
          `('2026-11-23 03:00:00', '2026-11-23 03:00:00+00', 9, 10, 's', 5.5, false, '2026-11-23', 'x')`,
          ", extra",
        ),
      );
      const s4 = cat.commitDataFiles(t.tableId, [f3]).snapshotId;
      cat.close();

      const read = py<ReadResult>([
        "read",
        path,
        cat.dataPath,
        "lp.metrics",
        "ts",
        String(s1),
        String(s2),
        String(s3),
        String(s4),
      ]);
      expect(read.tables).toEqual(["lp.metrics"]);
      expect(read.current).toBe(s4);
      expect(read.snapshots.map((s) => s[0])).toEqual([0, 1, s1, s2, s3, s4]);
      expect(read.snapshots.map((s) => s[1])).toEqual([
        "{schemas_created=[main]}",
        "{schemas_created=[lp], tables_created=[lp.metrics], tables_altered=[2]}",
        "{tables_inserted_into=[2]}",
        "{tables_inserted_into=[2]}",
        "{tables_altered=[2]}",
        "{tables_inserted_into=[2]}",
      ]);
      expect(read.columns).toEqual([...DESCRIBED, ["extra", "VARCHAR"]]);
      expect(read.count).toBe(6);
      expect(read.rows).toEqual([R1, R2, R3, R4, R5, R6].map(withExtra));
      expect(read.at[String(s1)]).toEqual({ count: 3, rows: [R1, R2, R3], columns: DESCRIBED });
      expect(read.at[String(s2)]).toEqual({ count: 5, rows: [R1, R2, R3, R4, R5], columns: DESCRIBED });
      expect(read.at[String(s3)]?.rows).toEqual([R1, R2, R3, R4, R5].map(withExtra));
      expect(read.at[String(s4)]?.count).toBe(6);

      // The extension writes into our catalog; we see its snapshot, file and stats.
      py([
        "exec",
        path,
        cat.dataPath,
        `INSERT INTO l.lp.metrics VALUES ('2026-11-24 00:00:00', '2026-11-24 00:00:00+00', 11, 12, 't', 6.5, true, '2026-11-24', 'y')`,
      ]);
      cat = openCatalog({ path, dataPath });
      expect(cat.integrityCheck()).toEqual({ ok: true, problems: [] });
      expect(cat.currentSnapshot()).toMatchObject({
        snapshotId: s4 + 1,
        changes: "inserted_into_table:2",
        schemaVersion: 2,
      });
      expect(cat.listInlinedData()).toEqual([]);
      const theirs = cat.listDataFiles(t.tableId, { column: "date", min: "2026-11-24", max: "2026-11-24" });
      expect(theirs).toHaveLength(1);
      expect(theirs[0]).toMatchObject({
        beginSnapshot: s4 + 1,
        recordCount: 1,
        rowIdStart: 6,
        partitionValues: { date: "2026-11-24" },
      });
      expect(theirs[0]?.path).toMatch(/^lp\/metrics\/date=2026-11-24\/ducklake-[0-9a-f-]+\.parquet$/);
      expect(theirs[0]?.columnStats.ts).toMatchObject({
        min: "2026-11-24 00:00:00",
        max: "2026-11-24 00:00:00",
        nullCount: 0,
        valueCount: 1,
      });
      // Our stats derivation gives exactly what the extension stored for its own file.
      const again = await describeParquet(
        db.con,
        cat.getTableById(t.tableId),
        theirs[0]!.absolutePath,
        theirs[0]!.path,
        "2026-11-24",
      );
      expect(again.footerSize).toBe(theirs[0]!.footerSize!);
      for (const [name, s] of Object.entries(theirs[0]!.columnStats)) {
        const mine = again.columnStats[name]!;
        expect({
          name,
          min: mine.min,
          max: mine.max,
          nulls: mine.nullCount,
          values: mine.valueCount,
          size: mine.sizeBytes,
        }).toEqual({
          name,
          min: s.min,
          max: s.max,
          nulls: s.nullCount ?? -1,
          values: s.valueCount ?? -1,
          size: s.sizeBytes ?? -1,
        });
      }
      expect(cat.tableStats(t.tableId)).toMatchObject({ recordCount: 7, nextRowId: 7, fileCount: 4 });

      // We commit after it (ids continue), then compact the 2026-11-23 partition (a file without
      // and one with the new column) into one file.
      const t3 = cat.getTableById(t.tableId);
      cat.commitDataFiles(t.tableId, [
        await writeParquet(
          db.con,
          cat,
          t3,
          "2026-11-24",
          select(
            `('2026-11-24 01:00:00', '2026-11-24 01:00:00+00', 13, 14, 'u', 7.5, false, '2026-11-24', 'z')`,
            ", extra",
          ),
        ),
      ]);
      const beforeCompaction = cat.currentSnapshot().snapshotId;
      const day23 = cat.listDataFiles(t.tableId, { column: "date", min: "2026-11-23", max: "2026-11-23" });
      expect(day23).toHaveLength(2);
      const sources = day23.map((f) => sqlStr(f.absolutePath)).join(", ");
      const merged = await writeParquet(
        db.con,
        cat,
        t3,
        "2026-11-23",
        `SELECT * FROM read_parquet([${sources}], union_by_name = true) ORDER BY ts`,
      );
      const compacted = cat.replaceDataFiles(
        t.tableId,
        day23.map((f) => f.dataFileId),
        [merged],
      ).snapshotId;
      cat.close();

      const after = py<ReadResult>([
        "read",
        path,
        cat.dataPath,
        "lp.metrics",
        "ts",
        String(beforeCompaction),
        String(compacted),
      ]);
      const all = [R1, R2, R3, R4, R5, R6, R7, R8].map(withExtra);
      expect(after.count).toBe(8);
      expect(after.rows).toEqual(all);
      expect(after.at[String(beforeCompaction)]?.rows).toEqual(all);
      expect(after.at[String(compacted)]?.rows).toEqual(all);
      expect(after.snapshots.at(-1)).toEqual([compacted, "{merge_adjacent=[2]}"]);

      // Retention and expiry on our side, file cleanup by the extension from
      // ducklake_files_scheduled_for_deletion.
      cat = openCatalog({ path, dataPath });
      const retired = cat.retireFilesBefore(t.tableId, "ts", "2026-11-23 00:00:00");
      expect(retired.files.map((f) => f.recordCount)).toEqual([3]);
      expect(cat.expireSnapshots(Date.now() + 60_000).scheduledFiles).toBe(3);
      const doomed = cat.listScheduledDeletions().map((s) => s.absolutePath);
      expect(doomed.sort()).toEqual([...day23, ...retired.files].map((f) => f.absolutePath).sort());
      cat.close();
      py(["exec", path, cat.dataPath, "CALL ducklake_cleanup_old_files('l', cleanup_all => true)"]);
      expect(doomed.filter((p) => existsSync(p))).toEqual([]);
      const final = py<ReadResult>(["read", path, cat.dataPath, "lp.metrics", "ts"]);
      expect(final.rows).toEqual(all.slice(3));
      expect(final.snapshots).toEqual([[retired.snapshotId ?? -1, "{tables_deleted_from=[2]}"]]);
      cat = openCatalog({ path, dataPath });
      expect(cat.listScheduledDeletions()).toEqual([]);
      expect(cat.integrityCheck().ok).toBe(true);
    } finally {
      cat.close();
      db.close();
    }
  },
  120_000,
);

peerTest(
  "we open, list and extend a catalog made by DuckDB's ducklake extension",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir();
    const path = join(dir.path, "theirs.sqlite");
    const dataPath = join(resolve(dir.path), "lake") + "/";
    py([
      "exec",
      path,
      dataPath,
      "CALL l.set_option('data_inlining_row_limit', 0)",
      "CREATE SCHEMA l.s1",
      "CREATE TABLE l.s1.t (ts TIMESTAMP, tstz TIMESTAMPTZ, b BIGINT, i INTEGER, v VARCHAR, d DOUBLE, ok BOOLEAN, day DATE)",
      "ALTER TABLE l.s1.t SET PARTITIONED BY (day)",
      `INSERT INTO l.s1.t ${asDay(select(VALUES_1))} UNION ALL ${asDay(select(VALUES_2))}`,
      "ALTER TABLE l.s1.t ADD COLUMN extra VARCHAR",
      "CREATE TABLE l.main.plain (x BIGINT, s VARCHAR)",
      "INSERT INTO l.main.plain VALUES (1, 'one'), (2, NULL)",
    ]);
    // The same tables and column types as ours, byte for byte.
    const mineDir = join(dir.path, "mine");
    openCatalog({ path: join(mineDir + ".sqlite"), dataPath: mineDir }).close();
    const ddl = (p: string) => {
      const d = new Database(p, { readonly: true });
      const rows = d
        .query<{ sql: string }, []>(
          "SELECT sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'ducklake_%' AND name NOT LIKE 'ducklake_inlined_data_%\\_%' ESCAPE '\\' ORDER BY name",
        )
        .all();
      d.close();
      return rows.map((r) => r.sql);
    };
    expect(ddl(mineDir + ".sqlite")).toEqual(ddl(path));

    const db = await duck();
    const cat = openCatalog({ path, dataPath });
    try {
      expect(cat.integrityCheck()).toEqual({ ok: true, problems: [] });
      const tables = cat.listTables();
      expect(tables.map((t) => `${t.schemaName}.${t.name}`)).toEqual(["main.plain", "s1.t"]);
      const t = cat.getTable("s1", "t")!;
      expect(t).toMatchObject({ partitionBy: "day", dataDir: "s1/t/" });
      expect(t.columns.map((c) => `${c.columnId}:${c.name}:${c.type}`)).toEqual([
        "1:ts:timestamp",
        "2:tstz:timestamptz",
        "3:b:int64",
        "4:i:int32",
        "5:v:varchar",
        "6:d:float64",
        "7:ok:boolean",
        "8:day:date",
        "9:extra:varchar",
      ]);
      const files = cat.listDataFiles(t.tableId);
      expect(files.map((f) => [f.partitionValues.day, f.recordCount])).toEqual([
        ["2026-11-22", 3],
        ["2026-11-23", 2],
      ]);
      // The stats our writer derives from parquet_metadata() are the ones the extension stored.
      for (const f of files) {
        const mine = await describeParquet(db.con, t, f.absolutePath, f.path, f.partitionValues.day);
        expect(mine.footerSize).toBe(f.footerSize!);
        expect(mine.fileSizeBytes).toBe(f.fileSizeBytes);
        for (const [name, s] of Object.entries(f.columnStats)) {
          const m = mine.columnStats[name]!;
          // With NaN the extension stores the non-NaN range it computed; Parquet has no bounds then.
          const bounds = s.containsNan === true && m.min === null ? [null, null] : [s.min, s.max];
          expect([name, m.min, m.max, m.nullCount, m.valueCount, m.sizeBytes, m.containsNan ?? null]).toEqual([
            name,
            ...bounds,
            s.nullCount,
            s.valueCount,
            s.sizeBytes,
            s.containsNan,
          ]);
        }
      }
      expect(
        cat.listDataFiles(t.tableId, { column: "ts", min: "2026-11-23 00:00:00" }).map((f) => f.partitionValues.day),
      ).toEqual(["2026-11-23"]);
      const plain = cat.getTable("main", "plain")!;
      expect(cat.tableStats(plain.tableId)).toMatchObject({
        recordCount: 2,
        fileCount: 1,
        columns: { s: { min: "one", max: "one", containsNull: true } },
      });

      // Our file in their catalog, read back by them.
      const before = cat.currentSnapshot().snapshotId;
      const ours = await writeParquet(
        db.con,
        cat,
        t,
        "2026-11-24",
        `SELECT *, 'w' AS extra FROM (${asDay(select(`('2026-11-24 05:00:00', NULL, 99, 98, 'w', 0.5, true, '2026-11-24')`))})`,
      );
      expect(cat.commitDataFiles(t.tableId, [ours]).snapshotId).toBe(before + 1);
      cat.close();
      const read = py<ReadResult>(["read", path, dataPath, "s1.t", "ts", String(before)]);
      expect(read.count).toBe(6);
      expect(read.at[String(before)]?.count).toBe(5);
      expect(read.rows.at(-1)).toStrictEqual({
        ts: "2026-11-24 05:00:00",
        tstz: null,
        b: 99,
        i: 98,
        v: "w",
        d: 0.5,
        ok: true,
        day: "2026-11-24",
        extra: "w",
      });
    } finally {
      cat.close();
      db.close();
    }
  },
  120_000,
);
