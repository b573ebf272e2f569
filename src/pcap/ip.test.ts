import { describe, expect, test } from "bun:test";
import { IpDecoder, type IpPacket } from "./ip.ts";
import { decodeText, ipv4, ipv6, ipv6Ext, ipv6Fragment, text } from "./testing.ts";
import { concat } from "./bytes.ts";

const body = text("0123456789abcdef0123456789ABCDEF-tail"); // 37 bytes
const summary = (p: IpPacket) => ({
  v: p.version,
  src: p.src,
  dst: p.dst,
  proto: p.protocol,
  payload: decodeText(p.payload),
});

function decodeAll(dec: IpDecoder, packets: Array<[4 | 6, Uint8Array]>): Array<ReturnType<typeof summary> | string> {
  return packets.map(([v, data], i) => {
    const r = dec.decode(v, data, i);
    return r.ok ? summary(r.value) : r.reason;
  });
}

describe("IPv4", () => {
  test("options are skipped and Ethernet padding after the total length is cut", () => {
    const pkt = ipv4(
      { src: "192.0.2.1", dst: "198.51.100.7", protocol: 17, options: Uint8Array.of(0x94, 4, 0, 0) },
      body,
    );
    const padded = concat([pkt, new Uint8Array(6)]);
    expect(decodeAll(new IpDecoder(), [[4, padded]])).toEqual([
      { v: 4, src: "192.0.2.1", dst: "198.51.100.7", proto: 17, payload: decodeText(body) },
    ]);
  });

  test("fragments arriving out of order are reassembled by id in the packet completing them", () => {
    const f = (offset: number, end: number, more: boolean, id = 7) =>
      ipv4(
        { src: "10.0.0.1", dst: "10.0.0.2", protocol: 17, id, fragmentOffset: offset, moreFragments: more },
        body.subarray(offset, end),
      );
    const dec = new IpDecoder();
    expect(
      decodeAll(dec, [
        [4, f(16, 32, true)],
        [4, f(0, 8, true, 8)],
        [4, f(32, 37, false)],
        [4, f(0, 16, true)],
      ]),
    ).toEqual([
      "ip_fragment_held",
      "ip_fragment_held", // another datagram (id 8), never completed
      "ip_fragment_held",
      { v: 4, src: "10.0.0.1", dst: "10.0.0.2", proto: 17, payload: decodeText(body) },
    ]);
  });

  test("incomplete datagrams expire after the timeout", () => {
    const dec = new IpDecoder({ fragmentTimeoutUs: 10, maxPendingDatagrams: 2 });
    for (let id = 0; id < 3; id++)
      dec.decode(
        4,
        ipv4({ src: "10.0.0.1", dst: "10.0.0.2", protocol: 17, id, moreFragments: true }, body.subarray(0, 8)),
        0,
      );
    expect(dec.expiredDatagrams).toBe(1); // the oldest made room
  });

  test.each([
    ["shorter than a header", new Uint8Array(12), "ip_truncated"],
    ["IHL below 5", Uint8Array.of(0x44, ...new Array<number>(30).fill(0)), "ip_bad_header"],
    ["version 6 nibble in an IPv4 frame", Uint8Array.of(0x65, ...new Array<number>(30).fill(0)), "ip_bad_header"],
  ])("%s → %s", (_name, data, reason) => {
    const r = new IpDecoder().decode(4, data, 0);
    expect(r.ok ? "ok" : r.reason).toBe(reason as "ip_truncated");
  });
});

