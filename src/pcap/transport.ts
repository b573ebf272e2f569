/** Transport headers: UDP (RFC 768), TCP (RFC 9293 §3.1) and SCTP common header + chunks (RFC 9260 §3). */
import { fail, ok, type Result } from "../core/index.ts";
import { u16be as u16, u32be as u32 } from "./bytes.ts";

export interface UdpDatagram {
  srcPort: number;
  dstPort: number;
  payload: Uint8Array;
}

export type TransportReason = "udp_bad_header" | "tcp_bad_header" | "sctp_bad_header";

export function decodeUdp(data: Uint8Array): Result<UdpDatagram, TransportReason> {
  if (data.length < 8) return fail("udp_bad_header", "shorter than 8 bytes");
  const length = u16(data, 4);
  // Length 0 only in IPv6 jumbograms (RFC 2675 §4): the datagram runs to the end of the IP payload.
  if (length !== 0 && length < 8) return fail("udp_bad_header", `length ${length}`);
  const end = length === 0 ? data.length : Math.min(length, data.length);
  return ok({ srcPort: u16(data, 0), dstPort: u16(data, 2), payload: data.subarray(8, end) });
}

export interface TcpSegment {
  srcPort: number;
  dstPort: number;
  seq: number;
  syn: boolean;
  fin: boolean;
  rst: boolean;
  payload: Uint8Array;
}

export function decodeTcp(data: Uint8Array): Result<TcpSegment, TransportReason> {
  if (data.length < 20) return fail("tcp_bad_header", "shorter than 20 bytes");
  const headerLength = ((data[12] ?? 0) >> 4) * 4;
  if (headerLength < 20 || headerLength > data.length) return fail("tcp_bad_header", `data offset ${headerLength}`);
  const flags = data[13] ?? 0;
  return ok({
    srcPort: u16(data, 0),
    dstPort: u16(data, 2),
    seq: u32(data, 4),
    fin: (flags & 0x01) !== 0,
    syn: (flags & 0x02) !== 0,
    rst: (flags & 0x04) !== 0,
    payload: data.subarray(headerLength),
  });
}

export interface SctpDataChunk {
  tsn: number;
  streamId: number;
  /** Payload protocol identifier (RFC 9260 §3.3.1); 0 = unspecified. */
  ppid: number;
  unordered: boolean;
  /** B and E bits: first and last fragment of a user message (both set = unfragmented). */
  begin: boolean;
  end: boolean;
  payload: Uint8Array;
}

export interface SctpPacket {
  srcPort: number;
  dstPort: number;
  dataChunks: SctpDataChunk[];
  otherChunks: number;
}

export function decodeSctp(data: Uint8Array): Result<SctpPacket, TransportReason> {
  if (data.length < 12) return fail("sctp_bad_header", "shorter than the 12-byte common header");
  const dataChunks: SctpDataChunk[] = [];
  let otherChunks = 0;
  for (let off = 12; off + 4 <= data.length; ) {
    const type = data[off] ?? 0;
    const flags = data[off + 1] ?? 0;
    const length = u16(data, off + 2);
    if (length < 4) return fail("sctp_bad_header", `chunk length ${length}`);
    const end = Math.min(off + length, data.length);
    if (type === 0 && length >= 16) {
      // DATA chunk (§3.3.1): TSN, stream id, stream sequence number, PPID, then user data.
      dataChunks.push({
        tsn: u32(data, off + 4),
        streamId: u16(data, off + 8),
        ppid: u32(data, off + 12),
        unordered: (flags & 0x04) !== 0,
        begin: (flags & 0x02) !== 0,
        end: (flags & 0x01) !== 0,
        payload: data.subarray(off + 16, end),
      });
    } else {
      otherChunks++;
    }
    // Chunks are padded to a multiple of 4 bytes (§3.2).
    off += (length + 3) & ~3;
  }
  return ok({ srcPort: u16(data, 0), dstPort: u16(data, 2), dataChunks, otherChunks });
}
