import { describe, expect, test } from "bun:test";
import { ownShare } from "./lookup-pass.ts";

const files = (...groups: number[]) => groups.map((n) => ({ groups: Array.from({ length: n }, (_, i) => i) }));

describe("ownShare: the worker matches the last files, at most half of the row groups", () => {
  test("even files split in the middle; uneven ones by their row groups", () => {
    expect(ownShare(files(1, 1, 1, 1))).toBe(2);
    expect(ownShare(files(1, 1, 1, 1, 1))).toBe(3);
    // 10 row groups: the last four files hold 5, half: this thread keeps the first.
    expect(ownShare(files(5, 1, 1, 1, 2))).toBe(1);
    // 11: the last three hold 4, with the one before 6, more than half: this thread keeps two.
    expect(ownShare(files(5, 2, 1, 1, 2))).toBe(2);
    // The newest file holds most: the worker takes every older one.
    expect(ownShare(files(7, 1, 1, 1))).toBe(1);
  });

  test("one file, or none, stays here; a file with no row group to read costs nothing", () => {
    expect(ownShare(files(3))).toBe(1);
    expect(ownShare([])).toBe(0);
    expect(ownShare(files(2, 0, 0))).toBe(1);
  });
});
