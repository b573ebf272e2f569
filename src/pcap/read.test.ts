import { describe, expect, test } from "bun:test";
import { concat } from "./bytes.ts";
import { countCaptureRecords, detectCaptureFormat, iterPackets, readCapture, type CapturedPacket } from "./read.ts";
import { PcapngBuilder, pcapFile, text } from "./testing.ts";

const a = text("first packet");
const b = text("second");
const T1 = 1_700_000_000_123_456;
const T2 = 1_700_000_001_000_001;

function packetsOf(bytes: Uint8Array): CapturedPacket[] {
  const r = readCapture(bytes);
  if (!r.ok) throw new Error(`readCapture failed: ${r.reason} ${r.detail ?? ""}`);
  expect(r.value.stopped).toBeNull();
  return r.value.packets;
}

const summary = (p: CapturedPacket) => ({
  n: p.frameNumber,
  ts: p.timestampUs,
  link: p.linkType,
  data: new TextDecoder().decode(p.data),
  iface: p.interfaceId,
});

describe("classic pcap", () => {
  test.each([
    ["little-endian µs", { bigEndian: false, nanos: false }],
    ["big-endian µs", { bigEndian: true, nanos: false }],
    ["little-endian ns", { bigEndian: false, nanos: true }],
    ["big-endian ns", { bigEndian: true, nanos: true }],
  ])("%s", (_name, opts) => {
    // 999 extra nanoseconds are truncated, never rounded up into the next microsecond.
    const file = pcapFile(
      [
        { tsUs: T1, data: a },
        { tsUs: T2, data: b },
      ],
      { ...opts, linkType: 113, extraNs: 999 },
    );
    expect(detectCaptureFormat(file)).toBe("pcap");
    expect(packetsOf(file).map(summary)).toEqual([
      { n: 1, ts: T1, link: 113, data: "first packet", iface: 0 },
      { n: 2, ts: T2, link: 113, data: "second", iface: 0 },
    ]);
  });

  test("a file cut inside a record keeps the packets before it and says why it stopped", () => {
    const file = pcapFile([
      { tsUs: T1, data: a },
      { tsUs: T2, data: b },
    ]);
    const r = readCapture(file.subarray(0, file.length - 3));
    expect(r.ok && r.value.packets.length).toBe(1);
    expect(r.ok && r.value.stopped?.reason).toBe("truncated_record");
  });

  test("the FCS bits above the link type are ignored", () => {
    const file = pcapFile([{ tsUs: T1, data: a }], { linkType: 0x10000001 });
    expect(packetsOf(file)[0]?.linkType).toBe(1);
  });

  test.each([
    ["empty", new Uint8Array(0), "too_short"],
    ["not a capture", text("GET / HTTP/1.1\r\n\r\n"), "unknown_magic"],
    ["header only half there", pcapFile([]).subarray(0, 10), "too_short"],
  ])("%s fails with a reason", (_name, bytes, reason) => {
    const r = readCapture(bytes);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason as typeof r.reason);
  });

  test("a header-only file has no packets", () => {
    expect(packetsOf(pcapFile([]))).toEqual([]);
  });
});

