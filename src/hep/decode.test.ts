import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import {
  decodeHep,
  encodeHep2,
  encodeHep3,
  HEP_DECODE_REASONS,
  type HepDecodeReason,
  type HepPacket,
} from "./index.ts";
import { corpusPath } from "../../test/corpus.ts";
import { seeded } from "../../test/fixtures/seeded.ts";

// ---- hand-built vectors (written from the spec text, not produced by the encoder) ----

const hex = (s: string): Uint8Array => Uint8Array.from(s.trim().split(/\s+/), (b) => parseInt(b, 16));
const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));
const u16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const u32 = (n: number): number[] => [...u16(Math.floor(n / 65536)), ...u16(n % 65536)];
/** One chunk: vendor, type, length (header included unless overridden), body. */
const chunk = (type: number, body: ArrayLike<number>, vendor = 0, length = 6 + body.length): number[] => [
  ...u16(vendor),
  ...u16(type),
  ...u16(length),
  ...Array.from(body),
];
/** "HEP3", total length (computed unless overridden), chunks. */
function hep3(chunks: number[][], length?: number): Uint8Array {
  const body = chunks.flat();
  return Uint8Array.from([...ascii("HEP3"), ...u16(length ?? 6 + body.length), ...body]);
}
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** The example packet of the spec ("Example HEP3 packet"), octet for octet. */
const SPEC_EXAMPLE = hex(`
  48 45 50 33  00 71
  00 00 00 01 00 07 02
  00 00 00 02 00 07 11
  00 00 00 03 00 0a d4 ca 00 01
  00 00 00 04 00 0a 52 74 00 d3
  00 00 00 07 00 08 2e ea
  00 00 00 08 00 08 13 c4
  00 00 00 09 00 0a 4e 49 82 cb
  00 00 00 0a 00 0a 00 01 d4 c0
  00 00 00 0b 00 07 01
  00 00 00 0c 00 0a 00 00 00 E4
  00 00 00 0f 00 14 49 4e 56 49 54 45 20 73 69 70 3a 62 6f 62`);
const SPEC_EXAMPLE_NOW = Date.UTC(2011, 7, 15, 22, 40); // a few minutes after the example's timestamp

/** HEP3 over IPv6/TCP: 2001:db8::1 → 2001:db8:0:1::2, 5060 → 5061, t = 1700000000.25, id 2001, "BYE". */
const IPV6_VECTOR = hex(`
  48 45 50 33  00 7e
  00 00 00 01 00 07 0a
  00 00 00 02 00 07 06
  00 00 00 05 00 16 20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01
  00 00 00 06 00 16 20 01 0d b8 00 00 00 01 00 00 00 00 00 00 00 02
  00 00 00 07 00 08 13 c4
  00 00 00 08 00 08 13 c5
  00 00 00 09 00 0a 65 53 f1 00
  00 00 00 0a 00 0a 00 03 d0 90
  00 00 00 0b 00 07 01
  00 00 00 0c 00 0a 00 00 07 d1
  00 00 00 0f 00 09 42 59 45`);
const NOW_2023 = Date.UTC(2023, 10, 14, 22, 13, 20); // 1700000000 s

/** HEP v2, IPv4/UDP 192.0.2.1:5060 → 198.51.100.20:5060; time header little-endian + 2 pad octets. */
const HEP2_VECTOR = hex(`
  02 10 02 11 13 c4 13 c4
  c0 00 02 01 c6 33 64 14
  00 f1 53 65 90 d0 03 00 d1 07 00 00
  42 59 45 20 73 69 70 3a 62 20 53 49 50 2f 32 2e 30`);

/** HEP v1, IPv6/TCP 2001:db8::a:5060 → fe80::200:5eff:fe00:5301:5301, payload "ACK". */
const HEP1_VECTOR = hex(`
  01 28 0a 06 13 c4 14 b5
  20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 0a
  fe 80 00 00 00 00 00 00 02 00 5e ff fe 00 53 01
  41 43 4b`);

