import { describe, expect, test } from "bun:test";
import { callMedia, MEDIA_SPAN_SLACK_MS } from "./call-media.ts";

const sdp = (ip: string, ports: number[]) =>
  [
    "v=0",
    `o=- 1 1 IN IP4 ${ip}`,
    "s=-",
    `c=IN IP4 ${ip}`,
    "t=0 0",
    ...ports.flatMap((p) => [`m=audio ${p} RTP/AVP 0`, "a=rtpmap:0 PCMU/8000"]),
    "",
  ].join("\r\n");

function sip(startLine: string, callId: string, cseq: string, body = ""): string {
  const head = [
    startLine,
    "Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK-1",
    "From: <sip:a@x>;tag=f",
    "To: <sip:b@x>;tag=t",
    `Call-ID: ${callId}`,
    `CSeq: ${cseq}`,
  ];
  if (body) head.push("Content-Type: application/sdp");
  return [...head, `Content-Length: ${body.length}`, "", body].join("\r\n");
}

const at = (session_id: string, ms: number, payload: string) => ({ session_id, timestamp_us: ms * 1000, payload });
const SLACK_US = MEDIA_SPAN_SLACK_MS * 1000;
const pair = (a: string, b: string) => {
  const [ai = "", ap = ""] = a.split(":");
  const [bi = "", bp = ""] = b.split(":");
  return { src_ip: ai, src_port: Number(ap), dst_ip: bi, dst_port: Number(bp) };
};

describe('callMedia (docs/CALL-VIEW.md "Which reports belong to a call")', () => {
  test("offer and answer by m= index: RTP and RTCP pairs both ways; span from the answer to the BYE with slack", () => {
    const [m] = callMedia(
      [
        at("c1", 1_000, sip("INVITE sip:b@x SIP/2.0", "c1", "1 INVITE", sdp("10.0.0.1", [4000, 0]))),
        at("c1", 1_500, sip("SIP/2.0 200 OK", "c1", "1 INVITE", sdp("10.0.0.2", [5000, 0]))),
        at("c1", 9_000, sip("BYE sip:b@x SIP/2.0", "c1", "2 BYE")),
      ],
      ["c1"],
      60_000_000,
    );
    // The second m= line was declined (port 0): no pair.
    expect(m).toEqual({
      call_id: "c1",
      span: { from_us: 1_500_000 - SLACK_US, to_us: 9_000_000 + SLACK_US },
      pairs: [
        pair("10.0.0.1:4000", "10.0.0.2:5000"),
        pair("10.0.0.2:5000", "10.0.0.1:4000"),
        pair("10.0.0.1:4001", "10.0.0.2:5001"),
        pair("10.0.0.2:5001", "10.0.0.1:4001"),
      ],
    });
  });

  test("late offer (200 offers, ACK answers); without BYE the window end; no answer: no span and no pairs", () => {
    const [late, unanswered, failed] = callMedia(
      [
        at("late", 0, sip("INVITE sip:b@x SIP/2.0", "late", "1 INVITE")),
        at("late", 400, sip("SIP/2.0 200 OK", "late", "1 INVITE", sdp("10.0.0.2", [5000]))),
        at("late", 450, sip("ACK sip:b@x SIP/2.0", "late", "1 ACK", sdp("10.0.0.1", [4000]))),
        at("none", 0, sip("INVITE sip:b@x SIP/2.0", "none", "1 INVITE", sdp("10.0.0.1", [4100]))),
        at("none", 300, sip("SIP/2.0 486 Busy Here", "none", "1 INVITE")),
        at("early", 0, sip("INVITE sip:b@x SIP/2.0", "early", "1 INVITE", sdp("10.0.0.1", [4200]))),
        at("early", 200, sip("SIP/2.0 183 Session Progress", "early", "1 INVITE", sdp("10.0.0.3", [7000]))),
        at("early", 3_000, sip("SIP/2.0 486 Busy Here", "early", "1 INVITE")),
      ],
      ["late", "none", "early"],
      60_000_000,
    );
    expect(late!.span).toEqual({ from_us: 450_000 - SLACK_US, to_us: 60_000_000 + SLACK_US });
    expect(late!.pairs[0]).toEqual(pair("10.0.0.1:4000", "10.0.0.2:5000"));
    expect(unanswered).toEqual({ call_id: "none", span: null, pairs: [] });
    // Early media ends with the final failure response.
    expect(failed!.span).toEqual({ from_us: 200_000 - SLACK_US, to_us: 3_000_000 + SLACK_US });
    expect(failed!.pairs[0]).toEqual(pair("10.0.0.1:4200", "10.0.0.3:7000"));
  });
});
