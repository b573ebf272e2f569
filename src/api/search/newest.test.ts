import { describe, expect, test } from "bun:test";
import { compareNewest, likelyFloor, mergeNewest, NewestGroups, provenFloor, type FileSpan } from "./newest.ts";

const f = (minUs: number | null, maxUs: number | null, timedRows: number): FileSpan => ({ minUs, maxUs, timedRows });

describe("provenFloor", () => {
  test("the oldest row of the files wholly inside the window that hold N rows, newest first", () => {
    const files = [f(900, 1000, 5), f(800, 950, 10), f(100, 990, 1000), f(500, 700, 50)];
    expect(provenFloor(files, 0, 1000, 5)).toBe(900);
    expect(provenFloor(files, 0, 1000, 6)).toBe(800);
    expect(provenFloor(files, 0, 1000, 16)).toBe(500);
    expect(provenFloor(files, 0, 1000, 100)).toBe(100);
    // A file crossing the window's edge proves nothing (its rows may lie outside).
    expect(provenFloor(files, 0, 980, 5)).toBe(800);
    expect(provenFloor(files, 0, 1000, 2000)).toBeUndefined();
    expect(provenFloor([f(null, 1000, 50)], 0, 2000, 1)).toBeUndefined();
  });
});

describe("likelyFloor", () => {
  test("where the files' rows, spread evenly, hold the wanted count up to the window's end", () => {
    // 1 000 rows over [0, 999]: one row a µs.
    expect(likelyFloor([f(0, 999, 1000)], 0, 999, 100)).toBe(900);
    // The window ends inside the file: rows after its end do not count.
    expect(likelyFloor([f(0, 999, 1000)], 0, 499, 100)).toBe(400);
    // Two files overlapping: twice the rows per µs where they overlap.
    expect(likelyFloor([f(0, 999, 1000), f(500, 999, 500)], 0, 999, 100)).toBe(950);
    // Never before the window's start; the start when the files hold too few rows or a span is unknown.
    expect(likelyFloor([f(0, 999, 1000)], 950, 999, 100)).toBe(950);
    expect(likelyFloor([f(0, 999, 50)], 0, 999, 100)).toBe(0);
    expect(likelyFloor([f(0, 999, 1000), f(null, null, 10)], 0, 999, 100)).toBe(0);
  });
});

describe("NewestGroups", () => {
  test("first enough files for N rows, then every unread file reaching the N-th newest time, then done", () => {
    const files = [f(null, null, 3), f(900, 1000, 2), f(100, 990, 100), f(950, 980, 10), f(0, 500, 10)];
    const g = new NewestGroups(files, 4);
    expect(g.next(undefined)).toEqual(files.slice(0, 2));
    expect(g.next(985)).toEqual([files[2]!]);
    expect(g.next(990)).toEqual([]);
  });

  test("short of N rows: nothing matched yet reads every remaining file at once", () => {
    const files = Array.from({ length: 7 }, (_v, i) => f(1000 - 10 * i - 5, 1000 - 10 * i, 1));
    const g = new NewestGroups(files, 1);
    expect(g.next(undefined, 0)).toHaveLength(1);
    expect(g.next(undefined, 0)).toHaveLength(6);
    expect(g.next(undefined, 0)).toEqual([]);
  });

  test("short of N rows: the next group holds twice the rows the match rate asks for, at least twice the files", () => {
    const files = Array.from({ length: 40 }, (_v, i) => f(1000 - 10 * i - 5, 1000 - 10 * i, 10));
    const g = new NewestGroups(files, 20);
    expect(g.next(undefined, 0)).toHaveLength(2); // 20 rows by row counts
    // 2 of 20 rows matched: 18 more need 180 rows, twice that is 360 rows = 36 files.
    expect(g.next(undefined, 2)).toHaveLength(36);
    const h = new NewestGroups(files, 20);
    h.next(undefined, 0);
    // 15 of 20 matched: 5 more need ~7 rows, twice ~14: 2 files, but at least twice the last group.
    expect(h.next(undefined, 15)).toHaveLength(4);
  });

  test("files newer-bounded below the floor are never read", () => {
    const files = [f(900, 1000, 5), f(100, 800, 5), f(null, null, 5)];
    const g = new NewestGroups(files, 1, 850);
    expect(g.remaining).toBe(2);
  });
});

describe("mergeNewest", () => {
  test("newest first, ties by the tie column descending, cut at the limit", () => {
    const a = [
      { t: 5, u: "a" },
      { t: 3, u: "c" },
    ];
    const b = [
      { t: 5, u: "b" },
      { t: 4, u: "z" },
    ];
    expect(mergeNewest(a, b, 3, "t", "u")).toEqual([
      { t: 5, u: "b" },
      { t: 5, u: "a" },
      { t: 4, u: "z" },
    ]);
    expect(compareNewest({ t: 1 }, { t: 2 }, "t", undefined)).toBeGreaterThan(0);
  });
});
