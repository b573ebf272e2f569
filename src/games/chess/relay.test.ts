import { describe, expect, test } from "bun:test";
import { Chess } from "chess.js";
import { parseClientFrame, sanitizeText, type ServerFrame } from "./frames.ts";
import { greedyMove } from "./llm.ts";
import { NetChessRelay, parseJoin } from "./relay.ts";
import type { Seat } from "./room.ts";

/** A seat that keeps what the relay sends (the relay's own interface; the sockets are tested in test/integration). */
function seat(): Seat & { frames: ServerFrame[]; closed?: { code: number; reason: string } } {
  const s: Seat & { frames: ServerFrame[]; closed?: { code: number; reason: string } } = {
    frames: [],
    send: (f) => void s.frames.push(f),
    close: (code, reason) => void (s.closed = { code, reason }),
  };
  return s;
}

describe("parseJoin", () => {
  test.each([
    ["", { mode: "quick", color: "random", initialMs: 300_000, incrementMs: 0 }],
    ["room=abc", { mode: "room", room: "abc" }],
    ["mode=room", { mode: "room" }],
    ["mode=spectate&room=x_1-Y", { mode: "spectate", room: "x_1-Y" }],
    ["initial_sec=60&increment_sec=5&color=black", { initialMs: 60_000, incrementMs: 5000, color: "black" }],
  ])("accepts %p", (q, expected) => {
    const r = parseJoin(new URLSearchParams(q));
    expect(r.ok && r.value).toMatchObject(expected);
  });

  test.each([
    ["mode=solo", "mode must be quick, room or spectate"],
    ["mode=quick&room=a", "quick pairing takes no room"],
    ["mode=spectate", "spectate needs room=<code>"],
    ["room=a%20b", "room must be 1-64 characters"],
    ["color=green", "color must be white, black or random"],
    ["initial_sec=10801", "initial_sec must be an integer from 1 to 10800"],
    ["increment_sec=-1", "increment_sec must be an integer from 0 to 180"],
    ["initial_sec=1.5", "initial_sec must be an integer"],
    ["fen=8%2F8%2F8%2F8%2F8%2F8%2F8%2F8%20w%20-%20-%200%201&mode=room", "fen is not a valid position"],
    ["fen=x", "fen (a start position) is only for mode=room"],
    ["bogus=1", "unknown query parameter bogus"],
  ])("refuses %p", (q, reason) => {
    const r = parseJoin(new URLSearchParams(q));
    expect(r.ok ? "accepted" : r.reason).toContain(reason);
  });
});

describe("frames", () => {
  test("sanitizeText removes control and format characters, folds white space and cuts", () => {
    expect(sanitizeText("  a\u0000b\u202e c\n\n\td\u200b ", 32)).toBe("a b c d");
    expect(sanitizeText("x".repeat(40), 32)).toHaveLength(32);
    expect(sanitizeText("\u0001\u0002", 10)).toBe("");
  });

  test.each([
    ['{"type":"move","uci":"e7e8q"}', { ok: true, value: { type: "move", uci: "e7e8q" } }],
    ['{"type":"ready","extra":1}', { ok: true, value: { type: "ready" } }],
    ['{"type":"move","uci":"e7e8k"}', { ok: false }],
    ['{"type":"chat"}', { ok: false, reason: "chat needs text" }],
    ["[1]", { ok: false }],
    ["nope", { ok: false, reason: "frame is not JSON" }],
  ])("parseClientFrame(%s)", (text, expected) => {
    expect(parseClientFrame(text)).toMatchObject(expected);
  });
});

describe("greedyMove", () => {
  test.each([
    ["mate before a bigger capture", "6k1/5ppp/8/8/8/8/q7/R3R1K1 w - - 0 1", "e1e8"],
    ["the queen before the pawn", "4k3/8/8/3q1p2/4P3/8/8/4K3 w - - 0 1", "e4d5"],
    ["the least valuable attacker", "4k3/8/8/3r4/4P3/8/3R4/4K3 w - - 0 1", "e4d5"],
    ["first in UCI order when nothing stands out", new Chess().fen(), "a2a3"],
  ])("%s", (_name, fen, uci) => {
    const m = greedyMove(new Chess(fen))!;
    expect(`${m.from}${m.to}${m.promotion ?? ""}`).toBe(uci);
  });
});

