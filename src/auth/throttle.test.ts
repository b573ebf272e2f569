import { expect, test } from "bun:test";
import { LoginThrottle, type LoginAttempt } from "./throttle.ts";

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function admit(th: LoginThrottle, user: string, ip: string): LoginAttempt {
  const r = th.reserve(user, ip);
  if (!r.allowed) throw new Error(`${user}@${ip} refused`);
  return r.attempt;
}
const failOnce = (th: LoginThrottle, user: string, ip: string) => admit(th, user, ip).failed();

test("the user+address pair locks after max failures, for lockout_sec, with Retry-After", () => {
  const c = clock();
  const th = new LoginThrottle(3, 30, c.now);
  for (let i = 0; i < 2; i++) failOnce(th, "alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1").allowed).toBe(true);
  failOnce(th, "alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1")).toEqual({ allowed: false, retryAfterSec: 30 });
  c.advance(10_000);
  expect(th.check("alice", "10.0.0.1").retryAfterSec).toBe(20);
  c.advance(20_001);
  expect(th.check("alice", "10.0.0.1").allowed).toBe(true);
  failOnce(th, "alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1").allowed).toBe(false);
});

test("a locked pair blocks neither another user on that address nor that user elsewhere", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  for (let i = 0; i < 3; i++) failOnce(th, "alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1").allowed).toBe(false);
  expect(th.check("bob", "10.0.0.1").allowed).toBe(true);
  expect(th.check("alice", "10.0.0.2").allowed).toBe(true);
});

test("spraying many usernames from one address locks the address at 4 × max", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  for (let i = 0; i < 12; i++) failOnce(th, `user${i}`, "10.0.0.9");
  expect(th.check("fresh-user", "10.0.0.9").allowed).toBe(false);
  expect(th.check("fresh-user", "10.0.0.10").allowed).toBe(true);
});

test("success clears the pair; lockout_sec 0 disables throttling", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  failOnce(th, "alice", "a");
  failOnce(th, "alice", "a");
  admit(th, "alice", "a").succeeded();
  failOnce(th, "alice", "a");
  expect(th.check("alice", "a").allowed).toBe(true);
  const off = new LoginThrottle(1, 0, clock().now);
  for (let i = 0; i < 5; i++) admit(off, "x", "y");
  failOnce(off, "x", "y");
  expect(off.check("x", "y").allowed).toBe(true);
});

test("attempts in flight count: no more than max concurrent checks per pair, 4 × max per address", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  const pending = [admit(th, "alice", "a"), admit(th, "alice", "a"), admit(th, "alice", "a")];
  expect(th.reserve("alice", "a")).toEqual({ allowed: false, retryAfterSec: 1 });
  // the right password arriving now is refused like a guess: its slot was taken by the burst
  pending[0]!.succeeded();
  expect(th.reserve("alice", "a").allowed).toBe(true);
  const spray = new LoginThrottle(3, 30, clock().now);
  let admitted = 0;
  for (let i = 0; i < 100; i++) if (spray.reserve(`u${i}`, "b").allowed) admitted++;
  expect(admitted).toBe(12);
});

test("the burst's failures lock the pair; an abandoned attempt frees its slot without counting", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  const a = [admit(th, "alice", "a"), admit(th, "alice", "a"), admit(th, "alice", "a")];
  a[0]!.abandoned();
  a[0]!.failed(); // a second verdict is ignored
  const d = admit(th, "alice", "a");
  a[1]!.failed();
  a[2]!.failed();
  expect(th.reserve("alice", "a").allowed).toBe(false);
  d.failed();
  expect(th.check("alice", "a")).toEqual({ allowed: false, retryAfterSec: 30 });
});

test("after a lock expires one attempt at a time is admitted, and its failure locks again", () => {
  const c = clock();
  const th = new LoginThrottle(2, 10, c.now);
  failOnce(th, "alice", "a");
  failOnce(th, "alice", "a");
  c.advance(10_001);
  const one = admit(th, "alice", "a");
  expect(th.reserve("alice", "a").allowed).toBe(false);
  one.failed();
  expect(th.check("alice", "a").retryAfterSec).toBe(10);
});
