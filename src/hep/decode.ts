/**
 * HEP decoding: v3 ("HEP3 Network Protocol Specification" rev. 37) and the legacy fixed-header v1/v2.
 * Hot path: one DataView and one result object per packet, strings decoded only for chunks present,
 * the payload returned as a view into the input. Never throws; every failure is a named reason.
 */
import { fail, formatIpv4, formatIpv6, ok } from "../core/index.ts";
import { formatMac } from "./address.ts";
import { HEP_AF, HEP_CHUNK as C } from "./chunks.ts";
import { inflatePayload } from "./inflate.ts";
import { ChunkTextCache, decodeChunkText } from "./text-cache.ts";
import { decodeHepLegacy } from "./decode-legacy.ts";
import {
  DEFAULT_MAX_INFLATED_BYTES,
  newPacket,
  setTimestamp,
  type DecodeOptions,
  type HepDecodeResult,
} from "./packet.ts";

// Low-cardinality text chunks (the same in every packet of an agent) are cached; see text-cache.ts.
const authKeys = new ChunkTextCache();
const nodeNames = new ChunkTextCache();
const labels = new ChunkTextCache();

/** Decodes one HEP v1, v2 or v3 packet occupying the whole of `buf`. */
export function decodeHep(buf: Uint8Array, opts?: DecodeOptions): HepDecodeResult {
  if (buf.length === 0) return fail("too_short");
  const b0 = buf[0]!;
  // "HEP3" = 48 45 50 33; "EEP3" (45 45 50 33) is the alternative id the spec header allows.
  if (b0 === 0x48 || b0 === 0x45) {
    if (buf.length < 6) return fail("too_short");
    if (buf[1] !== 0x45 || buf[2] !== 0x50) return fail("bad_magic");
    if (buf[3] !== 0x33) return fail("unsupported_version");
    return decodeHep3(buf, opts);
  }
  if (b0 === 1 || b0 === 2) return decodeHepLegacy(buf, b0, opts);
  return fail("bad_magic");
}

const badChunk = (type: number, length: number) =>
  fail("bad_chunk_length" as const, `chunk 0x${type.toString(16).padStart(4, "0")} length ${length}`);

