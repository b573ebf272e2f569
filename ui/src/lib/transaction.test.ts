import { describe, expect, test } from "bun:test";
import { callSummary, sdpCodecs, type TxMessage } from "./transaction.ts";

const SDP = (port: number, formats: string, maps: string[]) =>
  ["v=0", "o=- 1 1 IN IP4 10.0.0.1", "s=-", "c=IN IP4 10.0.0.1", "t=0 0", `m=audio ${port} RTP/AVP ${formats}`, ...maps.map((m) => `a=rtpmap:${m}`), ""].join("\r\n");

let seq = 0;
function msg(event: string, ms: number, src: string, dst: string, extra: Partial<TxMessage> & { body?: string; cseq?: string } = {}): TxMessage {
  const start = /^\d{3}$/.test(event) ? `SIP/2.0 ${event} ${({ "100": "Trying", "180": "Ringing", "200": "OK", "486": "Busy Here", "487": "Request Terminated" } as Record<string, string>)[event] ?? "X"}` : `${event} sip:b@x SIP/2.0`;
  const cseq = extra.cseq ?? (/^\d{3}$/.test(event) ? "1 INVITE" : `1 ${event}`);
  const headers = [start, "Call-ID: c1", `CSeq: ${cseq}`, ...(extra.body ? ["Content-Type: application/sdp"] : []), `Content-Length: ${extra.body?.length ?? 0}`, "", extra.body ?? ""];
  return { uuid: `u${++seq}`, timestamp_us: ms * 1000, session_id: "c1", src_ip: src, dst_ip: dst, src_port: 5060, dst_port: 5060, event, payload: headers.join("\r\n"), caller: "alice", callee: "bob", ...extra };
}

test.each([
  [SDP(4000, "0 8 101", ["0 PCMU/8000", "8 PCMA/8000", "101 telephone-event/8000"]), ["PCMU", "PCMA", "telephone-event"]],
  [SDP(4000, "18 0", []), ["G729", "PCMU"]],
  [SDP(4000, "96", ["96 opus/48000/2"]), ["opus"]],
  ["INVITE sip:x SIP/2.0\r\nContent-Length: 0\r\n\r\n", []],
])("sdpCodecs %#", (payload, codecs) => expect(sdpCodecs("INVITE sip:x SIP/2.0\r\nContent-Type: application/sdp\r\n\r\n" + payload.replace(/^INVITE[\s\S]*\r\n\r\n/, ""))).toEqual(codecs));

describe("callSummary", () => {
  test("answered and hung up: completed, ringing, setup delay, duration, codecs, user agents", () => {
    const s = callSummary([
      msg("INVITE", 0, "A", "B", { body: SDP(4000, "0 8", ["0 PCMU/8000", "8 PCMA/8000"]) }),
      msg("180", 400, "B", "A"),
      msg("200", 4200, "B", "A", { body: SDP(5000, "8", ["8 PCMA/8000"]) }),
      msg("ACK", 4230, "A", "B"),
      msg("BYE", 64200, "A", "B"),
      msg("200", 64220, "B", "A", { cseq: "2 BYE" }),
    ]);
    expect(s).toMatchObject({ status: "Completed", tone: "ok", ringingMs: 400, setupMs: 4200, durationMs: 60000, finalResponse: "200 OK", messages: 6 });
    expect(s.offeredCodecs).toEqual(["PCMU", "PCMA"]);
    expect(s.answeredCodecs).toEqual(["PCMA"]);
    expect(s.callIds).toEqual(["c1"]);
  });

  test("busy, cancelled, no answer, and a non-INVITE transaction", () => {
    expect(callSummary([msg("INVITE", 0, "A", "B"), msg("486", 300, "B", "A")])).toMatchObject({ status: "Busy (486 Busy Here)", tone: "failed", durationMs: null });
    expect(callSummary([msg("INVITE", 0, "A", "B"), msg("CANCEL", 300, "A", "B"), msg("487", 310, "B", "A")]).status).toBe("Cancelled");
    expect(callSummary([msg("INVITE", 0, "A", "B"), msg("180", 300, "B", "A")])).toMatchObject({ status: "Ringing, no final answer", tone: "progress", setupMs: null });
    expect(callSummary([msg("REGISTER", 0, "A", "B"), msg("200", 30, "B", "A", { cseq: "1 REGISTER" })])).toMatchObject({ status: "REGISTER: 200 OK", tone: "ok" });
  });

  test("a 200 to the BYE is not the INVITE's answer", () => {
    const s = callSummary([msg("INVITE", 0, "A", "B"), msg("BYE", 100, "A", "B"), msg("200", 120, "B", "A", { cseq: "2 BYE" })]);
    expect(s.finalResponse).toBeNull();
  });
});
