import { describe, expect, test } from "bun:test";
import { checkStartLine, findStartLine, frameSipMessage, sipStartInDatagram } from "./sip-framing.ts";
import { text } from "./testing.ts";

describe("checkStartLine", () => {
  test.each([
    ["INVITE sip:bob@example.com SIP/2.0\r\n", "sip"],
    ["REGISTER sip:example.com SIP/2.0\n", "sip"],
    ["SIP/2.0 200 OK\r\n", "sip"],
    ["SIP/2.0 100 \r\n", "sip"],
    ["SIP/2.0 180\r\n", "sip"],
    ["sip/2.0 486 Busy Here\r\n", "sip"],
    ["X-CUSTOM-METHOD sips:a@b SIP/2.0\r\n", "sip"],
    ["GET / HTTP/1.1\r\n", "not_sip"],
    ["HTTP/1.1 101 Switching Protocols\r\n", "not_sip"],
    ["INVITE sip:a b SIP/2.0\r\n", "not_sip"], // a space inside the URI
    ["INVITE  SIP/2.0\r\n", "not_sip"],
    ["SIP/2.0 2OO OK\r\n", "not_sip"],
    ["SIP/2.0 2000 OK\r\n", "not_sip"],
    ["\x80\x00\x12\x34rtp", "not_sip"],
    ["INV", "incomplete"],
    ["INVITE sip:bob@exam", "incomplete"],
    ["SIP/2", "incomplete"],
    ["SIP/2.0 20", "incomplete"],
    ["SIPX", "incomplete"], // could still be a method named SIPX...
    ["SIP/X", "not_sip"],
    ["GET{", "not_sip"],
    ["", "incomplete"],
  ])("%p → %s", (line, expected) => {
    expect(checkStartLine(text(line), 0)).toBe(expected as "sip");
  });
});

describe("sipStartInDatagram", () => {
  test.each([
    ["OPTIONS sip:a SIP/2.0\r\n\r\n", 0],
    ["\r\n\r\nOPTIONS sip:a SIP/2.0\r\n\r\n", 4],
    ["\r\n\r\n", -1],
    ["\x00\x01\x00\x00STUN", -1],
  ])("%p → %d", (payload, at) => {
    expect(sipStartInDatagram(text(payload))).toBe(at);
  });
});

describe("frameSipMessage (RFC 3261 §18.3)", () => {
  const msg = "MESSAGE sip:a SIP/2.0\r\nCall-ID: x\r\nContent-Length: 5\r\n\r\nhello";
  // [name, the message, bytes after it, expected kind]: a "message" must be exactly the first part.
  test.each<[string, string, string, string]>([
    ["headers plus Content-Length body", msg, "NEXT", "message"],
    ["compact form l:", "SIP/2.0 200 OK\r\nl : 3\r\n\r\nabc", "def", "message"],
    ["header names are case-insensitive", "SIP/2.0 200 OK\r\nCONTENT-LENGTH:2\r\n\r\nab", "c", "message"],
    ["missing Content-Length counts as 0", "BYE sip:a SIP/2.0\r\nCall-ID: y\r\n\r\n", "BYE", "message"],
    ["bare LF line ends", "BYE sip:a SIP/2.0\nContent-Length: 1\n\nx", "y", "message"],
    [
      "X-Content-Length is another header",
      "SIP/2.0 200 OK\r\nX-Content-Length: 99\r\nContent-Length: 0\r\n\r\n",
      "",
      "message",
    ],
    ["body not all there", msg.slice(0, -1), "", "incomplete"],
    ["headers not all there", "BYE sip:a SIP/2.0\r\nCall-ID: y\r\n", "", "incomplete"],
    ["empty line half there", "BYE sip:a SIP/2.0\r\nCall-ID: y\r\n\r", "", "incomplete"],
    ["not SIP", "GET / HTTP/1.1\r\n\r\n", "", "not_sip"],
  ])("%s", (_name, message, after, expected) => {
    const r = frameSipMessage(text(message + after), 0, 1 << 20);
    expect(r.kind).toBe(expected as "message");
    if (r.kind === "message") expect(r.length).toBe(message.length);
  });

  test("too large", () => {
    const r = frameSipMessage(text("SIP/2.0 200 OK\r\nContent-Length: 5000\r\n\r\n"), 0, 1000);
    expect(r).toEqual({ kind: "too_large", length: 5040 });
  });

  test("frames from an offset", () => {
    const buf = text(`xx${msg}`);
    expect(frameSipMessage(buf, 2, 1 << 20)).toEqual({ kind: "message", length: msg.length });
  });
});

describe("findStartLine", () => {
  test.each<[string, Uint8Array, boolean, number]>([
    ["a start line after body text", text("body text\r\nmore\r\nSIP/2.0 200 OK\r\n"), true, 17],
    ["binary without a line end is all dropped", Uint8Array.of(0x80, 0x81, 0x00, 0x41), false, 4],
    ["the last line may still become a start line", text("junk\r\nINVITE sip:a@b"), false, 6],
    ["a word and a space could still be a method", text("garbage without a line end"), false, 0],
    ["binary lines", Uint8Array.of(0x80, 0x81, 0x82, 10, 0, 1), false, 6],
  ])("%s", (_name, input, found, at) => {
    expect(findStartLine(input, 0)).toEqual({ found, at });
  });
});
