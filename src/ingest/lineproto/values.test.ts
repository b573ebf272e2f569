import { describe, expect, test } from "bun:test";
import { parseGoFloat, parseInt64, parseLpBoolean, parseUint64 } from "./values.ts";

// Expected values are what Go's strconv returns for the same text (checked against Go 1.26).
describe("parseGoFloat follows Go's ParseFloat syntax", () => {
  test.each([
    ["1", 1],
    ["-1.5", -1.5],
    [".5", 0.5],
    ["1.", 1],
    ["+1", 1],
    ["0.1e1", 1],
    ["12.345678901234", 12.345678901234],
    ["1_000", 1000],
    ["1_000.5", 1000.5],
    ["1e1_0", 1e10],
    ["123456789012345678901234567890", 1.2345678901234568e29],
    ["0x1p-2", 0.25],
    ["0X1.8P1", 3],
    ["0x_1p4", 16],
    ["0x1p-1074", 5e-324],
    ["0x1p-1075", 0],
    ["0x1.8p-1074", 1e-323],
    ["0x1.fffffffffffff7p1023", 1.7976931348623157e308],
    ["4.9e-324", 5e-324],
    ["2e-324", 0],
    ["1e-400", 0],
    ["1.7976931348623157e308", 1.7976931348623157e308],
    ["0x1.fffffffffffff8p1023", "range"],
    ["1.7976931348623159e308", "range"],
    ["1e400", "range"],
    ["1__0", "syntax"],
    ["_1", "syntax"],
    ["1_", "syntax"],
    ["1_.5", "syntax"],
    ["1._5", "syntax"],
    ["0x10", "syntax"],
    ["0x1p", "syntax"],
    ["0xp1", "syntax"],
    ["1e", "syntax"],
    ["1e+", "syntax"],
    [".", "syntax"],
    ["-", "syntax"],
    ["inf", "syntax"],
    ["-Inf", "syntax"],
    ["NaN", "syntax"],
    ["1.2.3", "syntax"],
    ["1\t", "syntax"],
    [" 1", "syntax"],
    ["0b1", "syntax"],
    ["0o7", "syntax"],
  ] as const)("%p", (text, expected) => {
    expect(parseGoFloat(text)).toBe(expected);
  });

  test("reads a slice of a larger string in place", () => {
    expect(parseGoFloat("v=12.5,", 2, 6)).toBe(12.5);
    expect(parseGoFloat("v=-0 ", 2, 4)).toBe(-0);
  });
});

describe("parseInt64 / parseUint64 follow Go's ParseInt / ParseUint (base 10)", () => {
  test.each([
    ["0", 0n],
    ["-0", 0n],
    ["+7", 7n],
    ["000123", 123n],
    ["999999999999999", 999_999_999_999_999n],
    ["1234567890123456", 1_234_567_890_123_456n],
    ["9223372036854775807", 9_223_372_036_854_775_807n],
    ["-9223372036854775808", -9_223_372_036_854_775_808n],
    ["-0009223372036854775808", -9_223_372_036_854_775_808n],
    ["9223372036854775808", "range"],
    ["-9223372036854775809", "range"],
    ["99999999999999999999", "range"],
    ["", "syntax"],
    ["-", "syntax"],
    ["1_0", "syntax"],
    ["1.0", "syntax"],
    ["--1", "syntax"],
  ] as const)("int64 %p", (text, expected) => {
    expect(parseInt64(text)).toBe(expected);
  });

  test.each([
    ["0", 0n],
    ["18446744073709551615", 18_446_744_073_709_551_615n],
    ["9223372036854775807", 9_223_372_036_854_775_807n],
    ["9223372036854775808", 9_223_372_036_854_775_808n],
    ["00018446744073709551615", 18_446_744_073_709_551_615n],
    ["18446744073709551616", "range"],
    ["-1", "syntax"],
    ["+1", "syntax"],
    ["", "syntax"],
  ] as const)("uint64 %p", (text, expected) => {
    expect(parseUint64(text)).toBe(expected);
  });
});

test.each([
  ["t", true],
  ["TRUE", true],
  ["True", true],
  ["F", false],
  ["false", false],
  ["tRUE", "syntax"],
  ["yes", "syntax"],
  ["", "syntax"],
] as const)("parseLpBoolean %p", (text, expected) => {
  expect(parseLpBoolean(text)).toBe(expected);
});
