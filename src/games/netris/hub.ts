/**
 * The Netris relay (docs/GAMES.md "Netris", "States"): rooms of two
 * players, named or paired first-in-first-out (`quick`), a 60 s wait for an opponent, Ready from
 * both, then the server relays boards and turns reported line clears into garbage rows for the
 * opponent (1→0, 2→1, 3→2, 4→4, one hole column per burst). The clients own their boards (the
 * server trusts them); the server owns pairing, the garbage rule and who wins.
 *
 * The hub knows no sockets: a seat talks to a `NetrisPeer` (send a frame, close), and time goes
 * through an injected `Clock`, so the wait time-out is tested with a fake clock.
 */
export interface NetrisPeer {
  send(frame: NetrisServerFrame): void;
  close(code: number, reason: string): void;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** docs/API.md "Limits": a lone player waits at most 60 s. */
export const WAITING_TIMEOUT_MS = 60_000;
export const BOARD_ROWS = 20;
export const BOARD_COLS = 10;
/** Garbage rows sent for 1, 2, 3, 4 cleared lines (docs/GAMES.md "Netris"). */
export const GARBAGE = [0, 0, 1, 2, 4] as const;

/** WebSocket close codes the relay uses (RFC 6455 section 7.4.1). */
export const CLOSE = { normal: 1000, policy: 1008 } as const;

export type NetrisServerFrame =
  | { type: "waiting"; room: string; you: string; timeout_ms: number }
  | { type: "waiting_timeout"; room: string }
  | { type: "matched"; room: string; you: string; opponent: string }
  | { type: "ready"; from: "you" | "opponent" }
  | { type: "start"; seed: number }
  | { type: "line_clear"; lines: number; garbage: number }
  | { type: "garbage_in"; lines: number; hole: number }
  | { type: "opponent_board"; rows: string[] }
  | { type: "opponent_left" }
  | { type: "game_over"; result: "win" | "lose"; reason: "top_out" | "opponent_top_out" | "opponent_left" }
  | { type: "error"; message: string };

export interface JoinRequest {
  /** JWT `username`: who the player is for matchmaking. */
  username: string;
  /** Sanitised display label (shown to the opponent). */
  display: string;
  /** Named room, or undefined for `mode=quick`. */
  room?: string;
}

type State = "waiting" | "matched" | "playing" | "finished";

interface Seat {
  username: string;
  display: string;
  peer: NetrisPeer;
  ready: boolean;
  /** Start of the current one-second window and frames received in it. */
  windowAt: number;
  frames: number;
}

interface Room {
  code: string;
  quick: boolean;
  state: State;
  seats: Seat[];
  timer?: unknown;
}

/** What the transport calls for one connected player. */
export interface NetrisSeat {
  message(text: string): void;
  /** The socket closed (leave or disconnect). */
  leave(): void;
}

/** Open Netris connections one user may hold (a tab per game is plenty; rooms cost memory). */
export const MAX_SEATS_PER_USER = 4;
/** Frames one player may send per second (a board after every lock is a few a second at most); more are refused. */
export const MAX_FRAMES_PER_SEC = 30;
/** A frame longer than this is refused (a board is about 260 bytes). */
const MAX_FRAME_BYTES = 4096;
const ROW = new RegExp(`^[.#]{${BOARD_COLS}}$`);

export class NetrisHub {
  private readonly named = new Map<string, Room>();
  /** Quick rooms with one player, oldest first (FIFO pairing). */
  private readonly queue: Room[] = [];
  private quickCount = 0;
  private readonly seatsOf = new Map<string, number>();

  constructor(
    private readonly clock: Clock = realClock,
    private readonly random: () => number = Math.random,
  ) {}

  /** Rooms that exist now (waiting, matched or playing), for tests and metrics. */
  roomCount(): number {
    return this.named.size + this.queue.length + this.active.size;
  }

  /** Quick rooms that left the queue (matched or playing). */
  private readonly active = new Set<Room>();

