/**
 * Binary RTCP (RFC 3550 §6: SR, RR, SDES, BYE, APP; RFC 3611 XR) as HEP type 5 carries it when
 * the agent forwards the packet itself (docs/CALL-VIEW.md "Binary RTCP"). The compound packet is
 * decoded into the JSON form heplify and rtpengine send (`type`, `ssrc`, `sender_information`,
 * `report_blocks[]` with `fraction_lost`, `packets_lost`, `ia_jitter`, `lsr`, `dlsr`), so every
 * reader of that JSON reads both forms alike. Pure, bounds-checked: garbage gives a reason, never
 * an exception.
 */

export interface RtcpReportBlock {
  source_ssrc: number;
  /** Fixed point, /256 (RFC 3550 §6.4.1). */
  fraction_lost: number;
  /** Cumulative number of packets lost, signed 24 bits. */
  packets_lost: number;
  highest_seq_no: number;
  /** Interarrival jitter in RTP timestamp units. */
  ia_jitter: number;
  /** Middle 32 bits of the NTP time of the last SR received; 0 when none. */
  lsr: number;
  /** Delay since that SR, 1/65536 s. */
  dlsr: number;
}

/** An RFC 3611 §4 report block: its type and length, with the figures of the types svc reads. */
export interface RtcpXrBlock {
  block_type: number;
  [figure: string]: unknown;
}

export interface RtcpReport {
  /** Packet type of the first SR or RR of the compound (200, 201), else of its first packet. */
  type: number;
  ssrc: number;
  report_count: number;
  sender_information?: {
    ntp_timestamp_sec: number;
    ntp_timestamp_usec: number;
    rtp_timestamp: number;
    packets: number;
    octets: number;
  };
  report_blocks: RtcpReportBlock[];
  /** Packet types of the compound in order. */
  packets: number[];
  sdes?: Array<{ ssrc: number; cname?: string }>;
  bye?: number[];
  xr?: RtcpXrBlock[];
  /** Octets after the last whole packet (fewer than 4), ignored. */
  trailing_bytes?: number;
}

export const RTCP_DECODE_REASONS = ["too_short", "bad_version", "bad_length", "bad_padding", "not_rtcp"] as const;
export type RtcpDecodeReason = (typeof RTCP_DECODE_REASONS)[number];
export type RtcpDecodeResult =
  | { ok: true; value: RtcpReport }
  | { ok: false; reason: RtcpDecodeReason; detail: string };

const fail = (reason: RtcpDecodeReason, detail: string): RtcpDecodeResult => ({ ok: false, reason, detail });

/** Report blocks (RFC 3550 §6.4.1) at `off`, `count` of them, all within `end`. */
function reportBlocks(dv: DataView, off: number, count: number, end: number): RtcpReportBlock[] | undefined {
  if (off + count * 24 > end) return undefined;
  const out: RtcpReportBlock[] = [];
  for (let i = 0; i < count; i++) {
    const o = off + i * 24;
    const lost24 = dv.getUint32(o + 4) & 0xffffff;
    out.push({
      source_ssrc: dv.getUint32(o),
      fraction_lost: dv.getUint8(o + 4),
      packets_lost: lost24 & 0x800000 ? lost24 - 0x1000000 : lost24,
      highest_seq_no: dv.getUint32(o + 8),
      ia_jitter: dv.getUint32(o + 12),
      lsr: dv.getUint32(o + 16),
      dlsr: dv.getUint32(o + 20),
    });
  }
  return out;
}

/** SDES chunks (RFC 3550 §6.5): the CNAME of each source, when it fits. */
function sdesChunks(
  bytes: Uint8Array,
  dv: DataView,
  off: number,
  count: number,
  end: number,
): Array<{ ssrc: number; cname?: string }> {
  const out: Array<{ ssrc: number; cname?: string }> = [];
  let o = off;
  for (let i = 0; i < count && o + 4 <= end; i++) {
    const chunk: { ssrc: number; cname?: string } = { ssrc: dv.getUint32(o) };
    o += 4;
    while (o < end && bytes[o] !== 0) {
      if (o + 2 > end) return out;
      const type = bytes[o]!;
      const len = bytes[o + 1]!;
      if (o + 2 + len > end) return out;
      if (type === 1)
        chunk.cname = new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(o + 2, o + 2 + len));
      o += 2 + len;
    }
    out.push(chunk);
    o = (o + 4) & ~3; // the null item and padding to the next 32-bit boundary
  }
  return out;
}

