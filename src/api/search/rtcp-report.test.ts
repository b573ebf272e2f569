import { describe, expect, test } from "bun:test";
import { ntpMiddle32 } from "../../hep/index.ts";
import { lakeReport, rawSenderReport } from "../../loadgen/rtcp.ts";
import { rtcpEvent } from "./call-events.ts";
import { buildStreams } from "./qos.ts";
import { rtcpClockRate, rtcpPayloadText, rtcpReportJson } from "./rtcp-report.ts";

const ARRIVAL = Date.UTC(2026, 10, 28, 12, 0, 0, 400);

/** One SR about `source` with the given report block figures, as bytes and as the agents' JSON. */
function bothForms(
  fraction: number,
  lost: number,
  jitter: number,
  lsr: number,
  dlsr: number,
): { b64: string; json: string } {
  const bytes = rawSenderReport(0x1234, 0x5678, ARRIVAL - 20);
  const dv = new DataView(bytes.buffer);
  dv.setUint32(32, ((fraction & 0xff) << 24) | (lost & 0xffffff));
  dv.setUint32(36, 1000);
  dv.setUint32(40, jitter);
  dv.setUint32(44, lsr);
  dv.setUint32(48, dlsr);
  const j = JSON.parse(lakeReport(0x1234, 0x5678, ARRIVAL - 20)) as { report_blocks: Array<Record<string, number>> };
  Object.assign(j.report_blocks[0]!, {
    fraction_lost: fraction,
    packets_lost: lost,
    highest_seq_no: 1000,
    ia_jitter: jitter,
    lsr,
    dlsr,
  });
  return { b64: Buffer.from(bytes).toString("base64"), json: JSON.stringify(j) };
}

const row = { proto: 5, ts_ms: ARRIVAL, src_ip: "10.0.0.1", src_port: 6001, dst_ip: "10.0.0.2", dst_port: 7001 };

describe("RTCP reports, binary and JSON", () => {
  test("the same report as bytes and as JSON gives the same QoS figures: jitter ms, loss, RTT, E-model MOS", () => {
    // 10 % loss (26/256), 7 lost, jitter 160 units = 20 ms at 8 kHz; SR sent 300 ms before arrival, held 100 ms: RTT 200 ms.
    const { b64, json } = bothForms(26, 7, 160, ntpMiddle32(ARRIVAL - 300), 6554);
    const streams = buildStreams([
      { ...row, payload: rtcpPayloadText(b64, "base64", ARRIVAL, 8000) },
      { ...row, payload: rtcpPayloadText(json, undefined, ARRIVAL, 8000) },
    ]);
    expect(streams).toHaveLength(1);
    const [bin, txt] = streams[0]!.points.map(({ ts_ms: _t, ...p }) => p);
    expect(bin).toEqual(txt!);
    expect(bin).toMatchObject({ jitter: 160, jitter_ms: 20, fraction_lost: 26, packets_lost: 7 });
    expect(bin!.delay).toBeCloseTo(200, 0);
    // G.711, Ppl 10.16 %, Bpl 25.1: Ie,eff 27.4; Ta = 100 + 2 × 20 ms: Id 3.4 → R 62.5, MOS 3.23.
    expect(bin).toMatchObject({ r_factor: 62.5, mos: 3.23 });
    // The timeline says the same for both.
    expect(rtcpEvent(b64, "base64", ARRIVAL, 8000)).toEqual(rtcpEvent(json, undefined, ARRIVAL, 8000));
    expect(rtcpEvent(b64, "base64", ARRIVAL, 8000).summary).toBe(
      "RTCP SR · jitter 160 · loss 10.2 % · 7 lost · MOS 3.23",
    );
  });

  test("jitter in ms by the SDP's clock, else 8000 Hz; without LSR no RTT", () => {
    const { b64 } = bothForms(0, 0, 480, 0, 0);
    const media = [{ ip: "10.0.0.1", port: 6001, clock_rate: 48000 }];
    expect(rtcpClockRate(media, row)).toBe(48000);
    expect(rtcpClockRate([], row)).toBe(8000);
    const j = rtcpReportJson(b64, "base64", ARRIVAL, 48000);
    expect(j.ok && j.json).toMatchObject({ jitter_ms: 10, mos: 4.4, r_factor: 92.7 });
    expect(j.ok && "rtt" in j.json).toBe(false);
  });

  test("an agent's own MOS (JSON mos, XR VoIP metrics) is kept; garbage gives the reason", () => {
    const own = rtcpReportJson(
      JSON.stringify({ type: 201, report_blocks: [{ fraction_lost: 128, ia_jitter: 0 }], mos: 4.2 }),
      undefined,
      ARRIVAL,
      8000,
    );
    expect(own.ok && own.json.mos).toBe(4.2);
    const bad = rtcpReportJson(Buffer.from([0x80, 0x80, 0, 1]).toString("base64"), "base64", ARRIVAL, 8000);
    expect(bad).toEqual({ ok: false, reason: "too_short: 4 bytes, an RTCP header and SSRC are 8" });
    expect(rtcpEvent("gIAAAQ==", "base64").summary).toBe(
      "RTCP report (binary, not decoded: too_short: 4 bytes, an RTCP header and SSRC are 8)",
    );
    // The stored text is kept when it cannot be read, so the readers skip it as before.
    expect(rtcpPayloadText("not json", undefined, ARRIVAL, 8000)).toBe("not json");
  });
});
