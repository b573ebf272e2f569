/**
 * One NetChess room (docs/GAMES.md "NetChess"): two seats, up to 8 spectators, the authoritative
 * chess.js game and the server clocks with a flag timer. Sockets are behind `Seat` so this file
 * knows no transport; the relay (relay.ts) creates rooms and routes frames here.
 */
import { Chess, type Move } from "chess.js";
import {
  CHAT_MAX,
  sanitizeText,
  type ClientFrame,
  type Color,
  type GameOverReason,
  type Position,
  type ServerFrame,
} from "./frames.ts";

export interface Seat {
  send(frame: ServerFrame): void;
  close(code: number, reason: string): void;
}

export interface Member {
  seat: Seat;
  /** JWT `username` claim. */
  username: string;
  /** Sanitised display label (the username when none was given). */
  display: string;
}

export interface RoomOptions {
  code: string;
  initialMs: number;
  incrementMs: number;
  /** Start position (a room's creator may give one; chess.js validated it). */
  fen?: string;
  waitingTimeoutMs: number;
  syncIntervalMs: number;
  /** Called once the last player has left or the lone player timed out. */
  onClosed(room: ChessRoom): void;
  /** Called when a seat is free again before the start (the other player left): quick rooms queue again. */
  onWaiting(room: ChessRoom): void;
}

export const MAX_SPECTATORS = 8;
/** Chat lines a player may send per `CHAT_WINDOW_MS` (more is answered with an error, not relayed). */
export const CHAT_BURST = 10;
export const CHAT_WINDOW_MS = 10_000;
export const other = (c: Color): Color => (c === "white" ? "black" : "white");
const short = (c: Color): "w" | "b" => (c === "white" ? "w" : "b");
export const uciOf = (m: Pick<Move, "from" | "to" | "promotion">): string => `${m.from}${m.to}${m.promotion ?? ""}`;

type State = "waiting" | "matched" | "playing" | "over";

/** The side whose pieces cannot mate by force (lone king, or king and one minor piece): a flag then draws (FIDE 6.9). */
function cannotMate(game: Chess, color: Color): boolean {
  const mine = game
    .board()
    .flat()
    .filter((p) => p && p.color === short(color) && p.type !== "k");
  return mine.length === 0 || (mine.length === 1 && (mine[0]!.type === "n" || mine[0]!.type === "b"));
}

export class ChessRoom {
  readonly code: string;
  readonly game: Chess;
  readonly seats: { white?: Member; black?: Member } = {};
  readonly spectators = new Set<Member>();
  state: State = "waiting";
  private readonly ready = new Set<Color>();
  private readonly clocks: Record<Color, number>;
  private turnStartedAt = 0;
  private drawOffer: Color | undefined;
  private takebackOffer: Color | undefined;
  private flagTimer: ReturnType<typeof setTimeout> | undefined;
  private waitTimer: ReturnType<typeof setTimeout> | undefined;
  private syncTimer: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private readonly chatTimes = new WeakMap<Member, number[]>();

  constructor(private readonly opts: RoomOptions) {
    this.code = opts.code;
    this.game = new Chess(opts.fen);
    this.clocks = { white: opts.initialMs, black: opts.initialMs };
  }

  get players(): number {
    return (this.seats.white ? 1 : 0) + (this.seats.black ? 1 : 0);
  }

  /** Seats a player; the first joiner's colour wish is kept, the second takes the other colour. */
  addPlayer(m: Member, wish: Color | "random"): void {
    const taken = this.seats.white ? "white" : this.seats.black ? "black" : undefined;
    const color: Color = taken ? other(taken) : wish === "random" ? (Math.random() < 0.5 ? "white" : "black") : wish;
    this.seats[color] = m;
    if (this.players === 1) {
      this.state = "waiting";
      m.seat.send({
        type: "waiting",
        room: this.code,
        color,
        initial_ms: this.opts.initialMs,
        increment_ms: this.opts.incrementMs,
        timeout_ms: this.opts.waitingTimeoutMs,
      });
      this.waitTimer = setTimeout(() => this.waitingTimedOut(), this.opts.waitingTimeoutMs);
      return;
    }
    clearTimeout(this.waitTimer);
    this.state = "matched";
    this.ready.clear();
    for (const c of ["white", "black"] as const) this.seats[c]!.seat.send(this.matchedFrame(c));
    for (const s of this.spectators) s.seat.send(this.matchedFrame(null, s));
  }

