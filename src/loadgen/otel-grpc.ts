/**
 * OTLP logs over gRPC (docs/LOADGEN.md "OTLP logs"): the same ExportLogsServiceRequest as the
 * HTTP/JSON form, protobuf-encoded and sent to LogsService/Export on `log_otel_endpoint`
 * (host:port). The message layout is opentelemetry-proto's logs/v1 (field numbers as published);
 * only the fields loadgen fills are declared.
 */
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";

const PROTO = `
syntax = "proto3";
package opentelemetry.proto.collector.logs.v1;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message LogRecord {
  fixed64 time_unix_nano = 1;
  int32 severity_number = 2;
  string severity_text = 3;
  AnyValue body = 5;
  repeated KeyValue attributes = 6;
  fixed64 observed_time_unix_nano = 11;
}
message ScopeLogs { InstrumentationScope scope = 1; repeated LogRecord log_records = 2; }
message ResourceLogs { Resource resource = 1; repeated ScopeLogs scope_logs = 2; }
message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
`;

export const EXPORT_PATH = "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
const Request = protobuf.parse(PROTO).root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest");

/** The OTLP/JSON-shaped request (camelCase, as built for HTTP) → protobuf bytes. */
export function encodeExportLogs(body: object): Buffer {
  return Buffer.from(Request.encode(Request.fromObject(body)).finish());
}

export interface GrpcLogSender {
  send(body: object): Promise<boolean>;
  close(): void;
}

/** `insecure`: plaintext HTTP/2 (a local collector); otherwise TLS with the system's CAs. */
export function grpcLogSender(endpoint: string, insecure: boolean): GrpcLogSender {
  const client = new grpc.Client(endpoint, insecure ? grpc.credentials.createInsecure() : grpc.credentials.createSsl());
  return {
    send: (body) =>
      new Promise((resolve) => {
        client.makeUnaryRequest(
          EXPORT_PATH,
          (b: object) => encodeExportLogs(b),
          (b: Buffer) => b,
          body,
          { deadline: Date.now() + 10_000 } as grpc.CallOptions,
          (err) => resolve(!err),
        );
      }),
    close: () => client.close(),
  };
}