/** RFC 3611 §4 blocks; figures of RRT (4), DLRR (5), Statistics Summary (6) and VoIP Metrics (7). */
function xrBlocks(dv: DataView, off: number, end: number): RtcpXrBlock[] {
  const out: RtcpXrBlock[] = [];
  let o = off;
  while (o + 4 <= end) {
    const bt = dv.getUint8(o);
    const words = dv.getUint16(o + 2);
    const bEnd = o + 4 + words * 4;
    if (bEnd > end) break;
    const b: RtcpXrBlock = { block_type: bt };
    if (bt === 4 && words === 2)
      Object.assign(b, { ntp_timestamp_sec: dv.getUint32(o + 4), ntp_timestamp_frac: dv.getUint32(o + 8) });
    else if (bt === 5) {
      const subs: Array<{ ssrc: number; lrr: number; dlrr: number }> = [];
      for (let s = o + 4; s + 12 <= bEnd; s += 12)
        subs.push({ ssrc: dv.getUint32(s), lrr: dv.getUint32(s + 4), dlrr: dv.getUint32(s + 8) });
      b.dlrr = subs;
    } else if (bt === 6 && words === 9) {
      Object.assign(b, {
        source_ssrc: dv.getUint32(o + 4),
        begin_seq: dv.getUint16(o + 8),
        end_seq: dv.getUint16(o + 10),
        lost_packets: dv.getUint32(o + 12),
        dup_packets: dv.getUint32(o + 16),
        min_jitter: dv.getUint32(o + 20),
        max_jitter: dv.getUint32(o + 24),
        mean_jitter: dv.getUint32(o + 28),
        dev_jitter: dv.getUint32(o + 32),
      });
    } else if (bt === 7 && words === 8) {
      // RFC 3611 §4.7: MOS × 10 and R in 0..100; 127 means unavailable.
      const r = dv.getUint8(o + 24);
      const mosLq = dv.getUint8(o + 26);
      const mosCq = dv.getUint8(o + 27);
      Object.assign(b, {
        source_ssrc: dv.getUint32(o + 4),
        loss_rate: dv.getUint8(o + 8),
        discard_rate: dv.getUint8(o + 9),
        round_trip_delay: dv.getUint16(o + 16),
        end_system_delay: dv.getUint16(o + 18),
        ...(r === 127 ? {} : { r_factor: r }),
        ...(mosLq === 127 ? {} : { mos_lq: mosLq / 10 }),
        ...(mosCq === 127 ? {} : { mos_cq: mosCq / 10 }),
      });
    }
    out.push(b);
    o = bEnd;
  }
  return out;
}

