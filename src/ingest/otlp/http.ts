/**
 * OTLP/HTTP (docs/OTLP.md "HTTP"): POST /v1/traces, /v1/metrics, /v1/logs with a protobuf
 * (`application/x-protobuf`) or OTLP/JSON (`application/json`) body, gzip accepted. The answer
 * uses the request's encoding: an Export…ServiceResponse (with `partial_success` when items were
 * rejected) on 200, a google.rpc.Status on every error.
 */
import { readOtlpBody } from "./body.ts";
import type { InflightBudget } from "./budget.ts";
import type { OtlpIngest, OtlpEncoding, OtlpMetrics, OtlpRequestOutcome, OtlpResult } from "./ingest.ts";
import { MESSAGES, RPC_STATUS } from "./proto.ts";
import type { OtlpSignal } from "./tables.ts";

const ROUTES: Record<string, OtlpSignal> = { "/v1/traces": "traces", "/v1/metrics": "metrics", "/v1/logs": "logs" };

/** gRPC status codes used in google.rpc.Status bodies. */
export const GRPC_CODE = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
} as const;

function encodingOf(contentType: string | null): OtlpEncoding | undefined {
  const t = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (t === "application/x-protobuf" || t === "application/protobuf") return "protobuf";
  if (t === "application/json") return "json";
  return undefined;
}

function reply(
  encoding: OtlpEncoding,
  status: number,
  message: Record<string, unknown>,
  type: (typeof MESSAGES)[OtlpSignal]["response"] | typeof RPC_STATUS,
  headers: Record<string, string> = {},
): Response {
  if (encoding === "protobuf") {
    const bytes = type.encode(type.fromObject(message)).finish();
    return new Response(bytes as Uint8Array<ArrayBuffer>, {
      status,
      headers: { "content-type": "application/x-protobuf", ...headers },
    });
  }
  return new Response(JSON.stringify(message), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A google.rpc.Status body (OTLP/HTTP "Failures"). */
export function statusReply(
  encoding: OtlpEncoding,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return reply(encoding, status, { code, message, details: [] }, RPC_STATUS, headers);
}

export interface OtlpHttpOptions {
  maxBodyBytes: number;
  budget: InflightBudget;
}

/** The Export…ServiceResponse's content: partial_success when items were rejected or attributes dropped. */
export function partialSuccess(signal: OtlpSignal, r: OtlpResult): Record<string, unknown> {
  return r.rejected > 0 || r.message !== ""
    ? { partialSuccess: { [MESSAGES[signal].rejectedField]: r.rejected, errorMessage: r.message } }
    : {};
}

export function otlpHttpHandler(
  ingest: OtlpIngest,
  metrics: OtlpMetrics,
  opts: OtlpHttpOptions,
): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = new URL(req.url);
    const signal = ROUTES[url.pathname];
    // Errors before the body's encoding is known are answered in JSON unless the client asked for protobuf.
    const asked = encodingOf(req.headers.get("content-type")) ?? "json";
    if (!signal)
      return statusReply(
        asked,
        404,
        GRPC_CODE.NOT_FOUND,
        `no such endpoint ${url.pathname}; OTLP/HTTP exports go to /v1/traces, /v1/metrics or /v1/logs`,
      );
    const count = (outcome: OtlpRequestOutcome) => metrics.requests.inc({ transport: "http", signal, outcome });
    if (req.method !== "POST") {
      count("unsupported");
      return statusReply(
        asked,
        405,
        GRPC_CODE.UNIMPLEMENTED,
        `${req.method} is not allowed on ${url.pathname}; use POST`,
        { allow: "POST" },
      );
    }
    const encoding = encodingOf(req.headers.get("content-type"));
    if (!encoding) {
      count("unsupported");
      return statusReply(
        "json",
        415,
        GRPC_CODE.INVALID_ARGUMENT,
        `Content-Type "${req.headers.get("content-type") ?? ""}" is not supported: send application/x-protobuf or application/json`,
      );
    }
    const lease = opts.budget.lease();
    try {
      const body = await readOtlpBody(req, opts.maxBodyBytes, lease);
      if (!body.ok) {
        const detail = (body.detail ?? body.reason).replace("max_body_bytes", "ingest.otlp.max_body_bytes");
        if (body.reason === "throttled") {
          count("throttled");
          // OTLP/HTTP "Failures": 429 is retryable; Retry-After tells the exporter when.
          return statusReply(encoding, 429, GRPC_CODE.RESOURCE_EXHAUSTED, detail, { "retry-after": "1" });
        }
        const tooLarge = body.reason === "too_large";
        count(tooLarge ? "too_large" : "bad_request");
        return statusReply(
          encoding,
          tooLarge ? 413 : 400,
          tooLarge ? GRPC_CODE.RESOURCE_EXHAUSTED : GRPC_CODE.INVALID_ARGUMENT,
          detail,
        );
      }
      const decoded = ingest.decode(signal, body.value, encoding);
      if ("error" in decoded) {
        count("bad_request");
        return statusReply(encoding, 400, GRPC_CODE.INVALID_ARGUMENT, decoded.error);
      }
      const r = await ingest.export(signal, decoded, encoding, body.value);
      if (r.outcome === "unavailable") {
        count("unavailable");
        // OTLP clients retry 503 and honour Retry-After; the lake drains its buffer within a flush.
        return statusReply(encoding, 503, GRPC_CODE.UNAVAILABLE, r.message, { "retry-after": "1" });
      }
      if (r.outcome !== "ok") {
        count("server_error");
        return statusReply(encoding, 500, GRPC_CODE.INTERNAL, r.message);
      }
      count(r.rejected > 0 ? "partial" : "ok");
      return reply(encoding, 200, partialSuccess(signal, r), MESSAGES[signal].response);
    } finally {
      lease.release();
    }
  };
}
