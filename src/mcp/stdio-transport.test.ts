import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { LineTransport } from "./stdio-transport.ts";

/** A transport on in-memory streams with a 64-byte line limit; what it delivers and what it answers. */
async function transport() {
  const input = new PassThrough();
  const output = new PassThrough();
  const t = new LineTransport(input, output, 64);
  const delivered: unknown[] = [];
  t.onmessage = (m) => delivered.push(m);
  await t.start();
  const answers = () => {
    // Bun's PassThrough.read() gives one written chunk per call.
    let text = "";
    for (let c = output.read(); c !== null; c = output.read()) text += String(c);
    return text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; error: { code: number; message: string } });
  };
  return { t, input, delivered, answers };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });

describe('svc mcp line transport (docs/MCP.md "svc mcp")', () => {
  test("lines split across chunks, CRLF and blank lines are read as the client meant", async () => {
    const { input, delivered, answers } = await transport();
    const text = `${ping(1)}\r\n\n${ping(2)}\n`;
    for (const c of [text.slice(0, 5), text.slice(5, 30), text.slice(30)]) input.write(c);
    expect(delivered).toEqual([JSON.parse(ping(1)), JSON.parse(ping(2))]);
    expect(answers()).toEqual([]);
  });

  test("an over-long line gets one -32600 with id null, even when it arrives in many chunks; the next line is served", async () => {
    const { input, delivered, answers } = await transport();
    for (let i = 0; i < 10; i++) input.write("y".repeat(40));
    input.write(`tail\n${ping(3)}\n`);
    expect(delivered).toEqual([JSON.parse(ping(3))]);
    const got = answers();
    expect(got.map((a) => [a.id, a.error.code])).toEqual([[null, -32600]]);
    expect(got[0]!.error.message).toContain("longer than the 64 byte limit");
  });

  test("a line of exactly the limit is read; not JSON is -32700, JSON that is not JSON-RPC is -32600", async () => {
    const { input, delivered, answers } = await transport();
    const exact = JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping", params: { p: "" } });
    const padded = exact.replace('"p":""', `"p":"${"z".repeat(64 - exact.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(64);
    input.write(`${padded}\n{not json\n[1,2]\n`);
    expect(delivered).toHaveLength(1);
    expect(answers().map((a) => [a.id, a.error.code])).toEqual([
      [null, -32700],
      [null, -32600],
    ]);
  });
});
