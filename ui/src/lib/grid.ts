/**
 * The dashboard grid: 12 columns, widgets at (x, y) with size (w, h) in cells. After a move or a
 * resize, widgets that now overlap the changed one are pushed down (like a stack of cards), then
 * everything floats up to close gaps. Pure; see grid.test.ts.
 */
export const COLUMNS = 12;

export interface Cell {
  id: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

const overlaps = (a: Cell, b: Cell) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

export function clampCell<T extends Cell>(c: T): T {
  const w = Math.max(1, Math.min(COLUMNS, Math.round(c.w)));
  const h = Math.max(1, Math.min(60, Math.round(c.h)));
  const x = Math.max(0, Math.min(COLUMNS - w, Math.round(c.x)));
  const y = Math.max(0, Math.round(c.y));
  return { ...c, x, y, w, h };
}

/** Applies a change to widget `id` and resolves collisions; the others keep their order. */
export function placeWidget<T extends Cell>(layout: readonly T[], id: string, change: Partial<Cell>): T[] {
  const moved = layout.find((c) => c.id === id);
  if (!moved) return [...layout];
  const placed = clampCell({ ...moved, ...change, id });
  const others = layout.filter((c) => c.id !== id).map((c) => ({ ...c }));
  // Push down, in top-to-bottom order, whatever overlaps something already fixed.
  const fixed: T[] = [placed];
  for (const c of [...others].sort((a, b) => a.y - b.y || a.x - b.x)) {
    let cell = c;
    while (fixed.some((f) => overlaps(f, cell))) {
      const blocker = fixed.filter((f) => overlaps(f, cell)).reduce((a, b) => (a.y + a.h > b.y + b.h ? a : b));
      cell = { ...cell, y: blocker.y + blocker.h };
    }
    fixed.push(cell);
  }
  const order = new Map(layout.map((c, i) => [c.id, i]));
  return compact(fixed, id).sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

/** Floats every widget (except `pinned`) up as far as it goes without overlapping. */
export function compact<T extends Cell>(layout: readonly T[], pinned?: string): T[] {
  const out: T[] = [];
  const pin = layout.find((c) => c.id === pinned);
  if (pin) out.push(pin);
  for (const c of [...layout].filter((c) => c.id !== pinned).sort((a, b) => a.y - b.y || a.x - b.x)) {
    let cell = { ...c };
    while (cell.y > 0 && !out.some((f) => overlaps(f, { ...cell, y: cell.y - 1 }))) cell = { ...cell, y: cell.y - 1 };
    while (out.some((f) => overlaps(f, cell))) cell = { ...cell, y: cell.y + 1 };
    out.push(cell);
  }
  const order = new Map(layout.map((c, i) => [c.id, i]));
  return out.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

/** The first free spot for a new w×h widget, scanning rows top to bottom. */
export function freeSpot(layout: readonly Cell[], w: number, h: number): { x: number; y: number } {
  for (let y = 0; y < 1000; y++) {
    for (let x = 0; x + w <= COLUMNS; x++) {
      const c = { id: "", x, y, w, h };
      if (!layout.some((o) => overlaps(o, c))) return { x, y };
    }
  }
  return { x: 0, y: layout.reduce((m, c) => Math.max(m, c.y + c.h), 0) };
}