describe("pcapng", () => {
  test.each([
    ["little-endian", true],
    ["big-endian", false],
  ])("%s EPB, SPB and OPB with per-interface link types and resolutions", (_name, le) => {
    const file = new PcapngBuilder(le)
      .interface(1) // default if_tsresol 6: microseconds
      .interface(101, { tsresol: 9 }) // nanoseconds
      .block(5, new Uint8Array(12)) // an Interface Statistics Block is skipped
      .packet(0, BigInt(T1), a)
      .packet(1, BigInt(T2) * 1000n + 999n, b)
      .simplePacket(text("simple"))
      .obsoletePacket(1, BigInt(T1) * 1000n, text("old"))
      .bytes();
    expect(detectCaptureFormat(file)).toBe("pcapng");
    expect(packetsOf(file).map(summary)).toEqual([
      { n: 1, ts: T1, link: 1, data: "first packet", iface: 0 },
      { n: 2, ts: T2, link: 101, data: "second", iface: 1 },
      { n: 3, ts: 0, link: 1, data: "simple", iface: 0 }, // SPB has no timestamp
      { n: 4, ts: T1, link: 101, data: "old", iface: 1 },
    ]);
  });

  test("binary resolution (2^-20 s) and if_tsoffset", () => {
    const file = new PcapngBuilder()
      .interface(1, { tsresol: 0x80 | 20, tsoffsetSec: 1000 })
      .packet(0, (5n << 20n) + (1n << 19n), a)
      .bytes();
    expect(packetsOf(file)[0]?.timestampUs).toBe((1000 + 5) * 1_000_000 + 500_000);
  });

  test("a second section of the other byte order starts its own interface list", () => {
    const file = concat([
      new PcapngBuilder(true).interface(1).packet(0, BigInt(T1), a).bytes(),
      new PcapngBuilder(false).interface(113).packet(0, BigInt(T2), b).bytes(),
    ]);
    expect(packetsOf(file).map(summary)).toEqual([
      { n: 1, ts: T1, link: 1, data: "first packet", iface: 0 },
      { n: 2, ts: T2, link: 113, data: "second", iface: 0 },
    ]);
  });

  test("a packet naming an undeclared interface stops reading with a reason", () => {
    const file = new PcapngBuilder().interface(1).packet(0, 1n, a).packet(3, 2n, b).bytes();
    const items = [...iterPackets(file)];
    expect(items.map((i) => (i.ok ? i.value.frameNumber : i.reason))).toEqual([1, "unknown_interface"]);
  });

  test.each([
    ["cut in the middle of a block", (f: Uint8Array) => f.subarray(0, f.length - 8), "truncated_record"],
    [
      "block length not a multiple of 4",
      (f: Uint8Array) => {
        const g = f.slice();
        new DataView(g.buffer).setUint32(g.length - 36 + 4, 27, true); // the last EPB is 36 bytes long
        return g;
      },
      "bad_block_length",
    ],
  ])("%s", (_name, damage, reason) => {
    const file = new PcapngBuilder().interface(1).packet(0, 1n, a).packet(0, 2n, text("1234")).bytes();
    const r = readCapture(damage(file));
    expect(r.ok && r.value.packets.length).toBe(1);
    expect(r.ok && r.value.stopped?.reason).toBe(reason as "truncated_record");
  });

  test("a section without the byte-order magic is rejected", () => {
    const file = new PcapngBuilder().bytes();
    file[8] = 0;
    const r = readCapture(file);
    expect(r.ok ? "ok" : r.reason).toBe("unknown_magic");
  });
});

describe("countCaptureRecords (the import's cap, before parsing)", () => {
  const pcap = pcapFile(
    [
      { tsUs: T1, data: a },
      { tsUs: T2, data: b },
      { tsUs: T2, data: new Uint8Array(0) },
    ],
    { bigEndian: true },
  );
  const ng = concat([
    new PcapngBuilder(true).interface(1).packet(0, BigInt(T1), a).packet(0, 2n, b).bytes(),
    new PcapngBuilder(false).interface(113).packet(0, BigInt(T2), b).bytes(),
  ]);
  test.each([
    ["pcap, big-endian, an empty record", pcap, 3, 3],
    // Every block: 2 section headers, 2 interfaces, 3 packets.
    ["pcapng, two sections of either byte order", ng, 7, 3],
    ["pcap cut inside the last record", pcap.subarray(0, pcap.length - 3), 2, 2],
    ["pcapng cut inside the last block", ng.subarray(0, ng.length - 8), 6, 2],
    ["not a capture", text("hello world"), 0, 0],
  ])("%s", (_name, file, records, packets) => {
    expect(countCaptureRecords(file)).toBe(records);
    expect([...iterPackets(file)].filter((i) => i.ok).length).toBe(packets);
  });
});
