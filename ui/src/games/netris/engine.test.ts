import { describe, expect, test } from "bun:test";
import { COLS, GARBAGE_CELL, KINDS, NetrisBoard, ROWS } from "./engine.ts";

/** Pieces dealt by a board of `seed`, read one by one as they spawn. */
const dealt = (seed: number, n: number) => {
  const b = new NetrisBoard(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(b.piece!.kind);
    b.grid = Array.from({ length: ROWS }, () => new Array<number>(COLS).fill(0));
    b.hardDrop();
  }
  return out;
};

describe("Netris board", () => {
  test("the same seed deals the same pieces, each bag holds all seven", () => {
    const a = dealt(42, 21);
    expect(a).toEqual(dealt(42, 21));
    expect(a).not.toEqual(dealt(43, 21));
    for (let i = 0; i < 21; i += 7) expect([...a.slice(i, i + 7)].sort()).toEqual([...KINDS].sort());
  });

  test("a full row clears and the rows above fall", () => {
    const b = new NetrisBoard(1);
    b.grid[ROWS - 1] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0];
    b.grid[ROWS - 2] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 3];
    // A vertical piece dropped into the last column fills the bottom row.
    b.piece = {
      kind: "I",
      n: 4,
      cells: [
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
      ],
      x: 9,
      y: 0,
    };
    b.grid[ROWS - 2]![9] = 0;
    const r = b.hardDrop();
    expect(r).toEqual({ cleared: 1, toppedOut: false });
    expect(b.lines).toBe(1);
    expect(b.grid[ROWS - 1]!.filter((c) => c !== 0).length).toBe(1);
  });

  test("garbage arrives at the next lock with the hole in one column; pushing blocks out tops out", () => {
    const b = new NetrisBoard(7);
    b.receive(2, 3);
    expect(b.grid[ROWS - 1]!.every((c) => c === 0)).toBe(true);
    b.hardDrop();
    for (const y of [ROWS - 1, ROWS - 2])
      expect(b.grid[y]!.map((c) => (c === GARBAGE_CELL ? "#" : c === 0 ? "." : "p")).join("")).toBe("###.######");
    expect(b.garbageReceived).toBe(2);
    const c = new NetrisBoard(7);
    c.grid[0]![0] = 1;
    c.receive(1, 0);
    expect(c.hardDrop()?.toppedOut).toBe(true);
    expect(c.over).toBe(true);
  });

  test("a stack in the spawn area tops out", () => {
    const b = new NetrisBoard(9);
    let r;
    for (let i = 0; i < 40 && !b.over; i++) r = b.hardDrop();
    expect(b.over).toBe(true);
    expect(r?.toppedOut).toBe(true);
    expect(b.rows()).toHaveLength(ROWS);
  });
});
