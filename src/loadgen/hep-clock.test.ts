import { describe, expect, test } from "bun:test";
import { MonotonicMicros, hepClock } from "./hep-clock.ts";

describe('HEP copy clock (docs/LOADGEN.md "HEP mirroring")', () => {
  test("a clock that has not moved, or went back, still gives strictly increasing µs stamps", () => {
    const readings = [5_000, 5_000, 5_000, 4_000, 5_002, 5_002, 9_000, 9_000];
    let i = 0;
    const c = new MonotonicMicros(() => readings[i++]!);
    expect(readings.map(() => c.next())).toEqual([5_000, 5_001, 5_002, 5_003, 5_004, 5_005, 9_000, 9_001]);
  });

  test("the process clock: epoch µs with sub-millisecond steps, each stamp past the previous one", () => {
    const wallUs = Date.now() * 1000;
    const stamps = Array.from({ length: 20_000 }, () => hepClock.next());
    // Epoch microseconds (the wall clock's order of magnitude, not a time measurement).
    expect(Math.abs(stamps[0]! - wallUs)).toBeLessThan(60_000_000);
    expect(stamps.every((s, k) => Number.isInteger(s) && (k === 0 || s > stamps[k - 1]!))).toBe(true);
    // Many stamps of one millisecond differ below the millisecond.
    expect(new Set(stamps.map((s) => Math.floor(s / 1000))).size).toBeLessThan(stamps.length);
  });
});