describe("NetChessRelay", () => {
  test("a lone player gets waiting_timeout after the waiting time and the room is gone", async () => {
    const relay = new NetChessRelay({ waitingTimeoutMs: 30 });
    const s = seat();
    relay.join({ mode: "room", room: "lonely", color: "white", initialMs: 60_000, incrementMs: 0 }, "alice", s);
    expect(s.frames[0]).toMatchObject({ type: "waiting", room: "lonely", timeout_ms: 30 });
    expect(relay.roomCount).toBe(1);
    while (!s.closed) await Bun.sleep(5);
    expect(s.frames.at(-1)).toEqual({ type: "waiting_timeout" });
    expect(s.closed.code).toBe(1000);
    expect(relay.roomCount).toBe(0);
  });

  test("a player leaving before the start frees the seat for the next one; quick pairing is first in, first out", () => {
    const relay = new NetChessRelay();
    const req = { mode: "quick" as const, color: "random" as const, initialMs: 60_000, incrementMs: 0 };
    const [a, b, c, d] = [seat(), seat(), seat(), seat()];
    relay.join(req, "a", a);
    const connB = relay.join(req, "b", b);
    relay.join(req, "c", c);
    relay.join(req, "d", d);
    const room = (s: typeof a) => (s.frames.find((f) => f.type === "matched") as { room: string } | undefined)?.room;
    expect(room(a)).toBe(room(b)!);
    expect(room(c)).toBe(room(d)!);
    expect(room(a)).not.toBe(room(c));
    connB.close();
    expect(a.frames.at(-1)).toEqual({ type: "opponent_left" });
    // a waits again and is next in the quick queue; once paired, a room code works for a newcomer only while a seat is free.
    const e = seat();
    relay.join(req, "e", e);
    expect(e.frames[0]).toMatchObject({ type: "matched", room: room(a), opponent: "a" });
    const f = seat();
    relay.join({ ...req, mode: "room", room: room(a)! }, "f", f);
    expect(f.frames[0]).toMatchObject({
      type: "error",
      message: `room ${room(a)} is full; join with mode=spectate to watch`,
    });
    relay.closeAll();
  });
});

test("chat is relayed to both players and limited to 10 lines per 10 s per player", () => {
  const relay = new NetChessRelay();
  const req = { mode: "room" as const, room: "talk", color: "white" as const, initialMs: 60_000, incrementMs: 0 };
  const [w, b] = [seat(), seat()];
  const cw = relay.join(req, "w", w);
  relay.join(req, "b", b);
  for (let i = 0; i < 11; i++) cw.message(JSON.stringify({ type: "chat", text: `line ${i}` }));
  expect(b.frames.filter((f) => f.type === "chat").map((f) => (f as { text: string }).text)).toEqual(
    Array.from({ length: 10 }, (_, i) => `line ${i}`),
  );
  expect(w.frames.at(-1)).toEqual({ type: "error", message: "chat: at most 10 lines per 10 s" });
  relay.closeAll();
});

test("matchmaking is by username: quick never pairs you with yourself, a room refuses your second seat, at most 4 seats each", () => {
  const relay = new NetChessRelay();
  const quick = { mode: "quick" as const, color: "random" as const, initialMs: 60_000, incrementMs: 0 };
  const [a1, a2, b] = [seat(), seat(), seat()];
  relay.join(quick, "alice", a1);
  relay.join(quick, "alice", a2);
  expect([a1.frames[0]?.type, a2.frames[0]?.type]).toEqual(["waiting", "waiting"]);
  relay.join(quick, "bob", b);
  // Bob gets alice's older waiting room.
  expect(b.frames[0]).toMatchObject({
    type: "matched",
    room: (a1.frames[0] as { room: string }).room,
    opponent: "alice",
  });
  const r = seat();
  relay.join({ ...quick, mode: "room", room: (a2.frames[0] as { room: string }).room }, "alice", r);
  expect(r.frames[0]).toEqual({
    type: "error",
    message: `you (alice) already play in room ${(a2.frames[0] as { room: string }).room}`,
  });
  relay.join({ ...quick, mode: "room", room: "third" }, "alice", seat());
  relay.join({ ...quick, mode: "room", room: "fourth" }, "alice", seat());
  const fifth = seat();
  relay.join({ ...quick, mode: "room", room: "fifth" }, "alice", fifth);
  expect(fifth.frames[0]).toEqual({
    type: "error",
    message: "you (alice) already have 4 NetChess games open: at most 4",
  });
  expect(fifth.closed?.code).toBe(1008);
  relay.closeAll();
});

