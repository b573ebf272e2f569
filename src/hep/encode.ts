/**
 * HEP encoders for tests, the load generator and benchmarks: HEP3 with every chunk the input sets,
 * and the legacy v1/v2 fixed header (layout in decode.ts). Bad input is a programming error here,
 * so it throws AppError("VALIDATION") naming the field.
 */
import { gzipSync } from "node:zlib";
import { AppError, parseIpv4, parseIpv6 } from "../core/index.ts";
import { parseMac } from "./address.ts";
import { HEP_AF, HEP_CHUNK as C } from "./chunks.ts";
import type { HepPacket } from "./packet.ts";

/** A chunk written verbatim after the generic ones (vendor chunks, unknown types, test vectors). */
export interface HepRawChunk {
  vendorId: number;
  typeId: number;
  data: Uint8Array;
}

/** Addressing and timing shared by the v3 and the v1/v2 encoders. */
export interface HepEncodeBase {
  /** Inferred from srcIp when absent ("." → 4, ":" → 6). */
  ipFamily?: 4 | 6;
  ipProtocol?: number;
  srcIp: string;
  dstIp: string;
  srcPort?: number;
  dstPort?: number;
  /** Epoch microseconds; alternatively tsSec (+ tsUsec). No timestamp chunks when neither is set. */
  timestampUs?: number;
  tsSec?: number;
  tsUsec?: number;
  captureId?: number;
  payload?: Uint8Array | string;
}

/** The HepPacket fields that map one-to-one onto an optional chunk (same names, types and units). */
type ChunkFields =
  | "protoType"
  | "keepAliveTimer"
  | "authKey"
  | "correlationId"
  | "vlan"
  | "nodeName"
  | "srcMac"
  | "dstMac"
  | "ethType"
  | "tcpFlags"
  | "ipTos"
  | "mos"
  | "rFactor"
  | "geo"
  | "jitter"
  | "transactionType"
  | "payloadJsonKeys"
  | "tags"
  | "tagType"
  | "eventType"
  | "groupId";

/** Mirrors HepPacket (fields picked from it), so a decoded packet can be encoded again as it is. */
export interface HepEncodeInput extends HepEncodeBase, Partial<Pick<HepPacket, ChunkFields>> {
  /** The 4-octet id; "HEP3" unless set. */
  magic?: "HEP3" | "EEP3";
  /** Gzip the payload into chunk 0x0010 instead of writing chunk 0x000f. */
  payloadCompressed?: boolean;
  extraChunks?: readonly HepRawChunk[];
}

export interface HepLegacyEncodeInput extends HepEncodeBase {
  /** Default 2. Version 1 has no time header. */
  version?: 1 | 2;
}

const invalid = (field: string, message: string) =>
  new AppError("VALIDATION", `HEP encode: ${field} ${message}`, { details: { field } });

function checkUint(field: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 0 || value > max)
    throw invalid(field, `must be an integer in 0..${max}, got ${value}`);
  return value;
}

function resolveAddresses(p: HepEncodeBase): { family: 4 | 6; src: Uint8Array; dst: Uint8Array } {
  const family = p.ipFamily ?? (p.srcIp.includes(":") ? 6 : 4);
  const parse = family === 4 ? parseIpv4 : parseIpv6;
  const src = parse(p.srcIp);
  const dst = parse(p.dstIp);
  if (src === null) throw invalid("srcIp", `is not an IPv${family} address: ${p.srcIp}`);
  if (dst === null) throw invalid("dstIp", `is not an IPv${family} address: ${p.dstIp}`);
  return { family, src, dst };
}

/** [seconds, microseconds] of the input's timestamp, or null when it has none. */
function resolveTime(p: HepEncodeBase): [number, number] | null {
  if (p.timestampUs !== undefined) {
    const sec = Math.floor(p.timestampUs / 1_000_000);
    return [checkUint("timestampUs", sec, 0xffffffff), Math.round(p.timestampUs - sec * 1_000_000)];
  }
  if (p.tsSec === undefined) return null;
  return [checkUint("tsSec", p.tsSec, 0xffffffff), checkUint("tsUsec", p.tsUsec ?? 0, 0xffffffff)];
}

const utf8 = new TextEncoder();
const payloadBytes = (payload: Uint8Array | string): Uint8Array =>
  typeof payload === "string" ? utf8.encode(payload) : payload;

/** Appends chunks into one reused 64 KiB scratch buffer (encoding is synchronous). */
class ChunkWriter {
  readonly buf = new Uint8Array(65535);
  readonly dv = new DataView(this.buf.buffer);
  pos = 0;

  private header(vendor: number, type: number, size: number): number {
    const length = 6 + size;
    if (this.pos + length > this.buf.length)
      throw invalid(`chunk 0x${type.toString(16)}`, "does not fit: a HEP3 packet is at most 65535 octets");
    this.dv.setUint16(this.pos, vendor);
    this.dv.setUint16(this.pos + 2, type);
    this.dv.setUint16(this.pos + 4, length);
    this.pos += 6;
    return this.pos;
  }
  u8(type: number, field: string, v: number | undefined): void {
    if (v === undefined) return;
    this.buf[this.header(0, type, 1)] = checkUint(field, v, 0xff);
    this.pos += 1;
  }
  u16(type: number, field: string, v: number | undefined): void {
    if (v === undefined) return;
    this.dv.setUint16(this.header(0, type, 2), checkUint(field, v, 0xffff));
    this.pos += 2;
  }
  u32(type: number, field: string, v: number | undefined): void {
    if (v === undefined) return;
    this.dv.setUint32(this.header(0, type, 4), checkUint(field, v, 0xffffffff));
    this.pos += 4;
  }
  bytes(type: number, data: Uint8Array, vendor = 0): void {
    this.buf.set(data, this.header(vendor, type, data.length));
    this.pos += data.length;
  }
  text(type: number, v: string | undefined): void {
    if (v !== undefined) this.bytes(type, utf8.encode(v));
  }
  /** uint64 MAC chunk (0x0014/0x0015): two zero octets, then the six MAC octets. */
  mac(type: number, field: string, v: string | undefined): void {
    if (v === undefined) return;
    const mac = parseMac(v);
    if (mac === null) throw invalid(field, `is not a MAC address: ${v}`);
    const at = this.header(0, type, 8);
    this.buf.fill(0, at, at + 2);
    this.buf.set(mac, at + 2);
    this.pos += 8;
  }
}

