/**
 * `POST /mcp/query` and `GET /mcp/llm/status` (docs/MCP.md) on a live appliance with
 * calls ingested over UDP, the language model being an OpenAI-compatible server written here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { configureLogging } from "../../src/core/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { series } from "./stream-helpers.ts";
import { api, applianceConfig, BYPASS, ingestCalls, type Api, type Calls } from "./mcp-harness.ts";

type Behaviour = "json" | "non_json" | "401" | "404" | "slow" | "hold";
/** "hold": answers (good JSON) once the test opens the gate. */
let openGate = () => {};
let gate = Promise.resolve();
let behaviour: Behaviour = "json";
let modelAnswer: Record<string, unknown> = {};
const seen: Array<{ path: string; auth: string | null; body: Record<string, unknown> | null }> = [];
const KEY = "sk-test-secret-key-0123456789";

/** The OpenAI-compatible test server: /v1/chat/completions and /v1/models. */
const llm = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const path = new URL(req.url).pathname;
    const body = req.method === "POST" ? ((await req.json()) as Record<string, unknown>) : null;
    seen.push({ path, auth: req.headers.get("authorization"), body });
    if (behaviour === "401") return Response.json({ error: { message: "Incorrect API key" } }, { status: 401 });
    if (behaviour === "404" || (path !== "/v1/chat/completions" && path !== "/v1/models"))
      return new Response("not found", { status: 404 });
    if (path === "/v1/models") return Response.json({ object: "list", data: [{ id: "test-model", object: "model" }] });
    if (behaviour === "slow") await Bun.sleep(3500);
    if (behaviour === "hold") await gate;
    const content = behaviour === "non_json" ? "Sure! The caller is 1001." : JSON.stringify(modelAnswer);
    return Response.json({
      id: "c1",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    });
  },
});

let dirA: TempDir;
let dirB: TempDir;
/** A: language model enabled (the server above). B: defaults (model disabled). */
let a: TestAppliance;
let b: TestAppliance;
let apiA: Api;
let apiB: Api;
let calls: Calls;
let callsB: Calls;

beforeAll(async () => {
  dirA = tempDir();
  dirB = tempDir();
  a = await startTestAppliance(
    dirA.path,
    applianceConfig({
      mcp: {
        llm: {
          enable: true,
          base_url: `http://127.0.0.1:${llm.port}/v1`,
          api_key: KEY,
          model: "test-model",
          timeout_sec: 3,
        },
      },
    }),
  );
  b = await startTestAppliance(dirB.path, applianceConfig());
  [calls, callsB] = await Promise.all([ingestCalls(a), ingestCalls(b)]);
  [apiA, apiB] = await Promise.all([api(a), api(b)]);
}, 90_000);

afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await b?.[Symbol.asyncDispose]();
  await dirA?.[Symbol.asyncDispose]();
  await dirB?.[Symbol.asyncDispose]();
  llm.stop(true);
});

const sessionIds = (items: unknown) => (items as Array<{ session_id: string }>).map((r) => r.session_id).sort();

