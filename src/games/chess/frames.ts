/**
 * NetChess frames (docs/GAMES.md "NetChess"): JSON text frames with a `type` member. The client
 * frames are parsed here (pure), the server frames are typed so the relay and the widget agree.
 */
export type Color = "white" | "black";

export type ClientFrame =
  | { type: "hello" | "ready" | "resign" }
  | { type: "move"; uci: string }
  | { type: "draw_offer" | "draw_accept" | "draw_decline" }
  | { type: "takeback_request" | "takeback_accept" | "takeback_decline" }
  | { type: "chat"; text: string };

export type GameOverReason =
  | "checkmate"
  | "stalemate"
  | "resignation"
  | "agreement"
  | "flag"
  | "insufficient_material"
  | "fifty_move"
  | "threefold_repetition"
  | "opponent_disconnect";

export interface Clocks {
  white_ms: number;
  black_ms: number;
}

/** What the side to move may play, sent with every position (the widget highlights from it; tests compare it with perft). */
export interface Position extends Clocks {
  fen: string;
  legal_moves: string[];
}

export type ServerFrame =
  | {
      type: "waiting";
      room: string;
      color: Color | "random";
      initial_ms: number;
      increment_ms: number;
      timeout_ms: number;
    }
  | {
      type: "matched";
      you: string;
      opponent: string;
      color: Color | null;
      room: string;
      initial_ms: number;
      increment_ms: number;
      spectator?: true;
      white: string;
      black: string;
    }
  | { type: "player_ready"; color: Color }
  | ({ type: "start" } & Position)
  | ({ type: "opponent_move"; uci: string; san: string; by: Color } & Position)
  | ({ type: "clock_sync"; started: boolean } & Position)
  | ({ type: "game_over"; result: "1-0" | "0-1" | "1/2-1/2"; reason: GameOverReason } & Clocks)
  | { type: "draw_offered" | "takeback_offered"; from: Color }
  | { type: "draw_declined" | "takeback_declined"; from: Color }
  | { type: "chat"; from: string; color: Color | null; text: string }
  | { type: "spectators"; count: number }
  | { type: "opponent_left" | "waiting_timeout" }
  | { type: "error"; message: string };

/** Longest chat line after sanitising (characters). */
export const CHAT_MAX = 200;
/** Longest display name after sanitising, as for Netris (docs/API.md "Limits"). */
export const DISPLAY_MAX = 32;
/** Largest client frame read (bytes); a longer one is answered with an error frame. */
export const FRAME_MAX = 1024;

/**
 * Text a person typed, made safe to show to others: control and format characters (bidi
 * overrides, zero-width) removed, runs of white space folded, trimmed, cut to `max` characters.
 * The widget renders it as text, never as HTML.
 */
export function sanitizeText(raw: string, max: number): string {
  const cleaned = raw
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  return [...cleaned].slice(0, max).join("").trim();
}

const BARE = new Set([
  "hello",
  "ready",
  "resign",
  "draw_offer",
  "draw_accept",
  "draw_decline",
  "takeback_request",
  "takeback_accept",
  "takeback_decline",
]);
export const UCI = /^[a-h][1-8][a-h][1-8][qrbn]?$/;

/** A client frame, or the reason it is not one (sent back in an `error` frame). */
export function parseClientFrame(text: string): { ok: true; value: ClientFrame } | { ok: false; reason: string } {
  if (text.length > FRAME_MAX) return { ok: false, reason: `frame longer than ${FRAME_MAX} bytes` };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, reason: "frame is not JSON" };
  }
  if (!v || typeof v !== "object" || Array.isArray(v))
    return { ok: false, reason: "frame must be a JSON object with a type" };
  const o = v as Record<string, unknown>;
  const type = o.type;
  if (typeof type !== "string") return { ok: false, reason: "frame must be a JSON object with a type" };
  if (BARE.has(type)) return { ok: true, value: { type } as ClientFrame };
  if (type === "move") {
    if (typeof o.uci !== "string" || !UCI.test(o.uci))
      return { ok: false, reason: "move needs uci: a move in UCI notation such as e2e4 or e7e8q" };
    return { ok: true, value: { type, uci: o.uci } };
  }
  if (type === "chat") {
    if (typeof o.text !== "string") return { ok: false, reason: "chat needs text" };
    return { ok: true, value: { type, text: o.text } };
  }
  return { ok: false, reason: `unknown frame type ${JSON.stringify(type.slice(0, 40))}` };
}
