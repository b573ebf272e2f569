/**
 * chess.js perft positions through the NetChess relay (docs/GAMES.md "NetChess"): a room
 * opened at each position of the chessprogramming.org perft suite, then a seeded walk of legal
 * moves played by two `ws` clients. At every step the relay's legal-move list must match the
 * published perft(1) count at the root and chess.js's own list and FEN all along the walk.
 */
import { describe, expect, test } from "bun:test";
import { Chess } from "chess.js";
import { seeded } from "../fixtures/seeded.ts";
import { tempDir } from "../harness.ts";
import { startChessAppliance, startGame } from "./netchess-helpers.ts";

/** FEN and perft(1) from https://www.chessprogramming.org/Perft_Results (positions 1-6). */
const POSITIONS: Array<[string, string, number]> = [
  ["initial", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 20],
  ["kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 48],
  ["position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 14],
  ["position 4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 6],
  ["position 5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 44],
  ["position 6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 46],
];

const sorted = (a: string[]) => [...a].sort();
const localMoves = (g: Chess) => g.moves({ verbose: true }).map((m) => `${m.from}${m.to}${m.promotion ?? ""}`);

describe("NetChess perft positions", () => {
  test("the relay's legal moves and FEN match perft(1) and chess.js along a seeded walk from each position", async () => {
    await using dir = tempDir();
    await using a = await startChessAppliance(dir.path);
    const rand = seeded(22);
    for (const [name, fen, perft1] of POSITIONS) {
      const { white, black, start } = await startGame(a, { fen });
      using _w = white;
      using _b = black;
      expect(start.fen, name).toBe(fen);
      expect(start.legal_moves, name).toHaveLength(perft1);
      const local = new Chess(fen);
      expect(sorted(start.legal_moves), name).toEqual(sorted(localMoves(local)));
      let legal = start.legal_moves;
      for (let ply = 0; ply < 16 && legal.length > 0 && !local.isGameOver(); ply++) {
        const uci = legal[Math.floor(rand() * legal.length)]!;
        const side = local.turn() === "w" ? white : black;
        const other = side === white ? black : white;
        side.move(uci);
        const [mine, theirs] = await Promise.all([side.next("opponent_move"), other.next("opponent_move")]);
        local.move({ from: uci.slice(0, 2), to: uci.slice(2, 4), ...(uci.length === 5 ? { promotion: uci[4] } : {}) });
        expect(mine.fen, `${name} after ${uci}`).toBe(local.fen());
        expect(theirs.fen).toBe(mine.fen);
        expect(sorted(mine.legal_moves), `${name} after ${uci}`).toEqual(
          local.isGameOver() ? [] : sorted(localMoves(local)),
        );
        legal = mine.legal_moves;
      }
    }
  });
});
