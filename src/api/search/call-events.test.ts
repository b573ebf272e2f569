import { expect, test } from "bun:test";
import { mediaReportJson } from "../../loadgen/media-report.ts";
import { SUMMARY_MAX, logSummary, mediaReportEvent, rtcpEvent } from "./call-events.ts";

test("RTCP summary: type, jitter, loss as a percentage of the /256 fraction, lost packets, MOS", () => {
  const sr = rtcpEvent(
    JSON.stringify({
      type: 200,
      ssrc: 1,
      report_blocks: [{ source_ssrc: 2, fraction_lost: 13, packets_lost: 4, ia_jitter: 31 }],
      mos: 4.1,
    }),
    undefined,
  );
  expect(sr.summary).toBe("RTCP SR · jitter 31 · loss 5.1 % · 4 lost · MOS 4.10");
  expect(sr.qos).toEqual({ jitter: 31, fraction_lost: 13, loss_pct: 5.1, packets_lost: 4, mos: 4.1 });
  expect(rtcpEvent(JSON.stringify({ type: 201, report_blocks: [{ ia_jitter: 7 }] }), undefined).summary).toBe(
    "RTCP RR · jitter 7",
  );
  expect(rtcpEvent("gIAAAQ==", "base64")).toEqual({
    summary: "RTCP report (binary, not decoded: too_short: 4 bytes, an RTCP header and SSRC are 8)",
    qos: null,
  });
  expect(rtcpEvent("not json", undefined).qos).toBeNull();
});

test("media report summary (HEP 34): MOS, lost packets, jitter in ms; a synthetic report says so", () => {
  const agent = mediaReportEvent(
    JSON.stringify({ CORRELATION_ID: "c", MOS: 3.87, PACKET_LOSS: 12, packets_lost: 12, JITTER: 4.5 }),
    undefined,
  );
  expect(agent.summary).toBe("Media report · MOS 3.87 · 12 lost · jitter 4.5 ms");
  expect(agent.qos).toEqual({ jitter: 4.5, fraction_lost: null, loss_pct: null, packets_lost: 12, mos: 3.87 });
  // loadgen's report (docs/LOADGEN.md "Media and RTCP reports"): G.711, MOS 4.41 by the E-model.
  const codec = { pt: 0, name: "PCMU", clockRate: 8000, ptimeMs: 20, ie: 0 };
  const synthetic = mediaReportEvent(
    JSON.stringify(
      mediaReportJson(
        "c",
        { ip: "10.0.0.1", port: 6000 },
        { ip: "10.0.0.2", port: 6000 },
        0,
        codec,
        10_000,
        Date.now(),
      ),
    ),
    undefined,
  );
  expect(synthetic.summary).toBe("Media report (synthetic, no RTP measured) · MOS 4.41 · 0 lost · jitter 0 ms");
  expect(synthetic.qos).toMatchObject({ mos: 4.41, packets_lost: 0, jitter: 0, loss_pct: 0 });
  expect(mediaReportEvent("not json", undefined)).toEqual({
    summary: "Media report (not JSON, not decoded)",
    qos: null,
  });
});

test.each([
  ["plain text, whitespace folded", "  ERROR  dialog 4f2a:\n timed out  ", undefined, "ERROR dialog 4f2a: timed out"],
  [
    "a JSON log record's message",
    JSON.stringify({ level: "warn", message: "no ACK for 200 OK" }),
    undefined,
    "no ACK for 200 OK",
  ],
  ["JSON without a message member", JSON.stringify({ level: "warn", code: 7 }), undefined, '{"level":"warn","code":7}'],
  ["binary", "AAAA", "base64", "binary log payload (3 bytes)"],
  ["empty", "   ", undefined, "(empty log line)"],
])("log summary: %s", (_name, payload, encoding, summary) => {
  expect(logSummary(payload, encoding)).toBe(summary);
});

test("a long log line is clipped to SUMMARY_MAX characters with an ellipsis", () => {
  const s = logSummary("x".repeat(SUMMARY_MAX * 2), undefined);
  expect(s.length).toBe(SUMMARY_MAX);
  expect(s.endsWith("…")).toBe(true);
});