function decoded(buf: Uint8Array, nowMs: number): HepPacket {
  const r = decodeHep(buf, { nowMs });
  if (!r.ok) throw new Error(`expected a packet, got ${r.reason} (${r.detail ?? ""})`);
  return r.value;
}

describe("decodeHep: spec vectors", () => {
  test("the spec's example packet", () => {
    expect(SPEC_EXAMPLE.length).toBe(113);
    const p = decoded(SPEC_EXAMPLE, SPEC_EXAMPLE_NOW);
    expect(p).toMatchObject({
      version: 3,
      ipFamily: 4,
      ipProtocol: 17,
      srcIp: "212.202.0.1",
      dstIp: "82.116.0.211",
      srcPort: 12010,
      dstPort: 5060,
      timestampUs: 1313440459_120000,
      tsFallback: false,
      protoType: 1,
      captureId: 228,
      payloadCompressed: false,
      vendorChunks: 0,
      unknownChunks: 0,
    });
    expect(text(p.payload)).toBe("INVITE sip:bob");
    expect(p.authKey).toBeUndefined();
  });

  test("the payload is a view into the input, not a copy", () => {
    const p = decoded(SPEC_EXAMPLE, SPEC_EXAMPLE_NOW);
    expect(p.payload.buffer).toBe(SPEC_EXAMPLE.buffer);
    expect(p.payload.byteOffset).toBe(113 - 14);
  });

  const corpus = corpusPath("hep", "HEP3_REV_37.txt");
  test.skipIf(!existsSync(corpus))("the example as printed in the spec file decodes the same", () => {
    const spec = readFileSync(corpus, "utf8");
    const example = spec.slice(spec.indexOf("Example HEP3 packet"));
    const octets = example
      .split("\n")
      .map((line) => line.replace(/[\u200b\s]+$/u, "").trim())
      .filter((line) => /^([0-9a-fA-F]{2} )*[0-9a-fA-F]{2}$/.test(line))
      .join(" ");
    expect(hex(octets)).toEqual(SPEC_EXAMPLE);
  });

  test("HEP3 over IPv6", () => {
    expect(IPV6_VECTOR.length).toBe(0x7e);
    expect(decoded(IPV6_VECTOR, NOW_2023)).toMatchObject({
      version: 3,
      ipFamily: 6,
      ipProtocol: 6,
      srcIp: "2001:db8::1",
      dstIp: "2001:db8:0:1::2",
      srcPort: 5060,
      dstPort: 5061,
      timestampUs: 1700000000_250000,
      tsFallback: false,
      protoType: 1,
      captureId: 2001,
    });
  });

  test('"EEP3" is accepted as the id', () => {
    const eep = SPEC_EXAMPLE.slice();
    eep[0] = 0x45;
    expect(decoded(eep, SPEC_EXAMPLE_NOW).srcIp).toBe("212.202.0.1");
  });

  test("HEP v2 (IPv4, time header)", () => {
    const p = decoded(HEP2_VECTOR, NOW_2023);
    expect(p).toMatchObject({
      version: 2,
      ipFamily: 4,
      ipProtocol: 17,
      srcIp: "192.0.2.1",
      dstIp: "198.51.100.20",
      srcPort: 5060,
      dstPort: 5060,
      timestampUs: 1700000000_250000,
      tsFallback: false,
      captureId: 2001,
      protoType: 0,
    });
    expect(text(p.payload)).toBe("BYE sip:b SIP/2.0");
  });

  test("HEP v1 (IPv6, no time header: receive time)", () => {
    const p = decoded(HEP1_VECTOR, NOW_2023);
    expect(p).toMatchObject({
      version: 1,
      ipFamily: 6,
      ipProtocol: 6,
      srcIp: "2001:db8::a",
      dstIp: "fe80::200:5eff:fe00:5301",
      srcPort: 5060,
      dstPort: 5301,
      timestampUs: NOW_2023 * 1000,
      tsFallback: true,
    });
    expect(text(p.payload)).toBe("ACK");
  });
});