  /** Adds a read-only watcher; false when the room already has `MAX_SPECTATORS`. */
  addSpectator(m: Member): boolean {
    if (this.spectators.size >= MAX_SPECTATORS) return false;
    this.spectators.add(m);
    m.seat.send(this.matchedFrame(null, m));
    m.seat.send({ type: "clock_sync", started: this.state === "playing" || this.state === "over", ...this.position() });
    this.broadcast({ type: "spectators", count: this.spectators.size });
    return true;
  }

  private matchedFrame(color: Color | null, viewer?: Member): ServerFrame {
    const w = this.seats.white?.display ?? "";
    const b = this.seats.black?.display ?? "";
    const you = color ? this.seats[color]!.display : (viewer?.display ?? "");
    const base = {
      type: "matched" as const,
      you,
      opponent: color ? (color === "white" ? b : w) : "",
      color,
      room: this.code,
      initial_ms: this.opts.initialMs,
      increment_ms: this.opts.incrementMs,
      white: w,
      black: b,
    };
    return color ? base : { ...base, spectator: true as const };
  }

  colorOf(m: Member): Color | undefined {
    return this.seats.white === m ? "white" : this.seats.black === m ? "black" : undefined;
  }

  /** Remaining time of `c` now (the side to move's clock runs while playing). */
  remaining(c: Color, now = Date.now()): number {
    const running = this.state === "playing" && this.game.turn() === short(c);
    return Math.max(0, this.clocks[c] - (running ? now - this.turnStartedAt : 0));
  }

  legalMoves(): string[] {
    return this.state === "over" ? [] : this.game.moves({ verbose: true }).map(uciOf);
  }

  /** The position and both clocks as of `now` (one instant for both, so a frame adds up). */
  position(now = Date.now()): Position {
    return {
      fen: this.game.fen(),
      legal_moves: this.legalMoves(),
      white_ms: this.remaining("white", now),
      black_ms: this.remaining("black", now),
    };
  }

  broadcast(frame: ServerFrame): void {
    this.seats.white?.seat.send(frame);
    this.seats.black?.seat.send(frame);
    for (const s of this.spectators) s.seat.send(frame);
  }

