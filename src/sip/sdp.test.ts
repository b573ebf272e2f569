import { describe, expect, test } from "bun:test";
import { parseSip } from "./parse.ts";
import { findSdpBody, parseSdp, sipBody, sipSdp, type SdpInfo, type SdpMedia } from "./sdp.ts";

const enc = new TextEncoder();
const crlf = (...lines: string[]): string => lines.join("\r\n");

const media = (m: Partial<SdpMedia>): SdpMedia => ({
  type: "audio",
  port: 0,
  portCount: undefined,
  proto: "RTP/AVP",
  formats: [],
  connection: undefined,
  address: undefined,
  rtcpPort: undefined,
  rtcpAddress: undefined,
  codecs: [],
  direction: "sendrecv",
  ...m,
});

const cases: [string, string | Uint8Array, SdpInfo][] = [
  [
    "audio offer: static and dynamic payload types, session c=, a=rtcp",
    crlf(
      "v=0",
      "o=alice 2890844526 2890844527 IN IP4 198.51.100.7",
      "s=Talk",
      "c=IN IP4 198.51.100.7",
      "t=0 0",
      "m=audio 49170 RTP/AVP 0 8 18 101",
      "a=rtpmap:101 telephone-event/8000",
      "a=fmtp:101 0-16",
      "a=rtcp:49171",
      "a=ptime:20",
      "",
    ),
    {
      version: 0,
      origin: {
        username: "alice",
        sessionId: "2890844526",
        sessionVersion: "2890844527",
        netType: "IN",
        addrType: "IP4",
        address: "198.51.100.7",
      },
      sessionName: "Talk",
      connection: { netType: "IN", addrType: "IP4", address: "198.51.100.7" },
      direction: undefined,
      media: [
        media({
          port: 49170,
          formats: ["0", "8", "18", "101"],
          address: "198.51.100.7",
          rtcpPort: 49171,
          codecs: [
            { payloadType: 0, name: "PCMU", clockRate: 8000, channels: undefined },
            { payloadType: 8, name: "PCMA", clockRate: 8000, channels: undefined },
            { payloadType: 18, name: "G729", clockRate: 8000, channels: undefined },
            { payloadType: 101, name: "telephone-event", clockRate: 8000, channels: undefined },
          ],
        }),
      ],
    },
  ],
  [
    "media c= overrides session c=; session direction inherited; own direction wins",
    crlf(
      "v=0",
      "o=- 1 1 IN IP4 203.0.113.1",
      "s=-",
      "c=IN IP4 203.0.113.1",
      "t=0 0",
      "a=recvonly",
      "m=audio 4000 RTP/AVP 96",
      "c=IN IP4 203.0.113.50",
      "a=rtpmap:96 opus/48000/2",
      "m=video 4002 RTP/AVPF 97",
      "a=rtpmap:97 H264/90000",
      "a=sendonly",
      "a=rtcp:5000 IN IP4 203.0.113.99",
      "",
    ),
    {
      version: 0,
      origin: {
        username: "-",
        sessionId: "1",
        sessionVersion: "1",
        netType: "IN",
        addrType: "IP4",
        address: "203.0.113.1",
      },
      sessionName: "-",
      connection: { netType: "IN", addrType: "IP4", address: "203.0.113.1" },
      direction: "recvonly",
      media: [
        media({
          port: 4000,
          formats: ["96"],
          connection: { netType: "IN", addrType: "IP4", address: "203.0.113.50" },
          address: "203.0.113.50",
          codecs: [{ payloadType: 96, name: "opus", clockRate: 48000, channels: 2 }],
          direction: "recvonly",
        }),
        media({
          type: "video",
          port: 4002,
          proto: "RTP/AVPF",
          formats: ["97"],
          address: "203.0.113.1",
          rtcpPort: 5000,
          rtcpAddress: "203.0.113.99",
          codecs: [{ payloadType: 97, name: "H264", clockRate: 90000, channels: undefined }],
          direction: "sendonly",
        }),
      ],
    },
  ],
  [
    "IPv6, multicast suffixes, port count, disabled stream, LF line ends, junk lines",
    [
      "v=0",
      "o=bob 7 8 IN IP6 2001:db8::7",
      "s=multi",
      "c=IN IP4 224.2.1.1/127/3",
      "this is not sdp",
      "t=0 0",
      "m=audio 49170/2 RTP/AVP 0",
      "c=IN IP6 ff15::101/3",
      "a=inactive",
      "m=video 0 RTP/AVP 31",
      "",
    ].join("\n"),
    {
      version: 0,
      origin: {
        username: "bob",
        sessionId: "7",
        sessionVersion: "8",
        netType: "IN",
        addrType: "IP6",
        address: "2001:db8::7",
      },
      sessionName: "multi",
      connection: { netType: "IN", addrType: "IP4", address: "224.2.1.1" },
      direction: undefined,
      media: [
        media({
          port: 49170,
          portCount: 2,
          formats: ["0"],
          connection: { netType: "IN", addrType: "IP6", address: "ff15::101" },
          address: "ff15::101",
          codecs: [{ payloadType: 0, name: "PCMU", clockRate: 8000, channels: undefined }],
          direction: "inactive",
        }),
        media({
          type: "video",
          port: 0,
          formats: ["31"],
          address: "224.2.1.1",
          codecs: [{ payloadType: 31, name: "H261", clockRate: 90000, channels: undefined }],
        }),
      ],
    },
  ],
  [
    "T.38 image stream: non-numeric formats have no codec",
    crlf(
      "v=0",
      "o=- 2 2 IN IP4 192.0.2.9",
      "s=fax",
      "c=IN IP4 192.0.2.9",
      "t=0 0",
      "m=image 6000 udptl t38",
      "a=T38FaxVersion:0",
      "",
    ),
    {
      version: 0,
      origin: {
        username: "-",
        sessionId: "2",
        sessionVersion: "2",
        netType: "IN",
        addrType: "IP4",
        address: "192.0.2.9",
      },
      sessionName: "fax",
      connection: { netType: "IN", addrType: "IP4", address: "192.0.2.9" },
      direction: undefined,
      media: [media({ type: "image", port: 6000, proto: "udptl", formats: ["t38"], address: "192.0.2.9" })],
    },
  ],
  [
    "broken m= line is dropped and its attributes stay with it",
    crlf("v=0", "s=x", "m=audio notaport RTP/AVP 0", "a=sendonly", "c=IN IP4 192.0.2.1", ""),
    { version: 0, origin: undefined, sessionName: "x", connection: undefined, direction: undefined, media: [] },
  ],
  [
    "bytes with a UTF-8 session name",
    enc.encode(crlf("v=0", "s=Überweisung", "t=0 0", "")),
    {
      version: 0,
      origin: undefined,
      sessionName: "Überweisung",
      connection: undefined,
      direction: undefined,
      media: [],
    },
  ],
  [
    "empty body",
    "",
    {
      version: undefined,
      origin: undefined,
      sessionName: undefined,
      connection: undefined,
      direction: undefined,
      media: [],
    },
  ],
];

