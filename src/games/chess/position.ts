/**
 * Whether a FEN is a position a game can be played from (docs/GAMES.md "Chess vs the model"):
 * chess.js's `validateFen` checks the syntax, the kings and the pawns' ranks, but takes positions
 * no game can reach, and its move generator then answers nonsense (a king taking the other king).
 * The rules below refuse those, then a position where the game is already over.
 */
import { Chess, validateFen, type Color, type Square } from "chess.js";

const NAME: Record<Color, string> = { w: "white", b: "black" };
const SQUARES = "abcdefgh";
/** Each side's pieces at the start; more of a kind came from promotions, each costing a pawn. */
const START_COUNT: Record<string, number> = { q: 1, r: 2, b: 2, n: 2 };
/** Castling right → the squares its king and rook must stand on. */
const CASTLING: Record<string, { color: Color; king: Square; rook: Square }> = {
  K: { color: "w", king: "e1", rook: "h1" },
  Q: { color: "w", king: "e1", rook: "a1" },
  k: { color: "b", king: "e8", rook: "h8" },
  q: { color: "b", king: "e8", rook: "a8" },
};

const kingOf = (game: Chess, color: Color): Square => game.findPiece({ type: "k", color })[0]!;

function materialProblem(game: Chess, color: Color): string | undefined {
  const count: Record<string, number> = {};
  for (const p of game.board().flat()) if (p?.color === color) count[p.type] = (count[p.type] ?? 0) + 1;
  const pawns = count.p ?? 0;
  if (pawns > 8) return `${NAME[color]} has ${pawns} pawns: at most 8`;
  const promoted = Object.entries(START_COUNT).reduce(
    (sum, [type, start]) => sum + Math.max(0, (count[type] ?? 0) - start),
    0,
  );
  const missing = 8 - pawns;
  if (promoted > missing)
    return `${NAME[color]} has ${promoted} more queens, rooks, bishops or knights than at the start, but only ${missing} missing pawns to have promoted`;
  return undefined;
}

/** What makes `fen` unplayable, or undefined when a game can go on from it. */
export function positionProblem(fen: string): string | undefined {
  const v = validateFen(fen);
  if (!v.ok) return `fen is not a valid position: ${v.error ?? "invalid"}`;
  const game = new Chess(fen);
  const toMove = game.turn();
  const waiting: Color = toMove === "w" ? "b" : "w";
  const impossible = (why: string) => `fen is not a position a game can reach: ${why}`;
  const kings = { w: kingOf(game, "w"), b: kingOf(game, "b") };
  const file = (s: Square) => SQUARES.indexOf(s[0]!);
  const rank = (s: Square) => Number(s[1]);
  if (Math.abs(file(kings.w) - file(kings.b)) <= 1 && Math.abs(rank(kings.w) - rank(kings.b)) <= 1)
    return impossible("the kings stand next to each other");
  if (game.isAttacked(kings[waiting], toMove))
    return impossible(`${NAME[waiting]} is in check but it is ${NAME[toMove]}'s move`);
  const checkers = game.attackers(kings[toMove], waiting).length;
  if (checkers > 2)
    return impossible(`the ${NAME[toMove]} king is in check from ${checkers} pieces (at most 2 after one move)`);
  for (const color of ["w", "b"] as const) {
    const problem = materialProblem(game, color);
    if (problem) return impossible(problem);
  }
  const rights = fen.split(/\s+/)[2] ?? "-";
  for (const right of rights === "-" ? [] : rights) {
    const need = CASTLING[right];
    if (!need) continue;
    const king = game.get(need.king);
    const rook = game.get(need.rook);
    if (king?.type !== "k" || king.color !== need.color || rook?.type !== "r" || rook.color !== need.color)
      return impossible(
        `castling right ${right} needs the ${NAME[need.color]} king on ${need.king} and a ${NAME[need.color]} rook on ${need.rook}`,
      );
  }
  if (game.isGameOver()) {
    const how = game.isCheckmate()
      ? "checkmate"
      : game.isStalemate()
        ? "stalemate"
        : game.isInsufficientMaterial()
          ? "insufficient material"
          : game.isThreefoldRepetition()
            ? "threefold repetition"
            : "fifty-move rule";
    return `the game is over in this position (${how}): there is no move to make`;
  }
  return undefined;
}