  /** A frame from a member; every refusal is an `error` frame that leaves the game unchanged. */
  handle(m: Member, f: ClientFrame): void {
    const color = this.colorOf(m);
    if (f.type === "hello") return this.hello(m, color);
    if (!color) return m.seat.send({ type: "error", message: "spectators are read-only" });
    const fail = (message: string) => m.seat.send({ type: "error", message });
    if (f.type === "chat") {
      const text = sanitizeText(f.text, CHAT_MAX);
      if (!text) return fail("chat text is empty");
      const now = Date.now();
      const recent = (this.chatTimes.get(m) ?? []).filter((t) => now - t < CHAT_WINDOW_MS);
      if (recent.length >= CHAT_BURST) return fail(`chat: at most ${CHAT_BURST} lines per ${CHAT_WINDOW_MS / 1000} s`);
      this.chatTimes.set(m, [...recent, now]);
      return this.broadcast({ type: "chat", from: m.display, color, text });
    }
    if (f.type === "ready") {
      if (this.state !== "matched")
        return fail(this.state === "waiting" ? "wait for an opponent before ready" : "the game has already started");
      this.ready.add(color);
      this.broadcast({ type: "player_ready", color });
      if (this.ready.size === 2) this.start();
      return;
    }
    if (this.state !== "playing")
      return fail(this.state === "over" ? "the game is over" : "the game has not started: both players send ready");
    switch (f.type) {
      case "move":
        return this.move(color, f.uci, fail);
      case "resign":
        return this.finish(color === "white" ? "0-1" : "1-0", "resignation");
      case "draw_offer":
        if (this.drawOffer === color) return fail("your draw offer is still open");
        this.drawOffer = color;
        return this.seats[other(color)]?.seat.send({ type: "draw_offered", from: color });
      case "draw_accept":
        if (this.drawOffer !== other(color)) return fail("there is no draw offer to accept");
        return this.finish("1/2-1/2", "agreement");
      case "draw_decline":
        if (this.drawOffer !== other(color)) return fail("there is no draw offer to decline");
        this.drawOffer = undefined;
        return this.seats[other(color)]?.seat.send({ type: "draw_declined", from: color });
      case "takeback_request":
        if (this.pliesToTakeBack(color) === 0) return fail("you have no move to take back");
        if (this.takebackOffer === color) return fail("your takeback request is still open");
        this.takebackOffer = color;
        return this.seats[other(color)]?.seat.send({ type: "takeback_offered", from: color });
      case "takeback_accept":
        if (this.takebackOffer !== other(color)) return fail("there is no takeback request to accept");
        return this.takeBack(other(color));
      case "takeback_decline":
        if (this.takebackOffer !== other(color)) return fail("there is no takeback request to decline");
        this.takebackOffer = undefined;
        return this.seats[other(color)]?.seat.send({ type: "takeback_declined", from: color });
    }
  }

  /** `hello` re-sends the member's view (a widget that lost its state asks with it). */
  private hello(m: Member, color: Color | undefined): void {
    if (this.state !== "waiting") m.seat.send(this.matchedFrame(color ?? null, m));
    m.seat.send({ type: "clock_sync", started: this.state === "playing" || this.state === "over", ...this.position() });
  }

  private start(): void {
    this.state = "playing";
    this.turnStartedAt = Date.now();
    this.armFlag();
    this.syncTimer = setInterval(
      () => this.broadcast({ type: "clock_sync", started: true, ...this.position() }),
      this.opts.syncIntervalMs,
    );
    this.broadcast({ type: "start", ...this.position(this.turnStartedAt) });
  }

  private move(color: Color, uci: string, fail: (m: string) => void): void {
    if (this.game.turn() !== short(color)) return fail(`not your turn: ${other(color)} to move`);
    if (this.remaining(color) <= 0) return this.flag(color);
    if (!this.legalMoves().includes(uci)) return fail(`illegal move ${uci} in this position`);
    const left = this.remaining(color);
    const done = this.game.move({
      from: uci.slice(0, 2),
      to: uci.slice(2, 4),
      ...(uci.length === 5 ? { promotion: uci[4] } : {}),
    });
    this.clocks[color] = left + this.opts.incrementMs;
    this.turnStartedAt = Date.now();
    this.drawOffer = undefined;
    this.takebackOffer = undefined;
    const outcome = this.outcome(color);
    if (outcome) this.state = "over";
    this.broadcast({ type: "opponent_move", uci, san: done.san, by: color, ...this.position(this.turnStartedAt) });
    if (outcome) this.finish(outcome.result, outcome.reason);
    else this.armFlag();
  }

  /** How the game ended after `mover`'s move, in the order the rules decide (mate before the draws). */
  private outcome(mover: Color): { result: "1-0" | "0-1" | "1/2-1/2"; reason: GameOverReason } | undefined {
    const g = this.game;
    if (g.isCheckmate()) return { result: mover === "white" ? "1-0" : "0-1", reason: "checkmate" };
    if (g.isStalemate()) return { result: "1/2-1/2", reason: "stalemate" };
    if (g.isInsufficientMaterial()) return { result: "1/2-1/2", reason: "insufficient_material" };
    if (g.isThreefoldRepetition()) return { result: "1/2-1/2", reason: "threefold_repetition" };
    if (g.isDrawByFiftyMoves()) return { result: "1/2-1/2", reason: "fifty_move" };
    return undefined;
  }

