/**
 * The 60 s wait of a lone player (docs/GAMES.md "States"), on a fake clock injected into
 * the hub: the limit is fixed by the spec, so the test advances time instead of configuring it.
 * The rest of the relay is played over real sockets in test/integration/netris.test.ts.
 */
import { expect, test } from "bun:test";
import {
  MAX_FRAMES_PER_SEC,
  MAX_SEATS_PER_USER,
  NetrisHub,
  WAITING_TIMEOUT_MS,
  type Clock,
  type NetrisPeer,
  type NetrisServerFrame,
} from "./hub.ts";

class FakeClock implements Clock {
  at = 0;
  now(): number {
    return this.at;
  }
  private timers = new Map<number, { at: number; fn: () => void }>();
  private seq = 0;
  setTimeout(fn: () => void, ms: number): unknown {
    this.timers.set(++this.seq, { at: this.at + ms, fn });
    return this.seq;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  advance(ms: number): void {
    this.at += ms;
    for (const [id, t] of [...this.timers]) {
      if (t.at <= this.at) {
        this.timers.delete(id);
        t.fn();
      }
    }
  }
  pending(): number {
    return this.timers.size;
  }
}

function peer() {
  const frames: NetrisServerFrame[] = [];
  const closes: Array<{ code: number; reason: string }> = [];
  const p: NetrisPeer = { send: (f) => frames.push(f), close: (code, reason) => closes.push({ code, reason }) };
  return { p, frames, closes };
}

test("a lone player gets waiting_timeout after 60 s and the room is deleted", () => {
  const clock = new FakeClock();
  const hub = new NetrisHub(clock);
  const a = peer();
  hub.join({ username: "alice", display: "alice", room: "r1" }, a.p);
  expect(a.frames).toEqual([{ type: "waiting", room: "r1", you: "alice", timeout_ms: 60_000 }]);
  clock.advance(WAITING_TIMEOUT_MS - 1);
  expect(a.frames.length).toBe(1);
  expect(hub.roomCount()).toBe(1);
  clock.advance(1);
  expect(a.frames.at(-1)).toEqual({ type: "waiting_timeout", room: "r1" });
  expect(a.closes).toEqual([{ code: 1000, reason: "no opponent joined within 60 s" }]);
  expect(hub.roomCount()).toBe(0);
  // The code is free again: a new player waits there.
  const b = peer();
  hub.join({ username: "bob", display: "bob", room: "r1" }, b.p);
  expect(b.frames.map((f) => f.type)).toEqual(["waiting"]);
});

test("a quick player times out too and leaves the queue; a match stops the timer", () => {
  const clock = new FakeClock();
  const hub = new NetrisHub(clock);
  const a = peer();
  hub.join({ username: "alice", display: "alice" }, a.p);
  clock.advance(WAITING_TIMEOUT_MS);
  expect(a.frames.map((f) => f.type)).toEqual(["waiting", "waiting_timeout"]);
  const b = peer();
  const c = peer();
  hub.join({ username: "bob", display: "bob" }, b.p);
  expect(b.frames.map((f) => f.type)).toEqual(["waiting"]);
  clock.advance(30_000);
  hub.join({ username: "carol", display: "carol" }, c.p);
  expect(clock.pending()).toBe(0);
  clock.advance(WAITING_TIMEOUT_MS);
  expect(b.frames.map((f) => f.type)).toEqual(["waiting", "matched"]);
  expect(c.frames.map((f) => f.type)).toEqual(["matched"]);
  expect(b.closes).toEqual([]);
});

test("a waiting player who leaves deletes the room and its timer", () => {
  const clock = new FakeClock();
  const hub = new NetrisHub(clock);
  const a = peer();
  const seat = hub.join({ username: "alice", display: "alice", room: "r2" }, a.p)!;
  seat.leave();
  expect(hub.roomCount()).toBe(0);
  expect(clock.pending()).toBe(0);
  clock.advance(WAITING_TIMEOUT_MS);
  expect(a.frames.map((f) => f.type)).toEqual(["waiting"]);
});

test("one user holds at most 4 connections; a closed one frees its place", () => {
  const hub = new NetrisHub(new FakeClock());
  const seats = Array.from({ length: MAX_SEATS_PER_USER }, (_, i) =>
    hub.join({ username: "alice", display: "alice", room: `r${i}` }, peer().p),
  );
  expect(seats.every((s) => s !== undefined)).toBe(true);
  const fifth = peer();
  expect(hub.join({ username: "alice", display: "alice", room: "r9" }, fifth.p)).toBeUndefined();
  expect(fifth.frames).toEqual([
    { type: "error", message: "you (alice) already have 4 Netris connections open: at most 4" },
  ]);
  expect(fifth.closes[0]?.code).toBe(1008);
  expect(hub.join({ username: "bob", display: "bob", room: "r9" }, peer().p)).toBeDefined();
  seats[0]!.leave();
  seats[0]!.leave();
  expect(hub.join({ username: "alice", display: "alice", room: "r8" }, peer().p)).toBeDefined();
  expect(hub.join({ username: "alice", display: "alice", room: "r7" }, peer().p)).toBeUndefined();
});

test("a player sending more than 30 frames a second gets one error and the rest of the second is dropped", () => {
  const clock = new FakeClock();
  const hub = new NetrisHub(clock, () => 0.5);
  const a = peer();
  const b = peer();
  const sa = hub.join({ username: "alice", display: "alice", room: "flood" }, a.p)!;
  const sb = hub.join({ username: "bob", display: "bob", room: "flood" }, b.p)!;
  sa.message(JSON.stringify({ type: "ready" }));
  sb.message(JSON.stringify({ type: "ready" }));
  clock.advance(1000);
  const rows = Array.from({ length: 20 }, () => "..........");
  for (let i = 0; i < 100; i++) sa.message(JSON.stringify({ type: "board", rows }));
  expect(b.frames.filter((f) => f.type === "opponent_board").length).toBe(MAX_FRAMES_PER_SEC);
  expect(a.frames.filter((f) => f.type === "error")).toEqual([
    { type: "error", message: "too many frames: at most 30 a second; the rest of this second is dropped" },
  ]);
  clock.advance(1000);
  sa.message(JSON.stringify({ type: "line_clear", lines: 2 }));
  expect(b.frames.at(-1)).toEqual({ type: "garbage_in", lines: 1, hole: 5 });
});
