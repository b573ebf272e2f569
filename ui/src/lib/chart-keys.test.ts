import { expect, test } from "bun:test";
import { chartKeyTarget } from "./chart-keys.ts";

test.each([
  ["ArrowRight", undefined, 5, 0],
  ["ArrowRight", 2, 5, 3],
  ["ArrowRight", 4, 5, 4],
  ["ArrowLeft", undefined, 5, 4],
  ["ArrowLeft", 3, 5, 2],
  ["ArrowLeft", 0, 5, 0],
  ["Home", 3, 5, 0],
  ["End", undefined, 5, 4],
  ["Enter", 2, 5, undefined],
  ["ArrowRight", undefined, 0, undefined],
] as const)("chartKeyTarget(%s) from %p of %p buckets → %p", (key, at, count, want) => {
  expect(chartKeyTarget(key, at, count)).toBe(want);
});
