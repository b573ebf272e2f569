import { describe, expect, test } from "bun:test";
import { callSummary, sdpCodecs, summariesByCallId, type TxMessage } from "./transaction.ts";

const SDP = (port: number, formats: string, maps: string[]) =>
  [
    "v=0",
    "o=- 1 1 IN IP4 10.0.0.1",
    "s=-",
    "c=IN IP4 10.0.0.1",
    "t=0 0",
    `m=audio ${port} RTP/AVP ${formats}`,
    ...maps.map((m) => `a=rtpmap:${m}`),
    "",
  ].join("\r\n");

let seq = 0;
function msg(
  event: string,
  ms: number,
  src: string,
  dst: string,
  extra: Partial<TxMessage> & { body?: string; cseq?: string } = {},
): TxMessage {
  const start = /^\d{3}$/.test(event)
    ? `SIP/2.0 ${event} ${({ "100": "Trying", "180": "Ringing", "200": "OK", "486": "Busy Here", "487": "Request Terminated" } as Record<string, string>)[event] ?? "X"}`
    : `${event} sip:b@x SIP/2.0`;
  const cseq = extra.cseq ?? (/^\d{3}$/.test(event) ? "1 INVITE" : `1 ${event}`);
  const headers = [
    start,
    "Call-ID: c1",
    `CSeq: ${cseq}`,
    ...(extra.body ? ["Content-Type: application/sdp"] : []),
    `Content-Length: ${extra.body?.length ?? 0}`,
    "",
    extra.body ?? "",
  ];
  return {
    uuid: `u${++seq}`,
    timestamp_us: ms * 1000,
    session_id: "c1",
    src_ip: src,
    dst_ip: dst,
    src_port: 5060,
    dst_port: 5060,
    event,
    method: null,
    response_code: null,
    cseq_method: null,
    proto_type: 1,
    node_id: null,
    payload: headers.join("\r\n"),
    caller: "alice",
    callee: "bob",
    ...extra,
  };
}

test.each([
  [
    SDP(4000, "0 8 101", ["0 PCMU/8000", "8 PCMA/8000", "101 telephone-event/8000"]),
    ["PCMU", "PCMA", "telephone-event"],
  ],
  [SDP(4000, "18 0", []), ["G729", "PCMU"]],
  [SDP(4000, "96", ["96 opus/48000/2"]), ["opus"]],
  ["INVITE sip:x SIP/2.0\r\nContent-Length: 0\r\n\r\n", []],
])("sdpCodecs %#", (payload, codecs) =>
  expect(
    sdpCodecs(
      "INVITE sip:x SIP/2.0\r\nContent-Type: application/sdp\r\n\r\n" + payload.replace(/^INVITE[\s\S]*\r\n\r\n/, ""),
    ),
  ).toEqual(codecs),
);

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
    expect(s).toMatchObject({
      status: "Completed",
      tone: "ok",
      ringingMs: 400,
      setupMs: 4200,
      durationMs: 60000,
      finalResponse: "200 OK",
      messages: 6,
    });
    expect(s.offeredCodecs).toEqual(["PCMU", "PCMA"]);
    expect(s.answeredCodecs).toEqual(["PCMA"]);
    expect(s.callIds).toEqual(["c1"]);
  });

  test("busy, cancelled, no answer, and a non-INVITE transaction", () => {
    expect(callSummary([msg("INVITE", 0, "A", "B"), msg("486", 300, "B", "A")])).toMatchObject({
      status: "Busy (486 Busy Here)",
      tone: "failed",
      durationMs: null,
    });
    expect(
      callSummary([msg("INVITE", 0, "A", "B"), msg("CANCEL", 300, "A", "B"), msg("487", 310, "B", "A")]).status,
    ).toBe("Cancelled");
    expect(callSummary([msg("INVITE", 0, "A", "B"), msg("180", 300, "B", "A")])).toMatchObject({
      status: "Ringing, no final answer",
      tone: "progress",
      setupMs: null,
    });
    expect(callSummary([msg("REGISTER", 0, "A", "B"), msg("200", 30, "B", "A", { cseq: "1 REGISTER" })])).toMatchObject(
      { status: "REGISTER: 200 OK", tone: "ok" },
    );
  });

  test("a 200 to the BYE is not the INVITE's answer", () => {
    const s = callSummary([
      msg("INVITE", 0, "A", "B"),
      msg("BYE", 100, "A", "B"),
      msg("200", 120, "B", "A", { cseq: "2 BYE" }),
    ]);
    expect(s.finalResponse).toBeNull();
  });
});

describe("summariesByCallId", () => {
  test("two calls in one view: each summarised on its own, in order of first message", () => {
    // The busy call starts later but its INVITE is not the first: the answered call's is.
    const answered = [
      msg("INVITE", 0, "A", "P"),
      msg("200", 3000, "P", "A"),
      msg("ACK", 3020, "A", "P"),
      msg("BYE", 9000, "A", "P"),
      msg("200", 9030, "P", "A", { cseq: "2 BYE" }),
    ].map((m) => ({
      ...m,
      session_id: "answered",
    }));
    const busy = [
      msg("INVITE", 1000, "B", "P"),
      msg("486", 1900, "P", "B"),
      msg("ACK", 1920, "B", "P", { cseq: "1 ACK" }),
    ].map((m) => ({ ...m, session_id: "busy", caller: "1001", callee: "3003" }));
    const all = [...answered, ...busy].sort((x, y) => x.timestamp_us - y.timestamp_us);
    const out = summariesByCallId(all);
    expect(out.map((s) => [s.callId, s.leg, s.summary.status, s.summary.messages])).toEqual([
      ["answered", 0, "Completed", 5],
      ["busy", 1, "Busy (486 Busy Here)", 3],
    ]);
    expect(out[1]!.summary).toMatchObject({
      caller: "1001",
      callee: "3003",
      setupMs: 900,
      firstMs: 1000,
      durationMs: null,
    });
    expect(out[0]!.summary).toMatchObject({ setupMs: 3000, durationMs: 6000 });
    // The whole view as one call would read the busy call as answered.
    expect(callSummary(all).status).toBe("Completed");
  });
});
