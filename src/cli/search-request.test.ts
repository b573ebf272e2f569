import { describe, expect, test } from "bun:test";
import { buildSearchBody, type SearchFilters } from "./search-request.ts";

const q = (proto: number, filters: SearchFilters, eventType = proto === 1 ? "call" : "default") =>
  buildSearchBody({ proto, eventType, fromMs: 1000, toMs: 2000, limit: 50, filters });

describe("search body", () => {
  test("SIP flags map to the coordinator's field ids, values passed through (; and % are server rules)", () => {
    const r = q(1, {
      callId: "a@x;b%",
      fromUser: "110;112",
      toUser: "2002",
      method: "invite",
      srcIp: "10.0.0.1",
      dstIp: "10.0.0.2",
      node: "edge-7",
      userAgent: "Polycom",
      payload: "Busy",
    });
    expect(r.ignored).toEqual([]);
    expect(r.body).toEqual({
      filter: {
        proto_type: 1,
        event_type: "call",
        call_id: "a@x;b%",
        from_user: "110;112",
        to_user: "2002",
        method: "INVITE",
        src_ip: "10.0.0.1",
        dst_ip: "10.0.0.2",
        node: "edge-7",
        user_agent: "Polycom",
        payload: "Busy",
      },
      param: { limit: 50 },
      timestamp: { from: 1000, to: 2000 },
    });
  });

  // docs/CLI.md "Generic filter mapping for OTLP", one row per flag and table.
  test.each([
    [200, { callId: "4bf92f3577b34da6" }, { trace_id: "4bf92f3577b34da6" }],
    [201, { callId: "http.server" }, { name: "%http.server%" }],
    [202, { callId: "4bf92f3577b34da6" }, { trace_id: "4bf92f3577b34da6" }],
    [200, { payload: "GET" }, { name: "%GET%", raw: "%GET%" }],
    [201, { payload: "cpu" }, { name: "%cpu%", raw: "%cpu%" }],
    [202, { payload: "timeout" }, { body: "%timeout%", raw: "%timeout%" }],
    [200, { userAgent: "checkout" }, { service_name: "%checkout%" }],
    [201, { userAgent: "checkout" }, { service_name: "%checkout%" }],
    [202, { userAgent: "check%" }, { service_name: "check%" }],
    [201, { callId: "http%", payload: "x" }, { name: "http%", raw: "%x%" }],
  ] as Array<[number, SearchFilters, Record<string, string>]>)("OTLP proto %p %p → %p", (proto, filters, expected) => {
    const r = q(proto, filters);
    expect(r.body.filter).toEqual({ proto_type: proto, event_type: "default", ...expected });
    expect(r.ignored).toEqual([]);
  });

  test("SIP-only flags are ignored for OTLP and named", () => {
    const r = q(202, { method: "INVITE", fromUser: "a", toUser: "b", srcIp: "1.1.1.1", dstIp: "2.2.2.2", node: "n" });
    expect(r.body.filter).toEqual({ proto_type: 202, event_type: "default" });
    // In the flag table's order (the order of `svc search --help`).
    expect(r.ignored).toEqual(["--method", "--from-user", "--to-user", "--src-ip", "--dst-ip", "--node"]);
  });

  test("line protocol takes only the payload substring", () => {
    const r = q(300, { payload: "host=a", callId: "x", method: "BYE" }, "telegraf__cpu");
    expect(r.body.filter).toEqual({ proto_type: 300, event_type: "telegraf__cpu", payload: "host=a" });
    expect(r.ignored).toEqual(["--method", "--call-id"]);
  });

  test("other HEP types keep the HEP field ids", () => {
    expect(q(5, { callId: "abc", srcIp: "10.0.0.1" }).body.filter).toEqual({
      proto_type: 5,
      event_type: "default",
      call_id: "abc",
      src_ip: "10.0.0.1",
    });
  });
});
