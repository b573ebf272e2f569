import { Elysia, type AnyElysia } from "elysia";
import { AppError, STARTING_RETRY_AFTER_SEC, type ErrorCode, type Logger } from "../core/index.ts";

/** The one place where error codes become HTTP statuses (Hono/Elysia style). */
const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  VALIDATION: 400,
  LP_PARSE: 400,
  SIP_PARSE: 400,
  HEP_DECODE: 400,
  SQL_FORBIDDEN: 400,
  SQL_INVALID: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED: 415,
  DEPENDENCY_FAILED: 424,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  QUERY_FAILED: 500,
  CATALOG_CORRUPT: 500,
  CONFIG_INVALID: 500,
  BAD_GATEWAY: 502,
  UNAVAILABLE: 503,
  // The lake is still starting (docs/ARCHITECTURE.md "Start-up"): 503 with Retry-After, a message saying so.
  STARTING: 503,
  CATALOG_LOCKED: 503,
  // A route that needs a lake of this process's own on a coordinator without one: 503 with the
  // reason, which names only configuration keys (docs/ARCHITECTURE.md "A coordinator without a lake").
  NO_LAKE: 503,
  // A query that runs past its time-out: the client narrows it (docs/ARCHITECTURE.md "Errors and request ids").
  TIMEOUT: 422,
};

export const statusFor = (code: ErrorCode): number => STATUS[code] ?? 500;

/** Whole seconds for `Retry-After` (at least 1). */
const retryAfter = (sec: unknown): string =>
  String(typeof sec === "number" && Number.isFinite(sec) ? Math.max(1, Math.ceil(sec)) : 1);

export interface ErrorBody {
  error: string;
  message: string;
  [k: string]: unknown;
}

export const errorBody = (code: string, message: string, details?: Record<string, unknown>): ErrorBody => ({
  ...details,
  error: code,
  message,
});

/** The allowed values of a union of literals (Elysia's own text says "one of: 'string', 'string'"). */
function literalsOf(schema: unknown): string | undefined {
  const anyOf = (schema as { anyOf?: unknown } | undefined)?.anyOf;
  if (!Array.isArray(anyOf) || anyOf.length === 0) return undefined;
  const values = anyOf.map((s) => (s as { const?: unknown } | undefined)?.const);
  if (!values.every((v) => typeof v === "string" || typeof v === "number")) return undefined;
  return `expected one of ${values.join(", ")}`;
}

