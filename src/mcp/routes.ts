import { Elysia, t } from "elysia";
import { ErrorResponse, errorBody, errors } from "../api/index.ts";
import { AppError } from "../core/index.ts";
import { MAX_SQL_LIMIT, MAX_TEXT_CHARS, type McpEngine, type McpResult } from "./engine.ts";

/**
 * `POST /mcp/query` and `GET /mcp/llm/status` (docs/MCP.md "POST /api/v4/mcp/query"),
 * and with `mcp.enable` the tools over MCP streamable HTTP at `/mcp` (docs/MCP.md "Inside svc
 * serve"). Every path is under the v4 API, so the API's authentication guards it.
 */
const McpQueryBody = t.Object(
  {
    query_text: t.String({
      minLength: 1,
      maxLength: MAX_TEXT_CHARS,
      pattern: "\\S",
      description: "the question in plain language",
    }),
    mode: t.Optional(
      t.Union([t.Literal("auto"), t.Literal("structured"), t.Literal("sql")], {
        description:
          "auto (default): sql only when the text asks (mode=sql, sql:, show sql, display sql, print sql, raw sql); mcp.mode structured or sql overrides it",
      }),
    ),
    parser: t.Optional(
      t.Union([t.Literal("auto"), t.Literal("llm"), t.Literal("regex")], {
        description:
          "auto (default): the language model when mcp.llm.enable, the regex parser when it fails; llm: the model or 424/502; regex: never the model",
      }),
    ),
    limit: t.Optional(
      t.Integer({
        minimum: 1,
        description: `rows at most (default mcp.default_limit / mcp.sql_default_limit), capped at 1000 structured and ${MAX_SQL_LIMIT} sql`,
      }),
    ),
    timestamp: t.Optional(
      t.Object({
        from: t.Optional(t.Integer({ description: "epoch ms; replaces the range the text names" })),
        to: t.Optional(t.Integer({ description: "epoch ms" })),
      }),
    ),
    now_utc_unix_ms: t.Optional(
      t.Integer({
        minimum: 0,
        description: "the current time the time words count from (default: the server's clock)",
      }),
    ),
  },
  { additionalProperties: false },
);

const Filters = t.Object(
  {
    method: t.Optional(t.String()),
    src_ip: t.Optional(t.String()),
    dst_ip: t.Optional(t.String()),
    ip: t.Optional(t.String({ description: "either address (an address named without from/to)" })),
    call_id: t.Optional(t.String()),
    from_user: t.Optional(t.String()),
    to_user: t.Optional(t.String()),
    response_code: t.Optional(t.String({ description: "codes or classes, ;-separated: 486;600, 4xx;5xx;6xx" })),
    cseq_method: t.Optional(
      t.String({
        description: "the method the responses answer (busy, failed, answered, cancelled, rejected calls: INVITE)",
      }),
    ),
    user_agent: t.Optional(t.String({ description: "User-Agent substring (case-sensitive)" })),
    time_range_label: t.Optional(
      t.String({
        description:
          "last_hour, today, yesterday, last_<n>_minutes|hours|days, since_HH:MM, since_yesterday, between_HH:MM_and_HH:MM or custom",
      }),
    ),
    from_ms: t.Optional(t.Integer()),
    to_ms: t.Optional(t.Integer()),
  },
  { description: "the filter envelope (docs/MCP.md, Filters), range resolved" },
);

const McpQueryResponse = t.Object({
  mode: t.Union([t.Literal("structured"), t.Literal("sql")]),
  understood: t.Boolean({ description: "false: no word maps to a filter; nothing was searched (total 0, no items)" }),
  ignored: t.Array(t.String(), {
    description: "words of the question no filter used (filler words such as show, me, please are not listed)",
  }),
  summary: t.String({
    description:
      "what was understood and ignored, e.g. Understood: method INVITE, from user 1001, last 1 h · Ignored: 'please'",
  }),
  normalized_filters: Filters,
  api_payload: t.Object(
    {
      filter: t.Record(t.String(), t.Union([t.String(), t.Number()])),
      param: t.Object({ limit: t.Integer() }),
      timestamp: t.Object({ from: t.Integer(), to: t.Integer() }),
    },
    { description: "the POST /transactions/search body these filters make" },
  ),
  generated_sql: t.Optional(t.String({ description: "sql mode: the statement that ran" })),
  total: t.Integer({ description: "structured: meta.pagination.total of the search; sql: rows returned" }),
  items: t.Array(t.Unknown()),
  keys: t.Array(t.String()),
  meta: t.Object({
    parser: t.Object({
      used: t.Union([t.Literal("llm"), t.Literal("regex_fallback"), t.Literal("regex")]),
      requested: t.Union([t.Literal("auto"), t.Literal("llm"), t.Literal("regex")]),
      model: t.Union([t.String(), t.Null()]),
      latency_ms: t.Union([t.Integer(), t.Null()]),
      error: t.Optional(t.String({ description: "why the model was not used (only after a fallback)" })),
    }),
  }),
});

