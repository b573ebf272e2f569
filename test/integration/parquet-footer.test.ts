/**
 * The rebuild's footer reader (src/lake/admin/parquet-footer.ts, hyparquet, no DuckDB) against the
 * writer's way of describing a file (DuckDB's parquet_metadata() folded by columnStatsFromParquet,
 * NaN by bool_or(isnan(x))): the same column statistics for every DuckLake type we write, over
 * several row groups with NULLs, NaN, negative and fractional values, plus the types and field ids.
 */
import { expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readParquetFacts } from "../../src/lake/admin/parquet-footer.ts";
import { columnStatsFromParquet, type ParquetChunkStats } from "../../src/lake/catalog/index.ts";
import { tempDir } from "../harness.ts";

const COLUMNS = [
  ["b", "BOOLEAN", "boolean"],
  ["i16", "SMALLINT", "int16"],
  ["i32", "INTEGER", "int32"],
  ["i64", "BIGINT", "int64"],
  ["u64", "UBIGINT", "uint64"],
  ["f32", "FLOAT", "float32"],
  ["f64", "DOUBLE", "float64"],
  ["v", "VARCHAR", "varchar"],
  ["j", "JSON", "json"],
  ["u", "UUID", "uuid"],
  ["d", "DATE", "date"],
  ["ts", "TIMESTAMP", "timestamp"],
  ["tz", "TIMESTAMPTZ", "timestamptz"],
  ["g32", "FLOAT", "float32"],
] as const;

test("footer statistics read with hyparquet equal the writer's (DuckDB parquet_metadata) for every type", async () => {
  await using dir = tempDir("svc-footer-");
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  const file = join(dir.path, "f.parquet");
  const select = `SELECT
      CASE WHEN i % 7 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
      (i - 500)::SMALLINT AS i16, (i * 3 - 100)::INTEGER AS i32, (i * 1000003 - 7)::BIGINT AS i64, (i::UBIGINT * 6148914691236517::UBIGINT) AS u64,
      CASE WHEN i = 777 THEN 'nan'::FLOAT ELSE (i / 10.0 - 3.3)::FLOAT END AS f32,
      CASE WHEN i % 11 = 0 THEN NULL WHEN i = 1500 THEN 'nan'::DOUBLE ELSE i * 0.1 - 0.05 END AS f64,
      CASE WHEN i % 13 = 0 THEN NULL ELSE 'v' || lpad(i::VARCHAR, 5, '0') || ' ü' END AS v,
      ('{"k":' || i || '}')::JSON AS j,
      md5(i::VARCHAR)::UUID AS u,
      DATE '2026-11-01' + (i % 20)::INTEGER AS d,
      TIMESTAMP '2026-11-20 10:00:00' + to_microseconds(i * 1234567) AS ts,
      CASE WHEN i % 5 = 0 THEN NULL ELSE TIMESTAMPTZ '2026-11-20 10:00:00+00' + to_microseconds(i * 7654321) END AS tz,
      (i / 7.0 - 0.3)::FLOAT AS g32
    FROM range(0, 3000) r(i)`;
  const ids = COLUMNS.map(([n], k) => `${n}: ${k + 1}`).join(", ");
  await con.run(
    `COPY (${select}) TO '${file}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 1024, FIELD_IDS {${ids}})`,
  );
  const chunks = (
    await con.runAndReadAll(
      `SELECT path_in_schema, stats_min_value, stats_max_value, stats_null_count, num_values, total_compressed_size FROM parquet_metadata('${file}')`,
    )
  ).getRowObjects() as unknown as ParquetChunkStats[];
  const nanRow = (
    await con.runAndReadAll(
      `SELECT bool_or(isnan(f32)) AS f32, bool_or(isnan(f64)) AS f64 FROM read_parquet('${file}')`,
    )
  ).getRowObjects()[0]!;
  const nan = new Set(["f32", "f64"].filter((c) => nanRow[c] === true));
  expect(nan).toEqual(new Set(["f32", "f64"]));
  const table = { columns: COLUMNS.map(([name, , type], k) => ({ columnId: k + 1, name, type, order: k + 1 })) };
  const writers = columnStatsFromParquet(table, chunks, nan);

  const facts = await readParquetFacts(file);
  expect(facts.columns).toEqual(COLUMNS.map(([name, , type], k) => ({ fieldId: k + 1, name, type })));
  expect(facts.recordCount).toBe(3000);
  expect(facts.columnStats).toEqual(writers);
  // Spot checks against the data itself, so the comparison above cannot pass on two equal mistakes.
  expect(facts.columnStats.i16).toMatchObject({ min: "-500", max: "2499", nullCount: 0 });
  expect(facts.columnStats.b).toMatchObject({ min: "0", max: "1", nullCount: 429 });
  // A row group holding NaN has no bounds in its footer: the file's bounds are unknown (never pruned).
  expect(facts.columnStats.f64).toMatchObject({ min: null, max: null, containsNan: true, nullCount: 273 });
  expect(facts.columnStats.f32).toMatchObject({ min: null, max: null, containsNan: true, nullCount: 0 });
  // FLOAT bounds as DuckDB prints a FLOAT (shortest text of the float32), not of the widened double.
  expect(facts.columnStats.g32).toMatchObject({ min: "-0.3", max: "428.12857", containsNan: false });
  expect(facts.columnStats.ts?.min).toBe("2026-11-20 10:00:00");
  expect(facts.columnStats.tz?.max).toBe(
    String(
      (await con.runAndReadAll(`SELECT max(tz)::VARCHAR AS m FROM read_parquet('${file}')`)).getRowObjects()[0]!.m,
    ),
  );
  con.closeSync();
  db.closeSync();
});

test("files the catalog cannot describe are refused with the reason", async () => {
  await using dir = tempDir("svc-footer-bad-");
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  const noIds = join(dir.path, "noids.parquet");
  await con.run(`COPY (SELECT 1 AS a) TO '${noIds}' (FORMAT parquet)`);
  const nested = join(dir.path, "nested.parquet");
  await con.run(`COPY (SELECT {'x': 1} AS s) TO '${nested}' (FORMAT parquet, FIELD_IDS {s: 1})`);
  const blob = join(dir.path, "blob.parquet");
  await con.run(`COPY (SELECT 'ab'::BLOB AS bl) TO '${blob}' (FORMAT parquet, FIELD_IDS {bl: 1})`);
  const torn = join(dir.path, "torn.parquet");
  writeFileSync(torn, "PAR1 and then nothing");
  con.closeSync();
  db.closeSync();
  await expect(readParquetFacts(noIds)).rejects.toThrow("column a has no Parquet field id");
  await expect(readParquetFacts(nested)).rejects.toThrow("nested columns");
  await expect(readParquetFacts(blob)).rejects.toThrow(
    "column bl: unsupported Parquet type BYTE_ARRAY without a string annotation",
  );
  await expect(readParquetFacts(torn)).rejects.toThrow("no PAR1 at the end");
});
