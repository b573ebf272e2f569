import { describe, expect, test } from "bun:test";
import { parseInjection } from "./injection.ts";
import { checkKeywords, renderTemplate } from "./scenario-template.ts";
import { parseScenario } from "./scenario-xml.ts";
import { parseSipWire } from "./sip-wire.ts";

const wrap = (body: string) => `<?xml version="1.0"?><!-- c --><scenario name="t">${body}</scenario>`;

describe("scenario XML", () => {
  test("commands, labels, optional recv, and the client/server decision", () => {
    const s = parseScenario(
      wrap(
        `<send retrans="500"><![CDATA[OPTIONS sip:a SIP/2.0]]></send><recv response="200" optional="true" next="x"/><nop/><label id="x"/><pause milliseconds="5"/>`,
      ),
      "t.xml",
    );
    expect(s.commands.map((c) => c.kind)).toEqual(["send", "recv", "nop", "label", "pause"]);
    expect(s.labels.get("x")).toBe(3);
    expect(s.client).toBe(true);
    expect(s.commands[1]).toEqual({
      kind: "recv",
      response: 200,
      request: undefined,
      optional: true,
      next: "x",
      timeout: undefined,
      ontimeout: undefined,
    });
    expect(parseScenario(wrap(`<recv request="invite"/><send>SIP/2.0 200 OK</send>`), "t.xml").client).toBe(false);
  });

  test.each([
    [`<send>X</send><action/>`, /<action> is not built yet/],
    [`<send>X</send><recv response="200"><action><sample/></action></recv>`, /action <sample> is not built yet/],
    [`<send lost="10">X</send>`, /attribute lost of <send> is not built yet/],
    [`<send>X</send><nop next="nowhere"/>`, /jump to unknown label "nowhere"/],
    [`<send>X</send><recv/>`, /exactly one of response or request/],
    [`<recv response="200"/>`, /must start with <recv request=/],
    [`<pause milliseconds="soon"/><send>X</send>`, /needs a whole number/],
    [`<label id="a"/><label id="a"/><send>X</send>`, /defined twice/],
    [`<send>X`, /<\/scenario> closes <send>/],
  ])("%s is refused", (body, message) => {
    expect(() => parseScenario(wrap(body), "t.xml")).toThrow(message);
  });
});

describe("scenario templates", () => {
  const last = parseSipWire(
    "INVITE sip:a SIP/2.0\r\nVia: SIP/2.0/UDP 1.1.1.1;branch=z9hG4bK1\r\nVia: SIP/2.0/UDP 2.2.2.2;branch=z9hG4bK2\r\nFrom: <sip:x>;tag=1\r\nCSeq: 3 INVITE\r\nContent-Length: 0\r\n\r\n",
  )!;
  const ctx = { values: { local_ip: "127.0.0.1", call_id: "c1" }, last, fields: ["alice"], authentication: () => "" };

  test("lines trimmed, CRLF, [last_Via:] every Via line, [len] the body bytes", () => {
    const text = renderTemplate(
      `
      SIP/2.0 200 OK
      [last_Via:]
      [last_CSeq:]
      Call-ID: [call_id]
      Content-Length: [len]

      v=0
      o=[field0] 1 1 IN IP4 [local_ip]
    `,
      ctx,
    );
    expect(text).toBe(
      "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 1.1.1.1;branch=z9hG4bK1\r\nVia: SIP/2.0/UDP 2.2.2.2;branch=z9hG4bK2\r\nCSeq: 3 INVITE\r\nCall-ID: c1\r\nContent-Length: 35\r\n\r\nv=0\r\no=alice 1 1 IN IP4 127.0.0.1\r\n",
    );
    expect(Buffer.byteLength(text.split("\r\n\r\n")[1]!)).toBe(35);
  });

  test("a header line that renders empty is dropped; [last_X] is the value only", () => {
    expect(renderTemplate("BYE sip:a SIP/2.0\n[last_Record-Route:]\nX: [last_From]\n", ctx)).toBe(
      "BYE sip:a SIP/2.0\r\nX: <sip:x>;tag=1\r\n\r\n",
    );
  });

  test("unknown keywords are refused by name", () => {
    expect(() => checkKeywords("INVITE [service] [clock_tick]", "t.xml")).toThrow(
      /keyword \[clock_tick\] is not built yet/,
    );
    expect(() => checkKeywords("[authentication username=a password=b] [field3] [last_Via:]", "t.xml")).not.toThrow();
  });
});

describe("injection files", () => {
  test("SEQUENTIAL hands row n to call n and wraps", () => {
    const inj = parseInjection("SEQUENTIAL\n# comment\nalice;1\nbob;2\n", "u.csv");
    expect([1, 2, 3].map((n) => inj.rowFor(n)[0])).toEqual(["alice", "bob", "alice"]);
  });

  test("an unknown order or no rows is refused", () => {
    expect(() => parseInjection("SHUFFLED\na\n", "u.csv")).toThrow(/SEQUENTIAL, RANDOM or USER/);
    expect(() => parseInjection("RANDOM\n", "u.csv")).toThrow(/no rows/);
  });
});
