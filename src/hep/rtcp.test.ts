import { describe, expect, test } from "bun:test";
import { decodeRtcp, ntpMiddle32, rttMs } from "./rtcp.ts";

/** RFC 3550 §6.4 report block. */
function block(
  ssrc: number,
  fraction: number,
  lost: number,
  seq: number,
  jitter: number,
  lsr: number,
  dlsr: number,
): number[] {
  const b = new DataView(new ArrayBuffer(24));
  b.setUint32(0, ssrc);
  b.setUint32(4, ((fraction & 0xff) << 24) | (lost & 0xffffff));
  b.setUint32(8, seq);
  b.setUint32(12, jitter);
  b.setUint32(16, lsr);
  b.setUint32(20, dlsr);
  return [...new Uint8Array(b.buffer)];
}

/** One RTCP packet: header (V=2, count, type, length in words − 1) and body (a multiple of 4). */
function packet(pt: number, count: number, body: number[]): number[] {
  const len = (body.length + 4) / 4 - 1;
  return [0x80 | count, pt, len >> 8, len & 0xff, ...body];
}

const u32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];

describe("binary RTCP", () => {
  test("SR + SDES + BYE compound: sender info, report block (signed loss), CNAME, BYE", () => {
    const sr = packet(200, 1, [
      ...u32(0x11111111),
      ...u32(3_976_000_000),
      ...u32(0x80000000),
      ...u32(160),
      ...u32(50),
      ...u32(8000),
      ...block(0x22222222, 26, -3, 70_000, 240, 0x12345678, 0x10000),
    ]);
    const sdes = packet(202, 1, [...u32(0x11111111), 1, 5, ..."alice".split("").map((c) => c.charCodeAt(0)), 0]);
    const bye = packet(203, 1, u32(0x11111111));
    const r = decodeRtcp(new Uint8Array([...sr, ...sdes, ...bye]));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({
      type: 200,
      ssrc: 0x11111111,
      report_count: 1,
      packets: [200, 202, 203],
      sdes: [{ ssrc: 0x11111111, cname: "alice" }],
      bye: [0x11111111],
    });
    expect(r.value.sender_information).toEqual({
      ntp_timestamp_sec: 3_976_000_000,
      ntp_timestamp_usec: 500_000,
      rtp_timestamp: 160,
      packets: 50,
      octets: 8000,
    });
    expect(r.value.report_blocks).toEqual([
      {
        source_ssrc: 0x22222222,
        fraction_lost: 26,
        packets_lost: -3,
        highest_seq_no: 70_000,
        ia_jitter: 240,
        lsr: 0x12345678,
        dlsr: 0x10000,
      },
    ]);
  });

  test("RR with two blocks, then XR: VoIP metrics (MOS × 10, 127 = unavailable), statistics summary, DLRR", () => {
    const rr = packet(201, 2, [...u32(7), ...block(8, 0, 0, 1, 16, 0, 0), ...block(9, 64, 100, 2, 80, 0, 0)]);
    const voip = [
      7,
      0,
      0,
      8,
      ...u32(8),
      12,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      150,
      0,
      20,
      0,
      0,
      0,
      0,
      88,
      0,
      41,
      127,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
    ];
    const stats = [
      6,
      0,
      0,
      9,
      ...u32(8),
      0,
      1,
      0,
      100,
      ...u32(5),
      ...u32(0),
      ...u32(1),
      ...u32(40),
      ...u32(9),
      ...u32(3),
      0,
      0,
      0,
      0,
    ];
    const dlrr = [5, 0, 0, 3, ...u32(8), ...u32(0xabcd0000), ...u32(0x8000)];
    const xr = packet(207, 0, [...u32(7), ...voip, ...stats, ...dlrr]);
    const r = decodeRtcp(new Uint8Array([...rr, ...xr]));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.type).toBe(201);
    expect(r.value.report_blocks.map((b) => [b.source_ssrc, b.fraction_lost, b.packets_lost, b.ia_jitter])).toEqual([
      [8, 0, 0, 16],
      [9, 64, 100, 80],
    ]);
    expect(r.value.xr).toEqual([
      {
        block_type: 7,
        source_ssrc: 8,
        loss_rate: 12,
        discard_rate: 0,
        round_trip_delay: 150,
        end_system_delay: 20,
        r_factor: 88,
        mos_lq: 4.1,
      },
      {
        block_type: 6,
        source_ssrc: 8,
        begin_seq: 1,
        end_seq: 100,
        lost_packets: 5,
        dup_packets: 0,
        min_jitter: 1,
        max_jitter: 40,
        mean_jitter: 9,
        dev_jitter: 3,
      },
      { block_type: 5, dlrr: [{ ssrc: 8, lrr: 0xabcd0000, dlrr: 0x8000 }] },
    ]);
  });

  test("padding on the last packet is removed; loadgen's sender report decodes", () => {
    const rr = packet(201, 0, [...u32(7), 0, 0, 0, 4]);
    rr[0]! |= 0x20;
    const r = decodeRtcp(new Uint8Array(rr));
    expect(r.ok && r.value).toMatchObject({ type: 201, ssrc: 7, report_blocks: [] });
  });

  test.each([
    ["empty", [], "too_short"],
    ["four bytes", [0x80, 0x80, 0, 1], "too_short"],
    ["version 1", [0x41, 200, 0, 1, 0, 0, 0, 0], "bad_version"],
    ["RTP, not RTCP (type 0 / marker)", [0x80, 0x00, 0, 1, 0, 0, 0, 0], "not_rtcp"],
    ["length beyond the datagram", [0x81, 201, 0, 7, 0, 0, 0, 1], "bad_length"],
    ["report count beyond the length", [0x83, 201, 0, 1, 0, 0, 0, 1], "bad_length"],
    ["padding on a middle packet", [0xa0, 201, 0, 1, 0, 0, 0, 4, 0x80, 201, 0, 1, 0, 0, 0, 1], "bad_padding"],
    ["padding longer than the packet", [0xa0, 201, 0, 1, 0, 0, 0, 9], "bad_padding"],
    ["SR shorter than its sender info", [0x80, 200, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0], "bad_length"],
  ])("garbage gives a reason, no exception: %s", (_name, bytes, reason) => {
    const r = decodeRtcp(new Uint8Array(bytes as number[]));
    expect(r.ok ? "ok" : r.reason).toBe(reason as string);
  });

  test("fewer than 4 stray octets after whole packets are ignored and counted (as tshark reads them)", () => {
    const r = decodeRtcp(new Uint8Array([0x80, 201, 0, 1, 0, 0, 0, 1, 0, 0]));
    expect(r.ok && r.value).toMatchObject({ type: 201, ssrc: 1, trailing_bytes: 2 });
  });

  test("random bytes never throw", () => {
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 8) & 0xff;
    for (let i = 0; i < 5000; i++) {
      const n = rnd() % 80;
      const b = new Uint8Array(n);
      for (let k = 0; k < n; k++) b[k] = rnd();
      if (n > 1) b[0] = 0x80 | (b[0]! & 0x3f); // mostly version 2, so the deeper checks run
      if (n > 2 && i % 2) b[1] = 200 + (b[1]! % 8);
      expect(() => decodeRtcp(b)).not.toThrow();
    }
  });

  test("RTT = A − LSR − DLSR (RFC 3550 §6.4.1) at the report's arrival time; none without LSR or when negative", () => {
    const arrival = Date.UTC(2026, 10, 28, 12, 0, 0, 500);
    const lsr = ntpMiddle32(arrival - 250);
    // DLSR 0.1 s (6553.6 units → 6554): RTT 150 ms within one 1/65536 s tick.
    expect(rttMs(arrival, lsr, 6554)).toBeCloseTo(150, 0);
    expect(rttMs(arrival, 0, 6554)).toBeNull();
    expect(rttMs(arrival, ntpMiddle32(arrival + 1000), 0)).toBeNull();
    // The 16-bit seconds wrap: an SR just before the wrap, the report just after.
    const wrapAt =
      (0x10000 - ((Math.floor(arrival / 1000) + 2208988800) & 0xffff)) * 1000 + Math.floor(arrival / 1000) * 1000;
    expect(rttMs(wrapAt + 20, ntpMiddle32(wrapAt - 80), 0)).toBeCloseTo(100, 0);
  });
});
