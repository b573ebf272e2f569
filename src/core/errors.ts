/**
 * One error type for the whole program. `code` is SCREAMING_SNAKE and stable; the API layer maps it
 * to an HTTP status in one place (src/api/errors.ts). Domain code never knows HTTP.
 */
export type ErrorCode =
  | "BAD_REQUEST"
  | "VALIDATION"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "METHOD_NOT_ALLOWED"
  | "UNSUPPORTED"
  | "RATE_LIMITED"
  | "DEPENDENCY_FAILED"
  | "BAD_GATEWAY"
  | "UNAVAILABLE"
  | "STARTING"
  | "NO_LAKE"
  | "TIMEOUT"
  | "CONFIG_INVALID"
  | "CATALOG_LOCKED"
  | "CATALOG_CORRUPT"
  | "HEP_DECODE"
  | "SIP_PARSE"
  | "LP_PARSE"
  | "SQL_FORBIDDEN"
  | "SQL_INVALID"
  | "QUERY_FAILED"
  | "INTERNAL";

export class AppError extends Error {
  override readonly name = "AppError";
  readonly code: ErrorCode;
  /** Extra context returned to clients where safe (field names, line numbers), never secrets. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options?.details;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** Message of any thrown value, for logs. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