/** One compound RTCP packet (RFC 3550 §6.1, validity checks of Appendix A.2, lenient on the first type for RFC 5506). */
export function decodeRtcp(bytes: Uint8Array): RtcpDecodeResult {
  if (bytes.length < 8) return fail("too_short", `${bytes.length} bytes, an RTCP header and SSRC are 8`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const packets: number[] = [];
  let main: RtcpReport | undefined;
  const extra: Pick<RtcpReport, "sdes" | "bye" | "xr"> = {};
  const moreBlocks: RtcpReportBlock[] = [];
  let off = 0;
  let trailing = 0;
  while (off < bytes.length) {
    if (off + 4 > bytes.length) {
      // Fewer than a header's 4 octets after whole packets: some agents pad the datagram so (tshark
      // decodes such packets too); kept as `trailing_bytes`, the packets before are read.
      if (packets.length === 0)
        return fail("bad_length", `${bytes.length - off} bytes left after packet ${packets.length}`);
      trailing = bytes.length - off;
      break;
    }
    const b0 = dv.getUint8(off);
    if (b0 >> 6 !== 2) return fail("bad_version", `packet ${packets.length + 1}: version ${b0 >> 6}, RTCP is 2`);
    const pt = dv.getUint8(off + 1);
    if (pt < 192 || pt > 223)
      return fail("not_rtcp", `packet ${packets.length + 1}: type ${pt} is outside RTCP's 192..223`);
    const count = b0 & 0x1f;
    let end = off + (dv.getUint16(off + 2) + 1) * 4;
    if (end > bytes.length)
      return fail("bad_length", `packet ${packets.length + 1} says ${end - off} bytes, ${bytes.length - off} are left`);
    if (b0 & 0x20) {
      // RFC 3550 §6.4.1: the padding's last octet counts it; only the last packet is padded.
      const pad = dv.getUint8(end - 1);
      if (end !== bytes.length || pad === 0 || pad > end - off - 4)
        return fail("bad_padding", `packet ${packets.length + 1}: padding ${pad}`);
      end -= pad;
    }
    packets.push(pt);
    if ((pt === 200 || pt === 201) && end - off >= 8) {
      const ssrc = dv.getUint32(off + 4);
      const first = pt === 200 ? off + 28 : off + 8;
      if (first > end) return fail("bad_length", `sender report of ${end - off} bytes, at least 28`);
      const blocks = reportBlocks(dv, first, count, end);
      if (!blocks)
        return fail("bad_length", `packet ${packets.length}: ${count} report blocks do not fit in ${end - off} bytes`);
      if (!main) {
        main = { type: pt, ssrc, report_count: count, report_blocks: blocks, packets };
        if (pt === 200) {
          const frac = dv.getUint32(off + 12);
          main.sender_information = {
            ntp_timestamp_sec: dv.getUint32(off + 8),
            ntp_timestamp_usec: Math.floor((frac * 1e6) / 0x100000000),
            rtp_timestamp: dv.getUint32(off + 16),
            packets: dv.getUint32(off + 20),
            octets: dv.getUint32(off + 24),
          };
        }
      } else moreBlocks.push(...blocks);
    } else if (pt === 202) (extra.sdes ??= []).push(...sdesChunks(bytes, dv, off + 4, count, end));
    else if (pt === 203) {
      const ids = (extra.bye ??= []);
      for (let i = 0; i < count && off + 8 + i * 4 <= end; i++) ids.push(dv.getUint32(off + 4 + i * 4));
    } else if (pt === 207 && end - off >= 8) (extra.xr ??= []).push(...xrBlocks(dv, off + 8, end));
    off = off + (dv.getUint16(off + 2) + 1) * 4;
  }
  const value: RtcpReport = main ?? {
    type: packets[0]!,
    ssrc: dv.getUint32(4),
    report_count: 0,
    report_blocks: [],
    packets,
  };
  value.report_blocks.push(...moreBlocks);
  if (trailing) value.trailing_bytes = trailing;
  return { ok: true, value: Object.assign(value, extra) };
}

/** 2^32 as a number, for the 32-bit wrap of NTP middle words. */
const TWO32 = 0x100000000;
/** Seconds from 1900 (NTP) to 1970 (Unix), RFC 5905. */
export const NTP_UNIX_OFFSET_S = 2208988800;

/** The middle 32 bits of the NTP time of `ms` (Unix ms): 16 bits of seconds, 16 of fraction (RFC 3550 §4). */
export function ntpMiddle32(ms: number): number {
  const sec = Math.floor(ms / 1000) + NTP_UNIX_OFFSET_S;
  const frac = Math.floor(((ms - Math.floor(ms / 1000) * 1000) / 1000) * 65536);
  return (((sec & 0xffff) << 16) >>> 0) + (frac & 0xffff);
}

/**
 * RFC 3550 §6.4.1: RTT = A − LSR − DLSR in 1/65536 s, A the arrival time of the report (here the
 * capture's timestamp); in ms, null without an LSR or when the result is negative (clocks apart).
 */
export function rttMs(arrivalMs: number, lsr: number, dlsr: number): number | null {
  if (!lsr) return null;
  const d = (ntpMiddle32(arrivalMs) - lsr - dlsr + 2 * TWO32) % TWO32;
  if (d >= TWO32 / 2) return null;
  return Math.round((d * 1000 * 1000) / 65536) / 1000;
}
