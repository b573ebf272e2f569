import { describe, expect, test } from "bun:test";
import { liveFilter } from "./live-filter.ts";
import type { LiveFrame } from "./live-stream.ts";

const sip = (o: Partial<NonNullable<LiveFrame["sip"]>> & Partial<LiveFrame> = {}): LiveFrame => ({
  ts: 1,
  proto: 1,
  src_ip: o.src_ip ?? "10.0.0.1",
  src_port: o.src_port ?? 5060,
  dst_ip: o.dst_ip ?? "10.0.0.2",
  dst_port: o.dst_port ?? 5060,
  sip: {
    method: o.method ?? "INVITE",
    resp_code: o.resp_code ?? "",
    resp_text: "",
    callid: o.callid ?? "c1@pbx",
    cseq: o.cseq ?? "1 INVITE",
    from_user: o.from_user ?? "1001",
    to_user: o.to_user ?? "2002",
  },
});

describe("liveFilter: the search form's filters on the live view", () => {
  test("method and Call-ID go to the stream; a method matches requests only, as in a search", () => {
    const f = liveFilter(1, { proto_type: 1, event_type: "call", method: "INVITE", call_id: "a@x;b@x" });
    expect(f.query).toBe("proto=1&method=INVITE&callid=a%40x&callid=b%40x");
    expect(f.match(sip({ callid: "a@x" }))).toBe(true);
    expect(f.match(sip({ callid: "a@x", resp_code: "200", method: "INVITE" }))).toBe(false);
    expect(f.match(sip({ callid: "c@x" }))).toBe(false);
    expect(f.applied).toEqual(["method INVITE", "Call-ID a@x, b@x"]);
    expect(f.notApplied).toEqual([]);
  });

  test("users (exact or % patterns), addresses, ports, status and CSeq method are matched on the frame", () => {
    const f = liveFilter(1, {
      from_user: "10%",
      to_user: "2002",
      src_ip: "10.0.0.1",
      dst_port: "5060",
      response_codes: "486;600",
      cseq_method: "invite",
    });
    expect(f.query).toBe("proto=1");
    const busy = sip({ from_user: "1001", resp_code: "486", cseq: "1 INVITE" });
    expect(f.match(busy)).toBe(true);
    expect(f.match({ ...busy, sip: { ...busy.sip!, from_user: "2001" } })).toBe(false);
    expect(f.match({ ...busy, src_ip: "10.0.0.9" })).toBe(false);
    expect(f.match({ ...busy, sip: { ...busy.sip!, resp_code: "200" } })).toBe(false);
    expect(f.match({ ...busy, sip: { ...busy.sip!, cseq: "2 BYE" } })).toBe(false);
    expect(f.applied).toEqual([
      "from user 10%",
      "to user 2002",
      "source IP 10.0.0.1",
      "destination port 5060",
      "status 486, 600",
      "CSeq method INVITE",
    ]);
  });

  test("what a frame cannot answer is named, never dropped silently; empty controls are no filter", () => {
    const f = liveFilter(1, {
      user_agent: "Polycom",
      payload: "",
      virtual: { from_tag: "abc", to_tag: "" },
      method: [],
    });
    expect(f.notApplied).toEqual(["user_agent", "from_tag"]);
    expect(f.applied).toEqual([]);
    expect(f.match(sip())).toBe(true);
  });

  test("a method the stream does not know is matched here only; other protocols get address filters only", () => {
    expect(liveFilter(1, { method: "FOO" }).query).toBe("proto=1");
    expect(liveFilter(1, { method: "FOO" }).match(sip({ method: "FOO" }))).toBe(true);
    const rtcp = liveFilter(5, { src_ip: "10.0.0.1", from_user: "1001" });
    expect([rtcp.query, rtcp.applied, rtcp.notApplied]).toEqual(["proto=5", ["source IP 10.0.0.1"], ["from_user"]]);
    expect(rtcp.match({ ts: 1, proto: 5, src_ip: "10.0.0.1" })).toBe(true);
  });
});