describe("parseSdp", () => {
  test.each(cases)("%s", (_name, body, expected) => {
    expect(parseSdp(body)).toEqual(expected);
  });
});

const SDP = crlf(
  "v=0",
  "o=- 5 5 IN IP4 192.0.2.33",
  "s=-",
  "c=IN IP4 192.0.2.33",
  "t=0 0",
  "m=audio 30000 RTP/AVP 8",
  "",
);
const ISUP = new Uint8Array([0x01, 0x00, 0x20, 0x01, 0x0a, 0x00, 0x02, 0x0a, 0x0d, 0x0a, 0x2d, 0x2d, 0xff, 0x00]);

function concat(...parts: (string | Uint8Array)[]): Uint8Array {
  const bytes = parts.map((p) => (typeof p === "string" ? enc.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/** SIP-I shaped body (RFC 3204): a binary ISUP part, then the SDP part. */
const sipI = (boundary: string): Uint8Array =>
  concat(
    `--${boundary}\r\nContent-Type: application/ISUP;base=itu-t92+;version=itu-t92+\r\nContent-Disposition: signal;handling=required\r\n\r\n`,
    ISUP,
    `\r\n--${boundary}\r\nContent-Type: application/sdp\r\n\r\n${SDP}\r\n--${boundary}--\r\n`,
  );

describe("findSdpBody", () => {
  const dec = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));
  const rows: [string, string, Uint8Array, string | undefined][] = [
    ["application/sdp is the body itself", "application/sdp", enc.encode(SDP), SDP],
    ["media type is case-insensitive, parameters ignored", "Application/SDP; charset=utf-8", enc.encode(SDP), SDP],
    [
      "multipart/mixed SIP-I: SDP after a binary ISUP part",
      "multipart/mixed;boundary=unique-boundary-1",
      sipI("unique-boundary-1"),
      SDP,
    ],
    ["quoted boundary with blanks", 'multipart/mixed; boundary="b 1"', sipI("b 1"), SDP],
    [
      "nested multipart/alternative",
      "multipart/mixed;boundary=outer",
      enc.encode(
        crlf(
          "--outer",
          "Content-Type: text/plain",
          "",
          "hello",
          "--outer",
          "Content-Type: multipart/alternative;",
          " boundary=inner",
          "",
          "--inner",
          "Content-Type: application/sdp",
          "",
          SDP,
          "--inner--",
          "--outer--",
          "",
        ),
      ),
      SDP,
    ],
    [
      "multipart without SDP",
      "multipart/mixed;boundary=zz",
      enc.encode(crlf("--zz", "Content-Type: text/plain", "", "hi", "--zz--", "")),
      undefined,
    ],
    ["multipart without boundary", "multipart/mixed", enc.encode(SDP), undefined],
    ["text/plain", "text/plain", enc.encode(SDP), undefined],
  ];
  test.each(rows)("%s", (_name, contentType, body, expected) => {
    expect(dec(findSdpBody(contentType, body))).toBe(expected);
  });
});

describe("sipBody and sipSdp", () => {
  test("INVITE with SDP: body bytes and media address", () => {
    const payload = enc.encode(
      crlf(
        "INVITE sip:b@example.com SIP/2.0",
        "Call-ID: s1",
        "CSeq: 1 INVITE",
        "Content-Type: application/sdp",
        `Content-Length: ${SDP.length}`,
        "",
        SDP,
      ),
    );
    const r = parseSip(payload);
    if (!r.ok) throw new Error(r.reason);
    expect(new TextDecoder().decode(sipBody(payload, r.value))).toBe(SDP);
    const sdp = sipSdp(payload, r.value);
    expect(sdp?.media.map((m) => [m.address, m.port, m.codecs.map((c) => c.name)])).toEqual([
      ["192.0.2.33", 30000, ["PCMA"]],
    ]);
  });

  test("SIP-I INVITE with multipart body", () => {
    const body = sipI("8AF759A6");
    const payload = concat(
      `INVITE sip:b@example.com SIP/2.0\r\ni: s2\r\nCSeq: 1 INVITE\r\nc: multipart/mixed;boundary=8AF759A6\r\nl: ${body.length}\r\n\r\n`,
      body,
    );
    const r = parseSip(payload);
    if (!r.ok) throw new Error(r.reason);
    expect(sipSdp(payload, r.value)?.connection?.address).toBe("192.0.2.33");
  });

  test.each([
    ["no body", crlf("SIP/2.0 180 Ringing", "Call-ID: s3", "CSeq: 1 INVITE", "Content-Length: 0", "", "")],
    ["no Content-Type", crlf("SIP/2.0 200 OK", "Call-ID: s4", "CSeq: 1 INVITE", "", SDP)],
    [
      "other body type",
      crlf("MESSAGE sip:b@x SIP/2.0", "Call-ID: s5", "CSeq: 1 MESSAGE", "Content-Type: text/plain", "", "hi"),
    ],
  ])("no SDP: %s", (_name, text) => {
    const payload = enc.encode(text);
    const r = parseSip(payload);
    if (!r.ok) throw new Error(r.reason);
    expect(sipSdp(payload, r.value)).toBeUndefined();
  });
});
