import { describe, expect, test } from "bun:test";
import { FreshStats, StatsMemo } from "./stats-memo.ts";
import type { DataFileInfo } from "./types.ts";

function file(id: number, path = `/lake/f${id}.parquet`, size = 100): DataFileInfo {
  return {
    dataFileId: id,
    tableId: 1,
    path,
    absolutePath: path,
    recordCount: 10,
    fileSizeBytes: size,
    footerSize: null,
    rowIdStart: 0,
    beginSnapshot: 1,
    endSnapshot: null,
    partitionValues: {},
    columnStats: {},
    mappingId: null,
  };
}
const stat = (min: string) => ({ min, max: "z", nullCount: 0, valueCount: 10, sizeBytes: null, containsNan: null });

describe("StatsMemo", () => {
  test("fills what a listing kept, by column id under today's names, and names the files to read", () => {
    const memo = new StatsMemo();
    const read = new FreshStats(1, file(1));
    read.column(7, stat("a"));
    read.column(8, stat("b"));
    read.partition("2026-11-30");
    memo.keep([read]);
    const byId = new Map([
      [1, file(1)],
      [2, file(2)],
    ]);
    expect(memo.fill(byId, new Map([[7, "renamed"]]), "day")).toEqual([2]);
    expect(byId.get(1)!.columnStats).toEqual({ renamed: stat("a") });
    expect(byId.get(1)!.partitionValues).toEqual({ day: "2026-11-30" });
    // The statistics are shared: frozen.
    expect(() => {
      (byId.get(1)!.columnStats.renamed as { min: string | null }).min = "x";
    }).toThrow();
  });

  test("a listing of every column gets the same frozen record each time, a new one after a rename", () => {
    const memo = new StatsMemo();
    const read = new FreshStats(1, file(1));
    read.column(7, stat("a"));
    read.column(8, stat("b"));
    memo.keep([read]);
    const list = (names: Map<number, string>) => {
      const byId = new Map([[1, file(1)]]);
      memo.fill(byId, names);
      return byId.get(1)!.columnStats;
    };
    const first = list(
      new Map([
        [7, "x"],
        [8, "y"],
      ]),
    );
    expect(first).toEqual({ x: stat("a"), y: stat("b") });
    expect(
      list(
        new Map([
          [7, "x"],
          [8, "y"],
        ]),
      ),
    ).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const renamed = list(
      new Map([
        [7, "x"],
        [8, "z"],
      ]),
    );
    expect(renamed).toEqual({ x: stat("a"), z: stat("b") });
    // Some columns only: a record of those, not kept (it would replace the whole one each time).
    const some = list(new Map([[7, "x"]]));
    expect(some).toEqual({ x: stat("a") });
    expect(Object.isFrozen(some)).toBe(false);
    expect(
      list(
        new Map([
          [7, "x"],
          [8, "z"],
        ]),
      ),
    ).toBe(renamed);
  });

  test("a file under a known id but at another path or size is read again", () => {
    const memo = new StatsMemo();
    const read = new FreshStats(1, file(1));
    read.column(7, stat("a"));
    memo.keep([read]);
    expect(memo.fill(new Map([[1, file(1, "/lake/other.parquet")]]), new Map([[7, "c"]]))).toEqual([1]);
    expect(memo.fill(new Map([[1, file(1, undefined, 101)]]), new Map([[7, "c"]]))).toEqual([1]);
    expect(memo.fill(new Map([[1, file(1)]]), new Map([[7, "c"]]))).toEqual([]);
  });

  test("keeps the files used last, up to its bound", () => {
    const memo = new StatsMemo(2);
    for (const id of [1, 2]) memo.keep([new FreshStats(id, file(id))]);
    expect(memo.fill(new Map([[1, file(1)]]), new Map())).toEqual([]); // 1 used last now
    memo.keep([new FreshStats(3, file(3))]);
    const all = new Map([1, 2, 3].map((id) => [id, file(id)]));
    expect(memo.fill(all, new Map())).toEqual([2]);
  });
});
