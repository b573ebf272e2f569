import { expect, test } from "bun:test";
import {
  BASE_DELAY_MS,
  bestBuffer,
  delayVariation,
  lateShare,
  mosEstimate,
  phasesFromRtcp,
  playout,
  rfc3550Jitter,
} from "./jitter.ts";
import { advance, newRound, totalTicks } from "./jitter-round.ts";

test("mosEstimate follows the simplified E-model: no impairment is R 93.2, MOS 4.41", () => {
  const best = mosEstimate(0, 0);
  expect(best.r).toBeCloseTo(93.2, 6);
  expect(best.mos).toBeCloseTo(1 + 0.035 * 93.2 + 93.2 * 33.2 * 6.8 * 7e-6, 9);
});

test.each([
  // delay ms, loss, R
  [100, 0, 93.2 - 2.4],
  [200, 0, 93.2 - 4.8 - 0.11 * 22.7],
  [50, 0.01, 93.2 - 1.2 - (95 * 1) / (1 + 25.1)],
])("mosEstimate(%p ms, %p loss) has R %p", (d, loss, r) => {
  expect(mosEstimate(d, loss).r).toBeCloseTo(r, 9);
});

test("mosEstimate clamps: R below 0 is MOS 1, and the MOS falls as loss or delay grows", () => {
  expect(mosEstimate(2000, 0.5).mos).toBe(1);
  expect(mosEstimate(80, 0.02).mos).toBeLessThan(mosEstimate(80, 0.01).mos);
  expect(mosEstimate(300, 0).mos).toBeLessThan(mosEstimate(150, 0).mos);
});

test("delayVariation has the RFC 3550 jitter it was made from, and is repeatable by seed", () => {
  const v = delayVariation(30, 20_000, 7);
  // The mean |D(i) − D(i−1)| is what the RFC 3550 estimator tracks (its last value is a 1/16 smoothed sample).
  const meanDiff = v.slice(1).reduce((sum, d, i) => sum + Math.abs(d - v[i]!), 0) / (v.length - 1);
  expect(meanDiff).toBeGreaterThan(28.5);
  expect(meanDiff).toBeLessThan(31.5);
  expect(delayVariation(30, 5, 7)).toEqual(v.slice(0, 5));
  expect(delayVariation(0, 3, 7)).toEqual([0, 0, 0]);
});

test("rfc3550Jitter: J += (|D(i) − D(i−1)| − J) / 16", () => {
  expect(rfc3550Jitter([0, 16, 16])).toBe(1 - 1 / 16);
});

test("lateShare and playout: a packet later than the buffer is lost, the buffer adds delay", () => {
  expect(lateShare([0, 10, 20, 30], 15)).toBe(0.5);
  const p = playout([0, 10, 20, 30], 15, 0.5);
  expect(p.loss).toBeCloseTo(0.75, 9);
  expect(p.delayMs).toBe(BASE_DELAY_MS + 15);
});

test("bestBuffer trades delay against loss: more jitter wants a deeper buffer", () => {
  const calm = bestBuffer(delayVariation(3, 500, 1));
  const rough = bestBuffer(delayVariation(40, 500, 1));
  expect(rough.bufferMs).toBeGreaterThan(calm.bufferMs);
  expect(rough.mos).toBeLessThan(calm.mos);
  expect(rough.bufferMs % 5).toBe(0);
});

test("phasesFromRtcp: RTP units at 8 kHz to ms, fraction_lost in 1/256, agent jitter as is, junk skipped", () => {
  const rows = [
    JSON.stringify({ report_blocks: [{ ia_jitter: 160, fraction_lost: 64 }] }),
    "not json",
    JSON.stringify({ jitter: 12.5 }),
    JSON.stringify({ type: 200 }),
  ];
  expect(phasesFromRtcp(rows)).toEqual([
    { jitterMs: 20, loss: 0.25, source: "RTCP" },
    { jitterMs: 12.5, loss: 0, source: "RTCP" },
  ]);
});

test("a round: every tick scores MOS × 10, a buffer above every delay loses nothing, and it ends", () => {
  const phases = [{ jitterMs: 20, loss: 0, source: "test" }];
  let deep = newRound(phases, 3);
  let shallow = newRound(phases, 3);
  const max = Math.max(...deep.variation[0]!);
  for (let i = 0; i < totalTicks(deep); i++) {
    deep = advance(deep, Math.ceil(max) + 1);
    shallow = advance(shallow, 0);
  }
  expect(deep.done).toBe(true);
  expect(deep.loss).toBe(0);
  expect(deep.points).toBe(Math.round(mosEstimate(BASE_DELAY_MS + Math.ceil(max) + 1, 0).mos * 10) * totalTicks(deep));
  expect(shallow.loss).toBeGreaterThan(0.9);
  expect(shallow.points).toBeLessThan(deep.points);
  expect(advance(deep, 50)).toBe(deep);
  // The par: the best fixed buffer of the phase, scored every tick.
  const best = bestBuffer(deep.variation[0]!, 0);
  expect(deep.parBuffers).toEqual([best.bufferMs]);
  expect(deep.par).toBe(Math.round(best.mos * 10) * totalTicks(deep));
});
