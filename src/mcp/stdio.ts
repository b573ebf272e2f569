import type { Config } from "../config/index.ts";
import { AppError, MetricsRegistry, type Logger } from "../core/index.ts";
import { httpBackend } from "./backends.ts";
import { McpEngine } from "./engine.ts";
import { LineTransport } from "./stdio-transport.ts";
import { createMcpServer } from "./tools.ts";

/**
 * `svc mcp --config-path <file>` (docs/MCP.md "svc mcp"): the three tools over MCP on
 * stdin/stdout, reading through the coordinator API with `mcp.svc_token`. Standard output carries
 * only the protocol; logs go to standard error. Resolves when the client closes stdin.
 */
export function checkStdioConfig(cfg: Config["mcp"]): void {
  if (cfg.svc_token.trim() === "")
    throw new AppError(
      "CONFIG_INVALID",
      "mcp.svc_token is required: the API token svc mcp sends to the coordinator (set it in the config file or SVC_MCP_SVC_TOKEN)",
    );
  if (cfg.svc_base_url.trim() === "")
    throw new AppError(
      "CONFIG_INVALID",
      "mcp.svc_base_url is required: the coordinator URL, e.g. http://127.0.0.1:8080",
    );
  if (!/^https?:\/\/[^\s/]+/.test(cfg.svc_base_url))
    throw new AppError(
      "CONFIG_INVALID",
      `mcp.svc_base_url must be an http:// or https:// URL, got ${JSON.stringify(cfg.svc_base_url)}`,
    );
  if (cfg.svc_auth_header !== "" && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(cfg.svc_auth_header))
    throw new AppError("CONFIG_INVALID", "mcp.svc_auth_header is not a valid HTTP header name");
}

export async function runMcpStdio(
  config: Config,
  logger: Logger,
  env: Record<string, string | undefined>,
): Promise<number> {
  const cfg = config.mcp;
  checkStdioConfig(cfg);
  const backend = httpBackend({
    baseUrl: cfg.svc_base_url,
    token: cfg.svc_token,
    authHeader: cfg.svc_auth_header,
    timeoutSec: cfg.request_timeout_sec,
    insecureTls: /^(1|true|yes)$/i.test((env.SVC_INSECURE_TLS ?? "").trim()),
  });
  const engine = new McpEngine(cfg, backend, logger.child({ component: "mcp" }), new MetricsRegistry());
  const server = createMcpServer(engine);
  const transport = new LineTransport(process.stdin, process.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  logger.info("svc mcp ready on stdio", { coordinator: cfg.svc_base_url, llm: cfg.llm.enable });
  await closed;
  await server.close();
  return 0;
}
