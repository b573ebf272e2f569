import { expect, test } from "bun:test";
import { formatMetric, lossPercent, metricNumber, mosGrade, niceCeil, ssrcHex, tickText } from "./qos-format.ts";

test.each([
  ["40001", "0x00009c41"],
  [40001, "0x00009c41"],
  ["3735928559", "0xdeadbeef"],
  ["-559038737", "0xdeadbeef"], // the same SSRC printed as a signed 32-bit integer
  ["0", "0x00000000"],
  ["4294967295", "0xffffffff"],
  ["0xDEADBEEF", "0xdeadbeef"],
  ["4294967296", "4294967296"], // not 32 bits: shown as given
  ["abc", "abc"],
  [null, "—"],
  ["", "—"],
])("ssrcHex(%p) = %s", (v, hex) => expect(ssrcHex(v)).toBe(hex));

test.each([
  [0, 0],
  [64, 25],
  [256, 100],
  [5, 1.953125],
])("lossPercent(%d) = %d %", (fl, pct) => expect(lossPercent(fl)).toBe(pct));

test.each([
  [1.5, "ms", "1.50 ms"],
  [0.375, "ms", "0.375 ms"],
  [12.25, "ms", "12.3 ms"],
  [240, "ms", "240 ms"],
  [1.953125, "%", "2.0 %"],
  [4.123, "MOS", "4.12"],
  [null, "ms", "—"],
  [Number.NaN, "%", "—"],
])("formatMetric(%p, %s) = %s", (v, unit, text) => expect(formatMetric(v, unit)).toBe(text));

test("metricNumber keeps small values readable", () => {
  expect([0, 0.0625, Math.PI, 42.42, 1234.5].map(metricNumber)).toEqual(["0.00", "0.063", "3.14", "42.4", "1235"]);
});

test.each([
  [4.4, "good"],
  [4.0, "good"],
  [3.8, "fair"],
  [3.1, "poor"],
  [null, ""],
])("mosGrade(%p) = %p", (mos, grade) => expect(mosGrade(mos) as string).toBe(grade));

test.each([
  [4.46, 5],
  [28.7, 50],
  [0.37, 0.5],
  [1, 1],
  [1.01, 2],
  [2.2, 2.5],
  [120, 200],
  [0, 1],
])("niceCeil(%d) = %d", (v, top) => expect(niceCeil(v)).toBe(top));

test("tickText", () =>
  expect([0, 2.5, 5, 12.5, 0.125, 1 / 3].map(tickText)).toEqual(["0", "2.5", "5", "12.5", "0.125", "0.333"]));
