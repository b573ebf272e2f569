/**
 * Capture file readers: classic libpcap files (both byte orders, microsecond and nanosecond magic;
 * draft-ietf-opsawg-pcap) and pcapng (draft-ietf-opsawg-pcapng: SHB, IDB, EPB, SPB and the obsolete
 * OPB; per-interface link type, if_tsresol and if_tsoffset; several sections of either byte order).
 * Packets are views into the input, numbered from 1 in file order the way tshark numbers frames.
 */
import { fail, ok, type Result } from "../core/index.ts";

export type CaptureFormat = "pcap" | "pcapng";

export interface CapturedPacket {
  /** 1-based position among the packets of the file (tshark's frame.number). */
  frameNumber: number;
  /** Capture time in microseconds since the Unix epoch (finer resolutions are truncated). */
  timestampUs: number;
  /** LINKTYPE_* value of the interface the packet was captured on. */
  linkType: number;
  /** The captured bytes: a view into the file, possibly shorter than originalLength (snaplen). */
  data: Uint8Array;
  originalLength: number;
  interfaceId: number;
}

export type PcapReason =
  | "too_short"
  | "unknown_magic"
  | "unsupported_version"
  | "truncated_record"
  | "bad_block_length"
  | "unknown_interface";

export type PacketItem = Result<CapturedPacket, PcapReason>;

export interface CaptureFile {
  format: CaptureFormat;
  packets: CapturedPacket[];
  /** Why reading stopped before the end of the input (a capture cut short), or null. */
  stopped: { reason: PcapReason; detail?: string } | null;
}

const PCAP_MAGIC_US = 0xa1b2c3d4;
const PCAP_MAGIC_NS = 0xa1b23c4d;
const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BOM = 0x1a2b3c4d;
/** A record longer than this is corruption, not a packet (libpcap uses 256 KiB; allow jumbo pcapng). */
const MAX_RECORD = 64 * 1024 * 1024;

export function detectCaptureFormat(bytes: Uint8Array): CaptureFormat | null {
  if (bytes.length < 4) return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const le = dv.getUint32(0, true);
  if (le === PCAPNG_SHB) return "pcapng";
  const be = dv.getUint32(0, false);
  if (le === PCAP_MAGIC_US || le === PCAP_MAGIC_NS || be === PCAP_MAGIC_US || be === PCAP_MAGIC_NS) return "pcap";
  return null;
}

/**
 * Yields each packet in file order; a failure item ends the iteration (a header error comes first,
 * a cut-short record comes after the packets that could be read).
 */
export function* iterPackets(bytes: Uint8Array): Generator<PacketItem, void, void> {
  const format = detectCaptureFormat(bytes);
  if (format === null) {
    yield bytes.length < 4 ? fail("too_short") : fail("unknown_magic");
    return;
  }
  yield* format === "pcap" ? iterPcap(bytes) : iterPcapng(bytes);
}

/** Reads every packet; fails only when the file header is unusable (no packets at all). */
export function readCapture(bytes: Uint8Array): Result<CaptureFile, PcapReason> {
  const format = detectCaptureFormat(bytes);
  const packets: CapturedPacket[] = [];
  for (const item of iterPackets(bytes)) {
    if (item.ok) {
      packets.push(item.value);
      continue;
    }
    if (format === null || isHeaderReason(item.reason)) return item;
    return ok({
      format,
      packets,
      stopped: item.detail === undefined ? { reason: item.reason } : { reason: item.reason, detail: item.detail },
    });
  }
  return ok({ format: format ?? "pcap", packets, stopped: null });
}

/**
 * How many records the capture holds: packet records of a pcap, blocks of any type of a pcapng
 * (a block that is not a packet costs the reader a step too). Only the lengths are walked: no
 * packet is decoded and nothing is allocated, so a caller can refuse a capture of millions of
 * tiny records before parsing it. Stops at the first length that does not fit.
 */
