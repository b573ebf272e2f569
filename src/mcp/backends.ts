import {
  sqlOverNodes,
  type ListSearch,
  type OverNodes,
  type SearchService,
  type SqlQueryService,
} from "../api/index.ts";
import { AppError, type ErrorCode } from "../core/index.ts";
import type { McpBackend, Rows } from "./engine.ts";
import { MCP_TABLE } from "./sql.ts";

/**
 * Where the engine reads (docs/MCP.md, the table of the three ways in): inside `svc serve` the search and SQL
 * services themselves; in `svc mcp` the coordinator's `POST /transactions/search` and `POST /query`
 * with `mcp.svc_token`. Both run the same services, so the answers are the structured search's.
 */
export function localBackend(search: SearchService, sql: SqlQueryService): McpBackend {
  return {
    async search(p) {
      const r = await search.run({
        protoType: 1,
        eventType: String(p.filter.event_type ?? "call"),
        filter: p.filter,
        fromMs: p.timestamp.from,
        toMs: p.timestamp.to,
        limit: p.param.limit,
        offset: 0,
      });
      return { items: r.items, keys: r.keys, total: r.total };
    },
    async sql(statement, limit) {
      // No call was ever stored: nothing to read (the guard would call the table unknown).
      if (!sql.allowedTables().has(MCP_TABLE)) return { items: [], keys: [], total: 0 };
      const r = await sql.run({ sql: statement, limit });
      return { items: r.data.rows, keys: r.data.columns.map((c) => c.name), total: r.meta.row_count };
    },
  };
}

/**
 * A coordinator without a lake of its own (docs/ARCHITECTURE.md "A coordinator without a lake"):
 * the search over coordinator.nodes, and the SQL on each node (rows labelled `svc_node`).
 */
export function nodesBackend(search: ListSearch, over: OverNodes): McpBackend {
  return {
    async search(p) {
      const r = await search.run({
        protoType: 1,
        eventType: String(p.filter.event_type ?? "call"),
        filter: p.filter,
        fromMs: p.timestamp.from,
        toMs: p.timestamp.to,
        limit: p.param.limit,
        offset: 0,
      });
      return { items: r.items, keys: r.keys, total: r.total };
    },
    async sql(statement, limit) {
      const r = await sqlOverNodes(undefined, over, { sql: statement, limit });
      return { items: r.data.rows, keys: r.data.columns.map((c) => c.name), total: r.meta.row_count };
    },
  };
}

export interface HttpBackendOptions {
  baseUrl: string;
  token: string;
  /** Empty: `Authorization: Bearer <token>`; else the header that carries the token raw (docs/MCP.md "svc mcp"). */
  authHeader: string;
  timeoutSec: number;
  insecureTls: boolean;
}

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: "VALIDATION",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  422: "TIMEOUT",
  429: "RATE_LIMITED",
};

/** `http(s)://host:port[/prefix]` → its `/api/v4` root (kept when already given). */
export const apiRoot = (base: string): string => `${base.replace(/\/+$/, "").replace(/\/api\/v4$/, "")}/api/v4`;

export function httpBackend(o: HttpBackendOptions): McpBackend {
  const root = apiRoot(o.baseUrl);
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (o.authHeader !== "") headers[o.authHeader] = o.token;
    else headers.authorization = `Bearer ${o.token}`;
    let res: Response;
    try {
      res = await fetch(`${root}${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(o.timeoutSec * 1000),
        ...(root.startsWith("https:") ? { tls: { rejectUnauthorized: !o.insecureTls } } : {}),
      });
    } catch (e) {
      const name = (e as { name?: unknown }).name;
      if (name === "TimeoutError")
        throw new AppError(
          "UNAVAILABLE",
          `the coordinator did not answer ${path} within ${o.timeoutSec} s (mcp.request_timeout_sec)`,
        );
      throw new AppError(
        "UNAVAILABLE",
        `the coordinator at mcp.svc_base_url cannot be reached (${(e as Error).message})`,
      );
    }
    const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (res.ok && json) return json;
    const message = typeof json?.message === "string" ? json.message : `HTTP ${res.status}`;
    if (res.status === 401) {
      throw new AppError(
        "UNAUTHORIZED",
        `the coordinator refused mcp.svc_token (${message}): check mcp.svc_auth_header, that token access is enabled, and that the token is active, unexpired and under its call limit`,
      );
    }
    const code =
      res.status < 500 && typeof json?.error === "string" && /^[A-Z_]+$/.test(json.error)
        ? (json.error as ErrorCode)
        : (CODE_OF_STATUS[res.status] ?? "BAD_GATEWAY");
    throw new AppError(code, `${path}: ${message}`, {
      details: { reason: (json?.reason as string | undefined) ?? null },
    });
  };
  return {
    async search(p): Promise<Rows> {
      const r = (await post("/transactions/search", p)) as {
        data: { items: unknown[]; keys: string[] };
        meta: { pagination: { total: number } };
      };
      return { items: r.data.items, keys: r.data.keys, total: r.meta.pagination.total };
    },
    async sql(statement, limit): Promise<Rows> {
      try {
        const r = (await post("/query", { sql: statement, limit })) as {
          data: { columns: Array<{ name: string }>; rows: unknown[] };
          meta: { row_count: number };
        };
        return { items: r.data.rows, keys: r.data.columns.map((c) => c.name), total: r.meta.row_count };
      } catch (e) {
        // Before the first call is stored the table does not exist: no rows, as the search answers.
        if (
          e instanceof AppError &&
          e.code === "SQL_FORBIDDEN" &&
          e.details?.reason === "table_not_allowed" &&
          e.message.includes(MCP_TABLE)
        )
          return { items: [], keys: [], total: 0 };
        throw e;
      }
    },
  };
}
