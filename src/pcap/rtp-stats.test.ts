import { describe, expect, test } from "bun:test";
import { parseRtpHeader, RtpStreamStats } from "./rtp-stats.ts";

const h = (seq: number, timestamp: number) => ({ payloadType: 0, marker: false, seq, timestamp, ssrc: 1 });

describe("RTP stream statistics (RFC 3550 A.1, A.3, A.8)", () => {
  test("header: version 2, CSRCs within the packet; RTCP types (rtcp-mux) are not RTP", () => {
    const b = new Uint8Array(12);
    b.set([0x80, 0x88, 0x01, 0x02, 0, 0, 0, 160, 0, 0, 0, 7]);
    expect(parseRtpHeader(b)).toEqual({ payloadType: 8, marker: true, seq: 258, timestamp: 160, ssrc: 7 });
    expect(parseRtpHeader(Uint8Array.of(0x81, 201, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0))).toBeNull();
    expect(parseRtpHeader(Uint8Array.of(0x40, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0))).toBeNull();
    expect(parseRtpHeader(Uint8Array.of(0x82, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0))).toBeNull();
  });

  test("a steady stream: no loss, no jitter", () => {
    const s = new RtpStreamStats(8000);
    for (let i = 0; i < 50; i++) s.add(h(i, i * 160), i * 20_000);
    expect(s.figures()).toMatchObject({
      packets: 50,
      expected: 50,
      lost: 0,
      seq_errors: 0,
      jitter_ms: 0,
      max_jitter_ms: 0,
    });
  });

  test("loss, a late packet and the 16-bit sequence wrap", () => {
    const s = new RtpStreamStats(8000);
    const seqs = [65533, 65534, 0, 65535, 2, 3];
    seqs.forEach((q, i) => s.add(h(q, i * 160), i * 20_000));
    // Expected 65533..3 = 7, received 6: seq 1 lost; 0 jumped over 65535, which came late, then 2 after the gap.
    expect(s.figures()).toMatchObject({ packets: 6, expected: 7, lost: 1, seq_errors: 3 });
  });

  test("jitter: J += (|D| − J) / 16 on each packet, in ms of the RTP clock", () => {
    const s = new RtpStreamStats(8000);
    s.add(h(0, 0), 0);
    s.add(h(1, 160), 30_000); // 10 ms late: D = 80 units, J = 5 units = 0.625 ms
    expect(s.figures().jitter_ms).toBe(0.625);
    s.add(h(2, 320), 40_000); // 10 ms early again: D = 80, J = 5 + 75/16
    expect(s.figures().jitter_ms).toBeCloseTo((5 + 75 / 16) / 8, 3);
    expect(s.figures().max_jitter_ms).toBe(s.figures().jitter_ms);
  });
});