function decodeHep3(buf: Uint8Array, opts: DecodeOptions | undefined): HepDecodeResult {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  // Octets 4-5: total length including the 6-octet header (spec: 6..65535).
  const total = dv.getUint16(4);
  if (total !== buf.length) return fail("bad_length", `declared ${total}, received ${buf.length}`);

  const p = newPacket(3);
  let family = 0;
  let src4 = -1;
  let dst4 = -1;
  let src6 = -1;
  let dst6 = -1;
  let tsSec = -1;
  let tsUsec = 0;
  let payloadStart = -1;
  let payloadEnd = -1;
  let zipStart = -1;
  let zipEnd = -1;

  let pos = 6;
  while (pos < total) {
    if (total - pos < 6) return fail("truncated_chunk", `chunk header at ${pos}`);
    const vendor = dv.getUint16(pos);
    const type = dv.getUint16(pos + 2);
    const length = dv.getUint16(pos + 4); // includes the 6-octet chunk header
    if (length < 6) return badChunk(type, length);
    const end = pos + length;
    if (end > total) return fail("truncated_chunk", `chunk 0x${type.toString(16)} ends at ${end} > ${total}`);
    if (vendor !== 0) {
      p.vendorChunks++;
      pos = end;
      continue;
    }
    const body = pos + 6;
    const size = length - 6;
    switch (type) {
      case C.IP_FAMILY:
        if (size !== 1) return badChunk(type, length);
        family = buf[body]!;
        break;
      case C.IP_PROTO:
        if (size !== 1) return badChunk(type, length);
        p.ipProtocol = buf[body]!;
        break;
      case C.IPV4_SRC:
        if (size !== 4) return badChunk(type, length);
        src4 = body;
        break;
      case C.IPV4_DST:
        if (size !== 4) return badChunk(type, length);
        dst4 = body;
        break;
      case C.IPV6_SRC:
        if (size !== 16) return badChunk(type, length);
        src6 = body;
        break;
      case C.IPV6_DST:
        if (size !== 16) return badChunk(type, length);
        dst6 = body;
        break;
      case C.SRC_PORT:
        if (size !== 2) return badChunk(type, length);
        p.srcPort = dv.getUint16(body);
        break;
      case C.DST_PORT:
        if (size !== 2) return badChunk(type, length);
        p.dstPort = dv.getUint16(body);
        break;
      case C.TS_SEC:
        if (size !== 4) return badChunk(type, length);
        tsSec = dv.getUint32(body);
        break;
      case C.TS_USEC:
        if (size !== 4) return badChunk(type, length);
        tsUsec = dv.getUint32(body);
        break;
      case C.PROTO_TYPE:
        if (size !== 1) return badChunk(type, length);
        p.protoType = buf[body]!;
        break;
      case C.CAPTURE_ID:
        if (size !== 4) return badChunk(type, length);
        p.captureId = dv.getUint32(body);
        break;
      case C.KEEP_ALIVE:
        if (size !== 2) return badChunk(type, length);
        p.keepAliveTimer = dv.getUint16(body);
        break;
      case C.AUTH_KEY:
        p.authKey = authKeys.get(buf, body, end);
        break;
      case C.PAYLOAD:
        payloadStart = body;
        payloadEnd = end;
        break;
      case C.COMPRESSED_PAYLOAD:
        zipStart = body;
        zipEnd = end;
        break;
      case C.CORRELATION_ID:
        p.correlationId = decodeChunkText(buf, body, end);
        break;
      case C.VLAN:
        if (size !== 2) return badChunk(type, length);
        p.vlan = dv.getUint16(body);
        break;
      case C.NODE_NAME:
        p.nodeName = nodeNames.get(buf, body, end);
        break;
      case C.SRC_MAC:
      case C.DST_MAC: {
        // uint64 per the spec: the MAC is the low six octets. Bare 6-octet chunks are accepted too.
        if (size !== 8 && size !== 6) return badChunk(type, length);
        const mac = formatMac(buf, end - 6);
        if (type === C.SRC_MAC) p.srcMac = mac;
        else p.dstMac = mac;
        break;
      }
      case C.ETH_TYPE:
        if (size !== 2) return badChunk(type, length);
        p.ethType = dv.getUint16(body);
        break;
      case C.TCP_FLAGS:
        if (size !== 1) return badChunk(type, length);
        p.tcpFlags = buf[body]!;
        break;
      case C.IP_TOS:
        if (size !== 1) return badChunk(type, length);
        p.ipTos = buf[body]!;
        break;
      case C.MOS:
        if (size !== 2) return badChunk(type, length);
        p.mos = dv.getUint16(body);
        break;
      case C.R_FACTOR:
        if (size !== 2) return badChunk(type, length);
        p.rFactor = dv.getUint16(body);
        break;
      case C.GEO:
        p.geo = labels.get(buf, body, end);
        break;
      case C.JITTER:
        if (size !== 4) return badChunk(type, length);
        p.jitter = dv.getUint32(body);
        break;
      case C.TRANSACTION_TYPE:
        p.transactionType = labels.get(buf, body, end);
        break;
      case C.PAYLOAD_JSON_KEYS:
        p.payloadJsonKeys = labels.get(buf, body, end);
        break;
      case C.TAGS:
        p.tags = labels.get(buf, body, end);
        break;
      case C.TAG_TYPE:
        if (size !== 2) return badChunk(type, length);
        p.tagType = dv.getUint16(body);
        break;
      case C.EVENT_TYPE:
        if (size !== 2) return badChunk(type, length);
        p.eventType = dv.getUint16(body);
        break;
      case C.GROUP_ID:
        p.groupId = labels.get(buf, body, end);
        break;
      default:
        p.unknownChunks++;
    }
    pos = end;
  }

  // A packet without payload (a bare keep-alive, say) is reported as such before its addresses.
  const hasPayload = payloadEnd > payloadStart;
  if (!hasPayload && zipEnd <= zipStart) return fail("missing_payload");

  // Family: chunk 0x0001 when sent, otherwise whichever address chunks are present.
  if (family === HEP_AF.INET) p.ipFamily = 4;
  else if (family === HEP_AF.INET6) p.ipFamily = 6;
  else if (family !== 0) return fail("bad_family", `family ${family}`);
  else if (src4 >= 0 || dst4 >= 0) p.ipFamily = 4;
  else if (src6 >= 0 || dst6 >= 0) p.ipFamily = 6;
  else return fail("bad_address", "no address chunks");
  if (p.ipFamily === 4) {
    if (src4 < 0 || dst4 < 0) return fail("bad_address", "IPv4 source or destination chunk missing");
    p.srcIp = formatIpv4(buf, src4);
    p.dstIp = formatIpv4(buf, dst4);
  } else {
    if (src6 < 0 || dst6 < 0) return fail("bad_address", "IPv6 source or destination chunk missing");
    p.srcIp = formatIpv6(buf, src6);
    p.dstIp = formatIpv6(buf, dst6);
  }

  // Payload: the plain chunk 0x000f wins (no work); otherwise inflate 0x0010.
  if (hasPayload) {
    p.payload = buf.subarray(payloadStart, payloadEnd);
  } else {
    const inflated = inflatePayload(
      buf.subarray(zipStart, zipEnd),
      opts?.maxInflatedBytes ?? DEFAULT_MAX_INFLATED_BYTES,
    );
    if (!inflated.ok) return inflated;
    if (inflated.value.length === 0) return fail("missing_payload", "compressed payload inflates to nothing");
    p.payload = inflated.value;
    p.payloadCompressed = true;
  }

  setTimestamp(p, tsSec >= 0 ? tsSec * 1_000_000 + tsUsec : -1, opts);
  return ok(p);
}
