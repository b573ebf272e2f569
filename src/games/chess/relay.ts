/**
 * The NetChess relay (docs/GAMES.md "NetChess"): rooms by code, first-in-first-out quick pairing
 * and spectators. The API layer checks the join query (`parseJoin`, 400 before the upgrade), then
 * calls `join` when the socket opens and routes its frames and its close here.
 */
import { DISPLAY_MAX, parseClientFrame, sanitizeText, type Color } from "./frames.ts";
import { positionProblem } from "./position.ts";
import { ChessRoom, MAX_SPECTATORS, type Member, type Seat } from "./room.ts";
import { WindowLimit } from "./window-limit.ts";

export interface JoinRequest {
  mode: "quick" | "room" | "spectate";
  /** Room code; for `room` without one a random 6-letter code is made. */
  room?: string;
  color: Color | "random";
  initialMs: number;
  incrementMs: number;
  fen?: string;
  display?: string;
}

export const ROOM_CODE = /^[A-Za-z0-9_-]{1,64}$/;
export const INITIAL_SEC = { min: 1, max: 10_800, default: 300 };
export const INCREMENT_SEC = { min: 0, max: 180, default: 0 };

/** The join query of `/games/netchess`, or what is wrong with it (a 400 before the upgrade). */
export function parseJoin(q: URLSearchParams): { ok: true; value: JoinRequest } | { ok: false; reason: string } {
  const known = new Set(["mode", "room", "color", "initial_sec", "increment_sec", "fen", "display", "access_token"]);
  for (const k of q.keys())
    if (!known.has(k)) return { ok: false, reason: `unknown query parameter ${k}; expected ${[...known].join(", ")}` };
  const room = q.get("room") ?? undefined;
  const mode = q.get("mode") ?? (room ? "room" : "quick");
  if (mode !== "quick" && mode !== "room" && mode !== "spectate")
    return { ok: false, reason: "mode must be quick, room or spectate" };
  if (room !== undefined && !ROOM_CODE.test(room))
    return { ok: false, reason: "room must be 1-64 characters of letters, digits, _ and -" };
  if (mode === "spectate" && room === undefined) return { ok: false, reason: "spectate needs room=<code>" };
  if (mode === "quick" && room !== undefined)
    return { ok: false, reason: "quick pairing takes no room; use mode=room to join a named room" };
  const color = q.get("color") ?? "random";
  if (color !== "white" && color !== "black" && color !== "random")
    return { ok: false, reason: "color must be white, black or random" };
  const int = (name: string, r: { min: number; max: number; default: number }): number | string => {
    const raw = q.get(name);
    if (raw === null) return r.default;
    const n = Number(raw);
    return /^\d+$/.test(raw) && n >= r.min && n <= r.max ? n : `${name} must be an integer from ${r.min} to ${r.max}`;
  };
  const initial = int("initial_sec", INITIAL_SEC);
  if (typeof initial === "string") return { ok: false, reason: initial };
  const increment = int("increment_sec", INCREMENT_SEC);
  if (typeof increment === "string") return { ok: false, reason: increment };
  const fen = q.get("fen") ?? undefined;
  if (fen !== undefined) {
    if (mode !== "room") return { ok: false, reason: "fen (a start position) is only for mode=room" };
    const problem = positionProblem(fen);
    if (problem) return { ok: false, reason: problem };
  }
  const display = q.get("display");
  return {
    ok: true,
    value: {
      mode,
      ...(room !== undefined ? { room } : {}),
      color,
      initialMs: initial * 1000,
      incrementMs: increment * 1000,
      ...(fen !== undefined ? { fen } : {}),
      ...(display !== null ? { display } : {}),
    },
  };
}

export interface Connection {
  /** A text frame from the client. */
  message(text: string): void;
  /** The socket closed. */
  close(): void;
}

