import { describe, expect, test } from "bun:test";
import { concat } from "./bytes.ts";
import { finishChecksum, onesSum, pseudoHeaderSum, writeIpv4Header } from "./frame-build.ts";
import { IpDecoder } from "./ip.ts";
import { decodeLink } from "./link.ts";
import { readCapture } from "./read.ts";
import { extractSipMessages } from "./sip-extract.ts";
import { ipBytes, sipRequest, text } from "./testing.ts";
import { MAX_UDP_PAYLOAD, PcapWriter, writePcap, type PcapRecord } from "./write.ts";

const T0 = 1_700_000_000_000_001;
const records: PcapRecord[] = [
  {
    timestampUs: T0,
    srcIp: "192.0.2.10",
    dstIp: "198.51.100.20",
    srcPort: 5061,
    dstPort: 5062,
    payload: text(sipRequest("INVITE", "w-1")),
  },
  {
    timestampUs: T0 + 999_999,
    srcIp: "2001:db8::10",
    dstIp: "2001:db8:0:0:1::20",
    payload: text(sipRequest("OPTIONS", "w-2")),
  },
  {
    timestampUs: T0 + 2_000_000,
    srcIp: "10.0.0.1",
    dstIp: "10.0.0.2",
    srcPort: 0,
    dstPort: 5070,
    payload: text(sipRequest("MESSAGE", "w-3", "b".repeat(3000))),
  },
];

describe("writePcap", () => {
  test("the classic pcap header: µs magic, v2.4, Ethernet", () => {
    const file = writePcap([]);
    expect(Array.from(file)).toEqual([
      0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0,
    ]);
    const r = readCapture(file);
    expect(r.ok && r.value.packets).toEqual([]);
  });

  test("read back: one frame per record with the same times, addresses, ports (0 → 5060) and payloads", () => {
    const r = extractSipMessages(writePcap(records));
    expect(r.error).toBeNull();
    expect(
      r.messages.map((m) => ({
        ts: m.timestampUs,
        src: m.srcIp,
        dst: m.dstIp,
        sp: m.srcPort,
        dp: m.dstPort,
        v: m.ipFamily,
        t: m.transport,
        n: m.frameNumber,
        p: m.payload,
      })),
    ).toEqual([
      {
        ts: T0,
        src: "192.0.2.10",
        dst: "198.51.100.20",
        sp: 5061,
        dp: 5062,
        v: 4,
        t: "udp",
        n: 1,
        p: records[0]?.payload as Uint8Array,
      },
      {
        ts: T0 + 999_999,
        src: "2001:db8::10",
        dst: "2001:db8::1:0:0:20",
        sp: 5060,
        dp: 5060,
        v: 6,
        t: "udp",
        n: 2,
        p: records[1]?.payload as Uint8Array,
      },
      {
        ts: T0 + 2_000_000,
        src: "10.0.0.1",
        dst: "10.0.0.2",
        sp: 5060,
        dp: 5070,
        v: 4,
        t: "udp",
        n: 3,
        p: records[2]?.payload as Uint8Array,
      },
    ]);
  });

  test("IPv4 header and UDP checksums verify (ones' complement sum of all words is 0xffff)", () => {
    const file = readCapture(writePcap(records));
    if (!file.ok) throw new Error(file.reason);
    for (const packet of file.value.packets) {
      const link = decodeLink(packet.linkType, packet.data);
      if (!link.ok) throw new Error(link.reason);
      const ipData = link.value.data;
      const v4 = link.value.version === 4;
      const ihl = v4 ? 20 : 40;
      if (v4) expect(finishChecksum(onesSum(ipData, 0, ihl))).toBe(0);
      const ip = new IpDecoder().decode(link.value.version, ipData, 0);
      if (!ip.ok) throw new Error(ip.reason);
      const udp = ip.value.payload;
      const src = ipData.subarray(v4 ? 12 : 8, v4 ? 16 : 24);
      const dst = ipData.subarray(v4 ? 16 : 24, v4 ? 20 : 40);
      expect(finishChecksum(onesSum(udp, 0, udp.length, pseudoHeaderSum(src, dst, 17, udp.length)))).toBe(0);
    }
  });

  test("IPv4 header checksum of the well-known example header is 0xb861", () => {
    const h = new Uint8Array(20);
    writeIpv4Header(h, 0, {
      src: ipBytes("192.168.0.1"),
      dst: ipBytes("192.168.0.199"),
      protocol: 17,
      payloadLength: 0x73 - 20,
      dontFragment: true,
      ttl: 64,
    });
    expect((h[10] ?? 0) * 256 + (h[11] ?? 0)).toBe(0xb861);
  });

  test("streaming chunks equal the whole file; an empty writer still yields a valid header", () => {
    const w = new PcapWriter();
    const streamed = concat([...records.map((r) => w.add(r)), w.finish()]);
    expect(streamed).toEqual(writePcap(records));
    expect(w.records).toBe(3);
    expect(new PcapWriter().finish()).toEqual(PcapWriter.fileHeader());
  });

  test("mixed families become IPv6 with the IPv4 side mapped; unparseable addresses are counted", () => {
    const w = new PcapWriter();
    const file = concat([
      w.add({ timestampUs: 1, srcIp: "10.1.2.3", dstIp: "2001:db8::1", payload: text(sipRequest("BYE", "m")) }),
      w.add({ timestampUs: 2, srcIp: "", dstIp: "not-an-ip", payload: text(sipRequest("BYE", "n")) }),
    ]);
    const r = extractSipMessages(file);
    expect(r.messages.map((m) => [m.srcIp, m.dstIp, m.ipFamily])).toEqual([
      ["::ffff:10.1.2.3", "2001:db8::1", 6],
      ["0.0.0.0", "0.0.0.0", 4],
    ]);
    expect(w.adjustments).toEqual({ truncatedPayloads: 0, substitutedAddresses: 2 });
  });

  test("payloads beyond the 16-bit length fields are cut at the UDP maximum and counted", () => {
    const w = new PcapWriter();
    const huge = text(sipRequest("MESSAGE", "huge", "h".repeat(70_000)));
    const file = concat([
      w.add({ timestampUs: 1, srcIp: "10.0.0.1", dstIp: "10.0.0.2", payload: huge }),
      w.add({ timestampUs: 2, srcIp: "::1", dstIp: "::2", payload: huge }),
    ]);
    const r = extractSipMessages(file, { maxMessageBytes: 1 << 20 });
    expect(r.messages.map((m) => m.payload.length)).toEqual([MAX_UDP_PAYLOAD[4], MAX_UDP_PAYLOAD[6]]);
    expect(w.adjustments.truncatedPayloads).toBe(2);
  });
});