// ---- every generic chunk from raw bytes ----

const IPV4_BASICS = [
  chunk(0x01, [2]),
  chunk(0x02, [17]),
  chunk(0x03, [10, 0, 0, 1]),
  chunk(0x04, [10, 0, 0, 2]),
  chunk(0x07, u16(5060)),
  chunk(0x08, u16(5062)),
];
const PAYLOAD = chunk(0x0f, ascii("OPTIONS sip:x SIP/2.0\r\n\r\n"));

describe("decodeHep: optional chunks", () => {
  test("every optional generic chunk lands in its field", () => {
    const p = decoded(
      hep3([
        ...IPV4_BASICS,
        PAYLOAD,
        chunk(0x0d, u16(30)),
        chunk(0x0e, ascii("secret\0")), // C agents include the NUL terminator
        chunk(0x11, ascii("call-1@host")),
        chunk(0x12, u16(101)),
        chunk(0x13, new TextEncoder().encode("node-ä")),
        chunk(0x14, [0, 0, 0x00, 0x1b, 0x21, 0x3c, 0x4d, 0x5e]),
        chunk(0x15, [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x0f]), // bare 6 octets are accepted
        chunk(0x16, u16(0x0800)),
        chunk(0x17, [0x18]),
        chunk(0x18, [0xb8]),
        chunk(0x20, u16(432)),
        chunk(0x21, u16(9320)),
        chunk(0x22, ascii("52.52,13.40")),
        chunk(0x23, u32(4_000_000_000)),
        chunk(0x24, ascii("call")),
        chunk(0x25, ascii("a,b")),
        chunk(0x26, ascii("vip")),
        chunk(0x27, u16(3)),
        chunk(0x28, u16(2)),
        chunk(0x29, ascii("g1")),
      ]),
      NOW_2023,
    );
    expect(p).toMatchObject({
      keepAliveTimer: 30,
      authKey: "secret",
      correlationId: "call-1@host",
      vlan: 101,
      nodeName: "node-ä",
      srcMac: "00:1b:21:3c:4d:5e",
      dstMac: "aa:bb:cc:dd:ee:0f",
      ethType: 0x0800,
      tcpFlags: 0x18,
      ipTos: 0xb8,
      mos: 432,
      rFactor: 9320,
      geo: "52.52,13.40",
      jitter: 4_000_000_000,
      transactionType: "call",
      payloadJsonKeys: "a,b",
      tags: "vip",
      tagType: 3,
      eventType: 2,
      groupId: "g1",
      vendorChunks: 0,
      unknownChunks: 0,
    });
  });

  test("repeated text chunks decode to the right value each time (cache)", () => {
    const names = ["n1", "n2", "n3", "n4", "n5", "n1", "n6", "n2", "n22", "n2"];
    const seen = names.map((n) =>
      decoded(hep3([...IPV4_BASICS, PAYLOAD, chunk(0x13, ascii(n)), chunk(0x0e, ascii(`k-${n}`))]), NOW_2023),
    );
    expect(seen.map((p) => p.nodeName)).toEqual(names);
    expect(seen.map((p) => p.authKey)).toEqual(names.map((n) => `k-${n}`));
  });

  test("vendor chunks are skipped and counted; unknown generic chunks too", () => {
    const p = decoded(
      hep3([
        chunk(0x0013, ascii("vendor-not-node"), 0x0002), // Kamailio's own type 0x13, not our node name
        ...IPV4_BASICS,
        chunk(0x000f, ascii("vendor payload"), 0x0005),
        PAYLOAD,
        chunk(0x0019, [1, 2]), // reserved range 0x0019..0x001f
        chunk(0x0100, []),
        chunk(0x0001, [9], 0xffff),
      ]),
      NOW_2023,
    );
    expect(p.vendorChunks).toBe(3);
    expect(p.unknownChunks).toBe(2);
    expect(p.nodeName).toBeUndefined();
    expect(text(p.payload)).toBe("OPTIONS sip:x SIP/2.0\r\n\r\n");
    expect(p.ipFamily).toBe(4);
  });

  test("family inferred from the address chunks when chunk 0x0001 is absent", () => {
    expect(decoded(hep3([...IPV4_BASICS.slice(1), PAYLOAD]), NOW_2023).ipFamily).toBe(4);
    const v6 = [chunk(0x05, hex("fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 01")), chunk(0x06, new Uint8Array(16))];
    const p = decoded(hep3([...v6, PAYLOAD]), NOW_2023);
    expect([p.ipFamily, p.srcIp, p.dstIp, p.srcPort, p.ipProtocol, p.protoType, p.captureId]).toEqual([
      6,
      "fe80::1",
      "::",
      0,
      0,
      0,
      0,
    ]);
  });

  test("a later duplicate chunk wins", () => {
    expect(decoded(hep3([...IPV4_BASICS, chunk(0x07, u16(1)), PAYLOAD]), NOW_2023).srcPort).toBe(1);
  });
});

