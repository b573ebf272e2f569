import { describe, expect, test } from "bun:test";
import {
  type FileFacts,
  MAX_MERGES_PER_TABLE,
  pack,
  planDefaultMerge,
  planNative,
  retentionCutPartition,
  sortCost,
  WIDE_ROW_WEIGHT,
} from "./plan.ts";

const NOW = Date.UTC(2026, 10, 24, 12);
const MIN = 60_000;
let nextId = 1;
const file = (o: Partial<FileFacts> = {}): FileFacts => ({
  id: nextId++,
  bytes: 10,
  rows: 100,
  committedMs: NOW - 60 * MIN,
  partition: "2026-11-23",
  minTimeUs: null,
  maxRowGroupBytes: 1000,
  uncompressedBytes: 80,
  hasDeletes: false,
  ...o,
});
const base = { nowMs: NOW, minAgeSec: 300, maxRowGroupBytes: 5000, maxSortBytes: 10_000 };
const ids = (groups: FileFacts[][]) => groups.map((g) => g.map((f) => f.id));

describe("pack", () => {
  test("consecutive files up to the limit; a lone file is no merge", () => {
    const fs = [
      file({ bytes: 4 }),
      file({ bytes: 4 }),
      file({ bytes: 4 }),
      file({ bytes: 9 }),
      file({ bytes: 1 }),
      file({ bytes: 1 }),
    ];
    // [4, 4] closes at the third 4, which then closes alone at the 9; [9, 1] closes at the last 1.
    expect(ids(pack(fs, 10))).toEqual([
      [fs[0]!.id, fs[1]!.id],
      [fs[3]!.id, fs[4]!.id],
    ]);
  });
});

test("rows above 1 KB uncompressed weigh WIDE_ROW_WEIGHT times their bytes in a merge's sort (docs/ARCHITECTURE.md, Compaction memory)", () => {
  expect(sortCost({ uncompressedBytes: 1024 * 100, rows: 100 })).toBe(1024 * 100);
  expect(sortCost({ uncompressedBytes: 2048 * 100, rows: 100 })).toBe(2048 * 100 * WIDE_ROW_WEIGHT);
  expect(sortCost({ uncompressedBytes: 0, rows: 0 })).toBe(0);
  // Three narrow files fit one merge; the same bytes in wide rows are two merges, and a wide file
  // alone above the budget is not merged but counted.
  const o = { ...base, maxSortBytes: 20_000, maxFileSizeBytes: 100, maxOutputs: 32 };
  const narrow = [1, 2, 3].map(() => file({ bytes: 1, rows: 100, uncompressedBytes: 3000 }));
  expect(ids(planDefaultMerge(narrow, o).groups)).toEqual([narrow.map((f) => f.id)]);
  // 1100 bytes a row: 8800 each, two to a merge.
  const wide = [1, 2, 3, 4].map(() => file({ bytes: 1, rows: 1, uncompressedBytes: 1100 }));
  expect(ids(planDefaultMerge(wide, o).groups)).toEqual([
    [wide[0]!.id, wide[1]!.id],
    [wide[2]!.id, wide[3]!.id],
  ]);
  const huge = file({ bytes: 1, rows: 1, uncompressedBytes: 3000 });
  const r = planDefaultMerge([huge, ...wide], o);
  expect(r.skipped).toEqual({ sort_bytes: 1 });
  expect(r.groups.flat().map((f) => f.id)).not.toContain(huge.id);
});

test("pack also stays within the uncompressed bytes one sort holds", () => {
  const fs = [
    file({ bytes: 1, uncompressedBytes: 40 }),
    file({ bytes: 1, uncompressedBytes: 40 }),
    file({ bytes: 1, uncompressedBytes: 40 }),
    file({ bytes: 1, uncompressedBytes: 40 }),
  ];
  expect(ids(pack(fs, 100, 80))).toEqual([
    [fs[0]!.id, fs[1]!.id],
    [fs[2]!.id, fs[3]!.id],
  ]);
  expect(ids(pack(fs, 100))).toEqual([fs.map((f) => f.id)]);
});

