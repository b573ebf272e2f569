/**
 * Realistic benchmark packets: a ~870-byte HEP3 INVITE-with-SDP encoded once, then per packet only
 * the Call-ID digits, branch, tag, From/To numbers and the timestamp chunks are patched, so making
 * one costs little CPU. Real traffic has random branches/tags and many distinct users, which is
 * what makes SIP hard to compress; identical packets would flatter bytes-per-message.
 */
import { encodeHep3 } from "../src/hep/index.ts";
import { invite } from "../test/fixtures/sip.ts";

export interface PacketSource {
  /** Packet number `n` written into `buf` (a copy of `template`), returned. */
  packet(n: number, buf: Uint8Array): Uint8Array;
  template: Uint8Array;
  payloadBytes: number;
}

export function packetSource(prefix: string): PacketSource {
  const DIGITS = 10;
  const callId = `${prefix}-${"0".repeat(DIGITS)}@bench.example.com`;
  // Placeholders patched per packet: real traffic has random branches/tags and many distinct users,
  // which is what makes SIP hard to compress; identical packets would flatter bytes-per-message.
  const BRANCH = "z9hG4bK" + "B".repeat(16);
  const TAG = "T".repeat(10);
  const FROM = "+1555" + "F".repeat(7);
  const TO = "+1666" + "U".repeat(7);
  const payload = invite({
    callId,
    from: FROM,
    to: TO,
    fromTag: TAG,
    branch: BRANCH,
    srcIp: "192.0.2.10",
    mediaPort: 30000,
    extraHeaders: [
      "P-Asserted-Identity: <sip:+15551234567@example.com>",
      "Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, PRACK, UPDATE, INFO",
      "Supported: 100rel, timer, replaces",
    ],
  });
  const template = encodeHep3({
    srcIp: "192.0.2.10",
    dstIp: "198.51.100.20",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: Date.now() * 1000,
    protoType: 1,
    captureId: 100,
    nodeName: "bench-agent",
    payload,
  });
  const text = new TextDecoder("latin1").decode(template);
  const digitOffsets: number[] = [];
  for (let at = text.indexOf(callId); at >= 0; at = text.indexOf(callId, at + 1))
    digitOffsets.push(at + prefix.length + 1);
  // HEP3 chunks: find 0x0009 (seconds) and 0x000a (microseconds) by walking the chunk list.
  const dv = new DataView(template.buffer, template.byteOffset, template.byteLength);
  let secOff = -1;
  let usecOff = -1;
  for (let off = 6; off + 6 <= template.length; ) {
    const type = dv.getUint16(off + 2);
    const len = dv.getUint16(off + 4);
    if (dv.getUint16(off) === 0 && type === 9) secOff = off + 6;
    if (dv.getUint16(off) === 0 && type === 10) usecOff = off + 6;
    off += len;
  }

  const offsetsOf = (needle: string, skip = 0) => {
    const out: number[] = [];
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) out.push(at + skip);
    return out;
  };
  const branchOffsets = offsetsOf("B".repeat(16));
  const tagOffsets = offsetsOf(TAG);
  const fromOffsets = offsetsOf("F".repeat(7));
  const toOffsets = offsetsOf("U".repeat(7));
  const HEX = new TextEncoder().encode("0123456789abcdef");
  let seed = 0x9e3779b9;
  const rnd = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  function fill(buf: Uint8Array, offsets: number[], len: number, digitsOnly: boolean, value?: number): void {
    let v = value ?? 0;
    for (let i = 0; i < len; i++) {
      const c = digitsOnly ? 48 + (value === undefined ? rnd() % 10 : v % 10) : HEX[rnd() & 15]!;
      if (value !== undefined) v = Math.floor(v / 10);
      for (const o of offsets) buf[o + i] = c;
    }
  }

  function packet(n: number, buf: Uint8Array): Uint8Array {
    fill(buf, branchOffsets, 16, false);
    fill(buf, tagOffsets, 10, false);
    fill(buf, fromOffsets, 7, true, rnd() % 200000);
    fill(buf, toOffsets, 7, true, rnd() % 5000000);
    let v = n;
    for (let d = DIGITS - 1; d >= 0; d--) {
      const c = 48 + (v % 10);
      v = Math.floor(v / 10);
      for (const o of digitOffsets) buf[o + d] = c;
    }
    const nowUs = Date.now() * 1000 + (n % 1000);
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    view.setUint32(secOff, Math.floor(nowUs / 1e6));
    view.setUint32(usecOff, nowUs % 1e6);
    return buf;
  }
  return { packet, template, payloadBytes: payload.length };
}
