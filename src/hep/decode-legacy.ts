/** HEP v1/v2: the fixed-header formats that predate the HEP3 chunks. */
import { fail, formatIpv4, formatIpv6, ok } from "../core/index.ts";
import { HEP_AF } from "./chunks.ts";
import { newPacket, setTimestamp, type DecodeOptions, type HepDecodeResult } from "./packet.ts";

/**
 * HEP v1/v2 (Kamailio/OpenSIPS sipcapture `struct hep_hdr`): version, header length, family,
 * protocol (one octet each), source and destination port (network order), then both addresses
 * (4 or 16 octets each). hp_l covers exactly those: 16 for IPv4, 40 for IPv6. Version 2 follows with
 * `struct hep_timehdr` in the sender's (little-endian) host order and natural C alignment:
 * tv_sec uint32, tv_usec uint32, captid uint16, 2 padding octets = 12 octets. Then the payload.
 */
export function decodeHepLegacy(buf: Uint8Array, version: 1 | 2, opts: DecodeOptions | undefined): HepDecodeResult {
  if (buf.length < 8) return fail("too_short");
  const family = buf[2]!;
  const addrLen = family === HEP_AF.INET ? 4 : family === HEP_AF.INET6 ? 16 : 0;
  if (addrLen === 0) return fail("bad_family", `family ${family}`);
  const headerLen = 8 + 2 * addrLen;
  if (buf[1] !== headerLen) return fail("bad_length", `header length ${buf[1]}, expected ${headerLen}`);
  const payloadStart = headerLen + (version === 2 ? 12 : 0);
  if (buf.length < payloadStart) return fail("too_short");
  if (buf.length === payloadStart) return fail("missing_payload");

  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const p = newPacket(version);
  p.ipFamily = addrLen === 4 ? 4 : 6;
  p.ipProtocol = buf[3]!;
  p.srcPort = dv.getUint16(4);
  p.dstPort = dv.getUint16(6);
  if (addrLen === 4) {
    p.srcIp = formatIpv4(buf, 8);
    p.dstIp = formatIpv4(buf, 12);
  } else {
    p.srcIp = formatIpv6(buf, 8);
    p.dstIp = formatIpv6(buf, 24);
  }
  p.payload = buf.subarray(payloadStart);
  let agentUs = -1;
  if (version === 2) {
    agentUs = dv.getUint32(headerLen, true) * 1_000_000 + dv.getUint32(headerLen + 4, true);
    p.captureId = dv.getUint16(headerLen + 8, true);
  }
  setTimestamp(p, agentUs, opts);
  return ok(p);
}
