export { localBackend, nodesBackend, httpBackend, apiRoot, type HttpBackendOptions } from "./backends.ts";
export {
  McpEngine,
  MAX_SQL_LIMIT,
  MAX_STRUCTURED_LIMIT,
  type McpBackend,
  type McpRequest,
  type McpResult,
} from "./engine.ts";
export { mergeFilters, type NlFilters } from "./filters.ts";
export { parseWithRegex, understand } from "./phrases.ts";
export { LlmBridge, LlmError } from "./llm.ts";
export { mcpRoutes } from "./routes.ts";
export { generateSql, validateMcpSql, MCP_TABLE } from "./sql.ts";

/**
 * `svc mcp` (stdio.ts): the MCP SDK it needs is loaded when the command runs, so that `svc serve`
 * does not load it at start (docs/ARCHITECTURE.md "Start-up").
 */
export async function runMcpStdio(...args: Parameters<typeof import("./stdio.ts").runMcpStdio>): Promise<number> {
  return await (await import("./stdio.ts")).runMcpStdio(...args);
}
