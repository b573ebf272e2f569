import { describe, expect, test } from "bun:test";
import { createSharedKnown, knownBuckets, knownEntries, SharedKnownAddresses } from "./shared-known.ts";
import {
  addressBuckets,
  createSharedSlots,
  releaseThread,
  SharedConnectionSlots,
  sharedSlotsUsage,
} from "./shared-slots.ts";
import { reservedSlots, type SlotLimits } from "./slots.ts";

/** `threads` handles on one shared state, as `threads` listener threads would hold them. */
function threadsOver(limits: SlotLimits, threads: number, buckets?: number) {
  const buffer = createSharedSlots(limits, { threads, ...(buckets ? { buckets } : {}) });
  return { buffer, t: Array.from({ length: threads }, (_, i) => new SharedConnectionSlots<string>(buffer, i)) };
}

/** admit, then add when granted (what tcp.ts does at accept). */
function accept(slots: SharedConnectionSlots<string>, conn: string, ip: string, known = false) {
  const a = slots.admit(ip, known);
  if (a.ok) {
    if (a.evict) slots.release(a.evict, `evicted-of-${conn}`);
    slots.add(conn, ip);
  }
  return a;
}

/** An address other than `ip` whose counter in hash table `table` is the same as `ip`'s and in the other table differs. */
function collidingIn(buffer: SharedArrayBuffer, ip: string, table: 0 | 1): string {
  const mine = addressBuckets(buffer, ip);
  for (let i = 0; i < 1_000_000; i++) {
    const other = `10.9.${i >> 8}.${i & 255}`;
    const b = addressBuckets(buffer, other);
    if (other !== ip && b[table] === mine[table] && b[1 - table] !== mine[1 - table]) return other;
  }
  throw new Error("no colliding address found");
}

