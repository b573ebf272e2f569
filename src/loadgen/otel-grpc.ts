/**
 * OTLP logs over gRPC (docs/LOADGEN.md "OTLP logs"): the same ExportLogsServiceRequest as the
 * HTTP/JSON form, protobuf-encoded with the OTLP schema svc's own receiver decodes with
 * (src/ingest/otlp, opentelemetry-proto's field numbers) and sent to LogsService/Export on
 * `log_otel_endpoint` (host:port).
 */
import * as grpc from "@grpc/grpc-js";
import { loadOtlp } from "../ingest/index.ts";

/** The OTLP schema, loaded once at the first send (src/ingest/index.ts loadOtlp). */
let schema: Promise<{ path: string; encode: (body: object) => Buffer }> | undefined;
const otlpLogs = () =>
  (schema ??= loadOtlp().then(({ GRPC_PATHS, OTLP_MESSAGES }) => {
    const Request = OTLP_MESSAGES.logs.request;
    // The OTLP/JSON-shaped request (camelCase, as built for HTTP) → protobuf bytes.
    return {
      path: GRPC_PATHS.logs,
      encode: (body: object) => Buffer.from(Request.encode(Request.fromObject(body)).finish()),
    };
  }));

export interface GrpcLogSender {
  send(body: object): Promise<boolean>;
  close(): void;
}

/** `insecure`: plaintext HTTP/2 (a local collector); otherwise TLS with the system's CAs. */
export function grpcLogSender(endpoint: string, insecure: boolean): GrpcLogSender {
  const client = new grpc.Client(endpoint, insecure ? grpc.credentials.createInsecure() : grpc.credentials.createSsl());
  return {
    send: async (body) => {
      const logs = await otlpLogs();
      return await new Promise((resolve) => {
        client.makeUnaryRequest(
          logs.path,
          (b: object) => logs.encode(b),
          (b: Buffer) => b,
          body,
          { deadline: Date.now() + 10_000 } as grpc.CallOptions,
          (err) => resolve(!err),
        );
      });
    },
    close: () => client.close(),
  };
}