describe("POST /mcp/query, structured", () => {
  test("the regex parser's filters give exactly the structured search's answer", async () => {
    const r = await apiB.call("POST", "/mcp/query", {
      query_text: "INVITE from caller 1001 in the last hour",
      parser: "regex",
    });
    expect(r.status).toBe(200);
    expect(r.json.mode).toBe("structured");
    expect(r.json.normalized_filters).toMatchObject({
      method: "INVITE",
      from_user: "1001",
      time_range_label: "last_hour",
    });
    expect(r.json.meta).toEqual({ parser: { used: "regex", requested: "regex", model: null, latency_ms: null } });
    expect(sessionIds(r.json.items)).toEqual([callsB.invite]);
    const direct = await apiB.call("POST", "/transactions/search", r.json.api_payload);
    const d = direct.json as { data: { items: unknown[]; keys: string[] }; meta: { pagination: { total: number } } };
    expect(r.json.items).toEqual(d.data.items);
    expect(r.json.keys).toEqual(d.data.keys);
    expect(r.json.total).toBe(d.meta.pagination.total);
  });

  test("addresses, callee and explicit timestamps", async () => {
    const r = await apiB.call("POST", "/mcp/query", {
      query_text: "OPTIONS src ip 10.32.0.1 destination ip 10.32.0.2 callee 4004",
      timestamp: { from: callsB.t0Ms, to: callsB.t0Ms + 60_000 },
    });
    expect(r.status).toBe(200);
    expect(r.json.normalized_filters).toEqual({
      method: "OPTIONS",
      src_ip: "10.32.0.1",
      dst_ip: "10.32.0.2",
      to_user: "4004",
      time_range_label: "custom",
      from_ms: callsB.t0Ms,
      to_ms: callsB.t0Ms + 60_000,
    });
    expect(sessionIds(r.json.items)).toEqual([callsB.options]);
    expect((r.json.api_payload as { filter: { event_type: string } }).filter.event_type).toBe("default");
    const cancel = await apiB.call("POST", "/mcp/query", {
      query_text: "CANCEL callee 4004",
      timestamp: { from: callsB.t0Ms, to: callsB.t0Ms + 60_000 },
    });
    expect(
      (cancel.json.items as Array<{ method: string; session_id: string }>).map((x) => [x.method, x.session_id]),
    ).toEqual([["CANCEL", callsB.options]]);
    const outside = await apiB.call("POST", "/mcp/query", {
      query_text: "OPTIONS callee 4004",
      timestamp: { from: callsB.t0Ms + 60_000, to: callsB.t0Ms + 120_000 },
    });
    expect(outside.json.total).toBe(0);
  });

  test("now_utc_unix_ms moves the time words: an hour before the calls finds nothing", async () => {
    const r = await apiB.call("POST", "/mcp/query", {
      query_text: "call-id " + callsB.invite,
      now_utc_unix_ms: callsB.t0Ms - 3_600_000,
    });
    expect(r.json.total).toBe(0);
    const now = await apiB.call("POST", "/mcp/query", {
      query_text: "call-id " + callsB.invite,
      now_utc_unix_ms: callsB.t0Ms + 600_000,
    });
    expect(now.json.total).toBe(3);
  });

  test("limit is capped at 1000 (structured) and bad members are 400s", async () => {
    const r = await apiB.call("POST", "/mcp/query", { query_text: "INVITE", limit: 5000 });
    expect((r.json.api_payload as { param: { limit: number } }).param.limit).toBe(1000);
    // biome-ignore lint/correctness/noPrecisionLoss: a time far past year 9999 on purpose (it is clamped)
    const farMs = 99_999_999_999_999_999;
    const far = await apiB.call("POST", "/mcp/query", {
      query_text: "show sql INVITE",
      timestamp: { from: -5, to: farMs },
    });
    expect(far.status).toBe(200);
    expect(far.json.api_payload).toMatchObject({ timestamp: { from: 0, to: Date.UTC(9999, 11, 31, 23, 59, 59, 999) } });
    for (const body of [
      {},
      { query_text: "" },
      { query_text: "x", mode: "fast" },
      { query_text: "x", parser: "gpt" },
      { query_text: "x", limit: 0 },
      { query_text: "INVITE", timestamp: { from: 2, to: 1 } },
      { query_text: "today", now_utc_unix_ms: 9_000_000_000_000_000 },
    ]) {
      const bad = await apiB.call("POST", "/mcp/query", body);
      expect(bad.status).toBe(400);
      expect(typeof bad.json.message).toBe("string");
    }
  });
});

describe("POST /mcp/query, sql", () => {
  test("the text asks for SQL: generated, validated, run; a Call-ID holding forbidden words is a literal", async () => {
    const r = await apiB.call("POST", "/mcp/query", {
      query_text: `show sql for call-id ${callsB.tricky} today`,
      limit: 60_000,
    });
    expect(r.status).toBe(200);
    expect(r.json.mode).toBe("sql");
    const sql = r.json.generated_sql as string;
    expect(sql).toStartWith("SELECT * FROM svc_lake.main.hep_proto_1_call WHERE ");
    expect(sql).toContain(`session_id = '${callsB.tricky}'`);
    expect(sql).toEndWith(`ORDER BY "timestamp" DESC LIMIT 50000`);
    expect(sessionIds(r.json.items)).toEqual([callsB.tricky]);
    const structured = await apiB.call("POST", "/mcp/query", { query_text: `call-id ${callsB.tricky} today` });
    expect(structured.json.mode).toBe("structured");
    expect(structured.json.generated_sql).toBeUndefined();
    expect(sessionIds(structured.json.items)).toEqual(sessionIds(r.json.items));
  });

  test("mode sql gives the same rows as the structured search", async () => {
    const q = { query_text: "caller 1001", now_utc_unix_ms: Date.now() };
    const s = await apiB.call("POST", "/mcp/query", { ...q, mode: "sql" });
    const t = await apiB.call("POST", "/mcp/query", { ...q, mode: "structured" });
    expect(s.json.total).toBe(3);
    expect(sessionIds(s.json.items)).toEqual(sessionIds(t.json.items));
  });

  test("the SQL bypass list: every one is a 4xx and nothing runs", async () => {
    await using marker = tempDir("svc-bypass-");
    const before = series(b.app.metrics.render(), "svc_sql_queries_total", 'result="ok"');
    for (const text of BYPASS(marker.path)) {
      for (const mode of ["sql", "auto", "structured"]) {
        const r = await apiB.call("POST", "/mcp/query", { query_text: text, mode });
        expect({ text, mode, status: r.status }).toEqual({ text, mode, status: 400 });
        expect(r.json.error).toBe("SQL_FORBIDDEN");
      }
    }
    expect(series(b.app.metrics.render(), "svc_sql_queries_total", 'result="ok"')).toBe(before);
    expect(existsSync(`${marker.path}/out.csv`)).toBe(false);
    expect(existsSync(`${marker.path}/evil.db`)).toBe(false);
  });
});

