import { describe, expect, test } from "bun:test";
import { decodeHep, encodeHep3, StreamCapture } from "../hep/index.ts";
import type { StreamEvent } from "./event.ts";
import { StreamMerge } from "./merge.ts";

const T0 = 1_780_000_000_000_000;

/** One thread's chunk: log events whose payload names them, at the given capture times (µs). */
function chunk(events: Array<[name: string, tsUs: number]>): [Uint8Array, number] {
  const c = new StreamCapture({ initialBytes: 64 });
  for (const [name, tsUs] of events) {
    const r = decodeHep(
      encodeHep3({ srcIp: "10.0.0.1", dstIp: "10.0.0.2", timestampUs: tsUs, protoType: 100, payload: name }),
    );
    if (!r.ok) throw new Error(r.reason);
    c.tap(r.value, undefined);
  }
  const s = c.seal()!;
  return [new Uint8Array(s.buffer, 0, s.length).slice(), s.count];
}

function merged(threads: number, maxHoldMs = 1000, maxHeld = 1000) {
  const out: string[] = [];
  let now = 0;
  const m = new StreamMerge((events: StreamEvent[]) => out.push(...events.map((e) => e.frame(true).payload!)), {
    threads,
    maxHoldMs,
    maxHeld,
    now: () => now,
  });
  const handOver = (from: number, events: Array<[string, number]> = [], drained = true) => {
    if (events.length) m.accept(...chunk(events));
    m.handedOver(from, drained);
  };
  return { m, out, handOver, later: (ms: number) => (now += ms) };
}

describe("the live stream of several ingest threads in capture order", () => {
  test("a 180 handed over before its INVITE waits for it; both go out once every thread has handed over again", () => {
    const { out, handOver } = merged(2);
    handOver(1, [["180", T0 + 5]]);
    expect(out).toEqual([]);
    handOver(0, [["INVITE", T0]]);
    // The 180 is settled (thread 0 handed over after it), the INVITE not: it is first, so nothing goes yet.
    expect(out).toEqual([]);
    handOver(1);
    expect(out).toEqual(["INVITE", "180"]);
  });

  test("settled events go out up to the first unsettled capture time; later ones wait", () => {
    const { out, handOver } = merged(2);
    handOver(0, [
      ["a", T0],
      ["c", T0 + 20],
    ]);
    handOver(1, [["b", T0 + 10]]);
    // a and c settled (thread 1 handed over after them); b not, and c is after it.
    expect(out).toEqual(["a"]);
    handOver(0, [["d", T0 + 30]]);
    expect(out).toEqual(["a", "b", "c"]);
    handOver(1);
    expect(out).toEqual(["a", "b", "c", "d"]);
  });

  test("a hand-over with datagrams still on the thread's socket settles nothing", () => {
    const { out, handOver } = merged(2);
    handOver(1, [["200", T0 + 5]]);
    // Thread 0 was busy: its socket still held the 180 when it handed over.
    handOver(0, [], false);
    expect(out).toEqual([]);
    handOver(0, [["180", T0]]);
    handOver(1);
    expect(out).toEqual(["180", "200"]);
  });

  test("equal capture times keep the order they came in", () => {
    const { out, handOver } = merged(2);
    handOver(0, [
      ["x1", T0],
      ["x2", T0],
    ]);
    handOver(1, [["y1", T0]]);
    handOver(0);
    handOver(1);
    expect(out).toEqual(["x1", "x2", "y1"]);
  });

  test("a thread that stops handing over holds events at most maxHoldMs", () => {
    const { out, handOver, later } = merged(3, 1000);
    handOver(0, [["a", T0]]);
    handOver(1, [["b", T0 + 1]]);
    expect(out).toEqual([]);
    later(999);
    handOver(0);
    expect(out).toEqual([]);
    later(1);
    handOver(1);
    expect(out).toEqual(["a", "b"]);
  });

  test("more than maxHeld events go out at once, in capture order", () => {
    const { m, out, handOver } = merged(2, 1000, 3);
    handOver(0, [
      ["c", T0 + 3],
      ["a", T0 + 1],
    ]);
    expect(out).toEqual([]);
    handOver(0, [
      ["b", T0 + 2],
      ["d", T0 + 4],
    ]);
    expect(out).toEqual(["a", "b", "c", "d"]);
    expect(m.size).toBe(0);
  });

  test("close sends everything held", () => {
    const { m, out, handOver } = merged(2);
    handOver(0, [
      ["b", T0 + 2],
      ["a", T0 + 1],
    ]);
    m.close();
    expect(out).toEqual(["a", "b"]);
  });
});
