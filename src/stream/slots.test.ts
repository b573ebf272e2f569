import { describe, expect, test } from "bun:test";
import { MetricsRegistry } from "../core/index.ts";
import { streamMetrics } from "./broker.ts";
import { EVICTED_REASON, StreamSlots, type SlotHolder, type StreamCaller } from "./slots.ts";

/** Slot rules of docs/STREAM.md "Subscriber slots", on holders that record how they were closed. */
class Holder implements SlotHolder {
  closed: [number, string] | undefined;
  constructor(
    readonly name: string,
    readonly caller: StreamCaller,
  ) {}
  giveWay(code: number, reason: string): void {
    this.closed = [code, reason];
  }
}

const anon = (name: string, address: string) => new Holder(name, { kind: "anonymous", address });
const user = (name: string, u: string, admin = false) => new Holder(name, { kind: "user", user: u, admin });

function slots(max: number, perAddress = 2, perUser = 2) {
  const metrics = new MetricsRegistry();
  const m = streamMetrics(metrics);
  const s = new StreamSlots<Holder>(
    { max_subscribers: max, max_subscribers_per_address: perAddress, max_subscribers_per_user: perUser },
    m,
  );
  const claim = (h: Holder) => {
    const r = s.claim(h);
    return r.ok ? "ok" : r.reason;
  };
  return { s, claim, m };
}

describe("live-stream slots", () => {
  test("shares per address and per user, then the cap", () => {
    const { s, claim, m } = slots(5);
    expect([claim(anon("a1", "10.0.0.1")), claim(anon("a2", "10.0.0.1")), claim(anon("a3", "10.0.0.1"))]).toEqual([
      "ok",
      "ok",
      "per_address",
    ]);
    expect([claim(user("u1", "carol")), claim(user("u2", "carol")), claim(user("u3", "carol"))]).toEqual([
      "ok",
      "ok",
      "per_user",
    ]);
    expect(claim(anon("b1", "10.0.0.2"))).toBe("ok");
    expect(claim(anon("c1", "10.0.0.3"))).toBe("max_subscribers");
    expect(s.size).toBe(5);
    expect([
      m.refused.get({ reason: "per_address" }),
      m.refused.get({ reason: "per_user" }),
      m.refused.get({ reason: "max_subscribers" }),
    ]).toEqual([1, 1, 1]);
  });

  test("an administrator at the cap: the oldest anonymous gives way, then the oldest non-administrator, then one slot beyond the cap", () => {
    const { s, claim, m } = slots(3, 2, 3);
    const u1 = user("u1", "carol");
    const a1 = anon("a1", "10.0.0.1");
    const a2 = anon("a2", "10.0.0.2");
    for (const h of [u1, a1, a2]) expect(claim(h)).toBe("ok");
    expect(claim(user("x", "dave"))).toBe("max_subscribers");
    const admin1 = user("admin1", "root", true);
    expect(claim(admin1)).toBe("ok");
    expect(a1.closed).toEqual([1013, EVICTED_REASON]);
    expect([u1.closed, a2.closed]).toEqual([undefined, undefined]);
    expect(claim(user("admin2", "root", true))).toBe("ok");
    expect(a2.closed).toEqual([1013, EVICTED_REASON]);
    // No anonymous subscriber left: the oldest user who is not an administrator.
    expect(claim(user("admin3", "root", true))).toBe("ok");
    expect(u1.closed).toEqual([1013, EVICTED_REASON]);
    expect(s.size).toBe(3);
    // Only administrators hold slots: one more, over the cap, until the account's share.
    expect(claim(user("other-admin", "ops", true))).toBe("ok");
    expect(s.size).toBe(4);
    expect(claim(user("admin4", "root", true))).toBe("per_user");
    expect(m.evicted.get()).toBe(3);
  });

  test("a released slot is free again; releasing twice is harmless", () => {
    const { s, claim } = slots(1);
    const a = anon("a", "10.0.0.1");
    expect(claim(a)).toBe("ok");
    expect(claim(anon("b", "10.0.0.2"))).toBe("max_subscribers");
    expect(s.release(a)).toBe(true);
    expect(s.release(a)).toBe(false);
    expect(claim(anon("b", "10.0.0.2"))).toBe("ok");
  });
});
