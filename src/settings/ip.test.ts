import { describe, expect, test } from "bun:test";
import { cidrContains, parseCidrOrIp, parseIp } from "./ip.ts";

describe("parseIp", () => {
  test.each([
    ["10.1.2.3", "10.1.2.3"],
    ["0.0.0.0", "0.0.0.0"],
    ["255.255.255.255", "255.255.255.255"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["::FFFF:c000:0201", "192.0.2.1"],
  ])("IPv4 %s", (text, dotted) => {
    expect(Array.from(parseIp(text) ?? []).join(".")).toBe(dotted);
  });

  test.each([
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["2001:db8::", [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]],
    ["2001:db8:0:0:1:0:0:1", [0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]],
    ["fe80::1%eth0", [0xfe80, 0, 0, 0, 0, 0, 0, 1]],
    ["64:ff9b::192.0.2.33", [0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x221]],
  ])("IPv6 %s", (text, groups) => {
    const b = parseIp(text)!;
    expect(b.length).toBe(16);
    const got = Array.from({ length: 8 }, (_, i) => (b[i * 2]! << 8) | b[i * 2 + 1]!);
    expect(got).toEqual(groups);
  });

  test.each(["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.x", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "::1.2.3", "a.b.c.d", " "])(
    "rejects %p",
    (text) => {
      expect(parseIp(text)).toBeUndefined();
    },
  );
});

describe("CIDR", () => {
  test.each([
    ["10.0.0.0/8", "10.255.1.1", true],
    ["10.0.0.0/8", "11.0.0.1", false],
    ["192.168.1.128/25", "192.168.1.200", true],
    ["192.168.1.128/25", "192.168.1.127", false],
    ["192.168.1.7", "192.168.1.7", true],
    ["192.168.1.7", "192.168.1.8", false],
    ["0.0.0.0/0", "8.8.8.8", true],
    ["2001:db8::/32", "2001:db8:ffff::1", true],
    ["2001:db8::/32", "2001:db9::1", false],
    ["::ffff:10.0.0.0/104", "10.9.9.9", true],
    ["10.0.0.0/8", "::ffff:10.1.1.1", true],
    ["10.0.0.0/8", "2001:db8::1", false],
  ])("%s contains %s → %p", (cidr, ip, expected) => {
    expect(cidrContains(parseCidrOrIp(cidr)!, parseIp(ip)!)).toBe(expected);
  });

  test.each(["10.0.0.0/33", "2001:db8::/129", "10.0.0.0/", "10.0.0.0/x", "nope/8"])("rejects %p", (text) => {
    expect(parseCidrOrIp(text)).toBeUndefined();
  });
});
