import { describe, expect, test } from "bun:test";
import { positionProblem } from "./position.ts";

describe('positionProblem (docs/GAMES.md "Chess vs the model")', () => {
  test.each([
    ["the start position", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"],
    ["kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"],
    ["promoted pieces with pawns missing", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"],
    ["in check from two pieces", "4k3/8/8/8/8/2b5/8/4K2r w - - 0 1"],
    ["one move before the fifty-move rule", "k7/8/8/8/8/8/8/4K2R w K - 99 80"],
  ])("accepts %s", (_name, fen) => {
    expect(positionProblem(fen)).toBeUndefined();
  });

  test.each([
    ["not a FEN", "not a fen", "fen is not a valid position"],
    ["no black king", "8/8/8/8/8/8/8/4K3 w - - 0 1", "fen is not a valid position"],
    ["the side not to move in check", "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1", "black is in check but it is white's move"],
    ["kings side by side", "8/8/8/3kK3/8/8/8/8 w - - 0 1", "the kings stand next to each other"],
    ["three checkers", "4k3/8/8/8/8/2b5/8/r3K2r w - - 0 1", "the white king is in check from 3 pieces"],
    ["nine pawns", "4k3/pppppppp/p7/8/8/8/8/4K3 w - - 0 1", "black has 9 pawns: at most 8"],
    [
      "more promotions than missing pawns",
      "4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 b - - 0 1",
      "white has 1 more queens, rooks, bishops or knights than at the start, but only 0 missing pawns to have promoted",
    ],
    [
      "a castling right without its rook",
      "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
      "castling right K needs the white king on e1 and a white rook on h1",
    ],
    [
      "checkmate",
      "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
      "the game is over in this position (checkmate)",
    ],
    ["stalemate", "k7/8/1Q6/8/8/8/8/7K b - - 0 1", "the game is over in this position (stalemate)"],
    ["bare kings", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", "the game is over in this position (insufficient material)"],
    [
      "the fifty-move rule",
      "4k3/8/8/8/8/8/4R3/4K3 b - - 100 80",
      "the game is over in this position (fifty-move rule)",
    ],
  ])("refuses %s", (_name, fen, message) => {
    expect(positionProblem(fen)).toContain(message);
  });
});
