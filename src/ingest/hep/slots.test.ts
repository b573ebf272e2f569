import { describe, expect, test } from "bun:test";
import { KnownAddresses } from "./known-addresses.ts";
import { ConnectionSlots, reservedSlots } from "./slots.ts";

describe("ConnectionSlots", () => {
  test("an unknown address cannot take the reserved share; a known one can", () => {
    const slots = new ConnectionSlots<string>({
      maxConnections: 4,
      maxConnectionsPerIp: 4,
      reservedForKnown: reservedSlots(4, 50),
    });
    slots.add("a", "10.0.0.1");
    slots.add("b", "10.0.0.2");
    expect(slots.admit("10.0.0.3", false)).toEqual({ ok: false, reason: "reserved_for_known" });
    expect(slots.admit("10.0.0.3", true)).toEqual({ ok: true });
  });

  test("a full table: a known address evicts the oldest connection that never sent a valid frame; an unknown one is refused", () => {
    const slots = new ConnectionSlots<string>({ maxConnections: 3, maxConnectionsPerIp: 3, reservedForKnown: 0 });
    slots.add("first", "10.0.0.1");
    slots.add("second", "10.0.0.2");
    slots.add("third", "10.0.0.3");
    slots.prove("first");
    expect(slots.admit("10.0.0.9", false)).toEqual({ ok: false, reason: "max_connections" });
    expect(slots.admit("10.0.0.9", true)).toEqual({ ok: true, evict: "second" });
    slots.prove("second");
    slots.prove("third");
    // Every connection has carried HEP: none is given up.
    expect(slots.admit("10.0.0.9", true)).toEqual({ ok: false, reason: "max_connections" });
  });

  test("the per-address cap holds for known addresses too, and a released slot is free again", () => {
    const slots = new ConnectionSlots<string>({ maxConnections: 10, maxConnectionsPerIp: 2, reservedForKnown: 0 });
    slots.add("a", "10.0.0.1");
    slots.add("b", "10.0.0.1");
    expect(slots.admit("10.0.0.1", true)).toEqual({ ok: false, reason: "per_ip_limit" });
    expect(slots.release("a", "10.0.0.1")).toBe(true);
    expect(slots.release("a", "10.0.0.1")).toBe(false);
    expect(slots.admit("10.0.0.1", false)).toEqual({ ok: true });
    expect(slots.size).toBe(1);
  });

  test("reservedSlots rounds down", () => {
    expect(reservedSlots(1024, 25)).toBe(256);
    expect(reservedSlots(3, 25)).toBe(0);
  });
});

describe("KnownAddresses", () => {
  test("bounded: the least recently seen address is forgotten first", () => {
    const known = new KnownAddresses(2, 60_000);
    known.remember("a", 1000);
    known.remember("b", 1000);
    known.remember("a", 2000);
    known.remember("c", 3000);
    expect([known.has("a", 3000), known.has("b", 3000), known.has("c", 3000)]).toEqual([true, false, true]);
    expect(known.size).toBe(2);
  });

  test("an address is known for ttl after its last valid frame, not longer", () => {
    const known = new KnownAddresses(10, 1000);
    known.remember("a", 1000);
    expect(known.has("a", 2000)).toBe(true);
    expect(known.has("a", 2001)).toBe(false);
    expect(known.size).toBe(0);
  });
});
