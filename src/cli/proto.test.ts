import { describe, expect, test } from "bun:test";
import { checkEventType, defaultEventType, parseProto, protoName } from "./proto.ts";

describe("--proto", () => {
  test.each([
    ["sip", 1],
    ["SIP", 1],
    ["rtcp", 5],
    ["rtp", 34],
    ["dns", 35],
    ["log", 100],
    ["otlp_traces", 200],
    ["OTLP-Traces", 200],
    ["otlp traces", 200],
    ["otlptraces", 200],
    ["otlp_metrics", 201],
    ["Otlp-Logs", 202],
    ["lp", 300],
    ["1", 1],
    ["5", 5],
    ["65535", 65535],
  ])("%p → %p", (text, n) => expect(parseProto(text)).toBe(n));

  test.each(["", "http", "65536", "-1", "1.5", "otlp"])("%p is refused", (text) =>
    expect(parseProto(text)).toBeUndefined(),
  );

  test("names and default event types", () => {
    expect([protoName(1), protoName(201), protoName(7)]).toEqual(["sip", "otlp_metrics", "7"]);
    expect([defaultEventType(1), defaultEventType(5), defaultEventType(200), defaultEventType(300)]).toEqual([
      "call",
      "default",
      "default",
      undefined,
    ]);
  });

  test.each([
    [1, "call", true],
    [1, "registration", true],
    [1, "default", true],
    [1, "calls", false],
    [5, "default", true],
    [5, "call", false],
    [300, "telegraf__cpu", true],
    [300, "cpu", false],
    [202, "default", true],
  ])("event type for proto %p: %p valid %p", (proto, ev, valid) =>
    expect(checkEventType(proto, ev) === undefined).toBe(valid),
  );
});
