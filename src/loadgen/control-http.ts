/**
 * Pieces every control-API route shares (docs/LOADGEN.md "Control API"): the JSON answers, the
 * `{error, message}` error body, the caller's identity, and how an AppError code maps to a status.
 */
import { AppError, isAppError, type ErrorCode } from "../core/index.ts";
import type { Caller, ControlUsers } from "./control-users.ts";

export type { Caller };
import type { Engine } from "./engine.ts";

export const json = (status: number, body: unknown): Response => Response.json(body, { status });
export const errorResponse = (status: number, code: string, message: string): Response =>
  json(status, { error: code, message });

const STATUS: Partial<Record<ErrorCode, number>> = {
  BAD_REQUEST: 400,
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
};

/** An AppError becomes its 4xx; everything else is a 500 without details. */
export function responseFor(e: unknown): Response {
  if (isAppError(e) && STATUS[e.code])
    return errorResponse(STATUS[e.code]!, e.code === "VALIDATION" ? "BAD_REQUEST" : e.code, e.message);
  return errorResponse(500, "INTERNAL", "internal error");
}

/** The request body as JSON, or a BAD_REQUEST. */
export async function readJson(req: Request): Promise<unknown> {
  try {
    return await req.json();
  } catch {
    throw new AppError("BAD_REQUEST", "the body is not valid JSON");
  }
}

export function requireMethod(req: Request, ...methods: string[]): void {
  if (!methods.includes(req.method)) throw new AppError("METHOD_NOT_ALLOWED", `use ${methods.join(" or ")}`);
}

/** What a route sees: the engines (primary first), the internal users when configured, the caller. */
export interface RouteContext {
  engines: readonly Engine[];
  users: ControlUsers | undefined;
  caller: Caller;
}

/** One route: a path pattern (its groups become `params`, URL-decoded) and its handler. */
export interface Route {
  pattern: RegExp;
  /** How the 404 for an unknown path names it. */
  label: string;
  handle(req: Request, ctx: RouteContext, params: string[]): Response | Promise<Response>;
}
