/**
 * IPv4 (RFC 791: options, fragments reassembled by source, destination, protocol and id) and IPv6
 * (RFC 8200: extension header chain, fragment header reassembled by source, destination and id),
 * with IP-in-IP tunnels (protocol 4, RFC 2003; protocol 41, RFC 4213) unwrapped to the innermost
 * header. A reassembled datagram belongs to the packet that completed it, as in tshark.
 */
import { fail, formatIpv4, formatIpv6, ok, type Result } from "../core/index.ts";
import { u16be as u16, u32be as u32 } from "./bytes.ts";

export interface IpPacket {
  version: 4 | 6;
  src: string;
  dst: string;
  /** Upper-layer protocol after any extension headers (6 TCP, 17 UDP, 132 SCTP). */
  protocol: number;
  payload: Uint8Array;
}

export type IpReason = "ip_truncated" | "ip_bad_header" | "ip_fragment_held" | "ip_no_payload" | "ip_tunnel_too_deep";

export interface IpDecoderOptions {
  /** Fragments of a datagram not completed within this much capture time are dropped (µs). */
  fragmentTimeoutUs?: number;
  /** At most this many datagrams wait for fragments; the oldest is dropped first. */
  maxPendingDatagrams?: number;
}

export const IPPROTO = { IPIP: 4, TCP: 6, UDP: 17, IPV6: 41, SCTP: 132 } as const;
const MAX_TUNNEL_DEPTH = 4;
/** IPv6 extension headers sized (len + 1) * 8: hop-by-hop, routing, destination options, mobility, HIP, shim6. */
const EXT_8 = new Set([0, 43, 60, 135, 139, 140]);

interface PendingDatagram {
  parts: Array<{ offset: number; data: Uint8Array }>;
  /** Payload length, known once the last fragment (MF = 0) arrived; -1 before. */
  total: number;
  protocol: number;
  firstUs: number;
}

class FragmentStore {
  private readonly pending = new Map<string, PendingDatagram>();
  private adds = 0;
  expired = 0;

  constructor(
    private readonly timeoutUs: number,
    private readonly maxPending: number,
  ) {}

  /** Returns the whole payload once every byte is present, else null (the fragment is kept). */
  add(
    key: string,
    offset: number,
    data: Uint8Array,
    last: boolean,
    protocol: number | null,
    nowUs: number,
  ): { data: Uint8Array; protocol: number } | null {
    if (++this.adds % 64 === 0) this.sweep(nowUs);
    let entry = this.pending.get(key);
    if (entry === undefined) {
      if (this.pending.size >= this.maxPending) this.dropOldest();
      entry = { parts: [], total: -1, protocol: protocol ?? -1, firstUs: nowUs };
      this.pending.set(key, entry);
    }
    entry.parts.push({ offset, data });
    if (last) entry.total = offset + data.length;
    if (protocol !== null) entry.protocol = protocol;
    if (entry.total < 0 || entry.protocol < 0) return null;
    const sorted = [...entry.parts].sort((a, b) => a.offset - b.offset);
    let covered = 0;
    for (const p of sorted) {
      if (p.offset > covered) return null;
      covered = Math.max(covered, p.offset + p.data.length);
    }
    if (covered < entry.total) return null;
    this.pending.delete(key);
    const whole = new Uint8Array(entry.total);
    // Arrival order: a later overlapping fragment overwrites an earlier one.
    for (const p of entry.parts) whole.set(p.data.subarray(0, Math.max(0, entry.total - p.offset)), p.offset);
    return { data: whole, protocol: entry.protocol };
  }

  private sweep(nowUs: number): void {
    for (const [key, entry] of this.pending) {
      if (nowUs - entry.firstUs <= this.timeoutUs) continue;
      this.pending.delete(key);
      this.expired++;
    }
  }

  private dropOldest(): void {
    const oldest = this.pending.keys().next();
    if (oldest.done) return;
    this.pending.delete(oldest.value);
    this.expired++;
  }
}

/** Stateful because of fragment reassembly: use one decoder per capture. */
export class IpDecoder {
  private readonly fragments: FragmentStore;

  constructor(opts: IpDecoderOptions = {}) {
    this.fragments = new FragmentStore(opts.fragmentTimeoutUs ?? 30_000_000, opts.maxPendingDatagrams ?? 4096);
  }

  /** Datagrams dropped because their fragments never all arrived. */
  get expiredDatagrams(): number {
    return this.fragments.expired;
  }