describe("language model", () => {
  test("good JSON: the model's filters, regex fills what it omitted; request shape and key", async () => {
    behaviour = "json";
    modelAnswer = { method: "INVITE", from_user: "1001" };
    seen.length = 0;
    const r = await apiA.call("POST", "/mcp/query", { query_text: "what did alice dial, destination ip 10.31.0.2" });
    expect(r.status).toBe(200);
    expect(r.json.normalized_filters).toMatchObject({ method: "INVITE", from_user: "1001", dst_ip: "10.31.0.2" });
    expect((r.json.meta as { parser: Record<string, unknown> }).parser).toMatchObject({
      used: "llm",
      requested: "auto",
      model: "test-model",
    });
    expect(sessionIds(r.json.items)).toEqual([calls.invite]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.path).toBe("/v1/chat/completions");
    expect(seen[0]!.auth).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.body).toMatchObject({
      model: "test-model",
      response_format: { type: "json_object" },
      max_tokens: 400,
    });
  });

  test("the model's new keys are taken; a question neither it nor the regex parser maps is not understood", async () => {
    behaviour = "json";
    modelAnswer = { response_code: 200, cseq_method: "invite", ip: "10.31.0.2" };
    const r = await apiA.call("POST", "/mcp/query", { query_text: "which calls got through at the pbx?" });
    expect(r.json.normalized_filters).toMatchObject({ response_code: "200", cseq_method: "INVITE", ip: "10.31.0.2" });
    expect([r.json.understood, r.json.ignored]).toEqual([true, ["got", "through", "pbx"]]);
    expect(sessionIds(r.json.items)).toEqual([calls.invite]);
    modelAnswer = {};
    const no = await apiA.call("POST", "/mcp/query", { query_text: "how is the weather" });
    expect([no.status, no.json.understood, no.json.total, no.json.items]).toEqual([200, false, 0, []]);
    expect((no.json.meta as { parser: { used: string } }).parser.used).toBe("llm");
  });

  test("a model that names SQL gets no say: only filters are taken", async () => {
    behaviour = "json";
    modelAnswer = { call_id: "x' OR 1=1 --", sql: "DROP TABLE svc_lake.main.hep_proto_1_call" };
    const r = await apiA.call("POST", "/mcp/query", { query_text: "show sql for the broken call", parser: "llm" });
    expect(r.status).toBe(200);
    expect(r.json.generated_sql as string).toContain(`session_id = 'x'' OR 1=1 --'`);
    expect(r.json.total).toBe(0);
  });

  test.each([
    ["non_json", /non-JSON/],
    ["401", /api_key/],
    ["404", /base_url/],
    ["slow", /did not answer within 3 s/],
  ] as const)(
    "%s: parser=llm is a 502 with the reason, parser=auto falls back to regex (200)",
    async (mode, reason) => {
      behaviour = mode;
      const strict = await apiA.call("POST", "/mcp/query", { query_text: "INVITE from caller 1001", parser: "llm" });
      expect(strict.status).toBe(502);
      expect(strict.json.message as string).toMatch(reason);
      expect(strict.text).not.toContain(KEY);
      const logs: Array<Record<string, unknown>> = [];
      configureLogging({
        level: "warn",
        format: "json",
        sink: { write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) },
      });
      let auto;
      try {
        auto = await apiA.call("POST", "/mcp/query", { query_text: "INVITE from caller 1001" });
      } finally {
        configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
      }
      expect(auto.status).toBe(200);
      const warning = logs.find((l) => l.msg === "language model failed; the regex parser answers");
      expect(warning).toMatchObject({ level: "warn", component: "mcp" });
      expect(warning!.detail as string).toMatch(reason);
      expect(JSON.stringify(logs)).not.toContain(KEY);
      expect((auto.json.meta as { parser: { used: string; error: string } }).parser.used).toBe("regex_fallback");
      expect((auto.json.meta as { parser: { error: string } }).parser.error).toMatch(reason);
      expect(sessionIds(auto.json.items)).toEqual([calls.invite]);
      seen.length = 0;
      const regex = await apiA.call("POST", "/mcp/query", { query_text: "INVITE from caller 1001", parser: "regex" });
      expect(regex.status).toBe(200);
      expect(seen).toHaveLength(0);
    },
    30_000,
  );

  test("at most four model calls at once: a fifth is a 429 (parser llm) or the regex fallback (auto)", async () => {
    behaviour = "hold";
    modelAnswer = { method: "INVITE" };
    gate = new Promise<void>((r) => (openGate = r));
    seen.length = 0;
    const held = [1, 2, 3, 4].map(() => apiA.call("POST", "/mcp/query", { query_text: "calls", parser: "llm" }));
    await waitFor("four model calls in flight", () => seen.length === 4);
    const fifth = await apiA.call("POST", "/mcp/query", { query_text: "calls", parser: "llm" });
    expect(fifth.status).toBe(429);
    expect(fifth.json.message as string).toContain("4 language-model calls are already running");
    const auto = await apiA.call("POST", "/mcp/query", { query_text: "calls" });
    expect((auto.json.meta as { parser: { used: string } }).parser.used).toBe("regex_fallback");
    expect(seen).toHaveLength(4);
    openGate();
    for (const r of await Promise.all(held))
      expect([r.status, (r.json.meta as { parser: { used: string } }).parser.used]).toEqual([200, "llm"]);
  }, 30_000);

  test("parser=llm while the bridge is disabled is a 424", async () => {
    const r = await apiB.call("POST", "/mcp/query", { query_text: "INVITE", parser: "llm" });
    expect(r.status).toBe(424);
    expect(r.json.message as string).toContain("mcp.llm.enable");
  });

  test("GET /mcp/llm/status probes the model list and never returns the key", async () => {
    behaviour = "json";
    const r = await apiA.call("GET", "/mcp/llm/status");
    expect(r.json.data).toEqual({
      enabled: true,
      provider: "openai",
      provider_supported: true,
      base_url: `http://127.0.0.1:${llm.port}/v1`,
      model: "test-model",
      key_configured: true,
      checked: true,
      reachable: true,
      detail: "GET /models answered HTTP 200",
    });
    expect(r.text).not.toContain(KEY);
    behaviour = "401";
    const refused = await apiA.call("GET", "/mcp/llm/status?check=true");
    expect(refused.json.data).toMatchObject({ checked: true, reachable: false });
    expect((refused.json.data as { detail: string }).detail).toContain("api_key");
    const unchecked = await apiA.call("GET", "/mcp/llm/status?check=false");
    expect(unchecked.json.data).toMatchObject({ checked: false, reachable: null });
    const off = await apiB.call("GET", "/mcp/llm/status?check=false");
    expect(off.json.data).toMatchObject({ enabled: false, key_configured: false });
    expect((await apiB.call("GET", "/mcp/llm/status?check=maybe")).status).toBe(400);
  });

  test("the parser metric counts each parser and mode", () => {
    const text = a.app.metrics.render();
    expect(
      series(text, "svc_mcp_parser_duration_seconds_count", 'parser="llm",mode="structured"'),
    ).toBeGreaterThanOrEqual(1);
    expect(series(text, "svc_mcp_parser_duration_seconds_count", 'parser="llm",mode="sql"')).toBeGreaterThanOrEqual(1);
    expect(series(text, "svc_mcp_parser_duration_seconds_count", 'parser="regex_fallback",mode="structured"')).toBe(5);
    expect(series(text, "svc_mcp_parser_duration_seconds_count", 'parser="regex",mode="structured"')).toBe(4);
  });
});

test("without a credential the routes are 401", async () => {
  const r = await fetch(`${apiB.base}/mcp/query`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query_text: "INVITE" }),
  });
  expect(r.status).toBe(401);
});
