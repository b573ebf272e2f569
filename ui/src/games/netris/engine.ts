/**
 * One Netris board (docs/GAMES.md "Netris"): a 10 × 20 well, the seven tetrominoes from a 7-bag
 * seeded by the relay's `start.seed` (mulberry32, Fisher-Yates), rotation with simple wall kicks,
 * line clears, and garbage rows from the opponent (added when the next piece locks, all rows of a
 * burst with the hole in one column). No DOM: the widget draws it and feeds it keys and time.
 */
export const ROWS = 20;
export const COLS = 10;
export const GARBAGE_CELL = 8;

export type Kind = "I" | "O" | "T" | "S" | "Z" | "J" | "L";
export const KINDS: readonly Kind[] = ["I", "O", "T", "S", "Z", "J", "L"];
/** Cells of each piece in its spawn box (x, y), and the box size. */
const SHAPES: Record<Kind, { n: number; cells: Array<[number, number]> }> = {
  I: {
    n: 4,
    cells: [
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 1],
    ],
  },
  O: {
    n: 2,
    cells: [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ],
  },
  T: {
    n: 3,
    cells: [
      [1, 0],
      [0, 1],
      [1, 1],
      [2, 1],
    ],
  },
  S: {
    n: 3,
    cells: [
      [1, 0],
      [2, 0],
      [0, 1],
      [1, 1],
    ],
  },
  Z: {
    n: 3,
    cells: [
      [0, 0],
      [1, 0],
      [1, 1],
      [2, 1],
    ],
  },
  J: {
    n: 3,
    cells: [
      [0, 0],
      [0, 1],
      [1, 1],
      [2, 1],
    ],
  },
  L: {
    n: 3,
    cells: [
      [2, 0],
      [0, 1],
      [1, 1],
      [2, 1],
    ],
  },
};

/** mulberry32: the same generator on both players' browsers gives the same pieces. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Piece {
  kind: Kind;
  cells: Array<[number, number]>;
  n: number;
  x: number;
  y: number;
}

export interface LockResult {
  cleared: number;
  toppedOut: boolean;
}

export class NetrisBoard {
  /** Rows top first; 0 empty, 1-7 a piece kind, 8 garbage. */
  grid: number[][] = Array.from({ length: ROWS }, () => new Array<number>(COLS).fill(0));
  piece: Piece | undefined;
  readonly queue: Kind[] = [];
  lines = 0;
  pieces = 0;
  garbageReceived = 0;
  over = false;
  /** Bursts waiting for the next lock. */
  readonly incoming: Array<{ lines: number; hole: number }> = [];
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = mulberry32(seed);
    this.spawn();
  }

  private refill(): void {
    const bag = [...KINDS];
    for (let i = bag.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [bag[i], bag[j]] = [bag[j]!, bag[i]!];
    }
    this.queue.push(...bag);
  }

  next(): Kind {
    if (this.queue.length < 2) this.refill();
    return this.queue[0]!;
  }

  private spawn(): void {
    if (this.queue.length < 2) this.refill();
    const kind = this.queue.shift()!;
    const s = SHAPES[kind];
    const p: Piece = {
      kind,
      cells: s.cells.map(([x, y]) => [x, y] as [number, number]),
      n: s.n,
      x: Math.floor((COLS - s.n) / 2),
      y: 0,
    };
    this.piece = p;
    if (!this.fits(p.cells, p.x, p.y)) {
      this.over = true;
      this.piece = undefined;
    }
  }

  fits(cells: Array<[number, number]>, x: number, y: number): boolean {
    return cells.every(([cx, cy]) => {
      const gx = x + cx;
      const gy = y + cy;
      return gx >= 0 && gx < COLS && gy >= 0 && gy < ROWS && this.grid[gy]![gx] === 0;
    });
  }

  move(dx: number): boolean {
    const p = this.piece;
    if (!p || this.over || !this.fits(p.cells, p.x + dx, p.y)) return false;
    p.x += dx;
    return true;
  }

  /** dir 1 clockwise, -1 counter-clockwise; tries small kicks sideways and one up. */
  rotate(dir: 1 | -1): boolean {
    const p = this.piece;
    if (!p || this.over || p.kind === "O") return false;
    const cells = p.cells.map(([x, y]) => (dir === 1 ? [p.n - 1 - y, x] : [y, p.n - 1 - x]) as [number, number]);
    for (const [kx, ky] of [
      [0, 0],
      [-1, 0],
      [1, 0],
      [-2, 0],
      [2, 0],
      [0, -1],
    ] as const) {
      if (this.fits(cells, p.x + kx, p.y + ky)) {
        p.cells = cells;
        p.x += kx;
        p.y += ky;
        return true;
      }
    }
    return false;
  }

  /** One row down; when it cannot, the piece locks and the result says what happened. */
  step(): LockResult | undefined {
    const p = this.piece;
    if (!p || this.over) return undefined;
    if (this.fits(p.cells, p.x, p.y + 1)) {
      p.y += 1;
      return undefined;
    }
    return this.lock();
  }

  hardDrop(): LockResult | undefined {
    const p = this.piece;
    if (!p || this.over) return undefined;
    while (this.fits(p.cells, p.x, p.y + 1)) p.y += 1;
    return this.lock();
  }

  /** The row the piece would land on (for the ghost). */
  dropY(): number {
    const p = this.piece;
    if (!p) return 0;
    let y = p.y;
    while (this.fits(p.cells, p.x, y + 1)) y += 1;
    return y;
  }

  receive(lines: number, hole: number): void {
    this.incoming.push({ lines, hole });
  }

  private lock(): LockResult {
    const p = this.piece!;
    const id = KINDS.indexOf(p.kind) + 1;
    for (const [cx, cy] of p.cells) this.grid[p.y + cy]![p.x + cx] = id;
    this.pieces += 1;
    const kept = this.grid.filter((row) => row.some((c) => c === 0));
    const cleared = ROWS - kept.length;
    this.grid = [...Array.from({ length: cleared }, () => new Array<number>(COLS).fill(0)), ...kept];
    this.lines += cleared;
    let toppedOut = false;
    for (const b of this.incoming.splice(0)) {
      for (let i = 0; i < b.lines; i++) {
        const top = this.grid.shift()!;
        if (top.some((c) => c !== 0)) toppedOut = true;
        this.grid.push(Array.from({ length: COLS }, (_, x) => (x === b.hole ? 0 : GARBAGE_CELL)));
      }
      this.garbageReceived += b.lines;
    }
    if (toppedOut) {
      this.over = true;
      this.piece = undefined;
    } else {
      this.spawn();
    }
    return { cleared, toppedOut: this.over };
  }

  /** The board as the relay's `board` frame wants it: 20 strings of `.` and `#`, top row first. */
  rows(): string[] {
    return this.grid.map((row) => row.map((c) => (c === 0 ? "." : "#")).join(""));
  }
}
