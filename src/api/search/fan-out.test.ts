import { expect, test } from "bun:test";
import { compareKeys, mergeNodePages, type NodePage } from "./fan-out.ts";

/** A small seeded generator, so a failing case repeats. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Row = { key: [number, string]; node: string };

/** Each node's answer as POST /api/v1/search gives it: its first offset + limit rows of the order, its total and has_more. */
function nodePage(node: string, rows: Row[], want: number, oldestFirst: boolean, lakeId = node): NodePage {
  const sorted = [...rows].sort((a, b) => compareKeys(a.key, b.key, oldestFirst)).slice(0, want);
  return {
    node,
    lakeId,
    items: sorted.map((r) => ({ uuid: r.key[1], ts: r.key[0] })),
    sortKeys: sorted.map((r) => r.key),
    total: rows.length,
    totalExact: true,
    hasMore: rows.length > want,
  };
}

test("the merge of the nodes' pages is the page of one global sort, ties on time broken by uuid (random data)", () => {
  const random = rng(42);
  for (let round = 0; round < 500; round++) {
    const nodes = 1 + Math.floor(random() * 4);
    const all: Row[] = [];
    let n = 0;
    const byNode = Array.from({ length: nodes }, (_, i) => {
      const count = Math.floor(random() * 30);
      const rows: Row[] = [];
      // Few distinct times: many ties across and within nodes.
      for (let j = 0; j < count; j++)
        rows.push({
          key: [
            1_700_000_000_000_000 + Math.floor(random() * 8),
            `u${String(Math.floor(random() * 1e6)).padStart(6, "0")}-${n++}`,
          ],
          node: `n${i}`,
        });
      all.push(...rows);
      return rows;
    });
    const offset = Math.floor(random() * 10);
    const limit = 1 + Math.floor(random() * 12);
    for (const oldestFirst of [false, true]) {
      const merged = mergeNodePages(
        byNode.map((rows, i) => nodePage(`n${i}`, rows, offset + limit, oldestFirst)),
        offset,
        limit,
        oldestFirst,
      );
      const global = [...all].sort((a, b) => compareKeys(a.key, b.key, oldestFirst));
      expect(merged.rows.map((r) => r.key)).toEqual(global.slice(offset, offset + limit).map((r) => r.key));
      expect(merged.rows.map((r) => r.node)).toEqual(global.slice(offset, offset + limit).map((r) => r.node));
      expect(merged.total).toBe(all.length);
      expect(merged.totalExact).toBe(true);
      expect(merged.hasMore).toBe(all.length > offset + limit);
    }
  }
});

test("nodes that share a lake: a row they both return is one row, and their totals are not added", () => {
  const rows: Row[] = [1, 2, 3, 4].map((i) => ({ key: [i, `u${i}`], node: "x" }));
  const merged = mergeNodePages(
    [nodePage("a", rows, 10, false, "lake-1"), nodePage("b", rows, 10, false, "lake-1")],
    0,
    10,
  );
  expect(merged.rows.map((r) => r.key[1])).toEqual(["u4", "u3", "u2", "u1"]);
  expect(merged.total).toBe(4);
  expect(merged.totalExact).toBe(false);
});

test("the order itself: newest first, then the larger uuid; oldest first is its reverse", () => {
  const keys: Array<[number, string]> = [
    [5, "a"],
    [7, "a"],
    [5, "b"],
  ];
  expect([...keys].sort((a, b) => compareKeys(a, b, false))).toEqual([
    [7, "a"],
    [5, "b"],
    [5, "a"],
  ]);
  expect([...keys].sort((a, b) => compareKeys(a, b, true))).toEqual([
    [5, "a"],
    [5, "b"],
    [7, "a"],
  ]);
});
