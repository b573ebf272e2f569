import { describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { readThriftStruct, writeThriftStruct } from "./thrift-tree.ts";
import { ThriftWriter, T } from "./thrift.ts";

describe("thrift tree", () => {
  test("what ThriftWriter writes reads back and writes again byte for byte", () => {
    const w = new ThriftWriter();
    w.i32(1, -5)
      .i64(2, 2 ** 40)
      .bool(3, true)
      .bool(4, false)
      .string(5, "é\u0000x");
    w.list(6, T.STRUCT, 2).element().i32(1, 7).end().element().i64(20, -3).end();
    w.list(7, T.I32, 16);
    for (let i = 0; i < 16; i++) w.i32Element(i - 8);
    w.struct(40).i8(1, 255).i16(2, -300).end();
    const bytes = w.finish();
    const { struct, end } = readThriftStruct(bytes);
    expect(end).toBe(bytes.length);
    expect(struct.get(1)!.value).toBe(-5);
    expect(struct.get(2)!.value).toBe(2n ** 40n);
    expect(struct.get(3)!.value).toBe(true);
    expect(struct.get(4)!.value).toBe(false);
    expect(writeThriftStruct(struct)).toEqual(bytes);
  });

  test("a Parquet footer DuckDB wrote reads back and writes again byte for byte", async () => {
    const path = join(tmpdir(), `svc-thrift-${process.pid}.parquet`);
    const db = await DuckDBInstance.create(":memory:");
    const con = await db.connect();
    await con.run(
      `COPY (SELECT i, 'v' || i AS s, i % 3 = 0 AS b, i / 7 AS f, now()::TIMESTAMP AS t FROM range(40000) r(i)) TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 16384)`,
    );
    con.closeSync();
    db.closeSync();
    const file = readFileSync(path);
    const len = file.readUInt32LE(file.length - 8);
    const footer = new Uint8Array(file.subarray(file.length - 8 - len, file.length - 8));
    const { struct, end } = readThriftStruct(footer);
    expect(end).toBe(footer.length);
    expect(Number(struct.get(3)!.value)).toBe(40000); // num_rows
    expect(writeThriftStruct(struct)).toEqual(footer);
  });

  test("truncated input is an error, not a hang", () => {
    const bytes = new ThriftWriter().string(1, "abcdef").finish();
    expect(() => readThriftStruct(bytes.subarray(0, 4))).toThrow("truncated");
  });
});
