import { expect, test } from "bun:test";
import { cellText, eventClass, formatDelta, formatDuration, hostLabel, partialFileText, sipLabel } from "./format.ts";

test.each([
  ["INVITE", "ev-invite"],
  ["ack", "ev-ack"],
  ["BYE", "ev-bye"],
  ["CANCEL", "ev-bye"],
  ["REGISTER", "ev-register"],
  ["OPTIONS", "ev-other"],
  ["100", "ev-1xx"],
  ["200", "ev-2xx"],
  ["302", "ev-3xx"],
  ["486", "ev-4xx"],
  ["503", "ev-5xx"],
  ["603", "ev-5xx"],
])("eventClass(%s) = %s", (e, cls) => expect(eventClass(e)).toBe(cls));

test.each([
  ["SIP/2.0 486 Busy Here\r\nCSeq: 1 INVITE\r\n\r\n", "486", { label: "486 Busy Here", sdp: false }],
  ["INVITE sip:b@x SIP/2.0\r\nContent-Type: application/sdp\r\n\r\nv=0", "INVITE", { label: "INVITE", sdp: true }],
  ["INVITE sip:b@x SIP/2.0\r\nc: application/sdp\r\n\r\nv=0", "INVITE", { label: "INVITE", sdp: true }],
  ["garbage", "OPTIONS", { label: "OPTIONS", sdp: false }],
  ["", "200", { label: "200", sdp: false }],
])("sipLabel %#", (payload, fallback, want) => expect(sipLabel(payload, fallback)).toEqual(want));

test.each([
  [0.25, "+0.250 ms"],
  [12.34, "+12.3 ms"],
  [1204, "+1.204 s"],
  [185_000, "+3 min 05 s"],
  [-5, "-5.0 ms"],
])("formatDelta(%d)", (ms, s) => expect(formatDelta(ms)).toBe(s));

test.each([
  [850, "850 ms"],
  [4210, "4.2 s"],
  [62_000, "1:02"],
  [3_723_000, "1:02:03"],
])("formatDuration(%d)", (ms, s) => expect(formatDuration(ms)).toBe(s));

test("hostLabel and cellText", () => {
  expect(hostLabel("10.0.0.1", 5060, "pbx")).toBe("pbx (10.0.0.1:5060)");
  expect(hostLabel("10.0.0.1", null, null)).toBe("10.0.0.1");
  expect(cellText({ a: 1 })).toBe('{"a":1}');
  expect(cellText(null)).toBe("");
});

test("an exported file that misses a node warns, naming it; a whole file does not", () => {
  expect(partialFileText("dead failed (connection refused); slow timed out")).toBe(
    "Partial file: dead failed (connection refused); slow timed out. The messages of those nodes are missing.",
  );
  expect(partialFileText(null)).toBeUndefined();
  expect(partialFileText("")).toBeUndefined();
});
