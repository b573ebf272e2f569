import { expect, test } from "bun:test";
import { SUMMARY_MAX, logSummary, rtcpEvent } from "./call-events.ts";

test("RTCP summary: type, jitter, loss as a percentage of the /256 fraction, lost packets, MOS", () => {
  const sr = rtcpEvent(JSON.stringify({ type: 200, ssrc: 1, report_blocks: [{ source_ssrc: 2, fraction_lost: 13, packets_lost: 4, ia_jitter: 31 }], mos: 4.1 }), undefined);
  expect(sr.summary).toBe("RTCP SR · jitter 31 · loss 5.1 % · 4 lost · MOS 4.10");
  expect(sr.qos).toEqual({ jitter: 31, fraction_lost: 13, loss_pct: 5.1, packets_lost: 4, mos: 4.1 });
  expect(rtcpEvent(JSON.stringify({ type: 201, report_blocks: [{ ia_jitter: 7 }] }), undefined).summary).toBe("RTCP RR · jitter 7");
  expect(rtcpEvent("gIAAAQ==", "base64")).toEqual({ summary: "RTCP report (binary, not decoded)", qos: null });
  expect(rtcpEvent("not json", undefined).qos).toBeNull();
});

test.each([
  ["plain text, whitespace folded", "  ERROR  dialog 4f2a:\n timed out  ", undefined, "ERROR dialog 4f2a: timed out"],
  ["a JSON log record's message", JSON.stringify({ level: "warn", message: "no ACK for 200 OK" }), undefined, "no ACK for 200 OK"],
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
