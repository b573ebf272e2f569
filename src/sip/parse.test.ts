import { describe, expect, test } from "bun:test";
import { parseSip } from "./parse.ts";
import type { SipMessage, SipParseOptions, SipParseReason } from "./types.ts";

const enc = new TextEncoder();
/** Joins lines with CRLF; the last element is the body (pass "" for none). */
const sip = (...lines: string[]): Uint8Array => enc.encode(lines.join("\r\n"));
const lf = (...lines: string[]): Uint8Array => enc.encode(lines.join("\n"));

function parsed(payload: Uint8Array, opts?: SipParseOptions): SipMessage {
  const r = parseSip(payload, opts);
  if (!r.ok) throw new Error(`expected a parse, got ${r.reason}`);
  return r.value;
}

const SDP_OFFER = [
  "v=0",
  "o=- 1714 1714 IN IP4 198.51.100.7",
  "s=call",
  "c=IN IP4 198.51.100.7",
  "t=0 0",
  "m=audio 40000 RTP/AVP 0 101",
  "a=rtpmap:101 telephone-event/8000",
  "",
].join("\r\n");

// Each row: a message shaped like traffic seen in the field, and the fields it must yield.
const cases: [string, Uint8Array, Partial<SipMessage>][] = [
  [
    "INVITE with SDP",
    sip(
      "INVITE sip:+12263382742@gw.example.net;user=phone SIP/2.0",
      "Via: SIP/2.0/UDP 198.51.100.7:5060;rport;branch=z9hG4bK.Ab12Cd",
      "Max-Forwards: 70",
      'From: "Ann Caller" <sip:12675941249@pbx.example.org>;tag=f1a2',
      "To: <sip:+12263382742@gw.example.net;user=phone>",
      "Call-ID: 4sHr4rbxLEYDZTMZ3ulI4f..@198.51.100.7",
      "CSeq: 102 INVITE",
      "Contact: <sip:12675941249@198.51.100.7:5060;transport=udp>",
      'P-Asserted-Identity: "Ann" <sip:+12675941249@pbx.example.org;user=phone>',
      "User-Agent: SonicSIP",
      "X-CID: corr-77",
      "Content-Type: application/sdp",
      `Content-Length: ${SDP_OFFER.length}`,
      "",
      SDP_OFFER,
    ),
    {
      isRequest: true,
      method: "INVITE",
      statusCode: undefined,
      reasonPhrase: undefined,
      requestUri: "sip:+12263382742@gw.example.net;user=phone",
      ruriUser: "+12263382742",
      ruriHost: "gw.example.net",
      callId: "4sHr4rbxLEYDZTMZ3ulI4f..@198.51.100.7",
      cseq: 102,
      cseqMethod: "INVITE",
      from: {
        displayName: "Ann Caller",
        uri: "sip:12675941249@pbx.example.org",
        scheme: "sip",
        user: "12675941249",
        host: "pbx.example.org",
        port: undefined,
        tag: "f1a2",
      },
      to: {
        displayName: undefined,
        uri: "sip:+12263382742@gw.example.net;user=phone",
        scheme: "sip",
        user: "+12263382742",
        host: "gw.example.net",
        port: undefined,
        tag: undefined,
      },
      via: { transport: "UDP", host: "198.51.100.7", port: 5060, branch: "z9hG4bK.Ab12Cd" },
      viaCount: 1,
      contact: {
        displayName: undefined,
        uri: "sip:12675941249@198.51.100.7:5060;transport=udp",
        scheme: "sip",
        user: "12675941249",
        host: "198.51.100.7",
        port: 5060,
        tag: undefined,
        expires: undefined,
        wildcard: false,
      },
      pai: {
        displayName: "Ann",
        uri: "sip:+12675941249@pbx.example.org;user=phone",
        scheme: "sip",
        user: "+12675941249",
        host: "pbx.example.org",
        port: undefined,
        tag: undefined,
      },
      maxForwards: 70,
      userAgent: "SonicSIP",
      correlationId: "corr-77",
      contentType: "application/sdp",
      contentLength: SDP_OFFER.length,
      headerCount: 12,
      malformedLines: 0,
      bodyLength: SDP_OFFER.length,
    },
  ],
  [
    "100 Trying (no Contact, no To tag)",
    sip(
      "SIP/2.0 100 Trying",
      "Via: SIP/2.0/TCP 10.33.6.100:64802;branch=z9hG4bK-1;received=10.33.6.100",
      "From: <sip:101@10.33.6.101>;tag=1c1",
      "To: <sip:201@10.33.6.101>",
      "Call-ID: 158936656982201062716@10.33.6.100",
      "CSeq: 1 INVITE",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      isRequest: false,
      method: "INVITE",
      statusCode: 100,
      reasonPhrase: "Trying",
      requestUri: undefined,
      ruriUser: undefined,
      ruriHost: undefined,
      cseq: 1,
      cseqMethod: "INVITE",
      from: {
        displayName: undefined,
        uri: "sip:101@10.33.6.101",
        scheme: "sip",
        user: "101",
        host: "10.33.6.101",
        port: undefined,
        tag: "1c1",
      },
      to: {
        displayName: undefined,
        uri: "sip:201@10.33.6.101",
        scheme: "sip",
        user: "201",
        host: "10.33.6.101",
        port: undefined,
        tag: undefined,
      },
      via: { transport: "TCP", host: "10.33.6.100", port: 64802, branch: "z9hG4bK-1" },
      contact: undefined,
      userAgent: undefined,
      contentLength: 0,
      bodyLength: 0,
      headerCount: 6,
    },
  ],
  [
    "180 Ringing with To tag and Contact",
    sip(
      "SIP/2.0 180 Ringing",
      "Via: SIP/2.0/UDP 200.57.7.195;branch=z9hG4bKff9b46fb055c0521cc24024da96cd290",
      "From: <sip:200.57.7.195:55061;user=phone>;tag=GR52RWG346-34",
      'To: "francisco@bestel.com" <sip:francisco@bestel.com:55060>;tag=298852044',
      "Contact: <sip:francisco@200.57.7.204:5061>",
      "Call-ID: 12013223@200.57.7.195",
      "CSeq: 1 INVITE",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      statusCode: 180,
      reasonPhrase: "Ringing",
      // From without a user part: tshark's from.user is empty for this shape too.
      from: {
        displayName: undefined,
        uri: "sip:200.57.7.195:55061;user=phone",
        scheme: "sip",
        user: undefined,
        host: "200.57.7.195",
        port: 55061,
        tag: "GR52RWG346-34",
      },
      to: {
        displayName: "francisco@bestel.com",
        uri: "sip:francisco@bestel.com:55060",
        scheme: "sip",
        user: "francisco",
        host: "bestel.com",
        port: 55060,
        tag: "298852044",
      },
      via: {
        transport: "UDP",
        host: "200.57.7.195",
        port: undefined,
        branch: "z9hG4bKff9b46fb055c0521cc24024da96cd290",
      },
      contact: {
        displayName: undefined,
        uri: "sip:francisco@200.57.7.204:5061",
        scheme: "sip",
        user: "francisco",
        host: "200.57.7.204",
        port: 5061,
        tag: undefined,
        expires: undefined,
        wildcard: false,
      },
    },
  ],
  [
    "200 OK with SDP, Server instead of User-Agent, two Record-Route lines",
    sip(
      "SIP/2.0 200 OK",
      "Via: SIP/2.0/UDP 198.51.100.7:5060;rport=5060;branch=z9hG4bK.Ab12Cd",
      "Record-Route: <sip:192.0.2.1;lr>",
      "Record-Route: <sip:192.0.2.2;lr>",
      'From: "Ann Caller" <sip:12675941249@pbx.example.org>;tag=f1a2',
      "To: <sip:+12263382742@gw.example.net;user=phone>;tag=as7d9",
      "Call-ID: 4sHr4rbxLEYDZTMZ3ulI4f..@198.51.100.7",
      "CSeq: 102 INVITE",
      "Contact: <sip:+12263382742@203.0.113.9:5060>",
      "Server: FreeSWITCH-mod_sofia/1.8.2-3-a98a958ac3~64bit",
      "Content-Type: application/sdp",
      `Content-Length: ${SDP_OFFER.length}`,
      "",
      SDP_OFFER,
    ),
    {
      isRequest: false,
      method: "INVITE",
      statusCode: 200,
      reasonPhrase: "OK",
      to: {
        displayName: undefined,
        uri: "sip:+12263382742@gw.example.net;user=phone",
        scheme: "sip",
        user: "+12263382742",
        host: "gw.example.net",
        port: undefined,
        tag: "as7d9",
      },
      userAgent: "FreeSWITCH-mod_sofia/1.8.2-3-a98a958ac3~64bit",
      contentType: "application/sdp",
      bodyLength: SDP_OFFER.length,
      headerCount: 11,
    },
  ],
  [
    "ACK in-dialog",
    sip(
      "ACK sip:+12263382742@203.0.113.9:5060 SIP/2.0",
      "Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK.ack1",
      "Route: <sip:192.0.2.2;lr>, <sip:192.0.2.1;lr>",
      "Max-Forwards: 69",
      "From: <sip:12675941249@pbx.example.org>;tag=f1a2",
      "To: <sip:+12263382742@gw.example.net>;tag=as7d9",
      "Call-ID: 4sHr4rbxLEYDZTMZ3ulI4f..@198.51.100.7",
      "CSeq: 102 ACK",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      isRequest: true,
      method: "ACK",
      cseqMethod: "ACK",
      cseq: 102,
      ruriUser: "+12263382742",
      ruriHost: "203.0.113.9",
      maxForwards: 69,
      viaCount: 1,
    },
  ],
  [
    "BYE with Reason",
    sip(
      "BYE sip:101@10.33.6.100:5060 SIP/2.0",
      "Via: SIP/2.0/TLS [2001:db8::10]:5061;branch=z9hG4bK-bye",
      "From: <sip:201@10.33.6.101>;tag=2b2",
      "To: <sip:101@10.33.6.100>;tag=1c1",
      "Call-ID: 158936656982201062716@10.33.6.100",
      "CSeq: 2 BYE",
      'Reason: Q.850;cause=16;text="Normal call clearing"',
      "User-Agent: GW/v.6.20A.027.012",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      method: "BYE",
      cseq: 2,
      cseqMethod: "BYE",
      reason: 'Q.850;cause=16;text="Normal call clearing"',
      via: { transport: "TLS", host: "2001:db8::10", port: 5061, branch: "z9hG4bK-bye" },
      userAgent: "GW/v.6.20A.027.012",
    },
  ],
  [
    "REGISTER with Authorization and contact expires",
    sip(
      "REGISTER sip:voip.example.com SIP/2.0",
      "Via: SIP/2.0/UDP 192.168.1.2:5060;branch=z9hG4bK-reg2",
      "From: <sip:voi18062@voip.example.com>;tag=4665d775",
      "To: <sip:voi18062@voip.example.com>",
      "Call-ID: 578222729-4665d775@578222732-4665d772",
      "CSeq: 69 REGISTER",
      "Contact: <sip:voi18062@192.168.1.2:5060;line=9c7d2>;expires=3600;q=0.5",
      'Authorization: Digest username="voi18062", realm="voip.example.com", nonce="4665d7c4", uri="sip:voip.example.com", response="5f0e52d4a1b7c3e1"',
      "Expires: 1800",
      "User-Agent: Nero SIPPS IP Phone Version 2.0.51.16",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      method: "REGISTER",
      requestUri: "sip:voip.example.com",
      ruriUser: undefined,
      ruriHost: "voip.example.com",
      cseq: 69,
      contact: {
        displayName: undefined,
        uri: "sip:voi18062@192.168.1.2:5060;line=9c7d2",
        scheme: "sip",
        user: "voi18062",
        host: "192.168.1.2",
        port: 5060,
        tag: undefined,
        expires: 3600,
        wildcard: false,
      },
      expires: 1800,
      userAgent: "Nero SIPPS IP Phone Version 2.0.51.16",
    },
  ],
  [
    "401 challenge with quoted commas in WWW-Authenticate",
    sip(
      "SIP/2.0 401 Unauthorized",
      "Via: SIP/2.0/UDP 5.148.125.101:5060;branch=z9hG4bK-r1;received=5.148.125.101",
      "From: <sip:1154@pbx.example.ch>;tag=aa",
      "To: <sip:1154@pbx.example.ch>;tag=bb",
      "Call-ID: e5f4a617104444e4f7a54",
      "CSeq: 1 REGISTER",
      'WWW-Authenticate: Digest realm="pbx.example.ch", nonce="abc,def", qop="auth,auth-int", algorithm=MD5',
      "Content-Length: 0",
      "",
      "",
    ),
    {
      statusCode: 401,
      reasonPhrase: "Unauthorized",
      method: "REGISTER",
      cseqMethod: "REGISTER",
      callId: "e5f4a617104444e4f7a54",
      headerCount: 7,
    },
  ],
  [
    "OPTIONS keepalive, minimal, addr-spec From/To without <>",
    sip(
      "OPTIONS sip:192.0.2.50:5060 SIP/2.0",
      "Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK-opt",
      "From: sip:ping@192.0.2.10;tag=p1",
      "To: sip:192.0.2.50:5060",
      "Call-ID: opt-1@192.0.2.10",
      "CSeq: 1 OPTIONS",
      "Max-Forwards: 70",
      "Accept: application/sdp",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      method: "OPTIONS",
      ruriUser: undefined,
      ruriHost: "192.0.2.50",
      // RFC 3261 §20.10: without <> the ;tag belongs to the header, not to the URI.
      from: {
        displayName: undefined,
        uri: "sip:ping@192.0.2.10",
        scheme: "sip",
        user: "ping",
        host: "192.0.2.10",
        port: undefined,
        tag: "p1",
      },
      to: {
        displayName: undefined,
        uri: "sip:192.0.2.50:5060",
        scheme: "sip",
        user: undefined,
        host: "192.0.2.50",
        port: 5060,
        tag: undefined,
      },
      userAgent: undefined,
    },
  ],
  [
    "NOTIFY with compact Event and folded Subscription-State",
    sip(
      "NOTIFY sip:alice@198.51.100.20:5070 SIP/2.0",
      "v: SIP/2.0/TCP 203.0.113.5:5060;branch=z9hG4bK-n1",
      "f: <sip:alice@example.com>;tag=ntf",
      "t: <sip:alice@example.com>;tag=sub",
      "i: notify-77@203.0.113.5",
      "CSeq: 12 NOTIFY",
      "o: message-summary",
      "Subscription-State: active;",
      "  expires=3599",
      "c: application/simple-message-summary",
      "l: 23",
      "",
      "Messages-Waiting: yes\r\n",
    ),
    {
      method: "NOTIFY",
      callId: "notify-77@203.0.113.5",
      contentType: "application/simple-message-summary",
      contentLength: 23,
      bodyLength: 23,
      headerCount: 9,
      via: { transport: "TCP", host: "203.0.113.5", port: 5060, branch: "z9hG4bK-n1" },
    },
  ],
  [
    "MESSAGE with UTF-8 display name and text body",
    sip(
      "MESSAGE sip:bob@example.com SIP/2.0",
      "Via: SIP/2.0/WSS df7jal23ls0d.invalid;branch=z9hG4bKmsg",
      'From: "José Müller" <sip:jose@example.com>;tag=u8',
      "To: <sip:bob@example.com>",
      "Call-ID: kovfhoptshgn59q712sr",
      "CSeq: 2207 MESSAGE",
      "Content-Type: text/plain;charset=UTF-8",
      "Content-Length: 6",
      "",
      "hällo",
    ),
    {
      method: "MESSAGE",
      from: {
        displayName: "José Müller",
        uri: "sip:jose@example.com",
        scheme: "sip",
        user: "jose",
        host: "example.com",
        port: undefined,
        tag: "u8",
      },
      via: { transport: "WSS", host: "df7jal23ls0d.invalid", port: undefined, branch: "z9hG4bKmsg" },
      contentType: "text/plain;charset=UTF-8",
      bodyLength: 6,
    },
  ],
  [
    "response with compact headers only",
    sip(
      "SIP/2.0 183 Session Progress",
      "v: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK1, SIP/2.0/UDP 10.0.0.2:5060;branch=z9hG4bK2",
      "f: <sip:+12675941249@10.0.0.9>;tag=ab",
      "t: <sip:+12263382742@10.0.0.7>;tag=cd",
      "i: 926ffd16-6154-1237-09ba-0270b3230128",
      "CSeq: 130689518 INVITE",
      "m: <sip:gw@10.0.0.7:5080>;expires=30",
      "k: 100rel",
      "c: application/sdp",
      "l: 0",
      "",
      "",
    ),
    {
      statusCode: 183,
      reasonPhrase: "Session Progress",
      callId: "926ffd16-6154-1237-09ba-0270b3230128",
      cseq: 130689518,
      from: {
        displayName: undefined,
        uri: "sip:+12675941249@10.0.0.9",
        scheme: "sip",
        user: "+12675941249",
        host: "10.0.0.9",
        port: undefined,
        tag: "ab",
      },
      to: {
        displayName: undefined,
        uri: "sip:+12263382742@10.0.0.7",
        scheme: "sip",
        user: "+12263382742",
        host: "10.0.0.7",
        port: undefined,
        tag: "cd",
      },
      via: { transport: "UDP", host: "10.0.0.1", port: 5060, branch: "z9hG4bK1" },
      viaCount: 2,
      contact: {
        displayName: undefined,
        uri: "sip:gw@10.0.0.7:5080",
        scheme: "sip",
        user: "gw",
        host: "10.0.0.7",
        port: 5080,
        tag: undefined,
        expires: 30,
        wildcard: false,
      },
      contentType: "application/sdp",
      contentLength: 0,
      headerCount: 9,
    },
  ],
  [
    "folded headers (RFC 3261 §7.3.1)",
    sip(
      "INVITE sip:bob@biloxi.example.com SIP/2.0",
      "Via: SIP/2.0/UDP pc33.atlanta.example.com",
      "\t;branch=z9hG4bKnashds8",
      "From: Alice",
      "   <sip:alice@atlanta.example.com>;tag=1928301774",
      "To: Bob <sip:bob@biloxi.example.com>",
      "Call-ID:",
      " a84b4c76e66710",
      "CSeq: 314159",
      "  INVITE",
      "Subject: I know you're there,",
      "         pick up the phone",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      callId: "a84b4c76e66710",
      cseq: 314159,
      cseqMethod: "INVITE",
      via: { transport: "UDP", host: "pc33.atlanta.example.com", port: undefined, branch: "z9hG4bKnashds8" },
      from: {
        displayName: "Alice",
        uri: "sip:alice@atlanta.example.com",
        scheme: "sip",
        user: "alice",
        host: "atlanta.example.com",
        port: undefined,
        tag: "1928301774",
      },
      to: {
        displayName: "Bob",
        uri: "sip:bob@biloxi.example.com",
        scheme: "sip",
        user: "bob",
        host: "biloxi.example.com",
        port: undefined,
        tag: undefined,
      },
      headerCount: 7,
      malformedLines: 0,
    },
  ],
  [
    "header names in any case, blanks before the colon",
    sip(
      "INVITE sip:bob@example.com SIP/2.0",
      "VIA: SIP/2.0/udp host.example.com:5062;BRANCH=z9hG4bKcase",
      "from  : <sip:alice@example.com>;TAG=up",
      "TO: <sip:bob@example.com>",
      "CALL-ID: case-1",
      "cseq: 7 INVITE",
      "user-agent: lower/1.0",
      "CONTENT-LENGTH: 0",
      "",
      "",
    ),
    {
      callId: "case-1",
      cseq: 7,
      via: { transport: "UDP", host: "host.example.com", port: 5062, branch: "z9hG4bKcase" },
      from: {
        displayName: undefined,
        uri: "sip:alice@example.com",
        scheme: "sip",
        user: "alice",
        host: "example.com",
        port: undefined,
        tag: "up",
      },
      userAgent: "lower/1.0",
      contentLength: 0,
    },
  ],
  [
    "IPv6 everywhere",
    sip(
      "INVITE sip:4321@[2001:db8::2]:5060 SIP/2.0",
      "Via: SIP/2.0/UDP [fe80::21a:a0ff:fe07:32e0]:5060;branch=z9hG4bK-v6",
      "From: <sip:9876@[fe80::21a:a0ff:fe07:32e0]>;tag=6",
      "To: <sip:4321@[2001:db8::2]:5060>",
      "Call-ID: c3eF6f58-363323Cd-8058EB88-10300252@fe80:0:0:0:21a:a0ff:fe07:32e0",
      "CSeq: 1 INVITE",
      "Contact: <sip:9876@[fe80::21a:a0ff:fe07:32e0]:5060>",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      ruriUser: "4321",
      ruriHost: "2001:db8::2",
      callId: "c3eF6f58-363323Cd-8058EB88-10300252@fe80:0:0:0:21a:a0ff:fe07:32e0",
      via: { transport: "UDP", host: "fe80::21a:a0ff:fe07:32e0", port: 5060, branch: "z9hG4bK-v6" },
      from: {
        displayName: undefined,
        uri: "sip:9876@[fe80::21a:a0ff:fe07:32e0]",
        scheme: "sip",
        user: "9876",
        host: "fe80::21a:a0ff:fe07:32e0",
        port: undefined,
        tag: "6",
      },
      to: {
        displayName: undefined,
        uri: "sip:4321@[2001:db8::2]:5060",
        scheme: "sip",
        user: "4321",
        host: "2001:db8::2",
        port: 5060,
        tag: undefined,
      },
      contact: {
        displayName: undefined,
        uri: "sip:9876@[fe80::21a:a0ff:fe07:32e0]:5060",
        scheme: "sip",
        user: "9876",
        host: "fe80::21a:a0ff:fe07:32e0",
        port: 5060,
        tag: undefined,
        expires: undefined,
        wildcard: false,
      },
    },
  ],
  [
    "tel URIs, telephone-subscriber user, PAI with sip and tel values",
    sip(
      "INVITE tel:+1-201-555-0123;phone-context=example.com SIP/2.0",
      "Via: SIP/2.0/SCTP 192.0.2.77;branch=z9hG4bK-tel",
      "From: <tel:9171969136>;tag=t1",
      "To: <sip:+19275890000;npdi;rn=+19275800000@sbc.example.net;user=phone>",
      "Call-ID: 717B2539AD2002C9152DC497@0870ffffffff",
      "CSeq: 1 INVITE",
      "P-Asserted-Identity: <sip:+19171969136@example.net;user=phone>, <tel:+19171969136>",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      requestUri: "tel:+1-201-555-0123;phone-context=example.com",
      ruriUser: "+1-201-555-0123",
      ruriHost: undefined,
      from: {
        displayName: undefined,
        uri: "tel:9171969136",
        scheme: "tel",
        user: "9171969136",
        host: undefined,
        port: undefined,
        tag: "t1",
      },
      to: {
        displayName: undefined,
        uri: "sip:+19275890000;npdi;rn=+19275800000@sbc.example.net;user=phone",
        scheme: "sip",
        user: "+19275890000;npdi;rn=+19275800000",
        host: "sbc.example.net",
        port: undefined,
        tag: undefined,
      },
      pai: {
        displayName: undefined,
        uri: "sip:+19171969136@example.net;user=phone",
        scheme: "sip",
        user: "+19171969136",
        host: "example.net",
        port: undefined,
        tag: undefined,
      },
      via: { transport: "SCTP", host: "192.0.2.77", port: undefined, branch: "z9hG4bK-tel" },
    },
  ],
  [
    "display names with quotes, commas and escapes; escaped user; password",
    sip(
      "INVITE sips:alice%40home@example.com SIP/2.0",
      "Via: SIP/2.0/TLS client.example.com:5061;branch=z9hG4bK-q",
      'From: "Smith, John \\"JJ\\"" <sips:j%2Esmith@example.com>;tag=q1',
      "To: Bob Jones <sip:bob:secret@example.com:5070;transport=tcp>;tag=q2",
      "Call-ID: quotes@example.com",
      "CSeq: 5 INVITE",
      'Contact: "Line, 2" <sip:line2@10.1.1.1>;expires=60, <sip:line3@10.1.1.1>',
      "Content-Length: 0",
      "",
      "",
    ),
    {
      ruriUser: "alice%40home",
      ruriHost: "example.com",
      from: {
        displayName: 'Smith, John "JJ"',
        uri: "sips:j%2Esmith@example.com",
        scheme: "sips",
        user: "j%2Esmith",
        host: "example.com",
        port: undefined,
        tag: "q1",
      },
      to: {
        displayName: "Bob Jones",
        uri: "sip:bob:secret@example.com:5070;transport=tcp",
        scheme: "sip",
        user: "bob",
        host: "example.com",
        port: 5070,
        tag: "q2",
      },
      contact: {
        displayName: "Line, 2",
        uri: "sip:line2@10.1.1.1",
        scheme: "sip",
        user: "line2",
        host: "10.1.1.1",
        port: undefined,
        tag: undefined,
        expires: 60,
        wildcard: false,
      },
    },
  ],
  [
    "several Vias on one line and on several lines",
    sip(
      "SIP/2.0 200 OK",
      "Via: SIP/2.0/UDP proxy2.example.com:5060;branch=z9hG4bK-p2;received=192.0.2.3, SIP/2.0/UDP proxy1.example.com:5060;branch=z9hG4bK-p1",
      "Via: SIP/2.0/UDP 10.0.0.5:5060;branch=z9hG4bK-uac",
      "v: SIP/2.0/TCP 10.0.0.6;branch=z9hG4bK-x , SIP/2.0/TCP 10.0.0.7;branch=z9hG4bK-y",
      "From: <sip:a@example.com>;tag=1",
      "To: <sip:b@example.com>;tag=2",
      "Call-ID: vias@example.com",
      "CSeq: 9 OPTIONS",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      viaCount: 5,
      via: { transport: "UDP", host: "proxy2.example.com", port: 5060, branch: "z9hG4bK-p2" },
      method: "OPTIONS",
      cseqMethod: "OPTIONS",
    },
  ],
  [
    "REGISTER removing all bindings with Contact: *",
    sip(
      "REGISTER sip:registrar.example.com SIP/2.0",
      "Via: SIP/2.0/UDP 192.0.2.4:5060;branch=z9hG4bK-star",
      "From: <sip:bob@example.com>;tag=s1",
      "To: <sip:bob@example.com>",
      "Call-ID: star@192.0.2.4",
      "CSeq: 1826 REGISTER",
      "Contact: *",
      "Expires: 0",
      "Content-Length: 0",
      "",
      "",
    ),
    {
      contact: {
        displayName: undefined,
        uri: "*",
        scheme: undefined,
        user: undefined,
        host: undefined,
        port: undefined,
        tag: undefined,
        expires: undefined,
        wildcard: true,
      },
      expires: 0,
    },
  ],
  [
    "only the mandatory headers",
    sip("INFO sip:x@example.com SIP/2.0", "Call-ID: bare", "CSeq: 3 INFO", "", ""),
    {
      method: "INFO",
      callId: "bare",
      from: undefined,
      to: undefined,
      via: undefined,
      viaCount: 0,
      contact: undefined,
      pai: undefined,
      expires: undefined,
      userAgent: undefined,
      contentType: undefined,
      contentLength: undefined,
      maxForwards: undefined,
      reason: undefined,
      correlationId: undefined,
      customHeaders: {},
      headerCount: 2,
      bodyLength: 0,
    },
  ],
  [
    "bare LF line ends",
    lf(
      "SIP/2.0 486 Busy Here",
      "Via: SIP/2.0/UDP 10.1.1.1;branch=z9hG4bK-lf",
      "From: <sip:a@b>;tag=x",
      "To: <sip:c@d>;tag=y",
      "Call-ID: lf-1",
      "CSeq: 4 INVITE",
      "Content-Length: 3",
      "",
      "abc",
    ),
    { statusCode: 486, reasonPhrase: "Busy Here", callId: "lf-1", contentLength: 3, bodyLength: 3, headerCount: 6 },
  ],
  [
    "no empty line, packet ends after the last header",
    enc.encode("SIP/2.0 200 OK\r\nCall-ID: noend\r\nCSeq: 1 BYE\r\n"),
    { statusCode: 200, callId: "noend", cseqMethod: "BYE", bodyLength: 0 },
  ],
  [
    "status line without reason phrase; leading CRLF before the start line",
    enc.encode("\r\n\r\nSIP/2.0 503\r\nCall-ID: nr\r\nCSeq: 2 INVITE\r\n\r\n"),
    { statusCode: 503, reasonPhrase: "", callId: "nr" },
  ],
  [
    "Content-Length smaller than the datagram: extra bytes are not body",
    sip("MESSAGE sip:b@example.com SIP/2.0", "Call-ID: cl", "CSeq: 1 MESSAGE", "Content-Length: 4", "", "textGARBAGE"),
    { contentLength: 4, bodyLength: 4 },
  ],
  [
    "Content-Length larger than the datagram keeps what arrived",
    sip("MESSAGE sip:b@example.com SIP/2.0", "Call-ID: cl2", "CSeq: 1 MESSAGE", "Content-Length: 400", "", "short"),
    { contentLength: 400, bodyLength: 5 },
  ],
  [
    "malformed header lines are skipped and counted",
    sip(
      "OPTIONS sip:b@example.com SIP/2.0",
      "Call-ID: mal",
      "this line has no colon",
      ": no name",
      "CSeq: 1 OPTIONS",
      "",
      "",
    ),
    { callId: "mal", headerCount: 2, malformedLines: 2 },
  ],
];

