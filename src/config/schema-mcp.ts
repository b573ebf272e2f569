import { Type } from "@sinclair/typebox";

/**
 * `mcp`: the natural-language tool server (`svc mcp`, `POST /mcp/query`, docs/MCP.md; keys and
 * defaults of docs/MCP.md "Configuration"). Secrets carry `secret: true` (masked by
 * `show-config`, never logged).
 */
const str = (def: string, description: string) => Type.String({ default: def, description });
const secret = (description: string) => Type.String({ default: "", description, secret: true });
const int = (def: number, description: string, min: number, max: number) =>
  Type.Integer({ default: def, description, minimum: min, maximum: max });
const bool = (def: boolean, description: string) => Type.Boolean({ default: def, description });

export const McpConfigSchema = Type.Object(
  {
    enable: bool(
      false,
      "also serve the tools inside `svc serve` (MCP streamable HTTP at <api>/mcp, behind the API's auth); `svc mcp` runs regardless",
    ),
    mode: Type.Union([Type.Literal("hybrid"), Type.Literal("structured"), Type.Literal("sql")], {
      default: "hybrid",
      description:
        "hybrid: each request picks structured or sql (mode member, or auto); structured or sql: every request uses that mode (one of: hybrid, structured, sql)",
    }),
    svc_base_url: str("http://127.0.0.1:8080", "coordinator URL `svc mcp` calls (required; the API prefix is added)"),
    svc_token: secret("API token `svc mcp` sends to the coordinator (required by `svc mcp`)"),
    svc_auth_header: str(
      "",
      "header that carries the token raw (e.g. Auth-Token); empty: Authorization: Bearer <token>",
    ),
    default_limit: int(
      100,
      "rows of a structured answer when the request names no limit; capped at 1000",
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    sql_default_limit: int(
      100,
      "rows of a sql answer when the request names no limit; capped at 50000",
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    request_timeout_sec: int(30, "time-out of each coordinator call of `svc mcp`, seconds", 1, 3600),
    llm: Type.Object(
      {
        enable: bool(false, "ask the language model for the filters (parser auto/llm)"),
        provider: str("openai", "every non-empty value means the OpenAI chat-completions shape"),
        base_url: str(
          "https://api.openai.com/v1",
          "chat-completions root: <base_url>/chat/completions and <base_url>/models",
        ),
        api_key: secret("sent as Authorization: Bearer <key> only when non-empty"),
        model: str("gpt-4o-mini", "model name sent with every request"),
        temperature: Type.Number({ default: 0.1, minimum: 0, maximum: 2, description: "sampling temperature" }),
        max_tokens: int(400, "answer size cap, tokens", 1, 100000),
        timeout_sec: int(15, "time-out of one model call, seconds", 1, 600),
      },
      { description: "language-model bridge (OpenAI-compatible)", additionalProperties: false, default: {} },
    ),
  },
  { description: "natural-language tool server (docs/MCP.md)", additionalProperties: false, default: {} },
);