const LlmStatusResponse = t.Object({
  data: t.Object({
    enabled: t.Boolean(),
    provider: t.String(),
    provider_supported: t.Boolean(),
    base_url: t.String(),
    model: t.String(),
    key_configured: t.Boolean({ description: "an API key is set (the key itself is never returned)" }),
    checked: t.Boolean(),
    reachable: t.Union([t.Boolean(), t.Null()], { description: "null when not checked" }),
    detail: t.String(),
  }),
});

export const httpResult = (r: McpResult) => {
  const { parser, ...rest } = r;
  return { ...rest, meta: { parser } };
};

export function mcpRoutes(engine: McpEngine, opts: { streamable: boolean }) {
  const app = new Elysia({ name: "svc-mcp" })
    .post(
      "/mcp/query",
      async ({ body, set }) => {
        try {
          return httpResult(await engine.query(body));
        } catch (e) {
          // The model's failure is the answer (docs/API.md "Errors": 502), with the reason, which holds no secret.
          if (e instanceof AppError && e.code === "BAD_GATEWAY") {
            set.status = 502;
            return errorBody(e.code, e.message, e.details) as never;
          }
          throw e;
        }
      },
      {
        body: McpQueryBody,
        detail: {
          tags: ["MCP"],
          summary:
            "Natural-language query (docs/MCP.md): text → filters (regex and/or language model) → the structured search, or generated read-only SQL in sql mode",
        },
        response: { 200: McpQueryResponse, ...errors(400, 401, 429), 424: ErrorResponse, 502: ErrorResponse },
      },
    )
    .get("/mcp/llm/status", async ({ query }) => ({ data: await engine.llm.status(query.check !== "false") }), {
      query: t.Object({
        check: t.Optional(
          t.Union([t.Literal("true"), t.Literal("false")], { description: "true (default): probe <base_url>/models" }),
        ),
      }),
      detail: {
        tags: ["MCP"],
        summary:
          "Language-model bridge status; check=true probes the provider's model list (the key is never returned)",
      },
      response: { 200: LlmStatusResponse, ...errors(400, 401) },
    });
  if (!opts.streamable) return app;
  // Stateless streamable HTTP: one server and transport per request, JSON answers (docs/MCP.md).
  const handle = async ({ request, body }: { request: Request; body: unknown }) => {
    // The MCP SDK is loaded at the first request, not at start (docs/ARCHITECTURE.md "Start-up").
    const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
      import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
      import("./tools.ts"),
    ]);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = createMcpServer(engine);
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
    } finally {
      void server.close();
    }
  };
  // The transport allows a standalone event stream; a stateless server has nothing to send on it.
  const noStream = ({
    set,
    request,
  }: {
    set: { status?: number | string; headers: Record<string, string | number> };
    request: Request;
  }) => {
    set.status = 405;
    set.headers.allow = "POST";
    return errorBody(
      "METHOD_NOT_ALLOWED",
      `${request.method} /mcp: this MCP server is stateless and answers POST only (JSON responses, no event stream or session)`,
    );
  };
  return app
    .post("/mcp", handle, {
      detail: {
        tags: ["MCP"],
        summary:
          "MCP streamable HTTP (mcp.enable): JSON-RPC initialize, tools/list, tools/call of the three tools (docs/MCP.md)",
      },
    })
    .get("/mcp", noStream, {
      detail: {
        tags: ["MCP"],
        summary: "MCP streamable HTTP: 405, no server-sent event stream (stateless server, JSON answers)",
      },
    })
    .delete("/mcp", noStream, {
      detail: { tags: ["MCP"], summary: "MCP streamable HTTP: 405, no session to end (stateless server)" },
    });
}
