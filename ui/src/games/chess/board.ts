/**
 * The chess board of the Chess and NetChess widgets (docs/GAMES.md "Widgets"): 64 buttons named
 * by square and piece, click a piece then a highlighted square to move; a promotion asks for the
 * piece in a small dialog (Esc cancels). The legal moves come from the caller (chess.js in the
 * Chess widget, the relay's `legal_moves` in NetChess), so the board never offers an illegal move.
 */
import { Chess, type Square } from "chess.js";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { html } from "../../lib/html.ts";

export type Side = "white" | "black";

const GLYPH: Record<string, string> = {
  wk: "♔",
  wq: "♕",
  wr: "♖",
  wb: "♗",
  wn: "♘",
  wp: "♙",
  bk: "♚",
  bq: "♛",
  br: "♜",
  bb: "♝",
  bn: "♞",
  bp: "♟",
};
const NAME: Record<string, string> = { k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn" };
const FILES = "abcdefgh";

export interface BoardProps {
  fen: string;
  /** Side shown at the bottom. */
  orientation: Side;
  /** Moves the user may make now, in UCI (empty: the board is read-only). */
  legal: readonly string[];
  onMove(uci: string): void;
  /** Last move played (UCI), marked on the board. */
  lastMove?: string | undefined;
  label: string;
}

/** Pieces by square of a FEN (chess.js parses it; an invalid FEN shows an empty board). */
function piecesOf(fen: string): Map<string, { color: "w" | "b"; type: string }> {
  const out = new Map<string, { color: "w" | "b"; type: string }>();
  let rows: ReturnType<Chess["board"]>;
  try {
    rows = new Chess(fen).board();
  } catch {
    return out;
  }
  for (const row of rows) for (const p of row) if (p) out.set(p.square, { color: p.color, type: p.type });
  return out;
}

export function Board({ fen, orientation, legal, onMove, lastMove, label }: BoardProps) {
  const [from, setFrom] = useState<string | null>(null);
  const [promo, setPromo] = useState<{ from: string; to: string } | null>(null);
  const promoRef = useRef<HTMLDivElement>(null);
  const pieces = piecesOf(fen);
  // A new position (or a board that became read-only) drops a half-made move.
  useEffect(() => {
    setFrom(null);
    setPromo(null);
  }, [fen, legal.length === 0]);
  // Layout effects: the focus moves and Esc works as soon as the dialog is in the page, not a frame later
  // (an Esc pressed in between was lost on a busy machine).
  useLayoutEffect(() => {
    promoRef.current?.querySelector<HTMLButtonElement>("button")?.focus();
  }, [promo]);
  // Esc cancels the promotion wherever the focus is (a click on the board can leave it on <body>).
  useLayoutEffect(() => {
    if (!promo) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      setPromo(null);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [promo]);

  const targets = new Set(from ? legal.filter((m) => m.startsWith(from)).map((m) => m.slice(2, 4)) : []);
  const movable = new Set(legal.map((m) => m.slice(0, 2)));
  const click = (sq: string) => {
    if (from && targets.has(sq)) {
      const options = legal.filter((m) => m.startsWith(`${from}${sq}`));
      if (options.length > 1 || options[0]!.length === 5) setPromo({ from, to: sq });
      else onMove(options[0]!);
      setFrom(null);
      return;
    }
    setFrom(movable.has(sq) && sq !== from ? sq : null);
  };
  const ranks = orientation === "white" ? [8, 7, 6, 5, 4, 3, 2, 1] : [1, 2, 3, 4, 5, 6, 7, 8];
  const files = orientation === "white" ? [...FILES] : [...FILES].reverse();
  const last = lastMove ? [lastMove.slice(0, 2), lastMove.slice(2, 4)] : [];
  const promoColor = promo ? (pieces.get(promo.from)?.color ?? "w") : "w";

  return html`<div class="chess-board-wrap">
    <div class="chess-board" role="grid" aria-label=${label} onKeyDown=${(e: KeyboardEvent) => {
      if (e.key === "Escape" && from) {
        e.stopPropagation();
        setFrom(null);
      }
    }}>
      ${ranks.map(
        (r) => html`<div class="chess-rank" role="row" key=${r}>
          ${files.map((f) => {
            const sq = `${f}${r}`;
            const p = pieces.get(sq);
            const dark = (FILES.indexOf(f) + r) % 2 === 0;
            const isTarget = targets.has(sq);
            const name = `${sq}${p ? ` ${p.color === "w" ? "white" : "black"} ${NAME[p.type]}` : ""}${isTarget ? ", legal move" : ""}`;
            const cls = [
              "chess-sq",
              dark ? "dark" : "light",
              sq === from ? "selected" : "",
              isTarget ? "target" : "",
              last.includes(sq) ? "last" : "",
              p ? `piece-${p.color}` : "",
            ].join(" ");
            return html`<button type="button" role="gridcell" key=${sq} class=${cls} aria-label=${name} aria-pressed=${sq === from} disabled=${!isTarget && !movable.has(sq)} onClick=${() => click(sq)}>
              ${p ? GLYPH[`${p.color}${p.type}`] : ""}
            </button>`;
          })}
        </div>`,
      )}
    </div>
    ${
      promo &&
      html`<div class="chess-promo" role="dialog" aria-label="Promote the pawn to" ref=${promoRef} onKeyDown=${(
        e: KeyboardEvent,
      ) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          setPromo(null);
        }
      }}>
      <span>Promote to</span>
      ${(["q", "r", "b", "n"] as const).map(
        (t) =>
          html`<button type="button" class="btn" aria-label=${NAME[t]} onClick=${() => {
            setPromo(null);
            onMove(`${promo.from}${promo.to}${t}`);
          }}>${GLYPH[`${promoColor}${t}`]}</button>`,
      )}
      <button type="button" class="btn btn-ghost" onClick=${() => setPromo(null)}>Cancel</button>
    </div>`
    }
  </div>`;
}

/** The legal moves of a position in UCI (the Chess widget's own game). */
export function legalUci(game: Chess): string[] {
  return game.moves({ verbose: true }).map((m) => `${m.from}${m.to}${m.promotion ?? ""}`);
}

/** chess.js move object from UCI. */
export const moveOf = (uci: string): { from: Square; to: Square; promotion?: string } => ({
  from: uci.slice(0, 2) as Square,
  to: uci.slice(2, 4) as Square,
  ...(uci.length === 5 ? { promotion: uci[4]! } : {}),
});
