import { expect, test } from "bun:test";
import { parseCidr, parseIp } from "../../core/index.ts";
import { IP_OR_CIDR_PATTERN, IP_PATTERN, windowMs } from "./schemas.ts";

// The published patterns must take exactly what the alias routes' parsers take (a string the
// pattern allows and the parser refuses was a 400 to a schema-valid request).
const SAMPLES = [
  "1.2.3.4",
  "0.0.0.0",
  "255.255.255.255",
  "10.0.0.0/8",
  "10.0.0.0/08",
  "10.0.0.0/32",
  "::",
  "::1",
  "1::",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7::",
  "::2:3:4:5:6:7:8",
  "2001:db8::/32",
  "2001:db8::/128",
  "::ffff:1.2.3.4",
  "1:2:3:4:5:6:1.2.3.4",
  "1::1.2.3.4",
  "fe80::1:2",
  "ABCD:ef01::",
  "01.2.3.4",
  "256.1.1.1",
  "1.2.3.4/33",
  "::/129",
  "1:2:3:4:5:6:7:8:9",
  "1::2::3",
  "0",
  "1.2.3",
  "",
  "1.2.3.4/",
  "/8",
  "12345::",
  "1:2:3:4:5:6:7:1.2.3.4",
  "::1.2.3",
  " 1.2.3.4",
  "g::",
];

test.each(SAMPLES)("IP_OR_CIDR_PATTERN and parseCidr agree on %j", (s) => {
  expect(new RegExp(IP_OR_CIDR_PATTERN).test(s)).toBe(parseCidr(s) !== undefined && s.trim() === s);
});

test.each(SAMPLES.filter((s) => !s.includes("/")))("IP_PATTERN and parseIp agree on %j", (s) => {
  expect(new RegExp(IP_PATTERN).test(s)).toBe(parseIp(s) !== undefined && s.trim() === s);
});

test("window bounds are whole milliseconds between 1970 and the year 9999", () => {
  expect(windowMs(6.16e-77)).toBe(0);
  expect(windowMs(1_700_000_000_123.9)).toBe(1_700_000_000_123);
  expect(windowMs(-5)).toBe(0);
  expect(windowMs(Date.parse("+245669-02-09T12:56:29Z"))).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
});