describe("parseSip: message shapes", () => {
  test.each(cases)("%s", (_name, payload, expected) => {
    expect(parsed(payload)).toMatchObject(expected);
  });

  test("bodyOffset points at the first body byte", () => {
    const payload = sip(
      "MESSAGE sip:b@example.com SIP/2.0",
      "Call-ID: off",
      "CSeq: 1 MESSAGE",
      "Content-Length: 5",
      "",
      "hello",
    );
    const m = parsed(payload);
    expect(new TextDecoder().decode(payload.subarray(m.bodyOffset, m.bodyOffset + m.bodyLength))).toBe("hello");
    const lfPayload = lf("MESSAGE sip:b@example.com SIP/2.0", "Call-ID: off", "CSeq: 1 MESSAGE", "", "hi");
    const m2 = parsed(lfPayload);
    expect(new TextDecoder().decode(lfPayload.subarray(m2.bodyOffset))).toBe("hi");
  });

  test("payload that is a view into a larger buffer (byteOffset > 0)", () => {
    const whole = enc.encode(
      'JUNKSIP/2.0 200 OK\r\nCall-ID: view\r\nFrom: "Zoë" <sip:z@h>;tag=1\r\nCSeq: 1 INVITE\r\nContent-Length: 2\r\n\r\nokTAIL',
    );
    const view = whole.subarray(4, whole.length - 4);
    const m = parsed(view);
    expect([m.callId, m.from?.displayName, m.bodyLength]).toEqual(["view", "Zoë", 2]);
    expect(new TextDecoder().decode(view.subarray(m.bodyOffset))).toBe("ok");
  });

  test("a body that looks like headers is never read as headers", () => {
    const m = parsed(
      sip(
        "MESSAGE sip:b@example.com SIP/2.0",
        "Call-ID: real",
        "CSeq: 1 MESSAGE",
        "",
        "Call-ID: fake\r\nUser-Agent: fake\r\n",
      ),
    );
    expect(m.callId).toBe("real");
    expect(m.userAgent).toBeUndefined();
  });

  test("first occurrence wins for single-valued headers", () => {
    const m = parsed(
      sip(
        "OPTIONS sip:b@example.com SIP/2.0",
        "Call-ID: first",
        "Call-ID: second",
        "CSeq: 1 OPTIONS",
        "User-Agent: ua1",
        "User-Agent: ua2",
        "",
        "",
      ),
    );
    expect(m.callId).toBe("first");
    expect(m.userAgent).toBe("ua1");
  });

  test("User-Agent wins over Server whatever the order", () => {
    const m = parsed(sip("SIP/2.0 200 OK", "Server: srv", "Call-ID: ua", "CSeq: 1 OPTIONS", "User-Agent: ua", "", ""));
    expect(m.userAgent).toBe("ua");
  });
});