describe("SharedConnectionSlots over several threads", () => {
  test("max_connections holds over all threads; the reserved share too", () => {
    const { buffer, t } = threadsOver(
      { maxConnections: 4, maxConnectionsPerIp: 4, reservedForKnown: reservedSlots(4, 50) },
      2,
    );
    expect(accept(t[0]!, "a", "10.0.0.1")).toEqual({ ok: true });
    expect(accept(t[1]!, "b", "10.0.0.2")).toEqual({ ok: true });
    // Two slots left, both reserved: thread 0 refuses an unknown address although it holds only one.
    expect(accept(t[0]!, "c", "10.0.0.3")).toEqual({ ok: false, reason: "reserved_for_known" });
    expect(accept(t[0]!, "c", "10.0.0.3", true)).toEqual({ ok: true });
    expect(accept(t[1]!, "d", "10.0.0.4", true)).toEqual({ ok: true });
    t[1]!.prove("b");
    t[1]!.prove("d");
    expect(accept(t[1]!, "e", "10.0.0.5", true)).toEqual({ ok: false, reason: "max_connections" });
    expect(sharedSlotsUsage(buffer)).toEqual({ total: 4, perThread: [2, 2] });
    expect([t[0]!.size, t[0]!.total]).toEqual([2, 4]);
  });

  test("the per-address cap holds over all threads", () => {
    const { t } = threadsOver({ maxConnections: 10, maxConnectionsPerIp: 2, reservedForKnown: 0 }, 3);
    expect(accept(t[0]!, "a", "10.0.0.1")).toEqual({ ok: true });
    expect(accept(t[1]!, "b", "10.0.0.1")).toEqual({ ok: true });
    expect(accept(t[2]!, "c", "10.0.0.1", true)).toEqual({ ok: false, reason: "per_ip_limit" });
    expect(t[0]!.release("a", "10.0.0.1")).toBe(true);
    expect(t[0]!.release("a", "10.0.0.1")).toBe(false);
    expect(accept(t[2]!, "c", "10.0.0.1")).toEqual({ ok: true });
  });

  test("a full table: a known address evicts the oldest unproven connection of its own thread only", () => {
    const { buffer, t } = threadsOver({ maxConnections: 3, maxConnectionsPerIp: 3, reservedForKnown: 0 }, 2);
    accept(t[0]!, "proven", "10.0.0.1");
    t[0]!.prove("proven");
    accept(t[1]!, "silent-1", "10.0.0.2");
    accept(t[1]!, "silent-2", "10.0.0.3");
    // Thread 0 holds no unproven connection: the agent is refused there, though thread 1 has two.
    expect(accept(t[0]!, "agent", "10.0.0.9", true)).toEqual({ ok: false, reason: "max_connections" });
    expect(t[1]!.admit("10.0.0.9", true)).toEqual({ ok: true, evict: "silent-1" });
    expect(t[1]!.release("silent-1", "10.0.0.2")).toBe(true);
    t[1]!.add("agent", "10.0.0.9");
    expect([...t[1]!.connections()]).toEqual(["silent-2", "agent"]);
    expect(sharedSlotsUsage(buffer).total).toBe(3);
  });

  test("an admit not followed by add gives its reservation back at the next admit", () => {
    const { buffer, t } = threadsOver({ maxConnections: 1, maxConnectionsPerIp: 1, reservedForKnown: 0 }, 2);
    expect(t[0]!.admit("10.0.0.1", false)).toEqual({ ok: true });
    expect(accept(t[1]!, "x", "10.0.0.2")).toEqual({ ok: false, reason: "max_connections" });
    expect(t[0]!.admit("10.0.0.3", false)).toEqual({ ok: true });
    t[0]!.add("y", "10.0.0.3");
    expect(sharedSlotsUsage(buffer)).toEqual({ total: 1, perThread: [1, 0] });
  });

  test("releaseThread removes exactly what a dead thread held; its index can be used again", () => {
    const { buffer, t } = threadsOver({ maxConnections: 4, maxConnectionsPerIp: 2, reservedForKnown: 0 }, 2);
    accept(t[0]!, "a", "10.0.0.1");
    accept(t[1]!, "b", "10.0.0.1");
    accept(t[1]!, "c", "10.0.0.2");
    accept(t[1]!, "d", "10.0.0.3");
    expect(accept(t[0]!, "e", "10.0.0.4")).toEqual({ ok: false, reason: "max_connections" });
    expect(accept(t[0]!, "e", "10.0.0.1")).toEqual({ ok: false, reason: "per_ip_limit" });
    // A second handle on a row in use is refused: two owners would undo each other's counts.
    expect(() => new SharedConnectionSlots<string>(buffer, 1)).toThrow(/in use/);
    releaseThread(buffer, 1);
    expect(sharedSlotsUsage(buffer)).toEqual({ total: 1, perThread: [1, 0] });
    // Thread 0's own address count stayed: one more from 10.0.0.1, not two.
    expect(accept(t[0]!, "e", "10.0.0.1")).toEqual({ ok: true });
    expect(accept(t[0]!, "f", "10.0.0.1")).toEqual({ ok: false, reason: "per_ip_limit" });
    const again = new SharedConnectionSlots<string>(buffer, 1);
    expect(accept(again, "g", "10.0.0.2")).toEqual({ ok: true });
    expect(sharedSlotsUsage(buffer)).toEqual({ total: 3, perThread: [2, 1] });
    // A late release by the dead thread's handle cannot take the counts below zero.
    expect(t[1]!.release("b", "10.0.0.1")).toBe(true);
    expect(sharedSlotsUsage(buffer).perThread).toEqual([2, 0]);
  });

  test("clear gives up this thread's slots and no one else's", () => {
    const { buffer, t } = threadsOver({ maxConnections: 4, maxConnectionsPerIp: 4, reservedForKnown: 0 }, 2);
    accept(t[0]!, "a", "10.0.0.1");
    accept(t[1]!, "b", "10.0.0.1");
    t[1]!.clear();
    expect(sharedSlotsUsage(buffer)).toEqual({ total: 1, perThread: [1, 0] });
    expect(t[1]!.size).toBe(0);
  });

  test("an address sharing one counter with another is not limited by it; sharing both refuses early, never late", () => {
    const { buffer, t } = threadsOver({ maxConnections: 100, maxConnectionsPerIp: 2, reservedForKnown: 0 }, 1, 64);
    const slots = t[0]!;
    accept(slots, "a1", "10.0.0.1");
    accept(slots, "a2", "10.0.0.1");
    for (const table of [0, 1] as const) {
      const other = collidingIn(buffer, "10.0.0.1", table);
      expect(accept(slots, `${other}-1`, other)).toEqual({ ok: true });
      expect(accept(slots, `${other}-2`, other)).toEqual({ ok: true });
      expect(accept(slots, `${other}-3`, other)).toEqual({ ok: false, reason: "per_ip_limit" });
      slots.release(`${other}-1`, other);
      slots.release(`${other}-2`, other);
    }
    // One counter per table: every address collides in both, so the cap holds for all together.
    const one = threadsOver({ maxConnections: 100, maxConnectionsPerIp: 2, reservedForKnown: 0 }, 1, 1).t[0]!;
    accept(one, "x", "10.0.0.1");
    accept(one, "y", "10.0.0.2");
    expect(accept(one, "z", "10.0.0.3")).toEqual({ ok: false, reason: "per_ip_limit" });
  });

  test("a buffer not made by createSharedSlots, and a thread index outside it, are refused", () => {
    expect(() => new SharedConnectionSlots<string>(new SharedArrayBuffer(64), 0)).toThrow(/createSharedSlots/);
    const buffer = createSharedSlots(
      { maxConnections: 1, maxConnectionsPerIp: 1, reservedForKnown: 0 },
      { threads: 2 },
    );
    expect(() => new SharedConnectionSlots<string>(buffer, 2)).toThrow(/outside 0..1/);
    expect(() =>
      createSharedSlots(
        { maxConnections: 1, maxConnectionsPerIp: 1, reservedForKnown: 0 },
        { threads: 1, buckets: 1000 },
      ),
    ).toThrow(/power of two/);
  });
});

