/**
 * Link layers down to the IP header (tcpdump.org LINKTYPE_* registry): Ethernet with 802.1Q / 802.1ad
 * (QinQ) tags, Linux cooked capture v1 and v2, raw IP, and BSD loopback (NULL and LOOP).
 */
import { fail, ok, type Result } from "../core/index.ts";
import { u16be as u16 } from "./bytes.ts";

export const LINKTYPE = {
  NULL: 0,
  ETHERNET: 1,
  RAW: 101,
  LOOP: 108,
  LINUX_SLL: 113,
  IPV4: 228,
  IPV6: 229,
  LINUX_SLL2: 276,
} as const;

export const ETHERTYPE = { IPV4: 0x0800, IPV6: 0x86dd, VLAN: 0x8100, QINQ: 0x88a8, QINQ_OLD: 0x9100 } as const;

export interface NetworkLayer {
  version: 4 | 6;
  data: Uint8Array;
}

export type LinkReason = "link_truncated" | "unsupported_link_type" | "not_ip";

function byEtherType(type: number, data: Uint8Array): Result<NetworkLayer, LinkReason> {
  if (type === ETHERTYPE.IPV4) return ok({ version: 4, data });
  if (type === ETHERTYPE.IPV6) return ok({ version: 6, data });
  return fail("not_ip", `ethertype 0x${type.toString(16)}`);
}

function byVersionNibble(data: Uint8Array): Result<NetworkLayer, LinkReason> {
  const v = (data[0] ?? 0) >> 4;
  if (v === 4 || v === 6) return ok({ version: v, data });
  return fail("not_ip", `IP version ${v}`);
}

function ethernet(frame: Uint8Array): Result<NetworkLayer, LinkReason> {
  let off = 12;
  for (;;) {
    if (frame.length < off + 2) return fail("link_truncated");
    const type = u16(frame, off);
    // 802.1Q and 802.1ad tags: TPID, then 2 bytes of TCI; the real EtherType follows (QinQ repeats).
    if (type === ETHERTYPE.VLAN || type === ETHERTYPE.QINQ || type === ETHERTYPE.QINQ_OLD) {
      off += 4;
      continue;
    }
    return byEtherType(type, frame.subarray(off + 2));
  }
}

/** BSD loopback: a 4-byte address family, host byte order for NULL, network order for LOOP. */
function loopback(frame: Uint8Array, networkOrder: boolean): Result<NetworkLayer, LinkReason> {
  if (frame.length < 4) return fail("link_truncated");
  const dv = new DataView(frame.buffer, frame.byteOffset, 4);
  let family = dv.getUint32(0, !networkOrder);
  // NULL is in the capturing host's order, which the file does not say: a family never exceeds 16 bits.
  if (!networkOrder && family > 0xffff) family = dv.getUint32(0, false);
  const data = frame.subarray(4);
  if (family === 2) return ok({ version: 4, data });
  // AF_INET6 differs by OS: 24 (NetBSD, OpenBSD), 28 (FreeBSD), 30 (macOS); 10 is Linux.
  if (family === 24 || family === 28 || family === 30 || family === 10) return ok({ version: 6, data });
  return fail("not_ip", `address family ${family}`);
}

export function decodeLink(linkType: number, frame: Uint8Array): Result<NetworkLayer, LinkReason> {
  switch (linkType) {
    case LINKTYPE.ETHERNET:
      return ethernet(frame);
    case LINKTYPE.LINUX_SLL:
      // 16-byte header; the protocol (an EtherType) is its last field.
      if (frame.length < 16) return fail("link_truncated");
      return byEtherType(u16(frame, 14), frame.subarray(16));
    case LINKTYPE.LINUX_SLL2:
      // 20-byte header; the protocol comes first.
      if (frame.length < 20) return fail("link_truncated");
      return byEtherType(u16(frame, 0), frame.subarray(20));
    case LINKTYPE.RAW:
      return byVersionNibble(frame);
    case LINKTYPE.IPV4:
      return ok({ version: 4, data: frame });
    case LINKTYPE.IPV6:
      return ok({ version: 6, data: frame });
    case LINKTYPE.NULL:
      return loopback(frame, false);
    case LINKTYPE.LOOP:
      return loopback(frame, true);
    default:
      return fail("unsupported_link_type", `link type ${linkType}`);
  }
}
