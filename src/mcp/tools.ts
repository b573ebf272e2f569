import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AppError, VERSION } from "../core/index.ts";
import {
  MAX_SQL_LIMIT,
  MAX_STRUCTURED_LIMIT,
  type McpEngine,
  type McpMode,
  type McpParser,
  type McpRequest,
  type McpResult,
} from "./engine.ts";

/**
 * The three tools (docs/MCP.md "svc mcp
 * --config-path f") on the official MCP SDK server. The SDK answers `initialize` (every version it
 * supports, 2024-11-05 included), `notifications/initialized` and `ping`; this file lists and calls
 * the tools.
 */
const text = {
  type: "string",
  minLength: 1,
  maxLength: 4000,
  description: 'the question in plain language, e.g. "INVITE from caller alice today"',
};
const now = {
  type: "integer",
  description:
    "current time as Unix epoch ms (UTC); the time words (last hour, today, yesterday) count from it. Default: the server's clock",
};
const parser = {
  type: "string",
  enum: ["auto", "llm", "regex"],
  default: "auto",
  description:
    "auto: the language model when enabled, regex when it fails; llm: the model or an error; regex: never the model",
};
const limit = (max: number) => ({ type: "integer", minimum: 1, maximum: max, description: `rows at most (1..${max})` });

export const TOOLS = [
  {
    name: "svc_search_transactions",
    description:
      "Search captured SIP calls in plain language (English or German): the text becomes search filters (method, response code or class, busy/failed/answered/cancelled/rejected calls, src/dst IP, Call-ID, caller, callee, user agent, time range) for the structured search. The answer says what was understood (summary, normalized_filters) and which words were ignored; understood=false when nothing maps to a filter (no rows). Read-only.",
    inputSchema: {
      type: "object",
      properties: { query_text: text, now_utc_unix_ms: now, limit: limit(MAX_STRUCTURED_LIMIT), parser },
      required: ["query_text"],
      additionalProperties: false,
    },
  },
  {
    name: "svc_query_sql",
    description:
      "Like svc_search_transactions, but builds SELECT * FROM svc_lake.main.hep_proto_1_call WHERE … ORDER BY timestamp DESC LIMIT n from the filters, validates and runs it read-only, and returns it as generated_sql. The text itself is never run as SQL.",
    inputSchema: {
      type: "object",
      properties: { query_text: text, now_utc_unix_ms: now, limit: limit(MAX_SQL_LIMIT), parser },
      required: ["query_text"],
      additionalProperties: false,
    },
  },
  {
    name: "svc_query",
    description:
      "Either of the two: structured unless the text asks for SQL (mode=sql, sql:, show sql, display sql, print sql, raw sql) or mode says so.",
    inputSchema: {
      type: "object",
      properties: {
        query_text: text,
        mode: { type: "string", enum: ["auto", "structured", "sql"], default: "auto" },
        now_utc_unix_ms: now,
        limit: limit(MAX_SQL_LIMIT),
        parser,
      },
      required: ["query_text"],
      additionalProperties: false,
    },
  },
] as const;

/** The tool-server envelope (docs/MCP.md "svc mcp"). */
export function toolEnvelope(r: McpResult) {
  return {
    mode: r.mode,
    understood: r.understood,
    ignored: r.ignored,
    summary: r.summary,
    normalized_filters: r.normalized_filters,
    api_payload: r.api_payload,
    ...(r.generated_sql !== undefined ? { generated_sql: r.generated_sql } : {}),
    total: r.total,
    items: r.items,
    keys: r.keys,
    meta: {
      parser_used: r.parser.used,
      llm_model: r.parser.model,
      llm_latency_ms: r.parser.latency_ms,
      ...(r.parser.error !== undefined ? { llm_error: r.parser.error } : {}),
    },
  };
}

const toolError = (message: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: message }] });

/** Tool arguments → an engine request; a string naming the bad argument otherwise. */
export function toolRequest(name: string, args: Record<string, unknown>): McpRequest | string {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) return `unknown tool ${JSON.stringify(name)} (tools: ${TOOLS.map((t) => t.name).join(", ")})`;
  const props = tool.inputSchema.properties as Record<string, { enum?: readonly string[]; maximum?: number }>;
  for (const k of Object.keys(args)) if (!(k in props)) return `${name}: unknown argument ${JSON.stringify(k)}`;
  if (typeof args.query_text !== "string" || args.query_text.trim() === "")
    return `${name}: query_text (a non-empty string) is required`;
  for (const k of ["mode", "parser"] as const) {
    const v = args[k];
    if (v !== undefined && !(typeof v === "string" && props[k]?.enum?.includes(v)))
      return `${name}: ${k} must be one of ${props[k]?.enum?.join(", ")}`;
  }
  for (const k of ["limit", "now_utc_unix_ms"] as const) {
    const v = args[k];
    if (v !== undefined && !(typeof v === "number" && Number.isSafeInteger(v) && v >= (k === "limit" ? 1 : 0)))
      return `${name}: ${k} must be a positive integer`;
  }
  const max = props.limit?.maximum;
  if (typeof args.limit === "number" && max !== undefined && args.limit > max)
    return `${name}: limit must be at most ${max}`;
  const mode: McpMode =
    name === "svc_search_transactions"
      ? "structured"
      : name === "svc_query_sql"
        ? "sql"
        : ((args.mode as McpMode | undefined) ?? "auto");
  return {
    query_text: args.query_text,
    mode,
    fixedMode: name !== "svc_query",
    parser: args.parser as McpParser | undefined,
    limit: args.limit as number | undefined,
    now_utc_unix_ms: args.now_utc_unix_ms as number | undefined,
  };
}

/** A fresh MCP server whose tools run on `engine` (read-only). */
export function createMcpServer(engine: McpEngine): Server {
  const server = new Server(
    { name: "svc", version: VERSION },
    { capabilities: { tools: {} }, instructions: "Read-only search of captured SIP calls (docs/MCP.md)." },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({ ...t, inputSchema: structuredClone(t.inputSchema) as never })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const parsed = toolRequest(req.params.name, req.params.arguments ?? {});
    if (typeof parsed === "string") return toolError(parsed);
    try {
      const envelope = toolEnvelope(await engine.query(parsed));
      return { content: [{ type: "text", text: JSON.stringify(envelope) }], structuredContent: envelope };
    } catch (e) {
      if (e instanceof AppError) return toolError(`${e.code}: ${e.message}`);
      return toolError("INTERNAL: the tool failed (see the tool server's log)");
    }
  });
  return server;
}
