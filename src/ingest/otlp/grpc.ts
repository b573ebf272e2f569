/**
 * OTLP/gRPC (docs/OTLP.md "gRPC"): the three collector services' unary Export methods on
 * `@grpc/grpc-js`, messages decoded by the same protobuf schema as OTLP/HTTP. gzip message
 * compression is handled by grpc-js. Errors use gRPC status codes: INVALID_ARGUMENT for a body that
 * does not decode or does not inflate, RESOURCE_EXHAUSTED over the size cap (grpc-js) or the
 * in-flight budget (clients retry after a back-off), UNAVAILABLE when the lake cannot take the
 * request now (clients retry), INTERNAL for our own faults.
 */
import * as grpc from "@grpc/grpc-js";
import { BaseServerInterceptingCall } from "@grpc/grpc-js/build/src/server-interceptors.js";
import type { InflightBudget } from "./budget.ts";
import { partialSuccess } from "./http.ts";
import type { OtlpIngest, OtlpMetrics, OtlpRequestOutcome } from "./ingest.ts";
import { GRPC_PATHS, MESSAGES, RETRY_INFO, RPC_STATUS } from "./proto.ts";
import type { OtlpSignal } from "./tables.ts";

const identity = (b: Buffer) => b;

export interface OtlpGrpcOptions {
  maxBodyBytes: number;
  budget: InflightBudget;
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer };
}

let badGzipPatched = false;

const THROTTLED = "the receiver is decoding as many bytes as ingest.otlp.max_inflight_bytes allows; retry later";

/**
 * RESOURCE_EXHAUSTED for the in-flight budget, with a google.rpc.RetryInfo (retry in 1 s) in
 * `grpc-status-details-bin`: the OTLP specification ("OTLP/gRPC Throttling") has exporters retry a
 * RESOURCE_EXHAUSTED only when the status carries RetryInfo.
 */
function throttled(): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  const retry = RETRY_INFO.encode(RETRY_INFO.fromObject({ retryDelay: { seconds: 1 } })).finish();
  const details = RPC_STATUS.encode(
    RPC_STATUS.fromObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      message: THROTTLED,
      details: [{ typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: retry }],
    }),
  ).finish();
  metadata.set("grpc-status-details-bin", Buffer.from(details));
  return { code: grpc.status.RESOURCE_EXHAUSTED, details: THROTTLED, metadata };
}

/**
 * grpc-js inflates a compressed message before any handler or interceptor sees it and answers one
 * that does not inflate with INTERNAL, a server fault exporters retry forever. The client sent bad
 * bytes: OTLP/HTTP answers 400, so gRPC answers INVALID_ARGUMENT (not retried). grpc-js has no option
 * for it; its per-call decompressMessage (grpc-js 1.14) is wrapped to rewrite that one status
 * (docs/OTLP.md "gRPC"; test/integration/otlp-wire.test.ts fails if a grpc-js update moves it).
 */
function answerBadCompressionAsInvalidArgument(): void {
  if (badGzipPatched) return;
  badGzipPatched = true;
  const proto = (BaseServerInterceptingCall as unknown as { prototype: Record<string, unknown> }).prototype;
  const orig = proto.decompressMessage;
  if (typeof orig !== "function") return;
  proto.decompressMessage = function decompressMessage(this: unknown, message: Buffer, encoding: string): unknown {
    const r = (orig as (m: Buffer, e: string) => unknown).call(this, message, encoding);
    if (!(r instanceof Promise)) return r;
    return r.catch((e: { code?: number }) => {
      throw e?.code === grpc.status.INTERNAL
        ? {
            code: grpc.status.INVALID_ARGUMENT,
            details: `the ${encoding} message could not be decompressed; send valid ${encoding} or no compression`,
          }
        : e;
    });
  };
}

export function createOtlpGrpcServer(
  ingest: OtlpIngest,
  metrics: OtlpMetrics,
  opts: OtlpGrpcOptions,
  onError: (e: unknown, signal: OtlpSignal) => void,
): grpc.Server {
  answerBadCompressionAsInvalidArgument();
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
    const count = (outcome: OtlpRequestOutcome) => metrics.requests.inc({ transport: "grpc", signal, outcome });
    handlers[name] = (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      const lease = opts.budget.lease();
      void (async () => {
        // grpc-js has read (and inflated) the message; what the budget holds back is its decoding.
        if (!lease.take(call.request.byteLength)) {
          count("throttled");
          return cb(throttled());
        }
        const decoded = ingest.decode(signal, call.request, "protobuf");
        if ("error" in decoded) {
          count("bad_request");
          return cb({ code: grpc.status.INVALID_ARGUMENT, details: decoded.error });
        }
        const r = await ingest.export(signal, decoded, "protobuf", call.request);
        if (r.outcome === "unavailable") {
          count("unavailable");
          return cb({ code: grpc.status.UNAVAILABLE, details: r.message });
        }
        if (r.outcome !== "ok") {
          count("server_error");
          return cb({ code: grpc.status.INTERNAL, details: r.message });
        }
        count(r.rejected > 0 ? "partial" : "ok");
        cb(null, Buffer.from(m.response.encode(m.response.fromObject(partialSuccess(signal, r))).finish()));
      })()
        .catch((e: unknown) => {
          onError(e, signal);
          count("server_error");
          cb({ code: grpc.status.INTERNAL, details: "internal error; see the appliance log" });
        })
        .finally(() => lease.release());
    };
  }
  server.addService(definition as grpc.ServiceDefinition, handlers);
  return server;
}

export function grpcCredentials(tls: OtlpGrpcOptions["tls"]): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(
    tls.ca ?? null,
    [{ private_key: tls.key, cert_chain: tls.cert }],
    Boolean(tls.ca),
  );
}

/** Binds `host:port` (port 0: a free one); resolves with the bound port. */
export function bindGrpc(server: grpc.Server, address: string, creds: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(address, creds, (err, port) => (err ? reject(err) : resolve(port))),
  );
}