describe("IPv6", () => {
  test("hop-by-hop, routing and destination options headers are walked", () => {
    const ext = concat([ipv6Ext(43, 0), ipv6Ext(60, 1), ipv6Ext(17, 0)]);
    const pkt = ipv6({ src: "2001:db8::1", dst: "2001:db8:0:0:1::2", nextHeader: 0 }, concat([ext, body]));
    expect(decodeAll(new IpDecoder(), [[6, pkt]])).toEqual([
      { v: 6, src: "2001:db8::1", dst: "2001:db8::1:0:0:2", proto: 17, payload: decodeText(body) },
    ]);
  });

  test("fragment header: out of order, with a destination options header after reassembly", () => {
    const inner = concat([ipv6Ext(17, 0), body]); // 8 + 37 bytes, next header 60 in the fragment header
    const frag = (offset: number, end: number, more: boolean) =>
      ipv6(
        { src: "fe80::1", dst: "fe80::2", nextHeader: 0 },
        concat([ipv6Ext(44, 0), ipv6Fragment(60, offset, more, 0xdeadbeef), inner.subarray(offset, end)]),
      );
    expect(
      decodeAll(new IpDecoder(), [
        [6, frag(24, 45, false)],
        [6, frag(0, 24, true)],
      ]),
    ).toEqual(["ip_fragment_held", { v: 6, src: "fe80::1", dst: "fe80::2", proto: 17, payload: decodeText(body) }]);
  });

  test("an atomic fragment (offset 0, M = 0) is delivered at once", () => {
    const pkt = ipv6({ src: "::1", dst: "::1", nextHeader: 44 }, concat([ipv6Fragment(17, 0, false, 1), body]));
    expect(decodeAll(new IpDecoder(), [[6, pkt]])).toEqual([
      { v: 6, src: "::1", dst: "::1", proto: 17, payload: decodeText(body) },
    ]);
  });

  test.each([
    ["no next header", ipv6({ src: "::1", dst: "::2", nextHeader: 59 }, new Uint8Array(0)), "ip_no_payload"],
    [
      "extension header longer than the packet",
      ipv6({ src: "::1", dst: "::2", nextHeader: 0 }, Uint8Array.of(17, 4)),
      "ip_truncated",
    ],
    ["short", new Uint8Array(39), "ip_truncated"],
  ])("%s → %s", (_name, data, reason) => {
    const r = new IpDecoder().decode(6, data, 0);
    expect(r.ok ? "ok" : r.reason).toBe(reason as "ip_truncated");
  });
});

describe("IP-in-IP tunnels", () => {
  test.each([
    [
      "IPv4 in IPv4 (protocol 4)",
      ipv4(
        { src: "203.0.113.1", dst: "203.0.113.2", protocol: 4 },
        ipv4({ src: "10.1.1.1", dst: "10.2.2.2", protocol: 17 }, body),
      ),
      4,
      "10.1.1.1",
    ],
    [
      "IPv6 in IPv4 (protocol 41)",
      ipv4(
        { src: "203.0.113.1", dst: "203.0.113.2", protocol: 41 },
        ipv6({ src: "2001:db8::a", dst: "2001:db8::b", nextHeader: 17 }, body),
      ),
      6,
      "2001:db8::a",
    ],
    [
      "IPv4 in IPv6 (next header 4)",
      ipv6(
        { src: "2001:db8::1", dst: "2001:db8::2", nextHeader: 4 },
        ipv4({ src: "10.1.1.1", dst: "10.2.2.2", protocol: 17 }, body),
      ),
      4,
      "10.1.1.1",
    ],
  ])("%s: the innermost header wins", (_name, pkt, version, src) => {
    const outer = (pkt[0] ?? 0) >> 4;
    const r = new IpDecoder().decode(outer === 4 ? 4 : 6, pkt, 0);
    expect(r.ok && { v: r.value.version, src: r.value.src, payload: decodeText(r.value.payload) }).toEqual({
      v: version as 4 | 6,
      src,
      payload: decodeText(body),
    });
  });

  test("tunnels nested deeper than 4 are refused", () => {
    let pkt = ipv4({ src: "10.0.0.1", dst: "10.0.0.2", protocol: 17 }, body);
    for (let i = 0; i < 5; i++) pkt = ipv4({ src: "10.0.0.1", dst: "10.0.0.2", protocol: 4 }, pkt);
    const r = new IpDecoder().decode(4, pkt, 0);
    expect(r.ok ? "ok" : r.reason).toBe("ip_tunnel_too_deep");
  });
});
