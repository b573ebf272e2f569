import { describe, expect, test } from "bun:test";
import { decodeLink, ETHERTYPE, LINKTYPE } from "./link.ts";
import { ethernet, ipv4, ipv6, loopback, sll, sll2, text } from "./testing.ts";

const v4 = ipv4({ src: "10.0.0.1", dst: "10.0.0.2", protocol: 17 }, text("x"));
const v6 = ipv6({ src: "2001:db8::1", dst: "2001:db8::2", nextHeader: 17 }, text("x"));

describe("decodeLink", () => {
  test.each([
    ["Ethernet IPv4", LINKTYPE.ETHERNET, ethernet(ETHERTYPE.IPV4, v4), 4, v4],
    ["Ethernet IPv6", LINKTYPE.ETHERNET, ethernet(ETHERTYPE.IPV6, v6), 6, v6],
    ["802.1Q VLAN", LINKTYPE.ETHERNET, ethernet(ETHERTYPE.IPV4, v4, [0x8100]), 4, v4],
    ["QinQ 802.1ad + 802.1Q", LINKTYPE.ETHERNET, ethernet(ETHERTYPE.IPV6, v6, [0x88a8, 0x8100]), 6, v6],
    ["old QinQ 0x9100", LINKTYPE.ETHERNET, ethernet(ETHERTYPE.IPV4, v4, [0x9100, 0x8100]), 4, v4],
    ["Linux SLL", LINKTYPE.LINUX_SLL, sll(ETHERTYPE.IPV4, v4), 4, v4],
    ["Linux SLL2", LINKTYPE.LINUX_SLL2, sll2(ETHERTYPE.IPV6, v6), 6, v6],
    ["raw IP (101) v4", LINKTYPE.RAW, v4, 4, v4],
    ["raw IP (101) v6", LINKTYPE.RAW, v6, 6, v6],
    ["IPv4 (228)", LINKTYPE.IPV4, v4, 4, v4],
    ["IPv6 (229)", LINKTYPE.IPV6, v6, 6, v6],
    ["BSD NULL little-endian host", LINKTYPE.NULL, loopback(2, v4, false), 4, v4],
    ["BSD NULL big-endian host", LINKTYPE.NULL, loopback(2, v4, true), 4, v4],
    ["BSD NULL IPv6 (macOS 30)", LINKTYPE.NULL, loopback(30, v6, false), 6, v6],
    ["BSD LOOP IPv6 (FreeBSD 28)", LINKTYPE.LOOP, loopback(28, v6, true), 6, v6],
  ])("%s", (_name, linkType, frame, version, ip) => {
    const r = decodeLink(linkType, frame);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.version).toBe(version as 4 | 6);
    expect(Array.from(r.value.data)).toEqual(Array.from(ip));
  });

  test.each([
    ["ARP", LINKTYPE.ETHERNET, ethernet(0x0806, new Uint8Array(28)), "not_ip"],
    ["802.11", 105, new Uint8Array(40), "unsupported_link_type"],
    ["short Ethernet", LINKTYPE.ETHERNET, new Uint8Array(10), "link_truncated"],
    [
      "VLAN tag cut off",
      LINKTYPE.ETHERNET,
      ethernet(ETHERTYPE.IPV4, new Uint8Array(0), [0x8100]).subarray(0, 15),
      "link_truncated",
    ],
    ["short SLL", LINKTYPE.LINUX_SLL, new Uint8Array(15), "link_truncated"],
    ["raw IP version 5", LINKTYPE.RAW, Uint8Array.of(0x50, 0), "not_ip"],
    ["loopback AF 7", LINKTYPE.LOOP, loopback(7, v4, true), "not_ip"],
  ])("%s → %s", (_name, linkType, frame, reason) => {
    const r = decodeLink(linkType, frame);
    expect(r.ok ? "ok" : r.reason).toBe(reason as "not_ip");
  });
});