describe('NetChess limits against one user\'s flood (docs/GAMES.md "NetChess")', () => {
  const room = (code: string) => ({
    mode: "room" as const,
    room: code,
    color: "white" as const,
    initialMs: 60_000,
    incrementMs: 0,
  });
  const hello = JSON.stringify({ type: "hello" });

  test("hello: 5 per 10 s on one connection; one error, the rest dropped; answered again once the window has passed", () => {
    let now = 1_000_000;
    const relay = new NetChessRelay({ now: () => now });
    const w = seat();
    const cw = relay.join(room("hi"), "w", w);
    relay.join(room("hi"), "b", seat());
    const before = w.frames.length;
    for (let i = 0; i < 9; i++) cw.message(hello);
    const answered = w.frames.slice(before);
    expect(answered.map((f): string => f.type)).toEqual([
      ...Array.from({ length: 5 }, () => ["matched", "clock_sync"]).flat(),
      "error",
    ]);
    expect(answered.at(-1)).toEqual({
      type: "error",
      message: "hello: at most 5 per 10 s on one connection; more are ignored for now",
    });
    expect(w.closed).toBeUndefined();
    now += 10_000;
    cw.message(hello);
    expect(w.frames.slice(-2).map((f) => f.type)).toEqual(["matched", "clock_sync"]);
    relay.closeAll();
  });

  test("hello: 20 per 10 s over all of one user's connections", () => {
    const relay = new NetChessRelay({ now: () => 5_000_000 });
    for (const code of ["r1", "r2", "r3"]) {
      relay.join(room(code), `${code}-white`, seat());
      relay.join(room(code), `${code}-black`, seat());
    }
    // fan watches each room from two connections: six connections, four hellos each.
    const conns = ["r1", "r1", "r2", "r2", "r3", "r3"].map((code) => {
      const s = seat();
      return { s, c: relay.join({ ...room(code), mode: "spectate" }, "fan", s) };
    });
    for (const { c } of conns) for (let i = 0; i < 4; i++) c.message(hello);
    const errors = conns.flatMap(({ s }) => s.frames.filter((f) => f.type === "error"));
    const answered = conns.reduce((n, { s }) => n + s.frames.filter((f) => f.type === "clock_sync").length, 0);
    // Each spectator got one clock_sync on joining; 20 hellos were answered, the other 4 refused.
    expect(answered - conns.length).toBe(20);
    expect(errors).toEqual([
      { type: "error", message: "hello: at most 20 per 10 s over all connections of fan; more are ignored for now" },
    ]);
    relay.closeAll();
  });

  test("one user holds at most 2 of a room's 8 spectator seats; others still get the rest", () => {
    const relay = new NetChessRelay();
    relay.join(room("watch"), "w", seat());
    relay.join(room("watch"), "b", seat());
    const spectate = { ...room("watch"), mode: "spectate" as const };
    const [s1, s2, s3] = [seat(), seat(), seat()];
    relay.join(spectate, "mallory", s1);
    relay.join(spectate, "mallory", s2);
    relay.join(spectate, "mallory", s3);
    expect([s1.closed, s2.closed]).toEqual([undefined, undefined]);
    expect(s3.frames[0]).toEqual({
      type: "error",
      message: "you (mallory) already watch room watch from 2 connections: at most 2",
    });
    expect(s3.closed?.code).toBe(1008);
    const others = Array.from({ length: 6 }, (_, i) => {
      const s = seat();
      relay.join(spectate, `fan${i}`, s);
      return s;
    });
    expect(others.every((s) => s.closed === undefined)).toBe(true);
    relay.closeAll();
  });
});