describe("decodeHep: compressed payload (chunk 0x0010)", () => {
  const sip = "INVITE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.1\r\n\r\n".repeat(5);
  test.each([
    ["gzip", gzipSync(sip)],
    ["zlib", deflateSync(sip)],
    ["raw deflate", deflateRawSync(sip)],
  ])("%s is inflated", (_name, compressed) => {
    const p = decoded(hep3([...IPV4_BASICS, chunk(0x10, compressed)]), NOW_2023);
    expect(p.payloadCompressed).toBe(true);
    expect(text(p.payload)).toBe(sip);
  });

  test("the plain payload chunk wins over the compressed one", () => {
    const p = decoded(hep3([...IPV4_BASICS, chunk(0x10, [1, 2, 3]), PAYLOAD]), NOW_2023);
    expect(p.payloadCompressed).toBe(false);
    expect(text(p.payload)).toBe("OPTIONS sip:x SIP/2.0\r\n\r\n");
  });

  test("inflation beyond maxInflatedBytes is refused", () => {
    const bomb = gzipSync(new Uint8Array(2 << 20));
    const buf = hep3([...IPV4_BASICS, chunk(0x10, bomb)]);
    expect(bomb.length).toBeLessThan(65000);
    expect(decodeHep(buf, { nowMs: NOW_2023 })).toMatchObject({ ok: false, reason: "gzip_failed" });
    expect(decodeHep(buf, { nowMs: NOW_2023, maxInflatedBytes: 4 << 20 }).ok).toBe(true);
  });
});

