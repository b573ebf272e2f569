import { expect, test } from "bun:test";
import { percentile, summarize } from "./stats.ts";

test.each([
  // samples, p, nearest-rank result
  [[5], 50, 5],
  [[1, 2, 3, 4], 50, 2],
  [[4, 3, 2, 1], 95, 4],
  [Array.from({ length: 100 }, (_v, i) => 100 - i), 95, 95],
  [Array.from({ length: 100 }, (_v, i) => i + 1), 50, 50],
  [Array.from({ length: 20 }, (_v, i) => i + 1), 95, 19],
  [[7, 1, 9], 0, 1],
  [[7, 1, 9], 100, 9],
])("percentile(%j, %d) = %d", (samples, p, want) => {
  expect(percentile(samples, p)).toBe(want);
});

test("percentile of nothing is NaN, and the input is not reordered", () => {
  expect(percentile([], 50)).toBeNaN();
  const s = [3, 1, 2];
  percentile(s, 50);
  expect(s).toEqual([3, 1, 2]);
});

test("summarize gives p50, p95, max and mean", () => {
  expect(summarize([10, 20, 30, 40])).toEqual({ n: 4, p50: 20, p95: 40, max: 40, mean: 25 });
});
