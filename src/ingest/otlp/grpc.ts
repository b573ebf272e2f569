/**
 * OTLP/gRPC (docs/OTLP.md "gRPC"): the three collector services' unary Export methods on
 * `@grpc/grpc-js`, messages decoded by the same protobuf schema as OTLP/HTTP. gzip message
 * compression is handled by grpc-js. Errors use gRPC status codes: INVALID_ARGUMENT for a body that
 * does not decode, RESOURCE_EXHAUSTED over the size cap (grpc-js), UNAVAILABLE when the lake
 * cannot take the request now (clients retry), INTERNAL for our own faults.
 */
import * as grpc from "@grpc/grpc-js";
import type { OtlpIngest, OtlpMetrics } from "./ingest.ts";
import { GRPC_PATHS, MESSAGES } from "./proto.ts";
import type { OtlpSignal } from "./tables.ts";

const identity = (b: Buffer) => b;

export interface OtlpGrpcOptions {
  maxBodyBytes: number;
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer };
}

export function createOtlpGrpcServer(ingest: OtlpIngest, metrics: OtlpMetrics, opts: OtlpGrpcOptions, onError: (e: unknown, signal: OtlpSignal) => void): grpc.Server {
  // No SO_REUSEPORT: a second listener on the port must fail, not share it silently (docs/PLATFORM.md "Listening ports").
  const server = new grpc.Server({ "grpc.max_receive_message_length": opts.maxBodyBytes, "grpc.so_reuseport": 0 });
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const signal of ["traces", "metrics", "logs"] as const) {
    const m = MESSAGES[signal];
    const name = `Export_${signal}`;
    definition[name] = {
      path: GRPC_PATHS[signal],
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    const count = (outcome: string) => metrics.requests.inc({ transport: "grpc", signal, outcome });
    handlers[name] = (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      void (async () => {
        const decoded = ingest.decode(signal, call.request, "protobuf");
        if ("error" in decoded) {
          count("bad_request");
          return cb({ code: grpc.status.INVALID_ARGUMENT, details: decoded.error });
        }
        const r = await ingest.export(signal, decoded.request, "protobuf", call.request.byteLength);
        if (r.outcome === "unavailable") {
          count("unavailable");
          return cb({ code: grpc.status.UNAVAILABLE, details: r.message });
        }
        if (r.outcome !== "ok") {
          count("server_error");
          return cb({ code: grpc.status.INTERNAL, details: r.message });
        }
        count(r.rejected > 0 ? "partial" : "ok");
        const partial = r.rejected > 0 ? { partialSuccess: { [m.rejectedField]: r.rejected, errorMessage: r.message } } : {};
        cb(null, Buffer.from(m.response.encode(m.response.fromObject(partial)).finish()));
      })().catch((e: unknown) => {
        onError(e, signal);
        count("server_error");
        cb({ code: grpc.status.INTERNAL, details: "internal error; see the appliance log" });
      });
    };
  }
  server.addService(definition as grpc.ServiceDefinition, handlers);
  return server;
}

export function grpcCredentials(tls: OtlpGrpcOptions["tls"]): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca ?? null, [{ private_key: tls.key, cert_chain: tls.cert }], Boolean(tls.ca));
}

/** Binds `host:port` (port 0: a free one); resolves with the bound port. */
export function bindGrpc(server: grpc.Server, address: string, creds: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync(address, creds, (err, port) => (err ? reject(err) : resolve(port))));
}