  decode(version: 4 | 6, data: Uint8Array, timestampUs: number, depth = 0): Result<IpPacket, IpReason> {
    return version === 4 ? this.ipv4(data, timestampUs, depth) : this.ipv6(data, timestampUs, depth);
  }

  private ipv4(data: Uint8Array, ts: number, depth: number): Result<IpPacket, IpReason> {
    if (data.length < 20) return fail("ip_truncated");
    const ihl = ((data[0] ?? 0) & 0x0f) * 4;
    if ((data[0] ?? 0) >> 4 !== 4 || ihl < 20) return fail("ip_bad_header");
    if (ihl > data.length) return fail("ip_truncated");
    // Total length 0 appears in captures of TCP segmentation offload: take the captured length.
    const total = u16(data, 2) || data.length;
    if (total < ihl) return fail("ip_bad_header");
    const end = Math.min(total, data.length);
    const flags = u16(data, 6);
    const more = (flags & 0x2000) !== 0;
    const offset = (flags & 0x1fff) * 8;
    const protocol = data[9] ?? 0;
    const src = formatIpv4(data, 12);
    const dst = formatIpv4(data, 16);
    let payload = data.subarray(ihl, end);
    if (more || offset > 0) {
      if (end < total) return fail("ip_truncated", "fragment cut by the snapshot length");
      const whole = this.fragments.add(
        `4|${src}|${dst}|${protocol}|${u16(data, 4)}`,
        offset,
        payload,
        !more,
        protocol,
        ts,
      );
      if (whole === null) return fail("ip_fragment_held");
      payload = whole.data;
    }
    return this.upper(4, src, dst, protocol, payload, ts, depth);
  }

  private ipv6(data: Uint8Array, ts: number, depth: number): Result<IpPacket, IpReason> {
    if (data.length < 40) return fail("ip_truncated");
    if ((data[0] ?? 0) >> 4 !== 6) return fail("ip_bad_header");
    const payloadLength = u16(data, 4);
    // Payload length 0: a jumbogram (RFC 2675) or segmentation offload; take the captured length.
    const end = payloadLength === 0 ? data.length : Math.min(40 + payloadLength, data.length);
    const src = formatIpv6(data, 8);
    const dst = formatIpv6(data, 24);
    let next = data[6] ?? 0;
    let body = data.subarray(40, end);
    for (;;) {
      if (EXT_8.has(next) || next === 51) {
        if (body.length < 2) return fail("ip_truncated");
        // AH (RFC 4302 §2.2) counts 32-bit words minus 2; the others count 8-byte units minus 1.
        const len = next === 51 ? ((body[1] ?? 0) + 2) * 4 : ((body[1] ?? 0) + 1) * 8;
        if (len > body.length) return fail("ip_truncated");
        next = body[0] ?? 0;
        body = body.subarray(len);
        continue;
      }
      if (next === 44) {
        if (body.length < 8) return fail("ip_truncated");
        const fragNext = body[0] ?? 0;
        const fo = u16(body, 2);
        const offset = fo & 0xfff8;
        const more = (fo & 1) !== 0;
        const fragment = body.subarray(8);
        if (offset === 0 && !more) {
          // Atomic fragment (RFC 6946): nothing to reassemble.
          next = fragNext;
          body = fragment;
          continue;
        }
        const whole = this.fragments.add(
          `6|${src}|${dst}|${u32(body, 4)}`,
          offset,
          fragment,
          !more,
          offset === 0 ? fragNext : null,
          ts,
        );
        if (whole === null) return fail("ip_fragment_held");
        next = whole.protocol;
        body = whole.data;
        continue;
      }
      if (next === 59) return fail("ip_no_payload");
      return this.upper(6, src, dst, next, body, ts, depth);
    }
  }

  private upper(
    version: 4 | 6,
    src: string,
    dst: string,
    protocol: number,
    payload: Uint8Array,
    ts: number,
    depth: number,
  ): Result<IpPacket, IpReason> {
    if (protocol === IPPROTO.IPIP || protocol === IPPROTO.IPV6) {
      if (depth >= MAX_TUNNEL_DEPTH) return fail("ip_tunnel_too_deep");
      return this.decode(protocol === IPPROTO.IPIP ? 4 : 6, payload, ts, depth + 1);
    }
    return ok({ version, src, dst, protocol, payload });
  }
}