  join(req: JoinRequest, peer: NetrisPeer): NetrisSeat | undefined {
    const held = this.seatsOf.get(req.username) ?? 0;
    if (held >= MAX_SEATS_PER_USER)
      return this.refuse(
        peer,
        `you (${req.username}) already have ${held} Netris connections open: at most ${MAX_SEATS_PER_USER}`,
      );
    const seat: Seat = { username: req.username, display: req.display, peer, ready: false, windowAt: 0, frames: 0 };
    let room: Room;
    if (req.room === undefined) {
      const i = this.queue.findIndex((r) => r.seats[0]!.username !== req.username);
      if (i >= 0) {
        room = this.queue.splice(i, 1)[0]!;
        this.active.add(room);
      } else {
        room = { code: `quick-${++this.quickCount}`, quick: true, state: "waiting", seats: [] };
        this.queue.push(room);
      }
    } else {
      const existing = this.named.get(req.room);
      if (existing && existing.seats.length >= 2)
        return this.refuse(peer, `room "${req.room}" is full: a Netris room holds 2 players`);
      if (existing?.seats.some((s) => s.username === req.username))
        return this.refuse(peer, `you (${req.username}) are already in room "${req.room}"`);
      room = existing ?? { code: req.room, quick: false, state: "waiting", seats: [] };
      this.named.set(room.code, room);
    }
    room.seats.push(seat);
    if (room.seats.length === 1) this.wait(room, seat);
    else this.match(room);
    this.seatsOf.set(req.username, held + 1);
    let left = false;
    return {
      message: (text) => this.onMessage(room, seat, text),
      leave: () => {
        if (left) return;
        left = true;
        const n = (this.seatsOf.get(req.username) ?? 1) - 1;
        if (n > 0) this.seatsOf.set(req.username, n);
        else this.seatsOf.delete(req.username);
        this.onLeave(room, seat);
      },
    };
  }

  private refuse(peer: NetrisPeer, message: string): undefined {
    peer.send({ type: "error", message });
    peer.close(CLOSE.policy, message);
    return undefined;
  }

  private wait(room: Room, seat: Seat): void {
    seat.peer.send({ type: "waiting", room: room.code, you: seat.display, timeout_ms: WAITING_TIMEOUT_MS });
    room.timer = this.clock.setTimeout(() => {
      if (room.state !== "waiting") return;
      this.remove(room);
      seat.peer.send({ type: "waiting_timeout", room: room.code });
      seat.peer.close(CLOSE.normal, "no opponent joined within 60 s");
    }, WAITING_TIMEOUT_MS);
  }

  private match(room: Room): void {
    this.stopTimer(room);
    room.state = "matched";
    const [a, b] = room.seats as [Seat, Seat];
    a.peer.send({ type: "matched", room: room.code, you: a.display, opponent: b.display });
    b.peer.send({ type: "matched", room: room.code, you: b.display, opponent: a.display });
  }