export interface RelayOptions {
  /** A lone player is told `waiting_timeout` after this long (60 s, as for Netris: docs/GAMES.md "States"). */
  waitingTimeoutMs?: number;
  /** Period of the `clock_sync` frames while a game runs. */
  syncIntervalMs?: number;
  /** The clock of the `hello` limits (tests move it instead of waiting). */
  now?: () => number;
}

const LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ";
/** Player seats one user may hold at once (rooms are memory and timers; a user needs a few tabs at most). */
export const MAX_SEATS_PER_USER = 4;
/** Spectator seats one user may hold in one room, so that one user cannot take all `MAX_SPECTATORS`. */
export const MAX_SPECTATOR_SEATS_PER_USER = 2;
/**
 * `hello` answers with two frames (matched, clock_sync with every legal move), so it is limited:
 * per connection, and per user over all their connections (docs/GAMES.md "NetChess", Frames).
 */
export const HELLO_PER_CONNECTION = 5;
export const HELLO_PER_USER = 20;
export const HELLO_WINDOW_MS = 10_000;

export class NetChessRelay {
  private readonly rooms = new Map<string, ChessRoom>();
  /** Quick rooms with one player, oldest first (first in, first out). */
  private quickQueue: ChessRoom[] = [];
  private readonly quickRooms = new WeakSet<ChessRoom>();
  private readonly seatsOf = new Map<string, number>();
  /** Open connections per user (players and spectators): the per-user `hello` count is dropped with the last. */
  private readonly connectionsOf = new Map<string, number>();
  private readonly userHellos = new WindowLimit(HELLO_PER_USER, HELLO_WINDOW_MS);
  private readonly waitingTimeoutMs: number;
  private readonly syncIntervalMs: number;
  private readonly now: () => number;

  constructor(opts: RelayOptions = {}) {
    this.waitingTimeoutMs = opts.waitingTimeoutMs ?? 60_000;
    this.syncIntervalMs = opts.syncIntervalMs ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  get roomCount(): number {
    return this.rooms.size;
  }

  private randomCode(): string {
    for (;;) {
      const code = Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => LETTERS[b % LETTERS.length]).join("");
      if (!this.rooms.has(code)) return code;
    }
  }

  private createRoom(code: string, req: JoinRequest): ChessRoom {
    const room = new ChessRoom({
      code,
      initialMs: req.initialMs,
      incrementMs: req.incrementMs,
      ...(req.fen !== undefined ? { fen: req.fen } : {}),
      waitingTimeoutMs: this.waitingTimeoutMs,
      syncIntervalMs: this.syncIntervalMs,
      onClosed: (r) => {
        if (this.rooms.get(r.code) === r) this.rooms.delete(r.code);
        this.quickQueue = this.quickQueue.filter((q) => q !== r);
      },
      onWaiting: (r) => {
        if (this.quickRooms.has(r) && !this.quickQueue.includes(r)) this.quickQueue.push(r);
      },
    });
    this.rooms.set(code, room);
    return room;
  }

