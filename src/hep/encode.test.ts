import { describe, expect, test } from "bun:test";
import { AppError } from "../core/index.ts";
import { decodeHep, encodeHep2, encodeHep3, HEP_PROTO, type HepEncodeInput, type HepPacket } from "./index.ts";

const hex = (s: string): Uint8Array => Uint8Array.from(s.trim().split(/\s+/), (b) => parseInt(b, 16));
const NOW = Date.UTC(2024, 4, 1);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

function roundTrip(buf: Uint8Array): HepPacket {
  const r = decodeHep(buf, { nowMs: NOW });
  if (!r.ok) throw new Error(`${r.reason}: ${r.detail ?? ""}`);
  return r.value;
}

/** Every field the encoder can write, with values that differ from the decoder's defaults. */
const FULL: HepEncodeInput = {
  ipProtocol: 6,
  srcIp: "192.0.2.10",
  dstIp: "198.51.100.20",
  srcPort: 5061,
  dstPort: 35000,
  timestampUs: NOW * 1000 - 1_234_567,
  protoType: HEP_PROTO.SIP,
  captureId: 0xfffffffe,
  keepAliveTimer: 60,
  authKey: "s3cret",
  payload: "INVITE sip:bob@example.com SIP/2.0\r\nContent-Length: 0\r\n\r\n",
  correlationId: "a84b4c76e66710@pc33.example.com",
  vlan: 4094,
  nodeName: "edge-1",
  srcMac: "00:1b:21:3c:4d:5e",
  dstMac: "ff:ee:dd:cc:bb:aa",
  ethType: 0x86dd,
  tcpFlags: 0x18,
  ipTos: 0xb8,
  mos: 436,
  rFactor: 9012,
  geo: '{"lat":52.5,"lon":13.4}',
  jitter: 123_456,
  transactionType: "registration",
  payloadJsonKeys: "rtp,rtcp",
  tags: "tenant=a",
  tagType: 7,
  eventType: 1,
  groupId: "grp-9",
};

