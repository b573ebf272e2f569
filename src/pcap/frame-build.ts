/**
 * Writing Ethernet II, IPv4 (RFC 791, header checksum), IPv6 (RFC 8200) and UDP (RFC 768, checksum
 * over the pseudo-header of RFC 768 / RFC 8200 §8.1) headers into a buffer. Used by the pcap writer
 * and by tests that hand-build frames.
 */

/** Locally administered unicast MACs (IEEE 802: second-lowest bit of the first octet set). */
export const WRITER_MAC_SRC = Uint8Array.of(0x02, 0x00, 0x00, 0x00, 0x00, 0x01);
export const WRITER_MAC_DST = Uint8Array.of(0x02, 0x00, 0x00, 0x00, 0x00, 0x02);

/** Ones' complement sum of 16-bit big-endian words over [start, end), added to `sum` (not folded). */
export function onesSum(buf: Uint8Array, start: number, end: number, sum = 0): number {
  let s = sum;
  let i = start;
  for (; i + 1 < end; i += 2) s += ((buf[i] ?? 0) << 8) | (buf[i + 1] ?? 0);
  if (i < end) s += (buf[i] ?? 0) << 8;
  return s;
}

/** Folds the carries and complements: the value to put in a checksum field. */
export function finishChecksum(sum: number): number {
  let s = sum;
  while (s > 0xffff) s = (s & 0xffff) + Math.floor(s / 65536);
  return ~s & 0xffff;
}

const put16 = (out: Uint8Array, off: number, v: number) => {
  out[off] = (v >> 8) & 0xff;
  out[off + 1] = v & 0xff;
};

export function writeEthernet(
  out: Uint8Array,
  off: number,
  etherType: number,
  src = WRITER_MAC_SRC,
  dst = WRITER_MAC_DST,
): number {
  out.set(dst, off);
  out.set(src, off + 6);
  put16(out, off + 12, etherType);
  return 14;
}

export interface Ipv4Fields {
  src: Uint8Array;
  dst: Uint8Array;
  protocol: number;
  /** Bytes after the header in this packet (a fragment's own length). */
  payloadLength: number;
  id?: number;
  dontFragment?: boolean;
  moreFragments?: boolean;
  /** Byte offset of this fragment; a multiple of 8. */
  fragmentOffset?: number;
  ttl?: number;
  /** IP options, padded by the caller to a multiple of 4 bytes. */
  options?: Uint8Array;
}

/** Writes the header with its checksum; returns its length. */
export function writeIpv4Header(out: Uint8Array, off: number, h: Ipv4Fields): number {
  const optLen = h.options?.length ?? 0;
  const ihl = 20 + optLen;
  out[off] = 0x40 | (ihl / 4);
  out[off + 1] = 0;
  put16(out, off + 2, ihl + h.payloadLength);
  put16(out, off + 4, (h.id ?? 0) & 0xffff);
  put16(out, off + 6, (h.dontFragment ? 0x4000 : 0) | (h.moreFragments ? 0x2000 : 0) | ((h.fragmentOffset ?? 0) / 8));
  out[off + 8] = h.ttl ?? 64;
  out[off + 9] = h.protocol;
  put16(out, off + 10, 0);
  out.set(h.src, off + 12);
  out.set(h.dst, off + 16);
  if (h.options !== undefined) out.set(h.options, off + 20);
  put16(out, off + 10, finishChecksum(onesSum(out, off, off + ihl)));
  return ihl;
}

export interface Ipv6Fields {
  src: Uint8Array;
  dst: Uint8Array;
  nextHeader: number;
  payloadLength: number;
  hopLimit?: number;
}

export function writeIpv6Header(out: Uint8Array, off: number, h: Ipv6Fields): number {
  out[off] = 0x60;
  out[off + 1] = 0;
  out[off + 2] = 0;
  out[off + 3] = 0;
  put16(out, off + 4, h.payloadLength);
  out[off + 6] = h.nextHeader;
  out[off + 7] = h.hopLimit ?? 64;
  out.set(h.src, off + 8);
  out.set(h.dst, off + 24);
  return 40;
}

/** Sum of the pseudo-header for an upper-layer checksum (RFC 768 for IPv4, RFC 8200 §8.1 for IPv6). */
export function pseudoHeaderSum(src: Uint8Array, dst: Uint8Array, protocol: number, length: number): number {
  let s = onesSum(src, 0, src.length) + onesSum(dst, 0, dst.length) + protocol;
  s += src.length === 16 ? Math.floor(length / 65536) + (length & 0xffff) : length;
  return s;
}

/** Writes a UDP header and payload with its checksum; returns the datagram length. */
export function writeUdp(
  out: Uint8Array,
  off: number,
  u: { srcPort: number; dstPort: number; payload: Uint8Array; src: Uint8Array; dst: Uint8Array },
): number {
  const length = 8 + u.payload.length;
  put16(out, off, u.srcPort);
  put16(out, off + 2, u.dstPort);
  put16(out, off + 4, length & 0xffff);
  put16(out, off + 6, 0);
  out.set(u.payload, off + 8);
  const sum = finishChecksum(onesSum(out, off, off + length, pseudoHeaderSum(u.src, u.dst, 17, length)));
  // A computed 0 is sent as all ones: 0 means "no checksum" in IPv4 and is forbidden in IPv6.
  put16(out, off + 6, sum === 0 ? 0xffff : sum);
  return length;
}
