import { describe, expect, test } from "bun:test";
import { splitByWindow } from "./count.ts";

const f = (minUs: number | null, maxUs: number | null, timedRows: number) => ({ minUs, maxUs, timedRows });

describe("splitByWindow: which files the total counts from statistics", () => {
  test("files wholly inside (bounds included) count by rows; crossing an edge or unknown bounds are read", () => {
    const files = [
      f(100, 200, 5),
      f(100, 100, 2),
      f(200, 200, 3),
      f(50, 150, 7),
      f(150, 250, 11),
      f(null, 180, 13),
      f(120, null, 17),
      f(10, 90, 19),
    ];
    const { insideRows, edge } = splitByWindow(files, 100, 200);
    expect(insideRows).toBe(5 + 2 + 3);
    // A file outside the window would not be in the plan; if it is, it is read, never counted blind.
    expect(edge).toEqual(files.slice(3));
  });

  test("no files: nothing from statistics", () => {
    expect(splitByWindow([], 0, 1)).toEqual({ insideRows: 0, edge: [] });
  });
});