const writer = new ChunkWriter();

/** One HEP3 packet with a chunk for every field that is set, in chunk-id order. */
export function encodeHep3(p: HepEncodeInput): Uint8Array {
  const { family, src, dst } = resolveAddresses(p);
  const time = resolveTime(p);
  const w = writer;
  w.pos = 6;
  w.u8(C.IP_FAMILY, "ipFamily", family === 4 ? HEP_AF.INET : HEP_AF.INET6);
  w.u8(C.IP_PROTO, "ipProtocol", p.ipProtocol);
  w.bytes(family === 4 ? C.IPV4_SRC : C.IPV6_SRC, src);
  w.bytes(family === 4 ? C.IPV4_DST : C.IPV6_DST, dst);
  w.u16(C.SRC_PORT, "srcPort", p.srcPort);
  w.u16(C.DST_PORT, "dstPort", p.dstPort);
  w.u32(C.TS_SEC, "tsSec", time?.[0]);
  w.u32(C.TS_USEC, "tsUsec", time?.[1]);
  w.u8(C.PROTO_TYPE, "protoType", p.protoType);
  w.u32(C.CAPTURE_ID, "captureId", p.captureId);
  w.u16(C.KEEP_ALIVE, "keepAliveTimer", p.keepAliveTimer);
  w.text(C.AUTH_KEY, p.authKey);
  if (p.payload !== undefined) {
    const data = payloadBytes(p.payload);
    if (p.payloadCompressed === true) w.bytes(C.COMPRESSED_PAYLOAD, gzipSync(data));
    else w.bytes(C.PAYLOAD, data);
  }
  w.text(C.CORRELATION_ID, p.correlationId);
  w.u16(C.VLAN, "vlan", p.vlan);
  w.text(C.NODE_NAME, p.nodeName);
  w.mac(C.SRC_MAC, "srcMac", p.srcMac);
  w.mac(C.DST_MAC, "dstMac", p.dstMac);
  w.u16(C.ETH_TYPE, "ethType", p.ethType);
  w.u8(C.TCP_FLAGS, "tcpFlags", p.tcpFlags);
  w.u8(C.IP_TOS, "ipTos", p.ipTos);
  w.u16(C.MOS, "mos", p.mos);
  w.u16(C.R_FACTOR, "rFactor", p.rFactor);
  w.text(C.GEO, p.geo);
  w.u32(C.JITTER, "jitter", p.jitter);
  w.text(C.TRANSACTION_TYPE, p.transactionType);
  w.text(C.PAYLOAD_JSON_KEYS, p.payloadJsonKeys);
  w.text(C.TAGS, p.tags);
  w.u16(C.TAG_TYPE, "tagType", p.tagType);
  w.u16(C.EVENT_TYPE, "eventType", p.eventType);
  w.text(C.GROUP_ID, p.groupId);
  for (const chunk of p.extraChunks ?? []) {
    w.bytes(
      checkUint("extraChunks.typeId", chunk.typeId, 0xffff),
      chunk.data,
      checkUint("extraChunks.vendorId", chunk.vendorId, 0xffff),
    );
  }
  // "HEP3" 48 45 50 33 or "EEP3" 45 45 50 33, then the total length.
  w.buf.set(p.magic === "EEP3" ? [0x45, 0x45, 0x50, 0x33] : [0x48, 0x45, 0x50, 0x33], 0);
  w.dv.setUint16(4, w.pos);
  return w.buf.slice(0, w.pos);
}

/** One HEP v1 or v2 packet (default v2); the v2 time header is little-endian with 2 padding octets. */
export function encodeHep2(p: HepLegacyEncodeInput): Uint8Array {
  const version = p.version ?? 2;
  const { family, src, dst } = resolveAddresses(p);
  const payload = payloadBytes(p.payload ?? "");
  const headerLen = 8 + 2 * src.length;
  const timeLen = version === 2 ? 12 : 0;
  const out = new Uint8Array(headerLen + timeLen + payload.length);
  const dv = new DataView(out.buffer);
  out[0] = version;
  out[1] = headerLen;
  out[2] = family === 4 ? HEP_AF.INET : HEP_AF.INET6;
  out[3] = checkUint("ipProtocol", p.ipProtocol ?? 17, 0xff);
  dv.setUint16(4, checkUint("srcPort", p.srcPort ?? 0, 0xffff));
  dv.setUint16(6, checkUint("dstPort", p.dstPort ?? 0, 0xffff));
  out.set(src, 8);
  out.set(dst, 8 + src.length);
  if (version === 2) {
    const [sec, usec] = resolveTime(p) ?? [0, 0];
    dv.setUint32(headerLen, sec, true);
    dv.setUint32(headerLen + 4, usec, true);
    dv.setUint16(headerLen + 8, checkUint("captureId", p.captureId ?? 0, 0xffff), true);
  }
  out.set(payload, headerLen + timeLen);
  return out;
}