describe("parseSip: custom and correlation headers", () => {
  const payload = sip(
    "INVITE sip:b@example.com SIP/2.0",
    "Call-ID: opts",
    "CSeq: 1 INVITE",
    "x-customer-id: 42",
    "X-Customer-ID: 43",
    "s: compact subject",
    "P-Charging-Vector: icid-value=abc;orig-ioi=home.net",
    "X-Session-ID: sess-9",
    "X-CID: cid-1",
    "",
    "",
  );

  const rows: [string, SipParseOptions | undefined, Partial<SipMessage>][] = [
    ["default correlation header is X-CID", undefined, { correlationId: "cid-1", customHeaders: {} }],
    [
      "first configured header present wins, by list order",
      { correlationHeaders: ["X-Missing", "X-Session-ID", "X-CID"] },
      { correlationId: "sess-9" },
    ],
    ["no configured correlation header present", { correlationHeaders: ["X-Nope"] }, { correlationId: undefined }],
    ["empty correlation list disables it", { correlationHeaders: [] }, { correlationId: undefined }],
    [
      "custom headers keep the configured name; repeats joined with comma",
      { customHeaders: ["X-Customer-Id", "p-charging-vector", "X-Absent"] },
      { customHeaders: { "X-Customer-Id": "42, 43", "p-charging-vector": "icid-value=abc;orig-ioi=home.net" } },
    ],
    [
      "custom header configured by full name matches its compact form",
      { customHeaders: ["Subject"] },
      { customHeaders: { Subject: "compact subject" } },
    ],
    [
      "custom header configured by compact name matches too",
      { customHeaders: ["s"] },
      { customHeaders: { s: "compact subject" } },
    ],
    [
      "a header can be custom and correlation at once",
      { customHeaders: ["X-CID"], correlationHeaders: ["x-cid"] },
      { customHeaders: { "X-CID": "cid-1" }, correlationId: "cid-1" },
    ],
  ];

  test.each(rows)("%s", (_name, opts, expected) => {
    const m = parsed(payload, opts);
    expect(m).toMatchObject(expected);
    if (expected.customHeaders !== undefined) expect(m.customHeaders).toEqual(expected.customHeaders);
  });

  test("same options object reused across messages gives independent results", () => {
    const opts: SipParseOptions = { customHeaders: ["X-Tag"] };
    const a = parsed(sip("OPTIONS sip:b@x SIP/2.0", "Call-ID: a", "CSeq: 1 OPTIONS", "X-Tag: one", "", ""), opts);
    const b = parsed(sip("OPTIONS sip:b@x SIP/2.0", "Call-ID: b", "CSeq: 1 OPTIONS", "", ""), opts);
    expect(a.customHeaders).toEqual({ "X-Tag": "one" });
    expect(b.customHeaders).toEqual({});
  });
});