  private pliesToTakeBack(requester: Color): number {
    const plies = this.game.history().length;
    const lastMover: Color = this.game.turn() === "w" ? "black" : "white";
    if (lastMover === requester) return plies >= 1 ? 1 : 0;
    return plies >= 2 ? 2 : 0;
  }

  /** Undoes the requester's last move (and the reply to it); clocks keep the time already used. */
  private takeBack(requester: Color): void {
    const mover: Color = this.game.turn() === "w" ? "white" : "black";
    this.clocks[mover] = this.remaining(mover);
    for (let n = this.pliesToTakeBack(requester); n > 0; n--) this.game.undo();
    this.turnStartedAt = Date.now();
    this.takebackOffer = undefined;
    this.drawOffer = undefined;
    this.armFlag();
    this.broadcast({ type: "clock_sync", started: true, ...this.position(this.turnStartedAt) });
  }

  private armFlag(): void {
    clearTimeout(this.flagTimer);
    const mover: Color = this.game.turn() === "w" ? "white" : "black";
    this.flagTimer = setTimeout(() => {
      if (this.state !== "playing") return;
      if (this.remaining(mover) > 0) return this.armFlag();
      this.flag(mover);
    }, this.remaining(mover) + 1);
  }

  private flag(loser: Color): void {
    this.clocks[loser] = 0;
    this.turnStartedAt = Date.now();
    const winner = other(loser);
    this.finish(cannotMate(this.game, winner) ? "1/2-1/2" : winner === "white" ? "1-0" : "0-1", "flag");
  }

  private finish(result: "1-0" | "0-1" | "1/2-1/2", reason: GameOverReason): void {
    const clocks = { white_ms: this.remaining("white"), black_ms: this.remaining("black") };
    this.clocks.white = clocks.white_ms;
    this.clocks.black = clocks.black_ms;
    this.state = "over";
    this.stopTimers();
    this.broadcast({ type: "game_over", result, reason, ...clocks });
  }

  /** A member's socket closed. A player leaving a running game loses it (`opponent_disconnect`). */
  leave(m: Member): void {
    if (this.spectators.delete(m)) return this.broadcast({ type: "spectators", count: this.spectators.size });
    const color = this.colorOf(m);
    if (!color) return;
    const state = this.state;
    if (state === "playing") this.finish(color === "white" ? "0-1" : "1-0", "opponent_disconnect");
    delete this.seats[color];
    const rest = this.seats[other(color)];
    rest?.seat.send({ type: "opponent_left" });
    for (const s of this.spectators) s.seat.send({ type: "opponent_left" });
    if (!rest) return this.close();
    if (state === "matched") {
      // Back to waiting for a new opponent, with a fresh time-out.
      this.state = "waiting";
      this.ready.clear();
      this.waitTimer = setTimeout(() => this.waitingTimedOut(), this.opts.waitingTimeoutMs);
      this.opts.onWaiting(this);
    }
  }

  private waitingTimedOut(): void {
    if (this.state !== "waiting") return;
    for (const m of [this.seats.white, this.seats.black, ...this.spectators]) {
      m?.seat.send({ type: "waiting_timeout" });
      m?.seat.close(1000, "no opponent joined in time");
    }
    this.close();
  }

  private stopTimers(): void {
    clearTimeout(this.flagTimer);
    clearTimeout(this.waitTimer);
    clearInterval(this.syncTimer);
  }

  /** Ends the room: timers stop, spectators are told and disconnected. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopTimers();
    for (const s of this.spectators) s.seat.close(1000, "the room has closed");
    this.spectators.clear();
    this.opts.onClosed(this);
  }
}