describe("decodeHep: timestamps", () => {
  const at = (sec: number, usec = 0) => hep3([...IPV4_BASICS, chunk(0x09, u32(sec)), chunk(0x0a, u32(usec)), PAYLOAD]);
  const now = NOW_2023;
  const nowSec = now / 1000;

  test.each([
    ["inside the window", at(nowSec - 60, 5), {}, (nowSec - 60) * 1e6 + 5, false],
    ["exactly now + maxSkew", at(nowSec + 86_400), {}, (nowSec + 86_400) * 1e6, false],
    ["1 s beyond maxSkew", at(nowSec + 86_401), {}, now * 1000, true],
    ["custom maxSkewMs", at(nowSec + 10), { maxSkewMs: 5_000 }, now * 1000, true],
    ["older than maxAge (10 years)", at(nowSec - 11 * 365 * 86_400), {}, now * 1000, true],
    ["custom maxAgeMs", at(nowSec - 3_600), { maxAgeMs: 60_000 }, now * 1000, true],
    ["zero (agent without a clock)", at(0), {}, now * 1000, true],
    ["microseconds without seconds", hep3([...IPV4_BASICS, chunk(0x0a, u32(7)), PAYLOAD]), {}, now * 1000, true],
    ["no timestamp chunks", hep3([...IPV4_BASICS, PAYLOAD]), {}, now * 1000, true],
  ] as const)("%s", (_name, buf, options, expectedUs, fallback) => {
    const r = decodeHep(buf, { nowMs: now, ...options });
    expect(r.ok && [r.value.timestampUs, r.value.tsFallback]).toEqual([expectedUs, fallback]);
  });

  test("the spec example (2011) falls back under the default 10-year window in 2026", () => {
    const now2026 = Date.UTC(2026, 0, 1);
    const p = decoded(SPEC_EXAMPLE, now2026);
    expect([p.timestampUs, p.tsFallback]).toEqual([now2026 * 1000, true]);
  });

  test("without nowMs the receive time is the clock", () => {
    const before = Date.now();
    const r = decodeHep(hep3([...IPV4_BASICS, PAYLOAD]));
    const after = Date.now();
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.value.timestampUs).toBeGreaterThanOrEqual(before * 1000);
      expect(r.value.timestampUs).toBeLessThanOrEqual(after * 1000);
    }
  });
});

// ---- malformed input: each case names its reason ----

const withByte = (buf: Uint8Array, at: number, value: number) => {
  const copy = buf.slice();
  copy[at] = value;
  return copy;
};

describe("decodeHep: malformed packets", () => {
  test.each<[string, HepDecodeReason, Uint8Array]>([
    ["empty buffer", "too_short", new Uint8Array(0)],
    ['"HEP3" without a length', "too_short", hex("48 45 50 33 00")],
    ["unknown first octet", "bad_magic", withByte(SPEC_EXAMPLE, 0, 0x47)],
    ['"HXP3"', "bad_magic", withByte(SPEC_EXAMPLE, 1, 0x58)],
    ["zero first octet", "bad_magic", new Uint8Array(64)],
    ['"HEP2"', "unsupported_version", withByte(SPEC_EXAMPLE, 3, 0x32)],
    ['"EEP4"', "unsupported_version", hex("45 45 50 34 00 06")],
    ["declared length larger than the buffer", "bad_length", withByte(SPEC_EXAMPLE, 5, 0x72)],
    ["declared length smaller than the buffer", "bad_length", withByte(SPEC_EXAMPLE, 5, 0x70)],
    ["buffer truncated", "bad_length", SPEC_EXAMPLE.subarray(0, 100)],
    ["header only", "missing_payload", hex("48 45 50 33 00 06")],
    ["trailing octets shorter than a chunk header", "truncated_chunk", hep3([...IPV4_BASICS, PAYLOAD, [0, 0, 0]])],
    ["chunk running past the end", "truncated_chunk", hep3([...IPV4_BASICS, chunk(0x0f, ascii("abc"), 0, 20)])],
    ["chunk length 0", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x0f, [], 0, 0), PAYLOAD])],
    ["chunk length 5", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x0f, [], 0, 5), PAYLOAD])],
    ["3-octet port", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x07, [0, 0, 1]), PAYLOAD])],
    ["5-octet IPv4 address", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x03, [1, 2, 3, 4, 5]), PAYLOAD])],
    ["15-octet IPv6 address", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x05, new Uint8Array(15)), PAYLOAD])],
    ["2-octet timestamp", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x09, [1, 2]), PAYLOAD])],
    ["7-octet MAC", "bad_chunk_length", hep3([...IPV4_BASICS, chunk(0x14, new Uint8Array(7)), PAYLOAD])],
    ["family 7", "bad_family", hep3([chunk(0x01, [7]), ...IPV4_BASICS.slice(1), PAYLOAD])],
    ["no destination address", "bad_address", hep3([...IPV4_BASICS.filter((_, i) => i !== 3), PAYLOAD])],
    ["IPv6 family with IPv4 addresses", "bad_address", hep3([chunk(0x01, [10]), ...IPV4_BASICS.slice(1), PAYLOAD])],
    ["no address chunks at all", "bad_address", hep3([chunk(0x07, u16(1)), PAYLOAD])],
    ["no payload chunk", "missing_payload", hep3(IPV4_BASICS)],
    ["empty payload chunk", "missing_payload", hep3([...IPV4_BASICS, chunk(0x0f, [])])],
    ["corrupt compressed payload", "gzip_failed", hep3([...IPV4_BASICS, chunk(0x10, [0x1f, 0x8b, 1, 2, 3])])],
    [
      "compressed payload inflating to nothing",
      "missing_payload",
      hep3([...IPV4_BASICS, chunk(0x10, gzipSync(new Uint8Array(0)))]),
    ],
    ["v2 shorter than its fixed header", "too_short", HEP2_VECTOR.subarray(0, 7)],
    ["v2 family 3", "bad_family", withByte(HEP2_VECTOR, 2, 3)],
    ["v2 header length not 16 for IPv4", "bad_length", withByte(HEP2_VECTOR, 1, 28)],
    ["v2 IPv6 family with the IPv4 header length", "bad_length", withByte(HEP2_VECTOR, 2, 10)],
    ["v2 time header cut", "too_short", HEP2_VECTOR.subarray(0, 20)],
    ["v2 without payload", "missing_payload", HEP2_VECTOR.subarray(0, 28)],
    ["v1 without payload", "missing_payload", HEP1_VECTOR.subarray(0, 40)],
  ])("%s → %s", (_name, reason, buf) => {
    const r = decodeHep(buf, { nowMs: NOW_2023 });
    expect(r.ok ? "decoded" : r.reason).toBe(reason);
  });
});

