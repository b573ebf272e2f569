import { describe, expect, test } from "bun:test";
import { branchOf, buildResponse, cseqOf, header, parseSipWire, tagOf, uriOf } from "./sip-wire.ts";

const INVITE = [
  "INVITE sip:bob@example.com SIP/2.0",
  "v: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bK-1, SIP/2.0/UDP 10.0.0.2:5060;branch=z9hG4bK-2",
  "f: <sip:alice@example.com>;tag=al",
  "t: Bob <sip:bob@example.com>",
  "i: abc@10.0.0.1",
  "CSeq: 4 invite",
  "m: <sip:alice@10.0.0.1:5060;transport=udp>",
  "l: 4",
  "",
  "v=0\n",
].join("\r\n");

describe("sip wire", () => {
  test("compact headers expand, Via values split, CSeq and tags read", () => {
    const m = parseSipWire(INVITE)!;
    expect(m.method).toBe("INVITE");
    expect(m.headers.get("via")).toHaveLength(2);
    expect(branchOf(header(m, "via"))).toBe("z9hG4bK-1");
    expect(cseqOf(m)).toEqual({ num: 4, method: "INVITE" });
    expect(tagOf(header(m, "from"))).toBe("al");
    expect(tagOf(header(m, "to"))).toBe("");
    expect(uriOf(header(m, "contact"))).toBe("sip:alice@10.0.0.1:5060;transport=udp");
  });

  test("a response copies Via, From, Call-ID, CSeq and adds the To tag", () => {
    const r = parseSipWire(buildResponse(parseSipWire(INVITE)!, 180, "Ringing", "xyz"))!;
    expect(r.status).toBe(180);
    expect(r.headers.get("via")).toHaveLength(2);
    expect(tagOf(header(r, "to"))).toBe("xyz");
    expect(header(r, "call-id")).toBe("abc@10.0.0.1");
    expect(header(r, "content-length")).toBe("0");
  });

  test.each(["\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n", "SIP/2.0 99 Nope\r\n\r\n"])("not SIP: %j", (raw) => {
    expect(parseSipWire(raw)).toBeNull();
  });
});
