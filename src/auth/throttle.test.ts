import { expect, test } from "bun:test";
import { LoginThrottle } from "./throttle.ts";

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test("the user+address pair locks after max failures, for lockout_sec, with Retry-After", () => {
  const c = clock();
  const th = new LoginThrottle(3, 30, c.now);
  for (let i = 0; i < 2; i++) th.failure("alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1").allowed).toBe(true);
  th.failure("alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1")).toEqual({ allowed: false, retryAfterSec: 30 });
  c.advance(10_000);
  expect(th.check("alice", "10.0.0.1").retryAfterSec).toBe(20);
  c.advance(20_001);
  expect(th.check("alice", "10.0.0.1").allowed).toBe(true);
  th.failure("alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1").allowed).toBe(false);
});

test("a locked pair blocks neither another user on that address nor that user elsewhere", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  for (let i = 0; i < 3; i++) th.failure("alice", "10.0.0.1");
  expect(th.check("alice", "10.0.0.1").allowed).toBe(false);
  expect(th.check("bob", "10.0.0.1").allowed).toBe(true);
  expect(th.check("alice", "10.0.0.2").allowed).toBe(true);
});

test("spraying many usernames from one address locks the address at 4 × max", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  for (let i = 0; i < 12; i++) th.failure(`user${i}`, "10.0.0.9");
  expect(th.check("fresh-user", "10.0.0.9").allowed).toBe(false);
  expect(th.check("fresh-user", "10.0.0.10").allowed).toBe(true);
});

test("success clears the pair; lockout_sec 0 disables throttling", () => {
  const th = new LoginThrottle(3, 30, clock().now);
  th.failure("alice", "a");
  th.failure("alice", "a");
  th.success("alice", "a");
  th.failure("alice", "a");
  expect(th.check("alice", "a").allowed).toBe(true);
  const off = new LoginThrottle(1, 0, clock().now);
  off.failure("x", "y");
  expect(off.check("x", "y").allowed).toBe(true);
});
