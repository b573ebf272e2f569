/** Canvas drawing of a Netris board (engine.ts) and the opponent's reported mini-board. */
import { COLS, KINDS, ROWS, type NetrisBoard } from "./engine.ts";

/** Colours of I, O, T, S, Z, J, L, then garbage (index = cell value - 1). */
const COLOURS = ["#3fc7e0", "#f2c94c", "#a66cd9", "#4cbb6c", "#e05a4f", "#3f78e0", "#f08c3a", "#7b8794"];

export function drawBoard(c: HTMLCanvasElement, b: NetrisBoard): void {
  const g = c.getContext("2d");
  if (!g) return;
  const cw = c.width / COLS;
  const ch = c.height / ROWS;
  g.fillStyle = "#101820";
  g.fillRect(0, 0, c.width, c.height);
  g.strokeStyle = "#1c2833";
  for (let x = 1; x < COLS; x++) g.strokeRect(x * cw, 0, 0, c.height);
  const cell = (x: number, y: number, colour: string, alpha = 1) => {
    g.globalAlpha = alpha;
    g.fillStyle = colour;
    g.fillRect(x * cw + 1, y * ch + 1, cw - 2, ch - 2);
    g.globalAlpha = 1;
  };
  b.grid.forEach((row, y) => row.forEach((v, x) => v && cell(x, y, COLOURS[v - 1]!)));
  const p = b.piece;
  if (p) {
    const colour = COLOURS[KINDS.indexOf(p.kind)]!;
    const gy = b.dropY();
    for (const [x, y] of p.cells) cell(p.x + x, gy + y, colour, 0.25);
    for (const [x, y] of p.cells) cell(p.x + x, p.y + y, colour);
  }
  if (b.over) {
    g.fillStyle = "rgba(0,0,0,.6)";
    g.fillRect(0, 0, c.width, c.height);
  }
}

export function drawMini(c: HTMLCanvasElement, rows: string[] | null): void {
  const g = c.getContext("2d");
  if (!g) return;
  g.fillStyle = "#101820";
  g.fillRect(0, 0, c.width, c.height);
  if (!rows) return;
  const cw = c.width / COLS;
  const ch = c.height / ROWS;
  g.fillStyle = "#9fb3c8";
  rows.forEach((r, y) => [...r].forEach((v, x) => v === "#" && g.fillRect(x * cw, y * ch, cw - 1, ch - 1)));
}