// ---- fuzz: no input throws, every failure is a known reason ----

describe("decodeHep: fuzz", () => {
  const reasons = new Set<string>(HEP_DECODE_REASONS);

  function check(buf: Uint8Array, stats: Map<string, number>): void {
    let r: ReturnType<typeof decodeHep>;
    try {
      r = decodeHep(buf, { nowMs: NOW_2023 });
    } catch (e) {
      throw new Error(`decodeHep threw on ${Buffer.from(buf).toString("hex")}: ${String(e)}`);
    }
    if (r.ok) {
      const p = r.value;
      const sane =
        [1, 2, 3].includes(p.version) &&
        (p.ipFamily === 4 || p.ipFamily === 6) &&
        p.srcIp.length > 0 &&
        p.dstIp.length > 0 &&
        p.srcPort >= 0 &&
        p.srcPort <= 65535 &&
        p.payload.length > 0 &&
        Number.isSafeInteger(p.timestampUs);
      if (!sane) throw new Error(`implausible packet from ${Buffer.from(buf).toString("hex")}`);
      stats.set("ok", (stats.get("ok") ?? 0) + 1);
    } else {
      if (!reasons.has(r.reason)) throw new Error(`unknown reason ${r.reason}`);
      stats.set(r.reason, (stats.get(r.reason) ?? 0) + 1);
    }
  }

  test("200k random buffers", () => {
    const rnd = seeded(0x5eed);
    const int = (n: number) => Math.floor(rnd() * n);
    const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256));
    const stats = new Map<string, number>();
    for (let i = 0; i < 200_000; i++) {
      const kind = i % 3;
      let buf: Uint8Array;
      if (kind === 0) {
        buf = bytes(int(120));
      } else if (kind === 1) {
        // A HEP3 header with a plausible soup of chunks, mostly well-formed, sometimes not.
        const chunks: number[][] = [];
        for (let c = int(12); c > 0; c--) {
          const type = int(10) === 0 ? int(0x10000) : int(0x2c);
          const body = bytes([1, 2, 4, 6, 8, 16][int(6)]! + (int(8) === 0 ? int(40) : 0));
          const length = int(20) === 0 ? int(0x10000) : 6 + body.length;
          chunks.push(chunk(type, body, int(6) === 0 ? int(0x10000) : 0, length));
        }
        buf = hep3(chunks, int(15) === 0 ? int(0x10000) : undefined);
      } else {
        // A legacy header: version 1/2, sometimes-right length and family.
        const family = [2, 10, int(256)][int(3)]!;
        const hl = int(4) === 0 ? int(256) : family === 10 ? 40 : 16;
        buf = Uint8Array.from([1 + int(2), hl, family, ...bytes(5 + int(80))]);
      }
      check(buf, stats);
    }
    // The generator must reach deep into the decoder, not only the magic check.
    expect(stats.get("ok") ?? 0).toBeGreaterThan(100);
    for (const reason of [
      "bad_magic",
      "bad_length",
      "truncated_chunk",
      "bad_chunk_length",
      "bad_family",
      "bad_address",
      "missing_payload",
    ]) {
      expect(stats.get(reason) ?? 0, reason).toBeGreaterThan(0);
    }
  });

  test("200k mutations of valid packets", () => {
    const rnd = seeded(0xc0ffee);
    const int = (n: number) => Math.floor(rnd() * n);
    const seeds = [
      SPEC_EXAMPLE,
      IPV6_VECTOR,
      HEP2_VECTOR,
      HEP1_VECTOR,
      encodeHep3({
        srcIp: "10.1.2.3",
        dstIp: "10.3.2.1",
        srcPort: 5060,
        dstPort: 5080,
        timestampUs: NOW_2023 * 1000,
        protoType: 1,
        nodeName: "n1",
        correlationId: "abc",
        srcMac: "00:11:22:33:44:55",
        mos: 400,
        payload: "REGISTER sip:example.com SIP/2.0\r\n\r\n",
        payloadCompressed: true,
        extraChunks: [{ vendorId: 2, typeId: 1, data: new Uint8Array([1, 2, 3]) }],
      }),
      encodeHep2({ version: 2, srcIp: "::1", dstIp: "::2", srcPort: 1, dstPort: 2, tsSec: 1, payload: "x" }),
    ];
    const stats = new Map<string, number>();
    for (let i = 0; i < 200_000; i++) {
      const buf = seeds[i % seeds.length]!.slice();
      let out: Uint8Array = buf;
      for (let m = 1 + int(3); m > 0; m--) {
        switch (int(6)) {
          case 0: // bit flip
            if (out.length > 0) out[int(out.length)]! ^= 1 << int(8);
            break;
          case 1: // random octet
            if (out.length > 0) out[int(out.length)] = int(256);
            break;
          case 2: // truncation
            out = out.subarray(0, int(out.length + 1));
            break;
          case 3: // total length corruption
            if (out.length > 5) {
              out[4] = int(256);
              out[5] = int(256);
            }
            break;
          case 4: {
            // chunk length corruption: walk the chunk chain to a random chunk
            let pos = 6;
            for (let hops = int(8); hops > 0 && pos + 6 <= out.length; hops--)
              pos += Math.max(6, (out[pos + 4]! << 8) | out[pos + 5]!);
            if (pos + 6 <= out.length) {
              out[pos + 4] = int(4) === 0 ? 0 : int(256);
              out[pos + 5] = int(256);
            }
            break;
          }
          default: {
            // extension with junk (length field left as it was)
            const longer = new Uint8Array(out.length + 1 + int(16));
            longer.set(out);
            out = longer;
          }
        }
      }
      check(out, stats);
    }
    expect(stats.get("ok") ?? 0).toBeGreaterThan(1000);
    expect(stats.get("gzip_failed") ?? 0).toBeGreaterThan(0);
  });
});
