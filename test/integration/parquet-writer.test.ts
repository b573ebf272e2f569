/**
 * Parquet written by svc (docs/STORAGE.md "Parquet written by svc"): what ColumnBatch writes,
 * DuckDB reads back exactly, with the types DuckDB's own COPY gives the same columns, and
 * statistics equal to the values' min, max and NULL counts.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { TableDef } from "../../src/core/index.ts";
import { ColumnBatch } from "../../src/core/column-batch.ts";
import { CsvBatch } from "../../src/core/csv-batch.ts";
import { csvColumns, spoolSelect } from "../../src/lake/writer/spool-sql.ts";
import { hepTableDef } from "../../src/ingest/hep/tables.ts";
import { writeSipRow } from "../../src/ingest/hep/rows.ts";
import { decodeHep } from "../../src/hep/index.ts";
import { parseSip } from "../../src/sip/index.ts";
import { packetSource } from "../../bench/hep-packets.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "t",
  columns: [
    { name: "uuid", type: "varchar", derived: "uuid" },
    { name: "ts", type: "timestamp" },
    { name: "day", type: "date", derived: "date_of:ts" },
    { name: "s", type: "varchar" },
    { name: "b", type: "varchar" },
    { name: "n", type: "int64" },
    { name: "i", type: "int32" },
    { name: "u", type: "uint64" },
    { name: "f", type: "float64" },
    { name: "ok", type: "boolean" },
    { name: "j", type: "varchar" },
  ],
  timeColumn: "ts",
  sortBy: ["ts"],
};

const tricky = [
  "",
  "plain",
  "soh \u0001 inside",
  'say "hi"',
  "a,b",
  "line1\nline2",
  "\\N",
  "Zoë ☎ 🎧",
  "tab\there",
  'ascii then ü and "quote"',
  "x".repeat(300),
];

const writeFile = (path: string, parts: Uint8Array[]) => writeFileSync(path, Buffer.concat(parts));

async function duck() {
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  await con.run("SET TimeZone = 'UTC'");
  const all = async (sql: string) =>
    (await con.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>;
  return { con, all, [Symbol.dispose]: () => (con.closeSync(), db.closeSync()) };
}

describe("ColumnBatch → Parquet → DuckDB", () => {
  test("every type, NULLs, negative and huge numbers, non-ASCII and long strings, JSON: read back exactly", async () => {
    await using dir = tempDir();
    using d = await duck();
    const batch = new ColumnBatch(def, 4); // small, so every buffer grows
    const t0 = Date.UTC(2026, 10, 22, 23, 59, 59, 123) * 1000 + 456;
    const expected: Array<Record<string, unknown>> = [];
    tricky.forEach((s, k) => {
      const ts = k === 2 ? null : t0 + k * 3_600_000_000 - (k === 5 ? 60 * 86_400_000_000 : 0);
      const n = k === 3 ? null : (k % 2 ? -1 : 1) * (2 ** 52 + k);
      const i = k === 4 ? null : k % 2 ? -2147483648 + k : 2147483647 - k;
      const u = k === 6 ? null : k === 7 ? 18446744073709551615n : BigInt(k);
      const f = k === 1 ? NaN : k === 8 ? -0.5 : k / 3;
      const ok = k === 9 ? null : k % 3 === 0;
      batch.uuidv7(Date.now());
      batch
        .time(ts)
        .str(k === 10 ? null : s)
        .bytes(new TextEncoder().encode(s))
        .int(n)
        .int(i)
        .int(u)
        .float(f)
        .bool(ok)
        .jsonObject(["a", s, "n", k, "t", k % 2 === 0, "m", { 'k"ey': s }]);
      expect(batch.end()).toBe(true);
      expected.push({
        ts:
          ts === null
            ? null
            : new Date(Math.floor(ts / 1000)).toISOString().replace("T", " ").replace("Z", "") +
              String(ts % 1000).padStart(3, "0"),
        day: ts === null ? null : new Date(Math.floor(ts / 86_400_000_000) * 86_400_000).toISOString().slice(0, 10),
        s: k === 10 ? null : s,
        b: s,
        n: n === null ? null : String(n),
        i,
        u: u === null ? null : String(u),
        f: Number.isNaN(f) ? null : f,
        ok,
        j: JSON.stringify({ a: s, n: k, t: k % 2 === 0, m: { 'k"ey': s } }),
      });
    });
    // A row started and dropped leaves nothing behind.
    batch.uuidv7(Date.now());
    batch.time(t0).str("half");
    expect(batch.discardPartialRow()).toBe(true);
    const path = join(dir.path, "a.parquet");
    writeFile(path, batch.encode().parts);
    const rows = await d.all(
      `SELECT strftime(ts, '%Y-%m-%d %H:%M:%S.%f') AS ts, day::VARCHAR AS day, s, b, n::VARCHAR AS n, i, u::VARCHAR AS u, f, ok, j, uuid FROM read_parquet('${path}')`,
    );
    expect(rows.length).toBe(tricky.length);
    rows.forEach((r, k) => {
      const { uuid, ...rest } = r;
      expect(String(uuid)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(rest).toEqual(expected[k]!);
    });
    // Statistics: what DuckDB computes over the values (strings only while values are short).
    const stats = await d.all(
      `SELECT path_in_schema AS c, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('${path}')`,
    );
    const byCol = Object.fromEntries(stats.map((s) => [String(s.c), s]));
    const agg = (
      await d.all(
        `SELECT min(ts)::VARCHAR AS ts0, max(ts)::VARCHAR AS ts1, min(n)::VARCHAR AS n0, max(n)::VARCHAR AS n1, min(i) AS i0, max(i) AS i1, min(day)::VARCHAR AS d0, count(*) - count(s) AS snull FROM read_parquet('${path}')`,
      )
    )[0]!;
    expect(String(byCol.ts!.lo)).toBe(String(agg.ts0));
    expect(String(byCol.ts!.hi)).toBe(String(agg.ts1));
    expect(String(byCol.n!.lo)).toBe(String(agg.n0));
    expect(String(byCol.n!.hi)).toBe(String(agg.n1));
    expect(Number(byCol.i!.lo)).toBe(Number(agg.i0));
    expect(Number(byCol.i!.hi)).toBe(Number(agg.i1));
    expect(String(byCol.day!.lo)).toBe(String(agg.d0));
    expect(Number(byCol.s!.nulls)).toBe(Number(agg.snull));
    expect(byCol.b!.lo).toBeNull(); // a 300-byte value: no string statistics
  });

  test("the schema is the one DuckDB's COPY writes for the same table (types, field ids)", async () => {
    await using dir = tempDir();
    using d = await duck();
    const batch = new ColumnBatch(def);
    batch.uuidv7(Date.now());
    batch
      .time(Date.now() * 1000)
      .str("s")
      .str("b")
      .int(1)
      .int(2)
      .int(3n)
      .float(1.5)
      .bool(true)
      .str("{}");
    batch.end();
    const ours = join(dir.path, "ours.parquet");
    const ids = new Map(def.columns.map((c, k) => [c.name, 100 + k]));
    writeFile(ours, batch.encode(ids).parts);
    const theirs = join(dir.path, "theirs.parquet");
    const types: Record<string, string> = {
      varchar: "VARCHAR",
      timestamp: "TIMESTAMP",
      date: "DATE",
      int64: "BIGINT",
      int32: "INTEGER",
      uint64: "UBIGINT",
      float64: "DOUBLE",
      boolean: "BOOLEAN",
    };
    await d.con.run(
      `COPY (SELECT * FROM read_parquet('${ours}')) TO '${theirs}' (FORMAT parquet, FIELD_IDS {${def.columns.map((c, k) => `${c.name}: ${100 + k}`).join(", ")}})`,
    );
    const schema = async (p: string) =>
      await d.all(
        `SELECT name, type, converted_type, logical_type, field_id, repetition_type FROM parquet_schema('${p}') WHERE name <> 'duckdb_schema' ORDER BY name`,
      );
    expect(await schema(ours)).toEqual(await schema(theirs));
    const described = await d.all(
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${ours}'))`,
    );
    expect(described.map((r) => `${r.column_name} ${r.column_type}`)).toEqual(
      def.columns.map((c) => `${c.name} ${types[c.type]}`),
    );
  });

  test("HEP SIP rows: the Parquet batch holds exactly what the spool CSV holds", async () => {
    await using dir = tempDir();
    using d = await duck();
    const table = hepTableDef(1, "call");
    const csv = new CsvBatch(csvColumns(table).length);
    const cols = new ColumnBatch(table);
    const { packet, template } = packetSource("pq");
    const buf = template.slice();
    for (let k = 0; k < 500; k++) {
      const r = decodeHep(packet(k, buf), { nowMs: Date.now(), maxSkewMs: Infinity, maxAgeMs: Infinity });
      if (!r.ok) throw new Error(r.reason);
      const sip = parseSip(r.value.payload, { customHeaders: [], correlationHeaders: [] });
      if (!sip.ok) throw new Error(sip.reason);
      const id = `00000000-0000-7000-8000-${String(k).padStart(12, "0")}`;
      csv.str(id);
      writeSipRow(csv, r.value, sip.value, false);
      cols.str(id);
      writeSipRow(cols, r.value, sip.value, false);
    }
    const csvPath = join(dir.path, "1.csv");
    writeFileSync(csvPath, csv.view());
    const pqPath = join(dir.path, "1.parquet");
    writeFile(pqPath, cols.encode().parts);
    const names = table.columns.map((c) => `"${c.name}"::VARCHAR AS "${c.name}"`).join(", ");
    const fromCsv = await d.all(
      `SELECT ${names} FROM (${spoolSelect(table, [{ file: csvPath, def: table }])[0]}) ORDER BY 1`,
    );
    const fromPq = await d.all(`SELECT ${names} FROM read_parquet('${pqPath}') ORDER BY 1`);
    expect(fromPq.length).toBe(500);
    expect(fromPq).toEqual(fromCsv);
  });
});