/** Validation messages from Elysia name the failing field: `/filter/limit: Expected integer`. */
function describeValidation(err: {
  all?: Array<{ path?: string; message?: string; summary?: string; schema?: unknown }>;
  message: string;
}): {
  message: string;
  fields: string[];
} {
  const items = Array.isArray(err.all) ? err.all : [];
  const fields = items.map((e) => (e.path ?? "").replace(/^\//, "").replace(/\//g, ".") || "(body)");
  const first = items[0];
  // A schema's own `error` text (Elysia's custom validation message) says it best, e.g. for a union.
  const own = (first?.schema as { error?: unknown } | undefined)?.error;
  const message = first
    ? `${fields[0]}: ${typeof own === "string" ? own : (literalsOf(first.schema) ?? first.summary ?? first.message ?? "invalid value")}`
    : "invalid request";
  return { message, fields: [...new Set(fields)] };
}

/**
 * What a 5xx answer says instead of the error's own message, which may hold SQL, file paths or
 * the Parquet file list: the full error goes to the log under the request id.
 */
const SERVER_FAULT: Partial<Record<ErrorCode, string>> = {
  QUERY_FAILED: "the query failed on the server",
  CATALOG_CORRUPT: "the storage catalog cannot be read",
  CATALOG_LOCKED: "the storage catalog is locked by another process; retry later",
  CONFIG_INVALID: "the server is misconfigured",
  BAD_GATEWAY: "another node gave an invalid answer",
  UNAVAILABLE: "the service is not available right now; retry later",
};
const SERVER_FAULT_TAIL = " (the server log has the details under this request_id)";

/** An incoming `X-Request-Id` is kept when it is this sane (a proxy's id); otherwise one is generated. */
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const requestIds = new WeakMap<Request, string>();

/** The request's id (`X-Request-Id`), the same in the answer's header, a 5xx body and the log. */
export function requestIdOf(request: Request): string {
  let id = requestIds.get(request);
  if (id === undefined) {
    const incoming = request.headers.get("x-request-id");
    id = incoming !== null && INCOMING_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    requestIds.set(request, id);
  }
  return id;
}

/**
 * The methods of `app`'s routes whose path matches `pathname` (`:param` segments match any one
 * segment; wildcard routes such as the dashboard's static files are left out, so an unknown path
 * stays a 404). Compiled again only when routes were added.
 */
function routeMethods(app: AnyElysia): (pathname: string) => string[] {
  let compiled: { routes: number; list: Array<{ method: string; re: RegExp; params: number }> } | undefined;
  return (pathname) => {
    const routes = app.routes;
    if (compiled?.routes !== routes.length) {
      const list: Array<{ method: string; re: RegExp; params: number }> = [];
      for (const r of routes) {
        if (r.path.includes("*")) continue;
        const source = r.path
          .split("/")
          .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
          .join("/");
        list.push({
          method: r.method.toUpperCase(),
          re: new RegExp(`^${source}/?$`),
          params: r.path.split("/").filter((seg) => seg.startsWith(":")).length,
        });
      }
      compiled = { routes: routes.length, list };
    }
    // The most specific paths only: /aliases/resolve is a route of its own, not /aliases/:aliasId.
    const matches = compiled.list.filter((r) => r.re.test(pathname));
    const fewest = Math.min(...matches.map((r) => r.params));
    return [...new Set(matches.filter((r) => r.params === fewest).map((r) => r.method))].sort();
  };
}

/**
 * The one rule for what leaves the process on failure (docs/ARCHITECTURE.md "Errors and request
 * ids"): every answer carries `X-Request-Id`; a 4xx is `{error, message, ...details}` naming what
 * the client got wrong; a 5xx is `{error, message: generic text, request_id}` with no details, and
 * the full error (message, details, cause, stack) is logged with the same request id. With `app`,
 * a path that exists for other methods answers 405 with `Allow` instead of 404.
 */
export function errorHandler(logger: Logger, app?: AnyElysia) {
  const methodsOf = app ? routeMethods(app) : () => [];
  const serverFault = (
    status: number,
    code: string,
    request: Request,
    error: unknown,
    details?: Record<string, unknown>,
  ): ErrorBody => {
    const requestId = requestIdOf(request);
    logger.error("request failed", {
      request_id: requestId,
      method: request.method,
      path: new URL(request.url).pathname,
      status,
      code,
      error,
      ...(details ? { details } : {}),
      ...(error instanceof Error && !(error instanceof AppError) ? { stack: error.stack } : {}),
    });
    const text = SERVER_FAULT[code as ErrorCode] ?? "internal error";
    return { error: code, message: text + SERVER_FAULT_TAIL, request_id: requestId };
  };
  return new Elysia({ name: "svc-errors" })
    .onRequest(({ request, set }) => {
      set.headers["x-request-id"] = requestIdOf(request);
    })
    .onError({ as: "global" }, ({ code, error, set, request }) => {
      set.headers["content-type"] = "application/json";
      set.headers["x-request-id"] = requestIdOf(request);
      if (error instanceof AppError) {
        const status = statusFor(error.code);
        set.status = status;
        // Expected while the lake starts (docs/ARCHITECTURE.md "Start-up"): not a fault, nothing logged;
        // the message names what still runs (module names, never a path).
        if (error.code === "STARTING") {
          set.headers["retry-after"] = String(error.details?.retry_after_sec ?? STARTING_RETRY_AFTER_SEC);
          return errorBody(error.code, error.message, error.details);
        }
        // The configuration, not a fault: the reason names keys only, and retrying will not help.
        if (error.code === "NO_LAKE") return errorBody(error.code, error.message, error.details);
        // 429 and 503 say when to come back: the error's retry_after_sec, else one second.
        if (status === 429 || status === 503) set.headers["retry-after"] = retryAfter(error.details?.retry_after_sec);
        if (status >= 500) return serverFault(status, error.code, request, error, error.details);
        return errorBody(error.code, error.message, error.details);
      }
      switch (code) {
        case "VALIDATION": {
          // A response that does not match its own schema is our fault, not the client's.
          if ((error as { type?: unknown }).type === "response") {
            set.status = 500;
            return serverFault(500, "INTERNAL", request, error);
          }
          set.status = 400;
          const v = describeValidation(error as unknown as Parameters<typeof describeValidation>[0]);
          return errorBody("VALIDATION", v.message, { fields: v.fields });
        }
        case "PARSE":
          set.status = 400;
          return errorBody(
            "BAD_REQUEST",
            "request body could not be parsed (send valid JSON with Content-Type: application/json)",
          );
        case "NOT_FOUND": {
          const path = new URL(request.url).pathname;
          const allowed = methodsOf(path);
          if (allowed.length > 0) {
            set.status = 405;
            set.headers.allow = allowed.join(", ");
            return errorBody(
              "METHOD_NOT_ALLOWED",
              `${request.method} is not allowed on ${path} (allowed: ${allowed.join(", ")})`,
            );
          }
          set.status = 404;
          return errorBody("NOT_FOUND", `no route for ${request.method} ${path}`);
        }
        case "INVALID_COOKIE_SIGNATURE":
          set.status = 401;
          return errorBody("UNAUTHORIZED", "invalid cookie");
        default: {
          const status =
            typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500;
          set.status = status;
          if (status >= 500) return serverFault(status, "INTERNAL", request, error);
          return errorBody("BAD_REQUEST", error instanceof Error ? error.message : String(error));
        }
      }
    });
}
