import { describe, expect, test } from "bun:test";
import type { RowWriter, TableDef } from "../../core/index.ts";
import { parseLineProtocol } from "./parse.ts";
import { nsToUs, planColumns, writePoints, type LineIssue, type WriteCounts } from "./rows.ts";

/** A RowWriter that keeps each row as an array of [method, value] (the lake's writer is not under test here). */
function recorder() {
  const rows: unknown[][] = [];
  let cur: unknown[] = [];
  const w: RowWriter = {
    str: (v) => (cur.push(v ?? null), w),
    bytes: (v) => (cur.push(new TextDecoder().decode(v)), w),
    int: (v) => (cur.push(v ?? null), w),
    float: (v) => (cur.push(v ?? null), w),
    bool: (v) => (cur.push(v ?? null), w),
    time: (v) => (cur.push(v ?? null), w),
    end: () => {
      rows.push(cur);
      cur = [];
    },
  };
  return { rows, row: () => w };
}

const points = (body: string) => parseLineProtocol(body, { precision: "s" }).points;
const counts = (): WriteCounts => ({ written: 0, typeMismatch: 0, emptied: 0, refused: 0 });

describe("line-protocol rows (docs/LINE-PROTOCOL.md rules 3-6)", () => {
  test("planColumns: first sight types the column, names fold case, refused keys are listed", () => {
    const issues: LineIssue[] = [];
    const wishes = planColumns(
      points(
        `m,host=a,Host=b v=1i,V=2.5,s="x",b=t 1\nm,time=x,TIME=y time=1i,u=18446744073709551615u,w=1u,${"k".repeat(256)}=1 2`,
      ),
      issues,
    );
    expect(wishes).toEqual([
      { name: "host", type: "varchar" },
      { name: "v", type: "int64" },
      { name: "s", type: "varchar" },
      { name: "b", type: "boolean" },
      { name: "u", type: "uint64" },
      { name: "w", type: "int64" },
    ]);
    expect(issues.map((i) => [i.line, i.key?.slice(0, 4), i.reason])).toEqual([[2, "kkkk", "key_too_long"]]);
  });

  // Rule 5, first value decides: unsigned values BIGINT can hold make BIGINT (as the spec says),
  // larger ones (the reference accepts up to 2^64-1) make UBIGINT.
  test.each([
    ["m v=0u", "int64"],
    ["m v=9223372036854775807u", "int64"],
    ["m v=9223372036854775808u", "uint64"],
    ["m v=18446744073709551615u", "uint64"],
    ["m v=18446744073709551615u\nm v=1i", "uint64"],
    ["m v=1u\nm v=18446744073709551615u", "int64"],
    ["m v=-9223372036854775808i", "int64"],
  ] as const)("planColumns(%j) types v as %s", (body, type) => {
    const issues: LineIssue[] = [];
    expect(planColumns(points(body), issues)).toEqual([{ name: "v", type }]);
    expect(issues).toEqual([]);
  });

  const layout = (type: "int64" | "uint64"): TableDef => ({
    schema: "s",
    name: "m",
    timeColumn: "time",
    sortBy: ["time"],
    columns: [
      { name: "time", type: "timestamp" },
      { name: "v", type },
    ],
  });

  // Rule 6: a value is stored when the column's type can hold it, else dropped and counted.
  test.each([
    ["uint64", "m v=18446744073709551615u 1", 18446744073709551615n],
    ["uint64", "m v=9223372036854775808u 1", 9223372036854775808n],
    ["uint64", "m v=7u 1", 7n],
    ["uint64", "m v=7i 1", 7n],
    ["uint64", "m v=-1i 1", undefined],
    ["int64", "m v=9223372036854775807u 1", 9223372036854775807n],
    ["int64", "m v=9223372036854775808u 1", undefined],
    ["int64", "m v=-9223372036854775808i 1", -9223372036854775808n],
  ] as const)("a %s column, %j stores %p", (type, body, want) => {
    const r = recorder();
    const c = counts();
    writePoints(r.row, layout(type), "s.m", points(body), 0n, c);
    if (want === undefined) {
      expect(r.rows).toEqual([]);
      expect(c).toEqual({ written: 0, typeMismatch: 1, emptied: 1, refused: 0 });
    } else {
      expect(r.rows).toEqual([[1_000_000, want]]);
      expect(c).toEqual({ written: 1, typeMismatch: 0, emptied: 0, refused: 0 });
    }
  });

  // Rule 3 and 6: `time` is the TIMESTAMP column; a tag or field of that name (any case) is a value
  // of another type for it: dropped and counted, the point written with its own timestamp.
  test.each([
    ["tag", "m,time=x v=1i 5", 1],
    ["tag in another case", "m,Time=2024-01-01 v=1i 5", 1],
    ["field", "m time=9i,v=1i 5", 1],
    ["tag and field", 'm,time=x time="y",v=1i 5', 2],
  ] as const)("a %s named time: the point is written with the line's timestamp", (_what, body, dropped) => {
    const r = recorder();
    const c = counts();
    writePoints(r.row, layout("int64"), "s.m", points(body), 0n, c);
    expect(r.rows).toEqual([[5_000_000, 1n]]);
    expect(c).toEqual({ written: 1, typeMismatch: dropped, emptied: 0, refused: 0 });
  });

  test("writePoints: values by column, mismatches dropped, tag beats field, last duplicate field wins", () => {
    const def: TableDef = {
      schema: "s",
      name: "m",
      timeColumn: "time",
      sortBy: ["time"],
      columns: [
        { name: "time", type: "timestamp" },
        { name: "host", type: "varchar" },
        { name: "v", type: "int64" },
        { name: "f", type: "float64" },
        { name: "b", type: "boolean" },
      ],
    };
    const r = recorder();
    const c = counts();
    writePoints(
      r.row,
      def,
      "s.m",
      points(
        `m,HOST=a v=1i,f=1.5,v=2i 10\nm,v=x f=2.5,b=f,host="field" 11\nm v="str" 12\nm f=3 \nm,host=tag v=5i,host="field" 13`,
      ),
      7_000_000_000n,
      c,
    );
    expect(r.rows).toEqual([
      [10_000_000, "a", 2n, 1.5, null],
      [11_000_000, "field", null, 2.5, false],
      [7_000_000, null, null, 3, null],
      [13_000_000, "tag", 5n, null, null],
    ]);
    // dropped: the tag v (a BIGINT column) and v="str" (which empties its point); a string field may fill the tag-typed host column, unless a tag of the same line did
    expect(c).toEqual({ written: 4, typeMismatch: 3, emptied: 1, refused: 0 });
  });

  test("a full lake stops the table's rows and counts the rest as refused", () => {
    const def: TableDef = {
      schema: "s",
      name: "m",
      timeColumn: "time",
      sortBy: ["time"],
      columns: [
        { name: "time", type: "timestamp" },
        { name: "v", type: "float64" },
      ],
    };
    const r = recorder();
    let left = 2;
    const c = counts();
    writePoints(
      () => (left-- > 0 ? r.row() : undefined),
      def,
      "s.m",
      points("m v=1 1\nm v=2 2\nm v=3 3\nm v=4 4"),
      0n,
      c,
    );
    expect(r.rows.length).toBe(2);
    expect(c).toMatchObject({ written: 2, refused: 2 });
  });

  test.each([
    [1_700_000_000_123_456_789n, 1_700_000_000_123_456],
    [999n, 0],
    [-1n, -1],
    [-1000n, -1],
    [-1001n, -2],
  ])("nsToUs(%p) = %p (rounded down)", (ns, us) => {
    expect(nsToUs(ns)).toBe(us);
  });
});
