/**
 * Chess against the configured language model (docs/GAMES.md "Chess vs the model"): the position
 * goes to an OpenAI-compatible `/chat/completions` with a fixed system prompt; the answer counts
 * only when it is JSON naming one of the legal moves in UCI. Otherwise (disabled, time-out, HTTP
 * error, non-JSON, illegal move) a deterministic greedy choice answers, so a position that is not
 * over always gets a legal move.
 */
import type { Chess, Move } from "chess.js";
import { UCI } from "./frames.ts";
import { uciOf } from "./room.ts";

/** The `mcp.llm` keys the chess widget shares with the natural-language bridge (docs/GAMES.md "Configuration"). */
export interface ChessLlmConfig {
  enable: boolean;
  base_url: string;
  api_key: string;
  model: string;
  temperature: number;
  max_tokens: number;
  timeout_sec: number;
}

export const CHESS_SYSTEM_PROMPT = [
  "You are a chess engine playing a game through an API.",
  "You receive a position in FEN and the list of legal moves in UCI notation (from square, to square, promotion piece: e2e4, e7e8q).",
  'Choose the best move for the side to move and answer with one JSON object and nothing else: {"move": "<uci>"}.',
  "The move must be copied exactly from the list of legal moves.",
].join(" ");

export interface MoveChoice {
  uci: string;
  san: string;
  /** Position after the move. */
  fen: string;
  source: "llm" | "fallback";
  /** Why the model's answer was not used (only with `fallback`). */
  reason?: string;
}

const VALUE: Record<string, number> = { p: 1, n: 3, b: 3, r: 5, q: 9, k: 0 };

/**
 * The fallback: mate first, then the most valuable capture by the least valuable piece, then
 * promotion, then check; ties go to the first move in UCI order. Deterministic, so a test can
 * name the move it expects.
 */
export function greedyMove(game: Chess): Move | undefined {
  let best: Move | undefined;
  let bestScore = -Infinity;
  const moves = game.moves({ verbose: true }).sort((a, b) => (uciOf(a) < uciOf(b) ? -1 : uciOf(a) > uciOf(b) ? 1 : 0));
  for (const m of moves) {
    let score = 0;
    if (m.san.endsWith("#")) score += 10_000;
    if (m.captured) score += VALUE[m.captured]! * 100 - VALUE[m.piece]!;
    if (m.promotion) score += VALUE[m.promotion]! * 90;
    if (m.san.endsWith("+")) score += 10;
    if (score > bestScore) {
      best = m;
      bestScore = score;
    }
  }
  return best;
}

/** The model's move, or the reason there is none. Never throws. */
async function askModel(
  cfg: ChessLlmConfig,
  fen: string,
  legal: string[],
): Promise<{ ok: true; uci: string } | { ok: false; reason: string }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  // The credential goes out only when one is configured (docs/MCP.md "Language model").
  if (cfg.api_key) headers.authorization = `Bearer ${cfg.api_key}`;
  let res: Response;
  try {
    res = await fetch(`${cfg.base_url.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers,
      signal: AbortSignal.timeout(cfg.timeout_sec * 1000),
      body: JSON.stringify({
        model: cfg.model,
        temperature: cfg.temperature,
        max_tokens: cfg.max_tokens,
        response_format: { type: "json_object" },
        messages: [
          { role: "system", content: CHESS_SYSTEM_PROMPT },
          { role: "user", content: `Position (FEN): ${fen}\nLegal moves: ${legal.join(" ")}` },
        ],
      }),
    });
  } catch (e) {
    return {
      ok: false,
      reason:
        e instanceof Error && e.name === "TimeoutError"
          ? `no answer within ${cfg.timeout_sec} s`
          : "the model provider could not be reached",
    };
  }
  if (!res.ok) return { ok: false, reason: `the model provider answered HTTP ${res.status}` };
  let content: unknown;
  try {
    const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
    content = body.choices?.[0]?.message?.content;
  } catch {
    return { ok: false, reason: "the model provider's answer is not JSON" };
  }
  if (typeof content !== "string") return { ok: false, reason: "the model's answer has no message content" };
  let move: unknown;
  try {
    move = (JSON.parse(content) as { move?: unknown }).move;
  } catch {
    return { ok: false, reason: "the model did not answer with a JSON object" };
  }
  if (typeof move !== "string" || !UCI.test(move.trim().toLowerCase()))
    return { ok: false, reason: "the model's answer has no move in UCI notation" };
  const uci = move.trim().toLowerCase();
  if (!legal.includes(uci)) return { ok: false, reason: `the model's move ${uci} is not legal in this position` };
  return { ok: true, uci };
}

/** A legal move for the side to move of `game` (not over): the model's when it gives a legal one. */
export async function chooseMove(game: Chess, cfg: ChessLlmConfig | undefined): Promise<MoveChoice> {
  const legal = game.moves({ verbose: true }).map(uciOf);
  let reason = "the language model is not enabled (mcp.llm.enable)";
  if (cfg && llmEnabled(cfg)) {
    const r = await askModel(cfg, game.fen(), legal);
    if (r.ok) {
      const m = game.move({
        from: r.uci.slice(0, 2),
        to: r.uci.slice(2, 4),
        ...(r.uci.length === 5 ? { promotion: r.uci[4] } : {}),
      });
      return { uci: r.uci, san: m.san, fen: game.fen(), source: "llm" };
    }
    reason = r.reason;
  }
  const g = greedyMove(game)!;
  const m = game.move({ from: g.from, to: g.to, ...(g.promotion ? { promotion: g.promotion } : {}) });
  return { uci: uciOf(m), san: m.san, fen: game.fen(), source: "fallback", reason };
}

export const llmEnabled = (cfg: ChessLlmConfig): boolean =>
  cfg.enable && cfg.base_url.trim() !== "" && cfg.model.trim() !== "";
