import { expect, test } from "bun:test";
import { cidrContains, parseCidr, parseIp } from "./ip-match.ts";

test.each([
  ["10.1.2.3", "10.0.0.0/8", true],
  ["11.1.2.3", "10.0.0.0/8", false],
  ["10.1.2.3", "10.1.2.3", true],
  ["10.1.2.4", "10.1.2.3", false],
  ["::ffff:10.1.2.3", "10.1.2.0/24", true],
  ["10.1.2.3", "::ffff:10.0.0.0/104", true],
  ["2001:db8::5", "2001:db8::/32", true],
  ["2001:db9::5", "2001:db8::/32", false],
  ["[2001:db8::5]", "2001:db8::5", true],
  ["fe80::1%eth0", "fe80::/10", true],
  ["10.1.2.3", "2001:db8::/32", false],
])("%s in %s: %p", (ip, net, inside) => {
  expect(cidrContains(parseCidr(net)!, parseIp(ip)!)).toBe(inside);
});

test.each(["10.1.2", "10.1.2.300", "010.1.2.3", "1::2::3", "gggg::1", "10.0.0.0/33", "host.example"])("%s is not an address or network", (s) => {
  expect(parseCidr(s)).toBeUndefined();
});
