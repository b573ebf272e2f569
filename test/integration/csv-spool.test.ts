import { describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import type { TableDef } from "../../src/core/index.ts";
import { CsvBatch, SPOOL_MAX_LINE_BYTES } from "../../src/core/csv-batch.ts";
import { spoolSelect, csvColumns, SPOOL_READ_BUFFER_BYTES } from "../../src/lake/writer/spool-sql.ts";
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
    { name: "f", type: "float64" },
    { name: "ok", type: "boolean" },
  ],
  timeColumn: "ts",
  sortBy: ["ts"],
};

const tricky = [
  "",
  "plain",
  "soh \u0001 inside",
  "\u0001\u0001",
  'say "hi"',
  "a,b",
  "line1\nline2",
  "crlf\r\nend",
  "\\N",
  "Zoë ☎ 🎧",
  '"',
  '""',
  "tab\there",
  'ascii then ü and "quote"',
];

describe("spool CSV: what CsvBatch writes, read_csv reads back exactly", () => {
  test("strings (quotes, commas, newlines, \\N, non-ASCII), bytes, NULLs, numbers, booleans, timestamps", async () => {
    await using dir = tempDir();
    const batch = new CsvBatch(csvColumns(def).length);
    const t0 = Date.UTC(2026, 10, 22, 23, 59, 59, 123) * 1000 + 456;
    tricky.forEach((s, i) => {
      batch.str(`id-${i}`); // the writer's uuid column comes first
      batch
        .time(t0 + i)
        .str(s)
        .bytes(new TextEncoder().encode(s))
        .int(i === 3 ? null : BigInt(i) * 1_000_000_000_000n)
        .float(i === 4 ? NaN : i / 3)
        .bool(i % 2 === 0)
        .end();
    });
    batch.str("id-null").time(t0).str(null).bytes(new Uint8Array()).int(undefined).float(null).bool(null).end();
    const file = `${dir.path}/0.7.${batch.rows}.csv`;
    await Bun.write(file, batch.view());
    const inst = await DuckDBInstance.create(":memory:");
    const con = await inst.connect();
    const sql = `SELECT uuid, epoch_us(ts) AS ts, day::VARCHAR AS day, s, b, n::VARCHAR AS n, f, ok FROM (${spoolSelect(def, [{ file, def }]).join(" UNION ALL ")}) ORDER BY uuid`;
    const rows = (await con.runAndReadAll(sql)).getRowObjectsJson();
    const byId = new Map(rows.map((r) => [String(r.uuid), r]));
    tricky.forEach((s, i) => {
      const r = byId.get(`id-${i}`)!;
      expect(r.s).toBe(s);
      expect(r.b).toBe(s);
      expect(r.n).toBe(i === 3 ? null : String(BigInt(i) * 1_000_000_000_000n));
      expect(r.ts).toBe(String(t0 + i));
      expect(r.day).toBe("2026-11-22");
      expect(r.ok).toBe(i % 2 === 0);
    });
    expect(byId.get("id-4")!.f).toBeNull();
    expect(byId.get("id-null")).toMatchObject({ s: null, b: "", n: null, f: null, ok: null });
    con.closeSync();
    inst.closeSync();
  });

  test("integers written digit by digit and UUIDv7s written in place read back exactly", async () => {
    await using dir = tempDir();
    const ints = [
      0,
      -0,
      7,
      -42,
      1.9,
      -1.9,
      10,
      1_000_000,
      1_764_000_000_123_456,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
      2 ** 53 + 2,
      -(2 ** 62),
    ];
    // What String() gives (the encoder's old path): exact up to 2^53, the shortest round trip beyond.
    const expected = ints.map((v) => (Object.is(Math.trunc(v), -0) ? "0" : String(Math.trunc(v))));
    const batch = new CsvBatch(csvColumns(def).length);
    const ms = Date.UTC(2026, 10, 25, 13, 0, 0, 789);
    ints.forEach((v, i) => {
      batch
        .uuidv7(ms + i)
        .time(ms * 1000 + i)
        .str(`row-${i}`)
        .bytes(new Uint8Array())
        .int(v)
        .float(null)
        .bool(null)
        .end();
    });
    const file = `${dir.path}/0.7.${batch.rows}.q1.csv`;
    await Bun.write(file, batch.view());
    const inst = await DuckDBInstance.create(":memory:");
    const con = await inst.connect();
    const sql = `SELECT uuid, uuid::UUID::VARCHAR AS parsed, s, n::VARCHAR AS n FROM (${spoolSelect(def, [{ file, def }]).join(" UNION ALL ")})`;
    const rows = (await con.runAndReadAll(sql)).getRowObjectsJson();
    expect(rows.length).toBe(ints.length);
    const uuids = new Set<string>();
    for (const r of rows) {
      const i = Number(String(r.s).slice(4));
      expect(r.n).toBe(expected[i]!);
      const u = String(r.uuid);
      expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(r.parsed).toBe(u);
      // RFC 9562: the first 48 bits are the Unix time in ms.
      expect(parseInt(u.replace(/-/g, "").slice(0, 12), 16)).toBe(ms + i);
      uuids.add(u);
    }
    expect(uuids.size).toBe(ints.length);
    con.closeSync();
    inst.closeSync();
  });

  test('spool files of the older format (quoted with ") are still read, next to new ones', async () => {
    await using dir = tempDir();
    const legacy = `${dir.path}/1.7.2.csv`;
    await Bun.write(legacy, `"old-1",1000,"say ""hi""","a,b",7,0.5,true\n"old-2",2000,\\N,"",\\N,\\N,\\N\n`);
    const batch = new CsvBatch(csvColumns(def).length);
    batch
      .str("new-1")
      .time(3000)
      .str('quote " stays')
      .bytes(new TextEncoder().encode("x"))
      .int(1)
      .float(1)
      .bool(false)
      .end();
    const current = `${dir.path}/2.7.1.q1.csv`;
    await Bun.write(current, batch.view());
    const inst = await DuckDBInstance.create(":memory:");
    const con = await inst.connect();
    const parts = spoolSelect(def, [
      { file: legacy, def, legacyQuote: true },
      { file: current, def },
    ]);
    expect(parts).toHaveLength(2);
    const rows = (
      await con.runAndReadAll(
        `SELECT uuid, epoch_us(ts) AS ts, s, b, n::VARCHAR AS n FROM (${parts.join(" UNION ALL ")}) ORDER BY uuid`,
      )
    ).getRowObjectsJson();
    expect(rows).toEqual([
      { uuid: "new-1", ts: "3000", s: 'quote " stays', b: "x", n: "1" },
      { uuid: "old-1", ts: "1000", s: 'say "hi"', b: "a,b", n: "7" },
      { uuid: "old-2", ts: "2000", s: null, b: "", n: null },
    ]);
    con.closeSync();
    inst.closeSync();
  });

  test("read_csv reads with a buffer of twice the longest line, and lines near that length across buffers read back whole", async () => {
    // DuckDB's default buffer is 16 x max_line_size (16 MiB per spool file read); the smaller one
    // bounds the flush's memory (docs/BENCHMARKS.md "Ingest: CPU per message (every core)").
    expect(SPOOL_READ_BUFFER_BYTES).toBe(2 * SPOOL_MAX_LINE_BYTES);
    expect(spoolSelect(def, [{ file: "/x/1.7.1.q1.csv", def }])[0]).toContain(
      `buffer_size = ${SPOOL_READ_BUFFER_BYTES}`,
    );
    await using dir = tempDir();
    const batch = new CsvBatch(csvColumns(def).length);
    // Seven lines just under the limit, with short ones between: several buffer boundaries fall inside a long line.
    const sizes = [
      SPOOL_MAX_LINE_BYTES - 200,
      10,
      SPOOL_MAX_LINE_BYTES - 300,
      SPOOL_MAX_LINE_BYTES - 200,
      3,
      SPOOL_MAX_LINE_BYTES - 250,
      SPOOL_MAX_LINE_BYTES - 200,
      1,
      SPOOL_MAX_LINE_BYTES - 400,
      SPOOL_MAX_LINE_BYTES - 200,
    ];
    sizes.forEach((n, i) => {
      const text = String.fromCharCode(97 + i).repeat(n);
      expect(batch.str(`id-${i}`).time(i).str(text).bytes(new Uint8Array()).int(i).float(null).bool(null).end()).toBe(
        true,
      );
    });
    const file = `${dir.path}/0.7.${batch.rows}.q1.csv`;
    await Bun.write(file, batch.view());
    expect(batch.byteLength).toBeGreaterThan(3 * SPOOL_READ_BUFFER_BYTES);
    const inst = await DuckDBInstance.create(":memory:");
    const con = await inst.connect();
    const rows = (
      await con.runAndReadAll(
        `SELECT uuid, length(s) AS len, left(s, 1) AS c, n FROM (${spoolSelect(def, [{ file, def }]).join(" UNION ALL ")}) ORDER BY n`,
      )
    ).getRowObjectsJson();
    expect(rows).toEqual(
      sizes.map((n, i) => ({ uuid: `id-${i}`, len: String(n), c: String.fromCharCode(97 + i), n: String(i) })),
    );
    con.closeSync();
    inst.closeSync();
  });
});
