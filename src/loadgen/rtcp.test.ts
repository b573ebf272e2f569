import { describe, expect, test } from "bun:test";
import { audioAddress, lakeReport, rawSenderReport, streamSsrc } from "./rtcp.ts";

describe("rtcp reports", () => {
  test("RFC 3550 sender report: V=2, RC=1, PT=200, length 12 words, SSRCs and NTP time", () => {
    const b = rawSenderReport(0x01020304, 0x0a0b0c0d, Date.UTC(2026, 10, 26, 1, 0, 0, 500));
    const dv = new DataView(b.buffer);
    expect([b.length, dv.getUint8(0), dv.getUint8(1), dv.getUint16(2)]).toEqual([52, 0x81, 200, 12]);
    expect([dv.getUint32(4), dv.getUint32(28)]).toEqual([0x01020304, 0x0a0b0c0d]);
    expect(dv.getUint32(8)).toBe(Date.UTC(2026, 10, 26, 1, 0, 0) / 1000 + 2208988800);
    expect(dv.getUint32(12)).toBe(0x80000000);
  });

  test("the JSON report carries the report block the QoS view reads", () => {
    const j = JSON.parse(lakeReport(7, 9, 0));
    expect(j.report_blocks).toEqual([
      { source_ssrc: 9, fraction_lost: 0, packets_lost: 0, highest_seq_no: 0, ia_jitter: 0, lsr: 0, dlsr: 0 },
    ]);
    expect(j.ssrc).toBe(7);
  });

  test("SSRCs differ per sending address and per call, and are stable; SDP audio address", () => {
    const a = { ip: "10.0.0.1", port: 6000 };
    expect(streamSsrc("c1", a)).toBe(streamSsrc("c1", { ...a }));
    expect(streamSsrc("c1", a)).not.toBe(streamSsrc("c1", { ...a, port: 6002 }));
    expect(streamSsrc("c1", a)).not.toBe(streamSsrc("c2", a));
    expect(audioAddress("v=0\r\nc=IN IP4 10.1.2.3\r\nm=audio 4000 RTP/AVP 0\r\n")).toEqual({
      ip: "10.1.2.3",
      port: 4000,
    });
    expect(audioAddress("v=0\r\n")).toBeNull();
  });
});
