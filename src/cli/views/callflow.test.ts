import { describe, expect, test } from "bun:test";
import { buildCallFlow, messageLabel, renderCallFlow } from "./callflow.ts";

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0) * 1000;
const sdp = "INVITE sip:bob@b SIP/2.0\r\nContent-Type: application/sdp\r\n\r\nv=0\r\n";
const msg = (i: number, src: string, dst: string, o: Record<string, unknown>) => ({
  timestamp_us: T0 + i * 1000,
  src_ip: src.split(":")[0],
  src_port: Number(src.split(":")[1]),
  dst_ip: dst.split(":")[0],
  dst_port: Number(dst.split(":")[1]),
  session_id: "call-1@a",
  ...o,
});
const A = "10.0.0.1:5060";
const B = "10.0.0.2:5080";
const C = "10.0.0.3:5060";

describe("callflow", () => {
  test.each([
    [{ method: "INVITE", payload: sdp }, "INVITE (SDP)"],
    [{ method: "BYE", payload: "BYE sip:a SIP/2.0\r\n\r\n" }, "BYE"],
    [{ response_code: 180, payload: "SIP/2.0 180 Ringing\r\n\r\n" }, "180 Ringing"],
    [{ response_code: 200, cseq_method: "INVITE", payload: "" }, "200 INVITE"],
    [{ event: "OPTIONS", payload: null }, "OPTIONS"],
    [{ payload: "ACK sip:b SIP/2.0\r\n\r\n" }, "ACK"],
  ])("label of %p is %p", (row, label) => expect(messageLabel(row)).toBe(label));

  test("capture order whatever the input order; endpoints in order of first appearance", () => {
    const rows = [
      msg(3, B, A, { response_code: 200, payload: "SIP/2.0 200 OK\r\n\r\n", dst_alias: "pbx-a" }),
      msg(1, B, A, { response_code: 100, payload: "SIP/2.0 100 Trying\r\n\r\n" }),
      msg(0, A, B, { method: "INVITE", payload: sdp, src_alias: "pbx-a" }),
      msg(2, B, C, { method: "INVITE", session_id: "call-1@a_b2b" }),
    ];
    const flow = buildCallFlow(rows);
    expect(flow.endpoints).toEqual([{ key: A, alias: "pbx-a" }, { key: B }, { key: C }]);
    expect(flow.messages.map((m) => `${m.from}->${m.to} ${m.label}`)).toEqual([
      "0->1 INVITE (SDP)",
      "1->0 100 Trying",
      "1->2 INVITE",
      "1->0 200 OK",
    ]);
    expect(flow.callIds).toEqual(["call-1@a", "call-1@a_b2b"]);

    const out = renderCallFlow(flow);
    expect(out[0]).toBe("Call flow (UTC, 2024-05-01)");
    expect(out[2]).toContain(A);
    expect(out[3]).toContain("(pbx-a)");
    const arrows = out.filter((l) => /^\d\d:\d\d:\d\d\.\d{6}/.test(l));
    expect(arrows.map((l) => l.slice(0, 15))).toEqual([
      "12:00:00.000000",
      "12:00:00.001000",
      "12:00:00.002000",
      "12:00:00.003000",
    ]);
    // Direction: the head points at the receiver's lifeline.
    const [invite, trying, leg2] = arrows;
    expect(invite).toMatch(/│─+ INVITE \(SDP\) \[1\] ─+>│/);
    expect(trying).toMatch(/│<─+ 100 Trying \[1\] ─+│/);
    expect(leg2).toMatch(/│ +│─+ INVITE \[2\] ─+>│/);
    // Arrow ends sit on the lifelines of the header's endpoint columns.
    const centre = (label: string) => out[2]!.indexOf(label) + Math.floor(label.length / 2);
    expect(invite!.indexOf("│")).toBe(centre(A));
    expect(invite!.indexOf("│", centre(A) + 1)).toBe(centre(B));
    expect(leg2!.lastIndexOf("│")).toBe(centre(C));
    expect(out.at(-2)).toBe("4 messages, 3 endpoints");
    expect(out.at(-1)).toBe("Call-IDs: [1] call-1@a, [2] call-1@a_b2b");
  });

  test("one call: no call tags; a message to itself; IPv6 endpoints in brackets; ties in time by uuid", () => {
    const rows = [
      { ...msg(0, A, A, { method: "OPTIONS" }), uuid: "0002" },
      { ...msg(0, A, A, { method: "MESSAGE", src_ip: "2001:db8::1", src_port: 5060 }), uuid: "0001" },
    ];
    const out = renderCallFlow(buildCallFlow(rows));
    expect(out[2]).toContain("[2001:db8::1]:5060");
    const lines = out.filter((l) => l.includes("MESSAGE") || l.includes("OPTIONS") || l.includes("┘"));
    expect(lines[0]).toContain(" MESSAGE ");
    expect(lines[0]).not.toContain("[1]");
    expect(lines[1]).toContain("──┐ OPTIONS");
    expect(lines[2]).toContain("<─┘");
    expect(out.at(-2)).toBe("2 messages, 2 endpoints");
    expect(out.at(-1)).toBe("Call-IDs: call-1@a");
  });

  test("no rows: the count line says so", () => {
    expect(renderCallFlow(buildCallFlow([])).slice(-2)).toEqual(["0 messages, 0 endpoints", "Call-IDs: (none)"]);
  });
});