describe("encodeHep3", () => {
  test("reproduces the spec's example packet octet for octet", () => {
    const expected = hex(`
      48 45 50 33 00 71
      00 00 00 01 00 07 02   00 00 00 02 00 07 11
      00 00 00 03 00 0a d4 ca 00 01   00 00 00 04 00 0a 52 74 00 d3
      00 00 00 07 00 08 2e ea   00 00 00 08 00 08 13 c4
      00 00 00 09 00 0a 4e 49 82 cb   00 00 00 0a 00 0a 00 01 d4 c0
      00 00 00 0b 00 07 01   00 00 00 0c 00 0a 00 00 00 e4
      00 00 00 0f 00 14 49 4e 56 49 54 45 20 73 69 70 3a 62 6f 62`);
    const out = encodeHep3({
      ipProtocol: 17,
      srcIp: "212.202.0.1",
      dstIp: "82.116.0.211",
      srcPort: 12010,
      dstPort: 5060,
      tsSec: 1313440459,
      tsUsec: 120000,
      protoType: 1,
      captureId: 228,
      payload: "INVITE sip:bob",
    });
    expect(Buffer.from(out).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
  });

  test("round-trips every chunk (IPv4)", () => {
    const p = roundTrip(encodeHep3(FULL));
    const { payload, ...rest } = FULL;
    expect(p).toMatchObject({
      ...rest,
      version: 3,
      ipFamily: 4,
      tsFallback: false,
      payloadCompressed: false,
      vendorChunks: 0,
      unknownChunks: 0,
    });
    expect(text(p.payload)).toBe(payload as string);
  });

  test("round-trips IPv6 addresses in canonical form", () => {
    const p = roundTrip(encodeHep3({ ...FULL, srcIp: "2001:DB8:0:0:0:0:0:1", dstIp: "::ffff:192.0.2.1" }));
    expect([p.ipFamily, p.srcIp, p.dstIp]).toEqual([6, "2001:db8::1", "::ffff:192.0.2.1"]);
  });

  test("a decoded packet re-encodes to the same octets", () => {
    const first = encodeHep3(FULL);
    const again = encodeHep3(roundTrip(first));
    expect(Buffer.from(again).equals(Buffer.from(first))).toBe(true);
  });

  test("payloadCompressed gzips into chunk 0x0010", () => {
    const big = "Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK\r\n".repeat(40);
    const out = encodeHep3({ ...FULL, payload: big, payloadCompressed: true });
    expect(out.length).toBeLessThan(big.length);
    // Chunk 0x0010 present, 0x000f absent: walk the chunk chain.
    const types: number[] = [];
    for (let pos = 6; pos < out.length; pos += (out[pos + 4]! << 8) | out[pos + 5]!)
      types.push((out[pos + 2]! << 8) | out[pos + 3]!);
    expect(types).toContain(0x10);
    expect(types).not.toContain(0x0f);
    const p = roundTrip(out);
    expect(p.payloadCompressed).toBe(true);
    expect(text(p.payload)).toBe(big);
  });

  test("timestamp as tsSec + tsUsec equals timestampUs", () => {
    const a = encodeHep3({ ...FULL, timestampUs: 1_700_000_000_250_000 });
    const b = encodeHep3({ ...FULL, timestampUs: undefined, tsSec: 1_700_000_000, tsUsec: 250_000 });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  test("unset fields write no chunk", () => {
    const out = encodeHep3({ srcIp: "10.0.0.1", dstIp: "10.0.0.2", payload: "x" });
    // header 6 + family 7 + two IPv4 chunks 10 each + payload 7
    expect(out.length).toBe(40);
    const p = roundTrip(out);
    expect([p.srcPort, p.protoType, p.captureId, p.tsFallback, p.nodeName]).toEqual([0, 0, 0, true, undefined]);
  });

  test("extra chunks and the EEP3 id", () => {
    const out = encodeHep3({
      ...FULL,
      magic: "EEP3",
      extraChunks: [
        { vendorId: 0x0004, typeId: 0x0001, data: new Uint8Array([1, 2]) },
        { vendorId: 0, typeId: 0x0200, data: new Uint8Array(0) },
      ],
    });
    expect(text(out.subarray(0, 4))).toBe("EEP3");
    const p = roundTrip(out);
    expect([p.vendorChunks, p.unknownChunks]).toEqual([1, 1]);
  });

  test("consecutive calls do not share output buffers", () => {
    const a = encodeHep3({ ...FULL, payload: "first" });
    const b = encodeHep3({ ...FULL, payload: "second" });
    expect(text(roundTrip(a).payload)).toBe("first");
    expect(text(roundTrip(b).payload)).toBe("second");
  });

  test.each<[string, Partial<HepEncodeInput>]>([
    ["bad IPv4 text", { srcIp: "10.0.0.300" }],
    ["IPv6 text with ipFamily 4", { ipFamily: 4, dstIp: "::1" }],
    ["port out of range", { srcPort: 70000 }],
    ["fractional protocol", { ipProtocol: 1.5 }],
    ["negative capture id", { captureId: -1 }],
    ["bad MAC", { srcMac: "00:11:22:33:44" }],
    ["payload over 65535 octets", { payload: new Uint8Array(65_600) }],
  ])("throws AppError VALIDATION on %s", (_name, change) => {
    let error: unknown;
    try {
      encodeHep3({ ...FULL, ...change });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("VALIDATION");
  });
});

describe("encodeHep2", () => {
  test("matches the hand-built v2 layout", () => {
    const out = encodeHep2({
      ipProtocol: 17,
      srcIp: "192.0.2.1",
      dstIp: "198.51.100.20",
      srcPort: 5060,
      dstPort: 5060,
      tsSec: 1700000000,
      tsUsec: 250000,
      captureId: 2001,
      payload: "BYE",
    });
    const expected = "02 10 02 11 13 c4 13 c4 c0 00 02 01 c6 33 64 14 00 f1 53 65 90 d0 03 00 d1 07 00 00 42 59 45";
    expect(Buffer.from(out).toString("hex")).toBe(expected.replace(/ /g, ""));
  });

  test("round-trips v1 and v2 over IPv4 and IPv6", () => {
    for (const version of [1, 2] as const) {
      for (const [src, dst] of [
        ["10.1.1.1", "10.2.2.2"],
        ["2001:db8::5", "fe80::1"],
      ] as const) {
        const p = roundTrip(
          encodeHep2({
            version,
            ipProtocol: 6,
            srcIp: src,
            dstIp: dst,
            srcPort: 1,
            dstPort: 65535,
            timestampUs: NOW * 1000 + 7,
            captureId: 65535,
            payload: "MESSAGE",
          }),
        );
        expect(p).toMatchObject({ version, ipProtocol: 6, srcIp: src, dstIp: dst, srcPort: 1, dstPort: 65535 });
        expect(text(p.payload)).toBe("MESSAGE");
        if (version === 2) expect([p.timestampUs, p.tsFallback, p.captureId]).toEqual([NOW * 1000 + 7, false, 65535]);
        else expect([p.tsFallback, p.captureId]).toEqual([true, 0]);
      }
    }
  });
});
