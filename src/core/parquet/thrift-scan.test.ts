import { describe, expect, test } from "bun:test";
import { ThriftScan } from "./thrift-scan.ts";
import { readThriftStruct, type ThriftList, type ThriftStruct, type ThriftValue } from "./thrift-tree.ts";
import { ThriftWriter, T } from "./thrift.ts";

/** Every field ThriftScan visits, read as thrift-tree reads it (numbers for every integer). */
function walk(scan: ThriftScan): Map<number, unknown> {
  const out = new Map<number, unknown>();
  scan.struct((id, type) => {
    out.set(id, value(scan, type));
    return true;
  });
  return out;
}
function value(scan: ThriftScan, type: number): unknown {
  if (type === T.TRUE) return true;
  if (type === T.FALSE) return false;
  if (type === T.I16 || type === T.I32 || type === T.I64) return scan.int();
  if (type === T.BINARY) return [...scan.binary()];
  if (type === T.STRUCT) return walk(scan);
  if (type === T.LIST) {
    const items: unknown[] = [];
    scan.list((_i, t) => items.push(value(scan, t)));
    return items;
  }
  throw new Error(`type ${type}`);
}
function tree(v: ThriftValue): unknown {
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Uint8Array) return [...v];
  if (v instanceof Map) return new Map([...(v as ThriftStruct)].map(([id, f]) => [id, tree(f.value)]));
  if (typeof v === "object") return (v as ThriftList).items.map(tree);
  return v;
}

describe("ThriftScan", () => {
  const w = new ThriftWriter();
  w.i32(1, -5)
    .i64(2, 2 ** 40 + 3)
    .i64(3, -(2 ** 50))
    .bool(4, true)
    .string(5, "é\u0000x");
  w.list(6, T.STRUCT, 2).element().i32(1, 7).end().element().i64(20, -3).bool(21, false).end();
  w.list(7, T.I32, 16);
  for (let i = 0; i < 16; i++) w.i32Element(i - 8);
  w.struct(40).i16(2, -300).string(3, "").end();
  w.i32(41, 2 ** 31 - 1);
  const bytes = w.finish();

  test("reads what thrift-tree reads, field by field", () => {
    const scan = new ThriftScan(bytes);
    expect(walk(scan)).toEqual(tree(readThriftStruct(bytes).struct) as Map<number, unknown>);
    expect(scan.at).toBe(bytes.length);
  });

  test("skips what it is not asked to read and still ends where the struct ends", () => {
    const scan = new ThriftScan(bytes);
    const seen: number[] = [];
    let last: number | undefined;
    scan.struct((id) => {
      seen.push(id);
      if (id !== 41) return false;
      last = scan.int();
      return true;
    });
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 40, 41]);
    expect(last).toBe(2 ** 31 - 1);
    expect(scan.at).toBe(bytes.length);
  });

  test("a truncated struct is an error, not a wrong value", () => {
    expect(() => new ThriftScan(bytes.subarray(0, bytes.length - 3)).struct(() => false)).toThrow(/truncated/);
  });
});
