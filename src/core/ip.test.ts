import { describe, expect, test } from "bun:test";
import {
  cidrContains,
  formatIpv4,
  formatIpv6,
  hostText,
  parseCidr,
  parseIp,
  parseIpAddress,
  parseIpv4,
  parseIpv6,
} from "./ip.ts";

// One module for IP text (server and dashboard): the HEP decoder/encoder, pcap writer, alias
// resolver, export exclusions and the ladder all use these functions.

const hex = (s: string): Uint8Array => Uint8Array.from(s.match(/[0-9a-f]{2}/gi) ?? [], (b) => parseInt(b, 16));

describe("formatIpv6 (RFC 5952)", () => {
  test.each([
    ["20010db8000000000000000000000001", "2001:db8::1"], // 4.2.1 longest run compressed
    ["00000000000000000000000000000000", "::"],
    ["00000000000000000000000000000001", "::1"],
    ["00010000000000000000000000000000", "1::"],
    ["20010db8000000010001000100010001", "2001:db8:0:1:1:1:1:1"], // 4.2.2 a single zero group stays
    ["20010db8000000000001000000000001", "2001:db8::1:0:0:1"], // 4.2.3 first of two equal runs
    ["20010000000000010000000000000001", "2001:0:0:1::1"], // 4.2.3 the longer run wins
    ["20010DB800AB00000000CAFE00000000", "2001:db8:ab::cafe:0:0"], // 4.3 lower case, 4.1 no leading zeros
    ["fe8000000000000002005efffe00530199", "fe80::200:5eff:fe00:5301"], // only the first 16 octets count
    ["00000000000000000000ffffc0000201", "::ffff:192.0.2.1"], // section 5 IPv4-mapped
    ["0000000000000000ffff0000c0000201", "::ffff:0:c000:201"], // not mapped: plain hex
  ])("%s → %s", (bytes, expected) => {
    expect(formatIpv6(hex(bytes), 0)).toBe(expected);
  });

  test("reads at an offset", () => {
    const buf = hex("ffff 20010db8000000000000000000000002 ffff");
    expect(formatIpv6(buf, 2)).toBe("2001:db8::2");
  });

  test("agrees with the WHATWG URL serializer on 20k random addresses, twice (cache hits)", () => {
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const addresses: Uint8Array[] = [];
    for (let i = 0; i < 10_000; i++) {
      // Zero groups are likely, so compression cases are frequent.
      const a = new Uint8Array(16);
      for (let g = 0; g < 8; g++) if (next() % 3 === 0) a.set([next() & 0xff, next() & 0xff], 2 * g);
      if (a[10] === 0xff && a[11] === 0xff) a[11] = 0; // mapped form differs by design
      addresses.push(a);
    }
    for (const round of [1, 2]) {
      for (const a of addresses) {
        const text = formatIpv6(a, 0);
        const groups = Array.from({ length: 8 }, (_, g) => ((a[2 * g]! << 8) | a[2 * g + 1]!).toString(16)).join(":");
        const reference = new URL(`http://[${groups}]/`).hostname.slice(1, -1);
        if (text !== reference) throw new Error(`round ${round}: ${groups} → ${text}, expected ${reference}`);
      }
    }
  });
});

describe("formatIpv4", () => {
  test("dotted quad, cached or not", () => {
    const buf = Uint8Array.from([9, 192, 0, 2, 255, 0, 0, 0, 0]);
    for (let i = 0; i < 3; i++) {
      expect(formatIpv4(buf, 1)).toBe("192.0.2.255");
      expect(formatIpv4(buf, 5)).toBe("0.0.0.0");
    }
  });

  test("distinct addresses never share a cached text", () => {
    const buf = new Uint8Array(4);
    const dv = new DataView(buf.buffer);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 20_000; i++) {
        const v = Math.imul(i, 2654435761) >>> 0;
        dv.setUint32(0, v);
        const expected = `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
        if (formatIpv4(buf, 0) !== expected) throw new Error(`${expected} formatted as ${formatIpv4(buf, 0)}`);
      }
    }
  });
});

describe("parsing (encoder side)", () => {
  test.each([
    ["192.0.2.1", [192, 0, 2, 1]],
    ["0.0.0.0", [0, 0, 0, 0]],
    ["256.0.0.1", null],
    ["1.2.3", null],
    ["01.2.3.4", null],
    ["1.2.3.4 ", null],
  ])("parseIpv4(%p)", (input, expected) => {
    const out = parseIpv4(input);
    expect(out === null ? null : Array.from(out)).toEqual(expected);
  });

  test.each([
    ["::", "00000000000000000000000000000000"],
    ["2001:db8::1", "20010db8000000000000000000000001"],
    ["::ffff:192.0.2.1", "00000000000000000000ffffc0000201"],
    ["1:2:3:4:5:6:7:8", "00010002000300040005000600070008"],
    ["FE80::A", "fe80000000000000000000000000000a"],
    ["1:2:3:4:5:6:7::", "00010002000300040005000600070000"],
    ["1::2::3", null],
    ["1:2:3:4:5:6:7:8:9", null],
    ["1:2:3:4:5:6:7:8::", null],
    ["12345::", null],
    ["::g", null],
  ])("parseIpv6(%p)", (input, expected) => {
    const out = parseIpv6(input);
    expect(out === null ? null : Buffer.from(out).toString("hex")).toBe(expected);
  });
});

describe("parseIpAddress (pcap writer: family kept, mapped stays IPv6)", () => {
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
    const p = parseIpAddress(input);
    expect(p?.family).toBe(family as 4 | 6);
    if (p === null) return;
    expect(p.family === 4 ? formatIpv4(p.bytes) : formatIpv6(p.bytes)).toBe(formatted);
  });

  test.each([
    "",
    "1.2.3",
    "1.2.3.256",
    "1.2.3.4.5",
    "a.b.c.d",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::1",
    "1:2:3:4:5:6:7::8",
    ":1:2:3:4:5:6:7",
    "localhost",
  ])("rejects %p", (input) => {
    expect(parseIpAddress(input)).toBeNull();
  });
});

describe("parseIp (aliases, exclusions, ladder: IPv4-mapped folded to IPv4)", () => {
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

  test.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3.x",
    "1::2::3",
    "12345::",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "::1.2.3",
    "a.b.c.d",
    " ",
    "[::1]",
  ])("rejects %p", (text) => {
    expect(parseIp(text)).toBeUndefined();
  });
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
    ["::ffff:10.0.0.0/104", "10.200.0.1", true], // the mapped prefix is 104 - 96 = /8
    ["10.1.2.0/24", "::ffff:10.1.2.3", true],
    ["10.0.0.0/8", "2001:db8::1", false],
    ["fe80::/10", "fe80::1%eth0", true],
  ])("%s contains %s → %p", (cidr, ip, expected) => {
    expect(cidrContains(parseCidr(cidr)!, parseIp(ip)!)).toBe(expected);
  });

  test.each([
    "10.0.0.0/33",
    "2001:db8::/129",
    "10.0.0.0/",
    "10.0.0.0/x",
    "nope/8",
    "10.1.2",
    "010.1.2.3",
    "gggg::1",
    "host.example",
  ])("rejects %p", (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });
});

test.each([
  ["10.0.0.1", "10.0.0.1"],
  ["2001:db8::1", "[2001:db8::1]"],
  ["pbx.example", "pbx.example"],
])("hostText(%p) → %p (the host part before :port)", (ip, host) => {
  expect(hostText(ip)).toBe(host);
});