  /** Seats (or refuses with an `error` frame and a close) a freshly opened socket. */
  join(req: JoinRequest, username: string, seat: Seat): Connection {
    const member: Member = {
      seat,
      username,
      display: sanitizeText(req.display ?? "", DISPLAY_MAX) || sanitizeText(username, DISPLAY_MAX) || "player",
    };
    const refuse = (message: string, code: number): Connection => {
      seat.send({ type: "error", message });
      seat.close(code, message.slice(0, 100));
      return { message() {}, close() {} };
    };
    let room: ChessRoom;
    const held = this.seatsOf.get(username) ?? 0;
    if (req.mode !== "spectate" && held >= MAX_SEATS_PER_USER)
      return refuse(`you (${username}) already have ${held} NetChess games open: at most ${MAX_SEATS_PER_USER}`, 1008);
    const seatedIn = (r: ChessRoom) => [r.seats.white, r.seats.black].some((m) => m?.username === username);
    if (req.mode === "spectate") {
      const r = this.rooms.get(req.room!);
      if (!r) return refuse(`no room ${req.room} to watch`, 1008);
      const watching = [...r.spectators].filter((s) => s.username === username).length;
      if (watching >= MAX_SPECTATOR_SEATS_PER_USER)
        return refuse(
          `you (${username}) already watch room ${r.code} from ${watching} connections: at most ${MAX_SPECTATOR_SEATS_PER_USER}`,
          1008,
        );
      if (!r.addSpectator(member)) return refuse(`room ${r.code} already has ${MAX_SPECTATORS} spectators`, 1013);
      room = r;
    } else if (req.mode === "quick") {
      // First in, first out: the oldest quick room still waiting is joined, else this player waits in a new one.
      // Matchmaking is by the JWT username: never against yourself (your own waiting rooms stay queued).
      this.quickQueue = this.quickQueue.filter((r) => r.state === "waiting" && r.players === 1);
      const waiting = this.quickQueue.find((r) => !seatedIn(r));
      if (waiting) {
        room = waiting;
        this.quickQueue = this.quickQueue.filter((r) => r !== waiting);
      } else {
        room = this.createRoom(this.randomCode(), req);
        this.quickRooms.add(room);
        this.quickQueue.push(room);
      }
      room.addPlayer(member, req.color);
    } else {
      const existing = req.room !== undefined ? this.rooms.get(req.room) : undefined;
      if (existing && existing.players >= 2)
        return refuse(`room ${existing.code} is full; join with mode=spectate to watch`, 1008);
      if (existing && existing.state !== "waiting")
        return refuse(`room ${existing.code} is not open for players`, 1008);
      if (existing && seatedIn(existing))
        return refuse(`you (${username}) already play in room ${existing.code}`, 1008);
      room = existing ?? this.createRoom(req.room ?? this.randomCode(), req);
      room.addPlayer(member, req.color);
    }
    const player = req.mode !== "spectate";
    if (player) this.seatsOf.set(username, held + 1);
    this.connectionsOf.set(username, (this.connectionsOf.get(username) ?? 0) + 1);
    const hellos = new WindowLimit(HELLO_PER_CONNECTION, HELLO_WINDOW_MS);
    /** When the last "too many hello" error went out: one per window, the rest are dropped silently. */
    let warnedAt: number | undefined;
    const helloAllowed = (): boolean => {
      const now = this.now();
      const refusal = !hellos.take("", now)
        ? `hello: at most ${HELLO_PER_CONNECTION} per ${HELLO_WINDOW_MS / 1000} s on one connection`
        : !this.userHellos.take(username, now)
          ? `hello: at most ${HELLO_PER_USER} per ${HELLO_WINDOW_MS / 1000} s over all connections of ${username}`
          : undefined;
      if (refusal === undefined) return true;
      if (warnedAt === undefined || now - warnedAt >= HELLO_WINDOW_MS) {
        warnedAt = now;
        seat.send({ type: "error", message: `${refusal}; more are ignored for now` });
      }
      return false;
    };
    let open = true;
    return {
      message: (text) => {
        const f = parseClientFrame(text);
        if (!f.ok) return seat.send({ type: "error", message: f.reason });
        if (f.value.type === "hello" && !helloAllowed()) return;
        room.handle(member, f.value);
      },
      close: () => {
        if (!open) return;
        open = false;
        if (player) {
          const n = (this.seatsOf.get(username) ?? 1) - 1;
          if (n > 0) this.seatsOf.set(username, n);
          else this.seatsOf.delete(username);
        }
        const c = (this.connectionsOf.get(username) ?? 1) - 1;
        if (c > 0) this.connectionsOf.set(username, c);
        else {
          this.connectionsOf.delete(username);
          this.userHellos.forget(username);
        }
        room.leave(member);
      },
    };
  }

  /** Ends every room (the coordinator stops). */
  closeAll(): void {
    for (const r of [...this.rooms.values()]) {
      for (const m of [r.seats.white, r.seats.black]) m?.seat.close(1001, "the server is stopping");
      r.close();
    }
  }
}
