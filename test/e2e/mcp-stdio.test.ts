/**
 * `svc mcp` as a real process driven by the official MCP SDK client (Client + StdioClientTransport)
 * against a live appliance with calls ingested over UDP; the same tools at `/mcp` of `svc serve`
 * (streamable HTTP). Answers are compared with the structured search API (docs/MCP.md).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, type TempDir } from "../harness.ts";
import { api, applianceConfig, BYPASS, ingestCalls, type Api, type Calls } from "../integration/mcp-harness.ts";
import { series } from "../integration/stream-helpers.ts";
import { ROOT } from "./cli-harness.ts";

let dir: TempDir;
let a: TestAppliance;
let http: Api;
let calls: Calls;
let apiToken = "";

beforeAll(async () => {
  dir = tempDir();
  a = await startTestAppliance(dir.path, applianceConfig({ mcp: { enable: true } }));
  calls = await ingestCalls(a);
  http = await api(a);
  const t = await http.call("POST", "/tokens", { name: "mcp" });
  apiToken = (t.json.data as { token: string }).token;
}, 90_000);

afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

async function configFile(mcp: Record<string, unknown>): Promise<string> {
  const path = `${dir.path}/mcp-${crypto.randomUUID()}.json`;
  await Bun.write(
    path,
    JSON.stringify({ log: { level: "warn" }, mcp: { svc_base_url: a.app.coordinatorUrl, ...mcp } }),
  );
  return path;
}

async function connect(mcp: Record<string, unknown>): Promise<Client & AsyncDisposable> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["src/main.ts", "mcp", "--config-path", await configFile(mcp)],
    cwd: ROOT,
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "" },
  });
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(transport);
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

type Envelope = {
  mode: string;
  understood: boolean;
  ignored: string[];
  summary: string;
  items: Array<{ session_id: string }>;
  keys: string[];
  total: number;
  api_payload: unknown;
  generated_sql?: string;
  normalized_filters: Record<string, unknown>;
  meta: Record<string, unknown>;
};
const envelope = (r: Awaited<ReturnType<Client["callTool"]>>) => {
  expect(r.isError ?? false).toBe(false);
  const e = r.structuredContent as Envelope;
  expect(JSON.parse((r.content as Array<{ text: string }>)[0]!.text)).toEqual(e);
  return e;
};
const ids = (e: Envelope) => e.items.map((x) => x.session_id).sort();
const errorText = (r: Awaited<ReturnType<Client["callTool"]>>) => {
  expect(r.isError).toBe(true);
  return (r.content as Array<{ text: string }>)[0]!.text;
};

describe("svc mcp over stdio", () => {
  test("lists the three tools and calls each; answers are the structured search's", async () => {
    await using client = await connect({ svc_token: http.token });
    expect(client.getServerVersion()?.name).toBe("svc");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["svc_query", "svc_query_sql", "svc_search_transactions"]);
    for (const t of tools) expect(t.inputSchema).toMatchObject({ type: "object", required: ["query_text"] });
    expect(
      (tools.find((t) => t.name === "svc_query_sql")!.inputSchema.properties as Record<string, { maximum?: number }>)
        .limit!.maximum,
    ).toBe(50000);

    const s = envelope(
      await client.callTool({
        name: "svc_search_transactions",
        arguments: { query_text: "INVITE from caller 1001 last hour", parser: "regex" },
      }),
    );
    expect(s.mode).toBe("structured");
    expect(s.meta).toEqual({ parser_used: "regex", llm_model: null, llm_latency_ms: null });
    expect(ids(s)).toEqual([calls.invite]);
    expect([s.understood, s.ignored, s.summary]).toEqual([
      true,
      [],
      "Understood: method INVITE, from user 1001, last 1 h",
    ]);
    const direct = await http.call("POST", "/transactions/search", s.api_payload);
    expect(s.items).toEqual((direct.json.data as { items: Envelope["items"] }).items);
    expect(s.total).toBe((direct.json.meta as { pagination: { total: number } }).pagination.total);

    const q = envelope(
      await client.callTool({ name: "svc_query_sql", arguments: { query_text: `call-id ${calls.tricky}`, limit: 10 } }),
    );
    expect(q.mode).toBe("sql");
    expect(q.generated_sql).toContain(`session_id = '${calls.tricky}'`);
    expect(q.generated_sql).toEndWith("LIMIT 10");
    expect(ids(q)).toEqual([calls.tricky]);

    const auto = envelope(
      await client.callTool({
        name: "svc_query",
        arguments: { query_text: "show sql caller 1001", now_utc_unix_ms: Date.now() },
      }),
    );
    expect(auto.mode).toBe("sql");
    expect(ids(auto)).toEqual([calls.invite, calls.invite, calls.invite]);
    const structured = envelope(
      await client.callTool({ name: "svc_query", arguments: { query_text: "caller 1001", mode: "structured" } }),
    );
    expect(ids(structured)).toEqual(ids(auto));
  }, 60_000);

  test('the tools say what they understood and ignored; a question with no filter lists nothing (docs/MCP.md "Answers")', async () => {
    await using client = await connect({ svc_token: http.token });
    const x = envelope(
      await client.callTool({
        name: "svc_search_transactions",
        arguments: { query_text: "please show INVITEs from 1001 with bad audio" },
      }),
    );
    expect(ids(x)).toEqual([calls.invite]);
    expect(x.ignored).toEqual(["bad", "audio"]);
    expect(x.summary).toBe("Understood: method INVITE, from user 1001, last 1 h (default) · Ignored: 'bad', 'audio'");
    for (const name of ["svc_search_transactions", "svc_query_sql"]) {
      const no = envelope(await client.callTool({ name, arguments: { query_text: "how is the weather" } }));
      expect([no.understood, no.total, no.items, no.ignored, no.generated_sql]).toEqual([
        false,
        0,
        [],
        ["weather"],
        undefined,
      ]);
      expect(no.summary).toStartWith("Not understood: no word maps to a filter");
    }
  }, 60_000);

  test("mcp.mode sql overrides svc_query's mode; the fixed tools keep theirs", async () => {
    await using client = await connect({
      svc_token: http.token,
      mode: "sql",
      default_limit: 5000,
      sql_default_limit: 7,
    });
    const q = envelope(
      await client.callTool({ name: "svc_query", arguments: { query_text: "caller 1001", mode: "structured" } }),
    );
    expect(q.mode).toBe("sql");
    expect(q.generated_sql).toContain("caller = '1001'");
    expect(q.generated_sql).toEndWith("LIMIT 7");
    const s = envelope(
      await client.callTool({ name: "svc_search_transactions", arguments: { query_text: "caller 1001" } }),
    );
    expect(s.mode).toBe("structured");
    expect(s.api_payload).toMatchObject({ param: { limit: 1000 } }); // mcp.default_limit 5000, capped
  }, 60_000);

  test("the language model through svc mcp: llm, regex_fallback with llm_error, BAD_GATEWAY for parser llm", async () => {
    let status = 200;
    using model = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        status === 200
          ? Response.json({
              choices: [
                { message: { role: "assistant", content: JSON.stringify({ method: "INVITE", to_user: "2002" }) } },
              ],
            })
          : Response.json({ error: { message: "no" } }, { status }),
    });
    await using client = await connect({
      svc_token: http.token,
      llm: { enable: true, base_url: `http://127.0.0.1:${model.port}/v1`, model: "tiny" },
    });
    const ok = envelope(
      await client.callTool({ name: "svc_search_transactions", arguments: { query_text: "who called 2002?" } }),
    );
    expect(ok.meta).toMatchObject({ parser_used: "llm", llm_model: "tiny" });
    expect(typeof ok.meta.llm_latency_ms).toBe("number");
    expect(ok.normalized_filters).toMatchObject({ method: "INVITE", to_user: "2002" });
    expect(ids(ok)).toEqual([calls.invite]);
    status = 404;
    const fallback = envelope(
      await client.callTool({ name: "svc_search_transactions", arguments: { query_text: "INVITE callee 2002" } }),
    );
    expect(fallback.meta).toMatchObject({ parser_used: "regex_fallback", llm_model: "tiny" });
    expect(fallback.meta.llm_error as string).toContain("mcp.llm.base_url");
    expect(ids(fallback)).toEqual([calls.invite]);
    expect(
      errorText(await client.callTool({ name: "svc_query", arguments: { query_text: "INVITE", parser: "llm" } })),
    ).toMatch(/^BAD_GATEWAY: parser llm: .*HTTP 404/);
  }, 60_000);

  test("the token goes raw in mcp.svc_auth_header; an API token as Bearer is refused with the reason", async () => {
    await using raw = await connect({ svc_token: apiToken, svc_auth_header: "Auth-Token" });
    expect(
      ids(
        envelope(
          await raw.callTool({ name: "svc_search_transactions", arguments: { query_text: `call-id ${calls.invite}` } }),
        ),
      ),
    ).toHaveLength(3);
    await using bearer = await connect({ svc_token: apiToken });
    expect(
      errorText(await bearer.callTool({ name: "svc_search_transactions", arguments: { query_text: "INVITE" } })),
    ).toMatch(/^UNAUTHORIZED: .*mcp\.svc_auth_header/);
  }, 60_000);

  test("bad arguments, parser llm while disabled, and the SQL bypass list are tool errors; nothing runs", async () => {
    await using client = await connect({ svc_token: http.token });
    expect(
      errorText(await client.callTool({ name: "svc_query_sql", arguments: { query_text: "INVITE", limit: 50001 } })),
    ).toContain("limit must be at most 50000");
    expect(
      errorText(
        await client.callTool({ name: "svc_search_transactions", arguments: { query_text: "INVITE", limit: 1001 } }),
      ),
    ).toContain("limit must be at most 1000");
    expect(
      errorText(await client.callTool({ name: "svc_query", arguments: { query_text: "INVITE", mode: "fast" } })),
    ).toContain("mode must be one of");
    expect(errorText(await client.callTool({ name: "svc_query", arguments: {} }))).toContain("query_text");
    expect(
      errorText(await client.callTool({ name: "svc_query", arguments: { query_text: "INVITE", parser: "llm" } })),
    ).toContain("mcp.llm.enable is false");
    const before = series(a.app.metrics.render(), "svc_sql_queries_total", 'result="ok"');
    for (const text of BYPASS(dir.path)) {
      for (const name of ["svc_query_sql", "svc_query"]) {
        const r = await client.callTool({ name, arguments: { query_text: text } });
        expect({ text, name, error: r.isError }).toEqual({ text, name, error: true });
        expect(errorText(r)).toStartWith("SQL_FORBIDDEN: ");
      }
    }
    expect(series(a.app.metrics.render(), "svc_sql_queries_total", 'result="ok"')).toBe(before);
  }, 60_000);

  test("initialize with protocol 2024-11-05, notifications/initialized, tools/list as raw JSON-RPC lines", async () => {
    const proc = Bun.spawn(
      [process.execPath, "src/main.ts", "mcp", "--config-path", await configFile({ svc_token: http.token })],
      { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe" },
    );
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "smoke", version: "0" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ];
    for (const l of lines) proc.stdin.write(`${JSON.stringify(l)}\n`);
    await proc.stdin.flush();
    const reader = proc.stdout.getReader();
    let out = "";
    while (out.split("\n").filter(Boolean).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    proc.stdin.end();
    const answers = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> });
    expect(answers[0]).toMatchObject({
      id: 1,
      result: { protocolVersion: "2024-11-05", serverInfo: { name: "svc" }, capabilities: { tools: {} } },
    });
    expect((answers[1]!.result.tools as Array<{ name: string }>).map((t) => t.name)).toEqual([
      "svc_search_transactions",
      "svc_query_sql",
      "svc_query",
    ]);
    expect(await proc.exited).toBe(0);
  }, 60_000);

  test.each([
    [{ svc_token: "" }, "mcp.svc_token is required"],
    [{ svc_token: "x", svc_base_url: "" }, "mcp.svc_base_url is required"],
  ])("start refused: %p", async (mcp, message) => {
    const proc = Bun.spawn([process.execPath, "src/main.ts", "mcp", "--config-path", await configFile(mcp)], {
      cwd: ROOT,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n")).toHaveLength(1);
    expect(stderr).toContain(message);
    expect(code).toBe(2);
  });
});

describe("mcp.enable: the tools inside svc serve at /mcp (streamable HTTP)", () => {
  test("the SDK client lists and calls the tools with the API credential; without one it is a 401", async () => {
    const url = new URL(`${http.base}/mcp`);
    const client = new Client({ name: "svc-test-http", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${http.token}` } } }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
        "svc_query",
        "svc_query_sql",
        "svc_search_transactions",
      ]);
      expect(
        ids(
          envelope(
            await client.callTool({
              name: "svc_search_transactions",
              arguments: { query_text: `call-id ${calls.invite}` },
            }),
          ),
        ),
      ).toEqual([calls.invite, calls.invite, calls.invite]);
    } finally {
      await client.close();
    }
    const anonymous = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anonymous.status).toBe(401);
    const stream = await fetch(url, {
      headers: { authorization: `Bearer ${http.token}`, accept: "text/event-stream" },
    });
    await stream.body?.cancel();
    expect(stream.status).toBe(405);
  }, 60_000);
});
