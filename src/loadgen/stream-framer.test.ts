import { describe, expect, test } from "bun:test";
import { StreamFramer } from "./stream-framer.ts";

const msg = (body: string) =>
  `OPTIONS sip:a SIP/2.0\r\nCall-ID: x\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("stream framer", () => {
  test("two messages in one chunk, keep-alive CRLFs between them", () => {
    expect(new StreamFramer().push(`\r\n\r\n${msg("ab")}\r\n${msg("")}`)).toEqual([msg("ab"), msg("")]);
  });

  test("a message split anywhere, body included, comes out once complete", () => {
    const whole = msg("v=0\r\nü\r\n");
    for (let cut = 1; cut < whole.length; cut++) {
      const f = new StreamFramer();
      expect(f.push(whole.slice(0, cut))).toEqual([]);
      expect(f.push(whole.slice(cut))).toEqual([whole]);
    }
  });

  test("compact l: header frames too; no Content-Length is not SIP over a stream", () => {
    expect(new StreamFramer().push("BYE sip:a SIP/2.0\r\nl: 0\r\n\r\n")).toEqual(["BYE sip:a SIP/2.0\r\nl: 0\r\n\r\n"]);
    expect(new StreamFramer().push("BYE sip:a SIP/2.0\r\nCall-ID: x\r\n\r\n")).toBeNull();
  });
});