export function countCaptureRecords(bytes: Uint8Array): number {
  const format = detectCaptureFormat(bytes);
  if (format === null) return 0;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let n = 0;
  if (format === "pcap") {
    if (bytes.length < 24) return 0;
    const m = dv.getUint32(0, true);
    const le = m === PCAP_MAGIC_US || m === PCAP_MAGIC_NS;
    for (let off = 24; off + 16 <= bytes.length; n++) {
      const capLen = dv.getUint32(off + 8, le);
      if (capLen > MAX_RECORD || off + 16 + capLen > bytes.length) return n;
      off += 16 + capLen;
    }
    return n;
  }
  let le = true;
  for (let off = 0; off + 12 <= bytes.length; ) {
    if (dv.getUint32(off, true) === PCAPNG_SHB) le = dv.getUint32(off + 8, true) === PCAPNG_BOM;
    const total = dv.getUint32(off + 4, le);
    if (total < 12 || total % 4 !== 0 || total > MAX_RECORD || off + total > bytes.length) return n;
    n++;
    off += total;
  }
  return n;
}

const isHeaderReason = (r: PcapReason) => r === "too_short" || r === "unknown_magic" || r === "unsupported_version";

function* iterPcap(bytes: Uint8Array): Generator<PacketItem, void, void> {
  if (bytes.length < 24) {
    yield fail("too_short", "classic pcap header is 24 bytes");
    return;
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magicLe = dv.getUint32(0, true);
  const le = magicLe === PCAP_MAGIC_US || magicLe === PCAP_MAGIC_NS;
  const nanos = (le ? magicLe : dv.getUint32(0, false)) === PCAP_MAGIC_NS;
  const major = dv.getUint16(4, le);
  if (major !== 2) {
    yield fail("unsupported_version", `pcap version ${major}`);
    return;
  }
  // The upper bits of the link type field carry FCS information (pcap draft §4); the type is the low 16.
  const linkType = dv.getUint32(20, le) & 0xffff;
  let off = 24;
  let frameNumber = 0;
  while (off < bytes.length) {
    if (off + 16 > bytes.length) {
      yield fail("truncated_record", `record header at offset ${off}`);
      return;
    }
    const sec = dv.getUint32(off, le);
    const frac = dv.getUint32(off + 4, le);
    const capLen = dv.getUint32(off + 8, le);
    const origLen = dv.getUint32(off + 12, le);
    if (capLen > MAX_RECORD) {
      yield fail("bad_block_length", `record at offset ${off} claims ${capLen} bytes`);
      return;
    }
    if (off + 16 + capLen > bytes.length) {
      yield fail("truncated_record", `record at offset ${off} needs ${capLen} bytes`);
      return;
    }
    frameNumber++;
    yield ok({
      frameNumber,
      timestampUs: sec * 1_000_000 + (nanos ? Math.floor(frac / 1000) : frac),
      linkType,
      data: bytes.subarray(off + 16, off + 16 + capLen),
      originalLength: origLen,
      interfaceId: 0,
    });
    off += 16 + capLen;
  }
}

interface Interface {
  linkType: number;
  snapLen: number;
  /** Converts the 64-bit timestamp (high, low words) to microseconds. */
  toUs: (high: number, low: number) => number;
}

/** if_tsresol (pcapng §4.2, option 9): MSB clear = 10^-n seconds, set = 2^-n seconds. */
function timestampConverter(tsresol: number, offsetSec: number): Interface["toUs"] {
  const offsetUs = offsetSec * 1_000_000;
  if (tsresol === 6) return (high, low) => high * 4294967296 + low + offsetUs;
  const units = tsresol & 0x80 ? 1n << BigInt(tsresol & 0x7f) : 10n ** BigInt(tsresol);
  return (high, low) => Number((((BigInt(high) << 32n) | BigInt(low)) * 1_000_000n) / units) + offsetUs;
}

function readInterface(dv: DataView, off: number, end: number, le: boolean): Interface {
  const linkType = dv.getUint16(off + 8, le);
  const snapLen = dv.getUint32(off + 12, le);
  let tsresol = 6;
  let tsoffset = 0;
  // Options: code u16, length u16, value padded to 32 bits; opt_endofopt = 0.
  for (let p = off + 16; p + 4 <= end; ) {
    const code = dv.getUint16(p, le);
    const len = dv.getUint16(p + 2, le);
    if (code === 0 || p + 4 + len > end) break;
    if (code === 9 && len >= 1) tsresol = dv.getUint8(p + 4);
    if (code === 14 && len >= 8) tsoffset = Number(dv.getBigInt64(p + 4, le));
    p += 4 + ((len + 3) & ~3);
  }
  return { linkType, snapLen, toUs: timestampConverter(tsresol, tsoffset) };
}

function* iterPcapng(bytes: Uint8Array): Generator<PacketItem, void, void> {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let le = true;
  let interfaces: Interface[] = [];
  let frameNumber = 0;
  let off = 0;
  while (off < bytes.length) {
    if (off + 12 > bytes.length) {
      yield fail("truncated_record", `block header at offset ${off}`);
      return;
    }
    if (dv.getUint32(off, true) === PCAPNG_SHB) {
      // Section Header Block: the byte-order magic decides how everything in the section is read.
      const bom = dv.getUint32(off + 8, true);
      if (bom !== PCAPNG_BOM && dv.getUint32(off + 8, false) !== PCAPNG_BOM) {
        yield fail("unknown_magic", `section at offset ${off} has no byte-order magic`);
        return;
      }
      le = bom === PCAPNG_BOM;
      if (off + 16 <= bytes.length && dv.getUint16(off + 12, le) !== 1) {
        yield fail("unsupported_version", `pcapng major version ${dv.getUint16(off + 12, le)}`);
        return;
      }
      interfaces = [];
    }
    const type = dv.getUint32(off, le);
    const total = dv.getUint32(off + 4, le);
    if (total < 12 || total % 4 !== 0 || total > MAX_RECORD) {
      yield fail("bad_block_length", `block type ${type} at offset ${off} has length ${total}`);
      return;
    }
    if (off + total > bytes.length) {
      yield fail("truncated_record", `block type ${type} at offset ${off} needs ${total} bytes`);
      return;
    }
    const end = off + total - 4;
    let packet: { ifId: number; high: number; low: number; capLen: number; origLen: number; dataOff: number } | null =
      null;
    if (type === 1) {
      interfaces.push(readInterface(dv, off, end, le));
    } else if (type === 6 && total >= 32) {
      packet = {
        ifId: dv.getUint32(off + 8, le),
        high: dv.getUint32(off + 12, le),
        low: dv.getUint32(off + 16, le),
        capLen: dv.getUint32(off + 20, le),
        origLen: dv.getUint32(off + 24, le),
        dataOff: off + 28,
      };
    } else if (type === 3 && total >= 16) {
      // Simple Packet Block: no timestamp, interface 0, captured length implied by the block length.
      const origLen = dv.getUint32(off + 8, le);
      const snap = interfaces[0]?.snapLen || Number.MAX_SAFE_INTEGER;
      packet = {
        ifId: 0,
        high: 0,
        low: 0,
        capLen: Math.min(origLen, end - (off + 12), snap),
        origLen,
        dataOff: off + 12,
      };
    } else if (type === 2 && total >= 32) {
      packet = {
        ifId: dv.getUint16(off + 8, le),
        high: dv.getUint32(off + 12, le),
        low: dv.getUint32(off + 16, le),
        capLen: dv.getUint32(off + 20, le),
        origLen: dv.getUint32(off + 24, le),
        dataOff: off + 28,
      };
    }
    if (packet !== null) {
      const iface = interfaces[packet.ifId];
      if (iface === undefined) {
        yield fail("unknown_interface", `packet block at offset ${off} names interface ${packet.ifId}`);
        return;
      }
      if (packet.dataOff + packet.capLen > end) {
        yield fail("bad_block_length", `packet block at offset ${off} overruns its block`);
        return;
      }
      frameNumber++;
      yield ok({
        frameNumber,
        timestampUs: type === 3 ? 0 : iface.toUs(packet.high, packet.low),
        linkType: iface.linkType,
        data: bytes.subarray(packet.dataOff, packet.dataOff + packet.capLen),
        originalLength: packet.origLen,
        interfaceId: packet.ifId,
      });
    }
    off += total;
  }
}