describe("SharedKnownAddresses", () => {
  test("an address remembered through one handle is known through another, for ttl and not longer", () => {
    const buffer = createSharedKnown({ knownAddresses: 16, ttlMs: 1000 });
    const a = new SharedKnownAddresses(buffer);
    const b = new SharedKnownAddresses(buffer);
    a.remember("10.0.0.1", 1000);
    expect(b.has("10.0.0.1", 2000)).toBe(true);
    expect(b.has("10.0.0.1", 2001)).toBe(false);
    expect(b.has("10.0.0.2", 1000)).toBe(false);
    // An older time written late does not shorten the memory.
    b.remember("10.0.0.1", 5000);
    a.remember("10.0.0.1", 4000);
    expect(a.has("10.0.0.1", 6000)).toBe(true);
  });

  test("known only when both entries say so; an address sharing both with a known one passes for known", () => {
    const buffer = createSharedKnown({ knownAddresses: 16, ttlMs: 60_000, buckets: 16 });
    const k = new SharedKnownAddresses(buffer);
    const now = Date.now();
    k.remember("10.0.0.1", now);
    const mine = knownEntries(buffer, "10.0.0.1");
    const find = (want: (e: [number, number]) => boolean) => {
      for (let i = 0; i < 100_000; i++) {
        const ip = `10.9.${i >> 8}.${i & 255}`;
        if (want(knownEntries(buffer, ip))) return ip;
      }
      throw new Error("no such address");
    };
    expect(
      k.has(
        find((e) => e[0] === mine[0] && e[1] !== mine[1]),
        now,
      ),
    ).toBe(false);
    expect(
      k.has(
        find((e) => e[0] !== mine[0] && e[1] === mine[1]),
        now,
      ),
    ).toBe(false);
    expect(
      k.has(
        find((e) => e[0] === mine[0] && e[1] === mine[1]),
        now,
      ),
    ).toBe(true);
  });

  test("sizes: 8 entries per address, a power of two, at least 1 024", () => {
    expect(knownBuckets(4096)).toBe(32_768);
    expect(knownBuckets(10)).toBe(1024);
    expect(knownBuckets(5000)).toBe(65_536);
    expect(() => new SharedKnownAddresses(new SharedArrayBuffer(128))).toThrow(/createSharedKnown/);
  });
});
