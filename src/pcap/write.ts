/**
 * SIP messages → classic pcap (LINKTYPE_ETHERNET, microsecond timestamps, little-endian). Each record
 * becomes one frame: Ethernet II with fixed locally administered MACs, IPv4 or IPv6 chosen by the
 * address form, UDP with its checksum, then the payload.
 *
 * Large payloads: a record is always ONE frame, never IP fragments, so a row of the lake stays one
 * frame in Wireshark. A 3000-byte message therefore makes a 3042-byte frame, larger than an Ethernet
 * MTU; the lengths are all consistent and tshark dissects it without "malformed" (checked by
 * test/integration/pcap-corpus.test.ts). The only hard limit is the 16-bit IP and UDP length fields:
 * payloads beyond 65507 bytes (IPv4) or 65527 bytes (IPv6) are cut there and counted in
 * `adjustments.truncatedPayloads`. Unparseable addresses become 0.0.0.0 / :: (counted); a mix of
 * IPv4 and IPv6 in one record is written as IPv6 with the IPv4 side IPv4-mapped (RFC 4291 §2.5.5.2).
 */
import { parseIpAddress, type ParsedIp } from "../core/index.ts";
import { concat } from "./bytes.ts";
import { writeEthernet, writeIpv4Header, writeIpv6Header, writeUdp } from "./frame-build.ts";
import { ETHERTYPE, LINKTYPE } from "./link.ts";

export interface PcapRecord {
  timestampUs: number;
  srcIp: string;
  dstIp: string;
  /** 0, missing or out of range → 5060. */
  srcPort?: number;
  dstPort?: number;
  payload: Uint8Array;
}

export const MAX_UDP_PAYLOAD = { 4: 65535 - 20 - 8, 6: 65535 - 8 } as const;
const SNAPLEN = 262144;
const DEFAULT_PORT = 5060;

const validPort = (p: number | undefined) =>
  p !== undefined && Number.isInteger(p) && p > 0 && p <= 65535 ? p : DEFAULT_PORT;

export class PcapWriter {
  private started = false;
  private ipId = 0;
  readonly adjustments = { truncatedPayloads: 0, substitutedAddresses: 0 };
  private written = 0;

  /** Records added so far. */
  get records(): number {
    return this.written;
  }

  /** The 24-byte file header (pcap draft §4). */
  static fileHeader(): Uint8Array {
    const h = new Uint8Array(24);
    const dv = new DataView(h.buffer);
    dv.setUint32(0, 0xa1b2c3d4, true);
    dv.setUint16(4, 2, true);
    dv.setUint16(6, 4, true);
    dv.setUint32(16, SNAPLEN, true);
    dv.setUint32(20, LINKTYPE.ETHERNET, true);
    return h;
  }

  /** Bytes to append for this record; the first call also carries the file header. */
  add(record: PcapRecord): Uint8Array {
    const { family, src, dst } = this.addresses(record.srcIp, record.dstIp);
    let payload = record.payload;
    if (payload.length > MAX_UDP_PAYLOAD[family]) {
      payload = payload.subarray(0, MAX_UDP_PAYLOAD[family]);
      this.adjustments.truncatedPayloads++;
    }
    const ipHeader = family === 4 ? 20 : 40;
    const frameLength = 14 + ipHeader + 8 + payload.length;
    const prefix = this.started ? 0 : 24;
    const out = new Uint8Array(prefix + 16 + frameLength);
    if (!this.started) out.set(PcapWriter.fileHeader(), 0);
    this.started = true;
    this.written++;

    const dv = new DataView(out.buffer);
    const us = Math.max(0, Math.floor(record.timestampUs));
    const sec = Math.min(Math.floor(us / 1_000_000), 0xffffffff);
    dv.setUint32(prefix, sec, true);
    dv.setUint32(prefix + 4, us - Math.floor(us / 1_000_000) * 1_000_000, true);
    dv.setUint32(prefix + 8, frameLength, true);
    dv.setUint32(prefix + 12, frameLength, true);

    let off = prefix + 16;
    off += writeEthernet(out, off, family === 4 ? ETHERTYPE.IPV4 : ETHERTYPE.IPV6);
    const udpLength = 8 + payload.length;
    if (family === 4) {
      this.ipId = (this.ipId + 1) & 0xffff;
      // DF set: each datagram is whole (RFC 6864 §4.1 lets atomic datagrams use any id).
      off += writeIpv4Header(out, off, {
        src,
        dst,
        protocol: 17,
        payloadLength: udpLength,
        id: this.ipId,
        dontFragment: true,
      });
    } else {
      off += writeIpv6Header(out, off, { src, dst, nextHeader: 17, payloadLength: udpLength });
    }
    writeUdp(out, off, { srcPort: validPort(record.srcPort), dstPort: validPort(record.dstPort), payload, src, dst });
    return out;
  }

  /** Bytes still owed at the end: the file header when no record was added (an empty capture). */
  finish(): Uint8Array {
    if (this.started) return new Uint8Array(0);
    this.started = true;
    return PcapWriter.fileHeader();
  }

  /** Exports repeat a few addresses many times: parse each once (bounded). */
  private readonly parsed = new Map<string, ParsedIp | null>();

  private parse(text: string): ParsedIp | null {
    let p = this.parsed.get(text);
    if (p === undefined) {
      p = parseIpAddress(text);
      if (this.parsed.size >= 4096) this.parsed.clear();
      this.parsed.set(text, p);
    }
    return p;
  }

  private addresses(srcText: string, dstText: string): { family: 4 | 6; src: Uint8Array; dst: Uint8Array } {
    const a = this.parse(srcText);
    const b = this.parse(dstText);
    const family = a?.family === 6 || b?.family === 6 ? 6 : 4;
    const convert = (p: ParsedIp | null): Uint8Array => {
      if (p === null) {
        this.adjustments.substitutedAddresses++;
        return new Uint8Array(family === 4 ? 4 : 16);
      }
      if (p.family === family) return p.bytes;
      const mapped = new Uint8Array(16);
      mapped[10] = 0xff;
      mapped[11] = 0xff;
      mapped.set(p.bytes, 12);
      return mapped;
    };
    return { family, src: convert(a), dst: convert(b) };
  }
}

/** A whole pcap file of the records, in the order given. */
export function writePcap(records: Iterable<PcapRecord>): Uint8Array {
  const writer = new PcapWriter();
  const chunks: Uint8Array[] = [];
  for (const r of records) chunks.push(writer.add(r));
  chunks.push(writer.finish());
  return concat(chunks);
}
