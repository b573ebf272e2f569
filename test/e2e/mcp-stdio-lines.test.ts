/**
 * `svc mcp`'s line rules as a real process (docs/MCP.md "svc mcp"): a request line over the limit
 * (20 MB here) and a line that is not JSON each get a JSON-RPC error with id null, and the requests
 * after them are served; closing stdin ends the process with 0. Needs no coordinator: initialize
 * and tools/list never call it.
 */
import { expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { ROOT } from "./cli-harness.ts";

type Message = {
  jsonrpc: string;
  id: number | string | null;
  result?: { tools?: Array<{ name: string }> };
  error?: { code: number; message: string };
};

/** The JSON lines of a stream, one message at a time; undefined once it ends. */
function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<Message | undefined> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return async () => {
    for (;;) {
      const newline = buffered.indexOf("\n");
      if (newline !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        return JSON.parse(line) as Message;
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffered += decoder.decode(value, { stream: true });
    }
  };
}

const request = (id: number, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;

test("a 20 MB request line and a line that is not JSON get JSON-RPC errors; the next request is served", async () => {
  await using dir = tempDir();
  const config = `${dir.path}/mcp.json`;
  await Bun.write(
    config,
    JSON.stringify({
      log: { level: "warn" },
      mcp: { svc_base_url: "http://127.0.0.1:9", svc_token: "not-used-by-tools-list" },
    }),
  );
  const proc = Bun.spawn([process.execPath, "src/main.ts", "mcp", "--config-path", config], {
    cwd: ROOT,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "" },
  });
  const next = lineReader(proc.stdout);
  // A process that quit (the SDK transport closes on an over-long line) fails below, on its answers.
  const send = async (text: string) => {
    try {
      proc.stdin.write(text);
      await proc.stdin.flush();
    } catch {}
  };
  try {
    await send(
      request(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "svc-test", version: "1.0.0" },
      }),
    );
    expect((await next())?.id).toBe(1);
    await send(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    // A request of 20 MB: a JSON-RPC message the SDK would parse, but longer than the line limit.
    await send(request(2, "tools/list", { pad: "x".repeat(20 * 1024 * 1024) }));
    await send("this is not JSON\n");
    await send(request(3, "tools/list"));
    const answers: Message[] = [];
    for (let m = await next(); m !== undefined; m = await next()) {
      answers.push(m);
      if (m.id === 3) break;
    }
    expect(answers.map((m) => [m.id, m.error?.code ?? "result"])).toEqual([
      [null, -32600],
      [null, -32700],
      [3, "result"],
    ]);
    expect(answers[0]!.error!.message).toContain("request line longer than the 1048576 byte limit");
    expect(answers[2]!.result!.tools!.map((t) => t.name).sort()).toEqual([
      "svc_query",
      "svc_query_sql",
      "svc_search_transactions",
    ]);
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
  } finally {
    proc.kill();
  }
}, 120_000);
