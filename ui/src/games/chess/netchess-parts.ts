/** Small parts of the NetChess widget: a clock, a yes/no prompt (Esc answers no), the result line. */
import { useEffect, useRef, useState } from "preact/hooks";
import { html } from "../../lib/html.ts";
import type { Side } from "./board.ts";

const REASON: Record<string, string> = {
  checkmate: "checkmate",
  stalemate: "stalemate",
  resignation: "resignation",
  agreement: "agreement",
  flag: "time (flag)",
  insufficient_material: "insufficient material",
  fifty_move: "the fifty-move rule",
  threefold_repetition: "threefold repetition",
  opponent_disconnect: "the opponent disconnecting",
};

export const formatClock = (ms: number): string => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
};

/** Counts the running clock down locally from the last frame (the server's flag decides). */
export function Clock({ label, ms, at, running }: { label: string; ms: number; at: number; running: boolean }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [running, at]);
  const left = running ? ms - (Math.max(now, at) - at) : ms;
  return html`<div class=${`chess-clock${running ? " running" : ""}${left < 10_000 ? " low" : ""}`} role="timer" aria-label=${`${label} clock`}>
    <span>${label}</span><strong>${formatClock(left)}</strong>
  </div>`;
}

interface PromptProps {
  offer?: { kind: "draw" | "takeback"; from: Side };
  question?: string;
  onAnswer(yes: boolean): void;
  /** Focus the first button (a question the user asked for); an offer from the opponent must not take the focus from what the user is typing. */
  autoFocus?: boolean;
}

/** An inline question (draw or takeback offer, resign confirmation); Esc answers no. */
export function OfferPrompt({ offer, question, onAnswer, autoFocus }: PromptProps) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (autoFocus) ref.current?.querySelector<HTMLButtonElement>("button")?.focus();
  }, []);
  const text =
    question ??
    (offer?.kind === "draw"
      ? `${offer.from === "white" ? "White" : "Black"} offers a draw.`
      : `${offer?.from === "white" ? "White" : "Black"} asks to take back a move.`);
  return html`<div class="chess-prompt" role="alertdialog" aria-label=${text} ref=${ref} onKeyDown=${(
    e: KeyboardEvent,
  ) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      onAnswer(false);
    }
  }}>
    <span>${text}</span>
    <button type="button" class="btn btn-primary" onClick=${() => onAnswer(true)}>${question ? "Yes" : "Accept"}</button>
    <button type="button" class="btn" onClick=${() => onAnswer(false)}>${question ? "No" : "Decline"}</button>
  </div>`;
}

export function ResultBanner({ over, me }: { over: { result: string; reason: string }; me: Side | null }) {
  const winner = over.result === "1-0" ? "white" : over.result === "0-1" ? "black" : null;
  const head =
    winner === null
      ? "Draw"
      : me === null
        ? `${winner === "white" ? "White" : "Black"} wins`
        : winner === me
          ? "You won"
          : "You lost";
  return html`<p class="chess-result" role="status"><strong>${head}</strong> (${over.result}) by ${REASON[over.reason] ?? over.reason}.</p>`;
}
