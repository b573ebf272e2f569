import { describe, expect, test } from "bun:test";
import { concat } from "./bytes.ts";
import { decodeText, text, wsFrame } from "./testing.ts";
import { couldStartWsFrame, parseHttpHead, parseWsFrame, WS_OPCODE, WsMessageAssembler } from "./websocket.ts";

const mask = Uint8Array.of(0x37, 0xfa, 0x21, 0x3d);

describe("parseWsFrame (RFC 6455 §5.2)", () => {
  test.each([
    ["unmasked text", wsFrame({ payload: text("Hello") }), "Hello", 7],
    [
      "masked text (RFC 6455 §5.7 example)",
      Uint8Array.of(0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58),
      "Hello",
      11,
    ],
    ["16-bit length, masked", wsFrame({ payload: text("x".repeat(300)), mask }), "x".repeat(300), 2 + 2 + 4 + 300],
    ["64-bit length", wsFrame({ payload: text("y".repeat(70000)) }), "y".repeat(70000), 10 + 70000],
  ])("%s", (_name, frame, payload, length) => {
    const r = parseWsFrame(frame, 0, 1 << 20);
    expect(r.kind).toBe("frame");
    if (r.kind !== "frame") return;
    expect(decodeText(r.payload)).toBe(payload);
    expect(r.length).toBe(length);
    expect(r.fin).toBe(true);
  });

  test("incomplete at every cut", () => {
    const frame = wsFrame({ payload: text("x".repeat(200)), mask });
    for (let cut = 0; cut < frame.length; cut++)
      expect(parseWsFrame(frame.subarray(0, cut), 0, 1 << 20).kind).toBe("incomplete");
  });

  test.each([
    ["reserved opcode 3", Uint8Array.of(0x83, 0)],
    ["fragmented control frame", Uint8Array.of(0x09, 0)],
    ["control frame over 125 bytes", wsFrame({ payload: new Uint8Array(126), opcode: WS_OPCODE.PING })],
    ["payload over the limit", wsFrame({ payload: new Uint8Array(2000) })],
  ])("invalid: %s", (_name, frame) => {
    expect(parseWsFrame(frame, 0, 1000).kind).toBe("invalid");
  });

  test("no SIP text byte can start a frame, every data/control opcode can", () => {
    for (let c = 0x41; c <= 0x7a; c++) expect(couldStartWsFrame(c)).toBe(false);
    for (const b of [0x81, 0x82, 0x01, 0x02, 0x80, 0x88, 0x89, 0x8a]) expect(couldStartWsFrame(b)).toBe(true);
  });
});

describe("WsMessageAssembler (RFC 6455 §5.4)", () => {
  test("fragments join across an interleaved ping; a stray continuation is reported", () => {
    const asm = new WsMessageAssembler();
    const events = [
      { fin: false, rsv: 0, opcode: WS_OPCODE.TEXT, payload: text("IN") },
      { fin: true, rsv: 0, opcode: WS_OPCODE.PING, payload: new Uint8Array(0) },
      { fin: false, rsv: 0, opcode: WS_OPCODE.CONTINUATION, payload: text("VI") },
      { fin: true, rsv: 0, opcode: WS_OPCODE.CONTINUATION, payload: text("TE") },
      { fin: true, rsv: 0, opcode: WS_OPCODE.CONTINUATION, payload: text("??") },
      { fin: true, rsv: 4, opcode: WS_OPCODE.BINARY, payload: text("z") },
    ].map((f) => {
      const e = asm.push(f);
      return e.kind === "message" ? `${decodeText(e.payload)}${e.compressed ? "(deflate)" : ""}` : e.kind;
    });
    expect(events).toEqual(["partial", "control", "partial", "INVITE", "orphan_continuation", "z(deflate)"]);
  });
});

describe("parseHttpHead (RFC 6455 §4)", () => {
  const request =
    "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: sip\r\n\r\n";
  const response = "HTTP/1.1 101 Switching Protocols\r\nupgrade: WebSocket\r\nConnection: Upgrade\r\n\r\n";
  test.each([
    ["client handshake", request + "\x81", { kind: "upgrade", length: request.length }],
    ["server handshake", response, { kind: "upgrade", length: response.length }],
    [
      "plain HTTP response with a body",
      "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody",
      { kind: "http", length: 42 },
    ],
    ["refused upgrade", "HTTP/1.1 400 Bad\r\nUpgrade: websocket\r\n\r\n", { kind: "http", length: 40 }],
    ["head not complete", "GET / HTTP/1.1\r\nUpgrade: websocket\r\n", { kind: "incomplete" }],
    ["a prefix of GET", "GE", { kind: "incomplete" }],
    ["SIP", "INVITE sip:a SIP/2.0\r\n\r\n", { kind: "not_http" }],
  ])("%s", (_name, input, expected) => {
    expect(parseHttpHead(text(input), 0)).toEqual(expected as { kind: "incomplete" });
  });

  test("from an offset", () => {
    expect(parseHttpHead(concat([text("xx"), text(response)]), 2)).toEqual({
      kind: "upgrade",
      length: response.length,
    });
  });
});
