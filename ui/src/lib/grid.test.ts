import { describe, expect, test } from "bun:test";
import { clampCell, compact, freeSpot, placeWidget, type Cell } from "./grid.ts";

const c = (id: string, x: number, y: number, w: number, h: number): Cell => ({ id, x, y, w, h });
const overlap = (a: Cell, b: Cell) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const noOverlap = (l: Cell[]) => l.every((a, i) => l.every((b, j) => i === j || !overlap(a, b)));

describe("grid", () => {
  const home = [c("search", 0, 0, 8, 6), c("clock", 8, 0, 4, 6), c("results", 0, 6, 12, 10)];

  test("moving a widget onto another pushes that one down; order of the list is kept", () => {
    const out = placeWidget(home, "clock", { x: 0, y: 0 });
    expect(out.map((w) => w.id)).toEqual(["search", "clock", "results"]);
    expect(out.find((w) => w.id === "clock")).toMatchObject({ x: 0, y: 0 });
    expect(out.find((w) => w.id === "search")!.y).toBe(6);
    expect(out.find((w) => w.id === "results")!.y).toBe(12);
    expect(noOverlap(out)).toBe(true);
  });

  test("resizing grows into the neighbours, which make room; gaps close upwards", () => {
    const out = placeWidget(home, "search", { w: 12, h: 4 });
    expect(out.find((w) => w.id === "search")).toMatchObject({ x: 0, y: 0, w: 12, h: 4 });
    expect(out.find((w) => w.id === "clock")).toMatchObject({ x: 8, y: 4 });
    expect(out.find((w) => w.id === "results")!.y).toBe(10);
    expect(noOverlap(out)).toBe(true);
  });

  test.each([
    [c("a", -3, -1, 0, 0), c("a", 0, 0, 1, 1)],
    [c("a", 11, 2, 4, 3), c("a", 8, 2, 4, 3)],
    [c("a", 2.6, 1.4, 30, 99), c("a", 0, 1, 12, 60)],
  ])("clampCell %#", (input, want) => expect(clampCell(input)).toEqual(want));

  test("compact floats widgets up without overlap", () => {
    const out = compact([c("a", 0, 5, 6, 2), c("b", 0, 20, 12, 3)]);
    expect(out).toEqual([c("a", 0, 0, 6, 2), c("b", 0, 2, 12, 3)]);
  });

  test("freeSpot finds the first hole that fits", () => {
    expect(freeSpot(home, 4, 4)).toEqual({ x: 0, y: 16 });
    expect(freeSpot([c("a", 0, 0, 6, 4)], 6, 4)).toEqual({ x: 6, y: 0 });
  });
});
