/**
 * Chess widget: the user plays the configured language model, or the server's greedy fallback
 * when none is configured (docs/GAMES.md "Chess vs the model"). The game lives in the browser
 * (chess.js); each reply comes from `POST /games/chess/llm-move`, which always returns a legal move.
 */
import { Chess } from "chess.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, get, post } from "../../lib/api.ts";
import { html } from "../../lib/html.ts";
import type { WidgetProps } from "../../widgets/types.ts";
import { Board, legalUci, moveOf, type Side } from "./board.ts";

interface Reply {
  uci: string;
  san: string;
  fen: string;
  source: "llm" | "fallback";
  reason?: string;
}

/** Why the game is over (chess.js rules), or null while it goes on. */
export function outcomeText(g: Chess): string | null {
  if (g.isCheckmate()) return `Checkmate: ${g.turn() === "w" ? "Black" : "White"} wins`;
  if (g.isStalemate()) return "Draw by stalemate";
  if (g.isInsufficientMaterial()) return "Draw: insufficient material";
  if (g.isThreefoldRepetition()) return "Draw by threefold repetition";
  if (g.isDrawByFiftyMoves()) return "Draw by the fifty-move rule";
  return null;
}

export function ChessWidget(_: WidgetProps) {
  const game = useRef(new Chess());
  const [fen, setFen] = useState(game.current.fen());
  const [side, setSide] = useState<Side>("white");
  const [llm, setLlm] = useState<"loading" | "model" | "fallback" | string>("loading");
  const [thinking, setThinking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [last, setLast] = useState<{ uci: string; note: string } | undefined>();
  const [moves, setMoves] = useState<string[]>([]);
  const gen = useRef(0);

  useEffect(() => {
    get<{ enabled: boolean }>("/games/chess/llm-status").then(
      (s) => setLlm(s.enabled ? "model" : "fallback"),
      (e) => setLlm(errorText(e)),
    );
  }, []);

  const sync = () => {
    setFen(game.current.fen());
    setMoves(game.current.history());
  };

  const reply = async () => {
    const my = gen.current;
    setThinking(true);
    setError(null);
    try {
      const r = await post<Reply>("/games/chess/llm-move", { fen: game.current.fen() });
      if (my !== gen.current) return;
      game.current.move(moveOf(r.uci));
      setLast({
        uci: r.uci,
        note: r.source === "llm" ? `${r.san} (model)` : `${r.san} (fallback${r.reason ? `: ${r.reason}` : ""})`,
      });
      sync();
    } catch (e) {
      if (my === gen.current) setError(`The opponent could not move: ${errorText(e)}`);
    } finally {
      if (my === gen.current) setThinking(false);
    }
  };

  const newGame = (s: Side) => {
    gen.current++;
    game.current = new Chess();
    setSide(s);
    setLast(undefined);
    setError(null);
    setThinking(false);
    sync();
    if (s === "black") void reply();
  };

  const g = game.current;
  const over = outcomeText(g);
  const myTurn = !over && !thinking && (g.turn() === "w") === (side === "white");
  const status = over ?? (thinking ? "Opponent is thinking…" : myTurn ? `Your move (${side})` : "Opponent to move");
  const opponent =
    llm === "loading"
      ? "checking…"
      : llm === "model"
        ? "language model"
        : llm === "fallback"
          ? "server fallback"
          : `unavailable: ${llm}`;
  const opponentHint =
    llm === "fallback"
      ? "No language model is configured (mcp.llm): the server picks its moves (mate, best capture, check)"
      : undefined;

  return html`<div class="chess-widget">
    <div class="chess-bar">
      <span class="small" title=${opponentHint}>Opponent: <strong>${opponent}</strong></span>
      <label class="small">Play as <select aria-label="Play as" value=${side} onChange=${(e: Event) => newGame((e.target as HTMLSelectElement).value as Side)}>
        <option value="white">White</option><option value="black">Black</option>
      </select></label>
      <button type="button" class="btn" onClick=${() => newGame(side)}>New game</button>
    </div>
    <p class="chess-status" role="status">${status}</p>
    <div class="chess-main">
      <${Board} fen=${fen} orientation=${side} label="Chess board" legal=${myTurn ? legalUci(g) : []} lastMove=${last?.uci} onMove=${(
        uci: string,
      ) => {
        g.move(moveOf(uci));
        setLast({ uci, note: "" });
        sync();
        if (!outcomeText(g)) void reply();
      }} />
      <div class="chess-side">
        ${last?.note && html`<p class="small chess-note">Opponent played ${last.note}</p>`}
        ${error && html`<p class="alert alert-error" role="alert">${error} <button type="button" class="btn" onClick=${() => void reply()}>Retry</button></p>`}
        <ol class="chess-moves" aria-label="Moves">
          ${Array.from({ length: Math.ceil(moves.length / 2) }, (_, i) => html`<li key=${i}>${moves[2 * i]} ${moves[2 * i + 1] ?? ""}</li>`)}
        </ol>
      </div>
    </div>
  </div>`;
}
