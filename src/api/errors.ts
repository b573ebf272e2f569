import { Elysia } from "elysia";
import { AppError, type ErrorCode, type Logger } from "../core/index.ts";

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
  CATALOG_LOCKED: 503,
  TIMEOUT: 504,
};

export const statusFor = (code: ErrorCode): number => STATUS[code] ?? 500;

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

/** Validation messages from Elysia name the failing field: `/filter/limit: Expected integer`. */
function describeValidation(err: { all?: Array<{ path?: string; message?: string; summary?: string }>; message: string }): {
  message: string;
  fields: string[];
} {
  const items = Array.isArray(err.all) ? err.all : [];
  const fields = items.map((e) => (e.path ?? "").replace(/^\//, "").replace(/\//g, ".") || "(body)");
  const first = items[0];
  const message = first ? `${fields[0]}: ${first.summary ?? first.message ?? "invalid value"}` : "invalid request";
  return { message, fields: [...new Set(fields)] };
}

/**
 * `{error, message}` for every failure; 4xx for anything the client did, 500 only for our faults
 * (logged with context, message kept generic).
 */
export function errorHandler(logger: Logger) {
  return new Elysia({ name: "svc-errors" }).onError({ as: "global" }, ({ code, error, set, request }) => {
    if (error instanceof AppError) {
      set.status = statusFor(error.code);
      if (set.status >= 500) logger.error("request failed", { path: new URL(request.url).pathname, error });
      set.headers["content-type"] = "application/json";
      return errorBody(error.code, error.message, error.details);
    }
    set.headers["content-type"] = "application/json";
    switch (code) {
      case "VALIDATION": {
        set.status = 400;
        const v = describeValidation(error as unknown as Parameters<typeof describeValidation>[0]);
        return errorBody("VALIDATION", v.message, { fields: v.fields });
      }
      case "PARSE":
        set.status = 400;
        return errorBody("BAD_REQUEST", "request body could not be parsed (send valid JSON with Content-Type: application/json)");
      case "NOT_FOUND":
        set.status = 404;
        return errorBody("NOT_FOUND", `no route for ${request.method} ${new URL(request.url).pathname}`);
      case "INVALID_COOKIE_SIGNATURE":
        set.status = 401;
        return errorBody("UNAUTHORIZED", "invalid cookie");
      default: {
        const status = typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500;
        set.status = status;
        if (status >= 500) {
          logger.error("unhandled error", { path: new URL(request.url).pathname, error });
          return errorBody("INTERNAL", "internal error");
        }
        return errorBody("BAD_REQUEST", error instanceof Error ? error.message : String(error));
      }
    }
  });
}