describe("default merge plan", () => {
  const opts = { ...base, maxFileSizeBytes: 25, maxOutputs: 32 };
  test("files from max_file_size_bytes on, and files younger than min_age_sec, are left alone; time order inside a partition", () => {
    const a = file({ minTimeUs: 30 });
    const b = file({ minTimeUs: 10 });
    const big = file({ bytes: 25 });
    const young = file({ committedMs: NOW - 2 * MIN });
    const c = file({ minTimeUs: 20 });
    expect(ids(planDefaultMerge([a, b, big, young, c], opts).groups)).toEqual([[b.id, c.id]]);
    // 10 + 10 = 20 fits, a third would pass 25: `a` is left over (alone, no merge).
  });
  test("at most 32 merges and max_compacted_files outputs per table per cycle", () => {
    const many = Array.from({ length: 80 }, () => file({ bytes: 10 }));
    expect(planDefaultMerge(many, opts).groups.length).toBe(MAX_MERGES_PER_TABLE);
    expect(planDefaultMerge(many, { ...opts, maxOutputs: 3 }).groups.length).toBe(3);
    expect(planDefaultMerge(many, { ...opts, maxOutputs: 100 }).groups.length).toBe(32);
  });
  test("partitions are merged separately; delete files, large row groups and the retention cut are skipped and counted", () => {
    const p1 = [file({ partition: "2026-11-20" }), file({ partition: "2026-11-20" })];
    const p2 = [file({ partition: "2026-11-22" }), file({ partition: "2026-11-22" })];
    const odd = [file({ hasDeletes: true }), file({ maxRowGroupBytes: 6000 }), file(), file()];
    const r = planDefaultMerge([...p1, ...p2, ...odd], { ...opts, cutPartition: "2026-11-20" });
    expect(ids(r.groups)).toEqual([ids([p2])[0]!, [odd[2]!.id, odd[3]!.id]]);
    expect(r.skipped).toEqual({ retention_cut: 2, deletes: 1, row_group_bytes: 1 });
  });
});

describe("native plan", () => {
  const opts = { ...base, targetFileSizeBytes: 50 };
  test("a partition with one young file is untouched whole; a settled one is packed up to the target", () => {
    const settled = Array.from({ length: 7 }, (_, i) => file({ partition: "2026-11-22", minTimeUs: 100 - i }));
    const touched = [
      file({ partition: "2026-11-23" }),
      file({ partition: "2026-11-23" }),
      file({ partition: "2026-11-23", committedMs: NOW - MIN }),
    ];
    const r = planNative([...settled, ...touched], opts);
    expect(r.partitions.map((p) => p.partition)).toEqual(["2026-11-22"]);
    const byTime = [...settled].reverse().map((f) => f.id);
    expect(ids(r.partitions[0]!.groups)).toEqual([byTime.slice(0, 5), byTime.slice(5)]);
    expect(r.partitions[0]!.liveFileIds.sort()).toEqual(settled.map((f) => f.id).sort());
    expect(r.skipped).toEqual({ young: 1 });
  });
  test("files from half the target on stay, but stay listed as live; a large row group or a delete file skips the partition", () => {
    const done = file({ bytes: 25 });
    const small = [file(), file()];
    const r = planNative([done, ...small], opts);
    expect(ids(r.partitions[0]!.groups)).toEqual([small.map((f) => f.id)]);
    expect(r.partitions[0]!.liveFileIds.sort()).toEqual([done.id, ...small.map((f) => f.id)].sort());
    expect(planNative([file(), file({ maxRowGroupBytes: 5001 })], opts)).toEqual({
      partitions: [],
      skipped: { row_group_bytes: 1 },
    });
    expect(planNative([file(), file(), file({ bytes: 40, hasDeletes: true })], opts)).toEqual({
      partitions: [],
      skipped: { deletes: 1 },
    });
  });
  test("with little compaction memory, merged files stay below the target and are not merged again", () => {
    const small = Array.from({ length: 6 }, () => file({ uncompressedBytes: 250 }));
    const r = planNative(small, { ...opts, maxSortBytes: 600 });
    expect(r.partitions[0]!.groups.map((g) => g.length)).toEqual([2, 2, 2]);
    // A merged file of 600 uncompressed bytes (half of maxSortBytes and more) stays as it is.
    expect(
      planNative([file({ uncompressedBytes: 600 }), file({ uncompressedBytes: 600 })], { ...opts, maxSortBytes: 1000 })
        .partitions,
    ).toEqual([]);
  });
  test("unpartitioned files are not planned (they get the default merge)", () => {
    expect(planNative([file({ partition: undefined }), file({ partition: undefined })], opts).partitions).toEqual([]);
  });
  test("the retention cut partition and older ones are skipped", () => {
    const r = planNative(
      [
        file({ partition: "2026-11-21" }),
        file({ partition: "2026-11-21" }),
        file({ partition: "2026-11-22" }),
        file({ partition: "2026-11-22" }),
      ],
      {
        ...opts,
        cutPartition: "2026-11-21",
      },
    );
    expect(r.partitions.map((p) => p.partition)).toEqual(["2026-11-22"]);
    expect(r.skipped).toEqual({ retention_cut: 1 });
  });
});

test("retention cut partition", () => {
  expect(retentionCutPartition(Date.UTC(2026, 10, 24, 1), 14)).toBe("2026-11-10");
  expect(retentionCutPartition(NOW, 0)).toBeUndefined();
});