  private onMessage(room: Room, seat: Seat, text: string): void {
    if (room.state === "finished" || !room.seats.includes(seat)) return;
    const now = this.clock.now();
    if (now - seat.windowAt >= 1000) {
      seat.windowAt = now;
      seat.frames = 0;
    }
    seat.frames += 1;
    if (seat.frames > MAX_FRAMES_PER_SEC) {
      // One error per window, so a flood is not answered by a flood.
      if (seat.frames === MAX_FRAMES_PER_SEC + 1)
        this.error(seat, `too many frames: at most ${MAX_FRAMES_PER_SEC} a second; the rest of this second is dropped`);
      return;
    }
    if (text.length > MAX_FRAME_BYTES) return this.error(seat, `frame too long: at most ${MAX_FRAME_BYTES} bytes`);
    let f: Record<string, unknown>;
    try {
      const v = JSON.parse(text) as unknown;
      if (!v || typeof v !== "object" || Array.isArray(v)) throw new Error("not an object");
      f = v as Record<string, unknown>;
    } catch {
      return this.error(seat, 'a frame is a JSON object with a "type" member');
    }
    const other = room.seats.find((s) => s !== seat);
    switch (f.type) {
      case "ready":
        if (room.state !== "matched" || !other)
          return this.error(
            seat,
            room.state === "waiting" ? "no opponent yet: wait for matched" : "the game has started",
          );
        if (seat.ready) return;
        seat.ready = true;
        seat.peer.send({ type: "ready", from: "you" });
        other.peer.send({ type: "ready", from: "opponent" });
        if (other.ready) {
          room.state = "playing";
          const seed = Math.floor(this.random() * 0x1_0000_0000) >>> 0;
          for (const s of room.seats) s.peer.send({ type: "start", seed });
        }
        return;
      case "line_clear": {
        if (room.state !== "playing" || !other) return this.error(seat, "line_clear is sent while playing");
        const lines = f.lines;
        if (typeof lines !== "number" || !Number.isInteger(lines) || lines < 1 || lines > 4)
          return this.error(seat, "line_clear.lines is a whole number 1-4");
        const garbage = GARBAGE[lines]!;
        seat.peer.send({ type: "line_clear", lines, garbage });
        if (garbage > 0)
          other.peer.send({
            type: "garbage_in",
            lines: garbage,
            hole: Math.min(BOARD_COLS - 1, Math.floor(this.random() * BOARD_COLS)),
          });
        return;
      }
      case "board": {
        if (room.state !== "playing" || !other) return this.error(seat, "board is sent while playing");
        const rows = f.rows;
        if (
          !Array.isArray(rows) ||
          rows.length !== BOARD_ROWS ||
          !rows.every((r) => typeof r === "string" && ROW.test(r))
        ) {
          return this.error(
            seat,
            `board.rows is ${BOARD_ROWS} strings of ${BOARD_COLS} characters "." (empty) or "#" (filled), top row first`,
          );
        }
        other.peer.send({ type: "opponent_board", rows: rows as string[] });
        return;
      }
      case "top_out":
        if (room.state !== "playing" || !other) return this.error(seat, "top_out is sent while playing");
        this.finish(room, other, seat, "opponent_top_out");
        return;
      default:
        return this.error(
          seat,
          `unknown frame type ${JSON.stringify(f.type)}: a client sends ready, line_clear, board or top_out`,
        );
    }
  }

  private onLeave(room: Room, seat: Seat): void {
    if (!room.seats.includes(seat) || room.state === "finished") return;
    const other = room.seats.find((s) => s !== seat);
    const state = room.state;
    room.seats = room.seats.filter((s) => s !== seat);
    if (state === "waiting" || !other) {
      this.remove(room);
      return;
    }
    other.peer.send({ type: "opponent_left" });
    if (state === "playing") {
      this.finish(room, other, undefined, "opponent_left");
      return;
    }
    // Matched but not started: nobody wins; the remaining player joins again.
    this.remove(room);
    other.peer.close(CLOSE.normal, "opponent left before the start");
  }

  private finish(
    room: Room,
    winner: Seat,
    loser: Seat | undefined,
    reason: "opponent_top_out" | "opponent_left",
  ): void {
    this.remove(room);
    winner.peer.send({ type: "game_over", result: "win", reason });
    winner.peer.close(CLOSE.normal, "game over");
    if (loser) {
      loser.peer.send({ type: "game_over", result: "lose", reason: "top_out" });
      loser.peer.close(CLOSE.normal, "game over");
    }
  }

  private error(seat: Seat, message: string): void {
    seat.peer.send({ type: "error", message });
  }

  private stopTimer(room: Room): void {
    if (room.timer !== undefined) this.clock.clearTimeout(room.timer);
    room.timer = undefined;
  }

  private remove(room: Room): void {
    this.stopTimer(room);
    room.state = "finished";
    if (room.quick) {
      const i = this.queue.indexOf(room);
      if (i >= 0) this.queue.splice(i, 1);
      this.active.delete(room);
    } else if (this.named.get(room.code) === room) {
      this.named.delete(room.code);
    }
  }
}
