import { describe, expect, test } from "bun:test";
import { formatIpv4, formatIpv6, parseIp } from "./address.ts";

describe("formatIpv6 (RFC 5952 canonical form)", () => {
  test.each([
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["2001:0db8:0000:0001:0001:0001:0001:0001", "2001:db8:0:1:1:1:1:1"], // §4.2.2: one zero group stays
    ["2001:0db8:0000:0000:0001:0000:0000:0001", "2001:db8::1:0:0:1"], // §4.2.3: first of equal runs
    ["2001:0000:0000:0001:0000:0000:0000:0001", "2001:0:0:1::1"], // longest run wins
    ["0000:0000:0000:0000:0000:0000:0000:0000", "::"],
    ["0000:0000:0000:0000:0000:0000:0000:0001", "::1"],
    ["fe80:0000:0000:0000:021a:a0ff:fe07:32e0", "fe80::21a:a0ff:fe07:32e0"],
    ["FEC0:0000:0000:0000:0216:D3FF:FE0D:022C", "fec0::216:d3ff:fe0d:22c"], // §4.3 lower case
    ["2001:0db8:0000:0000:0000:0000:0001:0000", "2001:db8::1:0"],
    ["0000:0000:0000:0000:0000:ffff:c000:0201", "::ffff:192.0.2.1"], // §5 IPv4-mapped
  ])("%s → %s", (full, canonical) => {
    const bytes = Uint8Array.from(full.split(":").flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
    expect(formatIpv6(bytes)).toBe(canonical);
  });

  test("formats at an offset", () => {
    expect(formatIpv4(Uint8Array.of(9, 10, 0, 0, 1), 1)).toBe("10.0.0.1");
  });
});

describe("parseIp", () => {
  test.each([
    ["192.0.2.1", 4, "192.0.2.1"],
    ["2001:db8::1", 6, "2001:db8::1"],
    ["[2001:db8::1]", 6, "2001:db8::1"],
    ["fe80::1%eth0", 6, "fe80::1"],
    ["::", 6, "::"],
    ["::ffff:10.1.2.3", 6, "::ffff:10.1.2.3"],
    ["1:2:3:4:5:6:7:8", 6, "1:2:3:4:5:6:7:8"],
    ["1:2:3:4:5:6:1.2.3.4", 6, "1:2:3:4:5:6:102:304"],
    ["2001:DB8:0:0:0:0:0:1", 6, "2001:db8::1"],
  ])("%s", (input, family, formatted) => {
    const p = parseIp(input);
    expect(p?.family).toBe(family as 4 | 6);
    if (p === null) return;
    expect(p.family === 4 ? formatIpv4(p.bytes) : formatIpv6(p.bytes)).toBe(formatted);
  });

  test.each(["", "1.2.3", "1.2.3.256", "1.2.3.4.5", "a.b.c.d", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::1", "1:2:3:4:5:6:7::8", ":1:2:3:4:5:6:7", "localhost"])(
    "rejects %p",
    (input) => {
      expect(parseIp(input)).toBeNull();
    },
  );
});
