export { localBackend, httpBackend, apiRoot, type HttpBackendOptions } from "./backends.ts";
export { McpEngine, MAX_SQL_LIMIT, MAX_STRUCTURED_LIMIT, type McpBackend, type McpRequest, type McpResult } from "./engine.ts";
export { mergeFilters, type NlFilters } from "./filters.ts";
export { parseWithRegex, understand } from "./phrases.ts";
export { LlmBridge, LlmError } from "./llm.ts";
export { mcpRoutes } from "./routes.ts";
export { generateSql, validateMcpSql, MCP_TABLE } from "./sql.ts";
export { checkStdioConfig, runMcpStdio } from "./stdio.ts";
export { createMcpServer, TOOLS } from "./tools.ts";