describe("parseSip: failure reasons", () => {
  const failures: [string, Uint8Array, SipParseReason][] = [
    ["zero bytes", new Uint8Array(0), "empty"],
    ["CRLF keep-alive (RFC 5626 §3.5.1)", enc.encode("\r\n\r\n"), "empty"],
    ["HTTP response", enc.encode("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), "not_sip"],
    ["HTTP request", enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "not_sip"],
    ["binary without line end", new Uint8Array([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01]), "not_sip"],
    ["binary with line ends", new Uint8Array([0x00, 0xff, 0x0a, 0x0a, 0x01]), "not_sip"],
    ["four-digit status", enc.encode("SIP/2.0 2000 OK\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"), "bad_start_line"],
    ["status out of range", enc.encode("SIP/2.0 099 Odd\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"), "bad_start_line"],
    ["non-numeric status", enc.encode("SIP/2.0 abc OK\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"), "bad_start_line"],
    [
      "other SIP version in status line",
      enc.encode("SIP/3.0 200 OK\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"),
      "bad_start_line",
    ],
    [
      "other SIP version in request line",
      enc.encode("INVITE sip:a@b SIP/2.1\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"),
      "bad_start_line",
    ],
    [
      "two blanks after method",
      enc.encode("INVITE  sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"),
      "bad_start_line",
    ],
    [
      "method with a non-token char",
      enc.encode("INV@TE sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"),
      "bad_start_line",
    ],
    ["no Request-URI", enc.encode("INVITE SIP/2.0\r\nCall-ID: a\r\nCSeq: 1 INVITE\r\n\r\n"), "bad_start_line"],
    [
      "cut in the middle of a header",
      enc.encode("INVITE sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: 1 INV"),
      "no_header_end",
    ],
    ["missing Call-ID", enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCSeq: 1 OPTIONS\r\n\r\n"), "missing_call_id"],
    [
      "empty Call-ID",
      enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCall-ID:   \r\nCSeq: 1 OPTIONS\r\n\r\n"),
      "missing_call_id",
    ],
    ["missing CSeq", enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCall-ID: a\r\n\r\n"), "missing_cseq"],
    ["CSeq without number", enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: OPTIONS\r\n\r\n"), "bad_cseq"],
    ["CSeq without method", enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: 1\r\n\r\n"), "bad_cseq"],
    [
      "CSeq with trailing junk",
      enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: 1 OPTIONS x\r\n\r\n"),
      "bad_cseq",
    ],
    [
      "CSeq number beyond 32 bits",
      enc.encode("OPTIONS sip:a@b SIP/2.0\r\nCall-ID: a\r\nCSeq: 99999999999 OPTIONS\r\n\r\n"),
      "bad_cseq",
    ],
  ];

  test.each(failures)("%s → %s", (_name, payload, reason) => {
    const r = parseSip(payload);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });
});
