import { describe, expect, test } from "bun:test";
import { decodeSipMessage, type DecodedSip } from "./decoded.ts";
import { canonicalHeaderName } from "./headers.ts";

const enc = new TextEncoder();
const sip = (...lines: string[]): Uint8Array => enc.encode(lines.join("\r\n"));

const SDP = "v=0\r\no=- 9 9 IN IP4 192.0.2.5\r\ns=-\r\nc=IN IP4 192.0.2.5\r\nt=0 0\r\nm=audio 7078 RTP/AVP 0\r\n";

describe("decodeSipMessage", () => {
  test("request with compact and lower-case names, folding and SDP", () => {
    const d = decodeSipMessage(
      sip(
        "INVITE sip:bob@example.com SIP/2.0",
        "v: SIP/2.0/UDP 192.0.2.5:5060;branch=z9hG4bK-d1",
        'f: "Al" <sip:al@example.com>;tag=1',
        "t: <sip:bob@example.com>",
        "i: dec-1@192.0.2.5",
        "cseq: 1 INVITE",
        "Subject: lunch",
        "  today?",
        "x-Custom-Thing: 42",
        "c: application/sdp",
        `l: ${SDP.length}`,
        "",
        SDP,
      ),
    );
    expect(d).toMatchObject({
      firstLine: "INVITE sip:bob@example.com SIP/2.0",
      kind: "request",
      method: "INVITE",
      requestUri: "sip:bob@example.com",
      body: SDP,
      bodyLength: SDP.length,
    });
    expect(d.statusCode).toBeUndefined();
    expect(d.error).toBeUndefined();
    expect(d.headers).toEqual([
      { name: "Via", rawName: "v", value: "SIP/2.0/UDP 192.0.2.5:5060;branch=z9hG4bK-d1" },
      { name: "From", rawName: "f", value: '"Al" <sip:al@example.com>;tag=1' },
      { name: "To", rawName: "t", value: "<sip:bob@example.com>" },
      { name: "Call-ID", rawName: "i", value: "dec-1@192.0.2.5" },
      { name: "CSeq", rawName: "cseq", value: "1 INVITE" },
      { name: "Subject", rawName: "Subject", value: "lunch today?" },
      { name: "x-Custom-Thing", rawName: "x-Custom-Thing", value: "42" },
      { name: "Content-Type", rawName: "c", value: "application/sdp" },
      { name: "Content-Length", rawName: "l", value: String(SDP.length) },
    ]);
    expect(d.sdp?.media[0]).toMatchObject({ type: "audio", port: 7078, address: "192.0.2.5" });
    expect(d.fields).toMatchObject({ callId: "dec-1@192.0.2.5", cseq: 1, from: { displayName: "Al", tag: "1" } });
  });

  test("response: status parts, no SDP for a non-SDP body", () => {
    const d = decodeSipMessage(
      sip(
        "SIP/2.0 404 Not Found",
        "Call-ID: r1",
        "CSeq: 3 OPTIONS",
        "Content-Type: text/plain",
        "Content-Length: 4",
        "",
        "nope",
      ),
    );
    expect(d).toMatchObject({
      kind: "response",
      statusCode: 404,
      reasonPhrase: "Not Found",
      body: "nope",
      bodyLength: 4,
    });
    expect(d.method).toBeUndefined();
    expect(d.sdp).toBeUndefined();
  });

  const failures: [string, Uint8Array, Partial<DecodedSip>][] = [
    ["empty payload", new Uint8Array(0), { error: "empty", kind: "unknown", firstLine: "", headers: [] }],
    [
      "not SIP",
      enc.encode("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n"),
      { error: "not_sip", kind: "unknown", firstLine: "HTTP/1.1 200 OK", headers: [] },
    ],
    [
      "missing Call-ID still lists the headers",
      sip("OPTIONS sip:a@b SIP/2.0", "CSeq: 1 OPTIONS", "Max-Forwards: 70", "", ""),
      {
        error: "missing_call_id",
        kind: "request",
        method: "OPTIONS",
        headers: [
          { name: "CSeq", rawName: "CSeq", value: "1 OPTIONS" },
          { name: "Max-Forwards", rawName: "Max-Forwards", value: "70" },
        ],
      },
    ],
    [
      "truncated capture (after a keep-alive CRLF) shows what arrived",
      enc.encode("\r\nSIP/2.0 200 OK\r\nCall-ID: t1\r\nCSeq: 1 INV"),
      {
        error: "no_header_end",
        kind: "response",
        statusCode: 200,
        headers: [
          { name: "Call-ID", rawName: "Call-ID", value: "t1" },
          { name: "CSeq", rawName: "CSeq", value: "1 INV" },
        ],
        body: "",
      },
    ],
    [
      "malformed line kept with an empty name",
      sip("OPTIONS sip:a@b SIP/2.0", "Call-ID: m1", "garbage line", "CSeq: 1 OPTIONS", "", ""),
      {
        headers: [
          { name: "Call-ID", rawName: "Call-ID", value: "m1" },
          { name: "", rawName: "", value: "garbage line" },
          { name: "CSeq", rawName: "CSeq", value: "1 OPTIONS" },
        ],
      },
    ],
  ];
  test.each(failures)("%s", (_name, payload, expected) => {
    const d = decodeSipMessage(payload);
    expect(d).toMatchObject(expected);
    if (expected.error !== undefined) expect(d.fields).toBeUndefined();
  });

  test("survives a JSON round trip unchanged (JSON-friendly)", () => {
    const d = decodeSipMessage(
      sip("INVITE sip:b@x SIP/2.0", "Call-ID: j1", "CSeq: 1 INVITE", "Content-Type: application/sdp", "", SDP),
    );
    const json: unknown = JSON.parse(JSON.stringify(d));
    // undefined members vanish in JSON; everything else comes back as it was.
    expect(json).toMatchObject({ headers: d.headers, body: SDP, kind: "request" });
    expect(json).toHaveProperty("sdp.media.0.codecs", [{ payloadType: 0, name: "PCMU", clockRate: 8000 }]);
  });

  test("invalid UTF-8 in the body becomes U+FFFD instead of throwing", () => {
    const head = enc.encode("MESSAGE sip:b@x SIP/2.0\r\nCall-ID: u1\r\nCSeq: 1 MESSAGE\r\n\r\n");
    const payload = new Uint8Array([...head, 0x61, 0xff, 0x62]);
    expect(decodeSipMessage(payload).body).toBe("a\uFFFDb");
  });
});

describe("canonicalHeaderName", () => {
  test.each([
    ["i", "Call-ID"],
    ["I", "Call-ID"],
    ["call-id", "Call-ID"],
    ["CSEQ", "CSeq"],
    ["www-authenticate", "WWW-Authenticate"],
    ["k", "Supported"],
    ["o", "Event"],
    ["x", "Session-Expires"],
    ["y", "Identity"],
    ["b", "Referred-By"],
    ["r", "Refer-To"],
    ["u", "Allow-Events"],
    ["X-Unknown", "X-Unknown"],
    ["q", "q"],
  ])("%s → %s", (raw, canonical) => {
    expect(canonicalHeaderName(raw)).toBe(canonical);
  });
});
