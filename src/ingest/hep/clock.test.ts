/** The per-source offset rules of docs/ARCHITECTURE.md "Agent clocks outside the accepted window". */
import { describe, expect, test } from "bun:test";
import { encodeHep3, decodeHep } from "../../hep/index.ts";
import { SourceClocks, type ClockedPacket, type SourceClockOptions } from "./clock.ts";
import { createClockTableBuffer } from "./clock-table.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const Y2012 = Date.UTC(2012, 0, 15, 8, 30, 0) * 1000;
const OPTS: SourceClockOptions = {
  maxAgeMs: 3650 * DAY,
  maxSkewMs: DAY,
  shift: true,
  maxAheadMs: 3_600_000,
  reanchorGapMs: 300_000,
  maxSources: 2,
};

/** A decoded packet with agent time `us` (unbounded window, as the pipeline decodes), or none. */
function packet(us: number | undefined): ClockedPacket {
  const buf = encodeHep3({
    srcIp: "10.0.0.1",
    dstIp: "10.0.0.2",
    srcPort: 5060,
    dstPort: 5060,
    protoType: 1,
    captureId: 1,
    payload: "x",
    ...(us === undefined ? {} : { timestampUs: us }),
  });
  const r = decodeHep(buf, { nowMs: NOW, maxAgeMs: Number.POSITIVE_INFINITY, maxSkewMs: Number.POSITIVE_INFINITY });
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

/** Applies the clock to a packet with agent time `us` arriving at `nowMs`: [stored µs, reason, shift]. */
function at(c: SourceClocks, source: string, us: number | undefined, nowMs: number) {
  const p = packet(us);
  const reason = c.apply(p, source, nowMs);
  return [p.timestampUs, reason ?? null, p.timeShiftUs ?? null, p.tsFallback] as const;
}

describe("SourceClocks", () => {
  test("in-window times are kept; missing or zero times get the arrival time", () => {
    const c = new SourceClocks(OPTS);
    expect(at(c, "a", NOW * 1000 - 5_000_000, NOW)).toEqual([NOW * 1000 - 5_000_000, null, null, false]);
    expect(at(c, "a", undefined, NOW)).toEqual([NOW * 1000, "missing", null, true]);
    expect(at(c, "a", 0, NOW)).toEqual([NOW * 1000, "missing", null, true]);
    expect(c.size).toBe(0);
  });

  test("one offset per source, fixed at its first out-of-window packet: spacing and order kept", () => {
    const c = new SourceClocks(OPTS);
    const shiftA = NOW * 1000 - Y2012;
    expect(at(c, "a", Y2012, NOW)).toEqual([NOW * 1000, "too_old", shiftA, true]);
    // Arriving 1 ms later, 100 ms later in agent time: 100 ms after the first, not 1 ms.
    expect(at(c, "a", Y2012 + 100_000, NOW + 1)).toEqual([NOW * 1000 + 100_000, "too_old", shiftA, true]);
    // Out of order in agent time stays out of order.
    expect(at(c, "a", Y2012 + 50_000, NOW + 2)).toEqual([NOW * 1000 + 50_000, "too_old", shiftA, true]);
    // Another source with another bad clock (ahead by 3 years) gets its own offset.
    const ahead = NOW * 1000 + 3 * 365 * DAY * 1000;
    expect(at(c, "b", ahead, NOW + 3)).toEqual([(NOW + 3) * 1000, "too_new", (NOW + 3) * 1000 - ahead, true]);
    expect(at(c, "a", Y2012 + 200_000, NOW + 4)).toEqual([NOW * 1000 + 200_000, "too_old", shiftA, true]);
    expect(c.reanchors).toBe(0);
  });

  test("re-anchored when the shifted time runs past max_ahead, falls behind reanchor_gap, or the source was idle", () => {
    const c = new SourceClocks(OPTS);
    at(c, "a", Y2012, NOW);
    // Two hours of agent time in one moment: beyond max_ahead (1 h), anchored again at the arrival.
    expect(at(c, "a", Y2012 + 2 * 3_600_000_000, NOW + 10)[0]).toBe((NOW + 10) * 1000);
    expect(c.reanchors).toBe(1);
    // The agent clock stands still while 6 minutes pass: behind by more than the gap.
    expect(at(c, "a", Y2012 + 2 * 3_600_000_000, NOW + 10 + 200_000)[0]).toBe((NOW + 10) * 1000);
    expect(at(c, "a", Y2012 + 2 * 3_600_000_000, NOW + 10 + 400_000)[0]).toBe((NOW + 10 + 400_000) * 1000);
    expect(c.reanchors).toBe(2);
    // Idle for longer than the gap, then a time that would still fit: anchored again all the same.
    const t = Y2012 + 3 * 3_600_000_000;
    expect(at(c, "a", t, NOW + 10 + 400_000 + 300_001)[0]).toBe((NOW + 10 + 400_000 + 300_001) * 1000);
    expect(c.reanchors).toBe(3);
  });

  test("sources are an LRU of max_sources: the least recently seen is forgotten and anchored anew", () => {
    const c = new SourceClocks(OPTS);
    at(c, "a", Y2012, NOW);
    at(c, "b", Y2012, NOW + 1);
    at(c, "a", Y2012 + 1000, NOW + 2);
    at(c, "c", Y2012, NOW + 3);
    expect(c.size).toBe(2);
    // "b" was forgotten: its next packet is a first one (arrival time, no re-anchor counted).
    expect(at(c, "b", Y2012 + 500_000, NOW + 4)[0]).toBe((NOW + 4) * 1000);
    // "c" was kept: still on its first offset ("a", now the least recent, made room for "b").
    expect(at(c, "c", Y2012 + 2000, NOW + 5)[0]).toBe((NOW + 3) * 1000 + 2000);
    expect(c.size).toBe(2);
    expect(c.reanchors).toBe(0);
  });

  test("time_shift.enable false: out-of-window packets get the arrival time, no offset", () => {
    const c = new SourceClocks({ ...OPTS, shift: false });
    expect(at(c, "a", Y2012, NOW)).toEqual([NOW * 1000, "too_old", null, true]);
    expect(at(c, "a", Y2012 + 100_000, NOW + 1)).toEqual([(NOW + 1) * 1000, "too_old", null, true]);
  });
});

describe("SourceClocks over the table shared by several ingest threads", () => {
  const OPTS8 = { ...OPTS, maxSources: 8 };

  test("one offset per source whichever thread anchored it; a re-anchor by one is the offset of all", () => {
    const table = createClockTableBuffer(OPTS8.maxSources);
    const [t0, t1] = [new SourceClocks(OPTS8, table), new SourceClocks(OPTS8, table)];
    // Thread 1 handles the source's first packet, thread 0 a later one: both get its offset.
    const first = at(t1, "a", Y2012 + 100_000, NOW);
    expect(first[0]).toBe(NOW * 1000);
    expect(at(t0, "a", Y2012, NOW + 3)[0]).toBe(NOW * 1000 - 100_000);
    expect(at(t0, "a", Y2012 + 200_000, NOW + 4)[2]).toBe(first[2]);
    // Idle past the gap on thread 0: anchored again, and thread 1 uses the new offset.
    const later = NOW + 4 + 300_001;
    expect(at(t0, "a", Y2012 + 300_000, later)[0]).toBe(later * 1000);
    expect(at(t1, "a", Y2012 + 400_000, later + 1)[0]).toBe(later * 1000 + 100_000);
    expect([t0.reanchors, t1.reanchors]).toEqual([1, 0]);
    // Another source has its own offset.
    expect(at(t1, "b", Y2012, NOW + 7)[0]).toBe((NOW + 7) * 1000);
  });

  test("a full table forgets the least recently used source first", () => {
    // Room for 4 sources is one bucket of 8 entries (twice max_sources).
    const OPTS4 = { ...OPTS, maxSources: 4 };
    const c = new SourceClocks(OPTS4, createClockTableBuffer(OPTS4.maxSources));
    for (let i = 0; i < 8; i++) at(c, `s${i}`, Y2012, NOW + i);
    expect(c.size).toBe(8);
    at(c, "s0", Y2012 + 1000, NOW + 10);
    at(c, "s8", Y2012, NOW + 11);
    expect(c.size).toBe(8);
    // s1 was the least recently used: its next packet is a first one again; s0 kept its offset.
    expect(at(c, "s1", Y2012 + 500_000, NOW + 12)[0]).toBe((NOW + 12) * 1000);
    expect(at(c, "s0", Y2012 + 2000, NOW + 13)[0]).toBe(NOW * 1000 + 2000);
    expect(c.reanchors).toBe(0);
  });

  test("the table holds at least max_sources sources", () => {
    const table = createClockTableBuffer(1000);
    const c = new SourceClocks({ ...OPTS, maxSources: 1000 }, table);
    for (let i = 0; i < 1000; i++) at(c, `10.0.${i >> 8}.${i & 255}|1`, Y2012, NOW);
    // Sources share buckets by hash, so a few can meet in a full one; the table has room for twice as many.
    expect(c.size).toBeGreaterThan(990);
  });
});
