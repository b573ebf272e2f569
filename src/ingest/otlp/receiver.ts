/**
 * The OTLP receiver (docs/OTLP.md): OTLP/HTTP on `ingest.otlp.http.listen` and OTLP/gRPC on
 * `ingest.otlp.grpc.listen`, both writing through the lake like HEP and line protocol. Like the
 * line-protocol receiver it checks no token: protect the ports with network controls or mutual
 * TLS (`cert` + `key` + `cacert`, for both transports).
 */
import { readFileSync } from "node:fs";
import type * as grpc from "@grpc/grpc-js";
import type { Config } from "../../config/index.ts";
import {
  AppError,
  errorMessage,
  formatAddress,
  listenError,
  loadServerTls,
  parseListen,
  type Logger,
  type MetricsRegistry,
  type Module,
} from "../../core/index.ts";
import { InflightBudget } from "./budget.ts";
import { bindGrpc, createOtlpGrpcServer, grpcCredentials } from "./grpc.ts";
import { GRPC_CODE, otlpHttpHandler, statusReply } from "./http.ts";
import { OtlpIngest, otlpMetrics, type OtlpSink } from "./ingest.ts";

export type OtlpConfig = Config["ingest"]["otlp"];

export interface OtlpReceiver extends Module {
  readonly ingest: OtlpIngest;
  /** `http://host:port` of OTLP/HTTP (https with TLS), or undefined when it is off. */
  httpUrl(): string | undefined;
  /** `host:port` of OTLP/gRPC, or undefined when it is off. */
  grpcAddress(): string | undefined;
  /** Bytes of requests being read or decoded now (`ingest.otlp.max_inflight_bytes` bounds them). */
  inflightBytes(): number;
}

const clientHost = (h: string) =>
  h === "0.0.0.0" ? "127.0.0.1" : h === "::" ? "[::1]" : h.includes(":") ? `[${h}]` : h;

export function createOtlpReceiver(
  cfg: OtlpConfig,
  sink: OtlpSink,
  logger: Logger,
  metrics: MetricsRegistry,
  opts: { maxBufferedRows?: number; onWritten?: ConstructorParameters<typeof OtlpIngest>[5] } = {},
): OtlpReceiver {
  const log = logger.child({ module: "otlp" });
  const httpAddr = cfg.http.listen ? parseListen(cfg.http.listen, "ingest.otlp.http.listen") : undefined;
  const grpcAddr = cfg.grpc.listen ? parseListen(cfg.grpc.listen, "ingest.otlp.grpc.listen") : undefined;
  if (!httpAddr && !grpcAddr)
    throw new AppError(
      "CONFIG_INVALID",
      "ingest.otlp: set ingest.otlp.http.listen or ingest.otlp.grpc.listen (both are empty)",
    );
  // Both or neither, readable, the key the certificate's: refused now naming the key (src/core/tls-files.ts).
  loadServerTls(cfg, "ingest.otlp");
  const m = otlpMetrics(metrics);
  const ingest = new OtlpIngest(sink, m, log, opts.maxBufferedRows, cfg.max_attributes, opts.onWritten);
  // One budget for both transports: memory is the process's, whichever port a request came in on.
  const budget = new InflightBudget(cfg.max_inflight_bytes, m.inflight);
  const handle = otlpHttpHandler(ingest, m, { maxBodyBytes: cfg.max_body_bytes, budget });
  const tls = Boolean(cfg.cert && cfg.key);
  let server: ReturnType<typeof Bun.serve> | undefined;
  let grpcServer: grpc.Server | undefined;
  let grpcPort: number | undefined;

  return {
    name: "otlp-receiver",
    ingest,
    async start() {
      await ingest.start();
      if (httpAddr) {
        try {
          server = Bun.serve({
            hostname: httpAddr.hostname,
            port: httpAddr.port,
            // The handler answers over-cap bodies with an OTLP 413; Bun's own cap only backs it up.
            maxRequestBodySize: Math.max(cfg.max_body_bytes * 4, cfg.max_body_bytes + (1 << 20)),
            idleTimeout: Math.min(255, Math.max(1, cfg.read_timeout_sec)),
            ...(tls
              ? {
                  tls: {
                    cert: Bun.file(cfg.cert),
                    key: Bun.file(cfg.key),
                    ...(cfg.cacert ? { ca: Bun.file(cfg.cacert), requestCert: true, rejectUnauthorized: true } : {}),
                  },
                }
              : {}),
            fetch: async (req) => {
              try {
                return await handle(req);
              } catch (e) {
                // What failed stays in the log under the request id; the client learns it was our fault.
                const requestId = crypto.randomUUID();
                log.error("OTLP/HTTP request failed", { request_id: requestId, error: e });
                return statusReply(
                  "json",
                  500,
                  GRPC_CODE.INTERNAL,
                  `internal error (request_id ${requestId}; details are in the appliance log)`,
                  { "x-request-id": requestId },
                );
              }
            },
          });
        } catch (e) {
          throw listenError("OTLP/HTTP receiver", cfg.http.listen, "ingest.otlp.http.listen", e);
        }
        log.info("listening", {
          module: "otlp-http",
          address: formatAddress(httpAddr.hostname, server.port ?? httpAddr.port),
          tls,
        });
      }
      if (grpcAddr) {
        const material = tls
          ? {
              cert: readFileSync(cfg.cert),
              key: readFileSync(cfg.key),
              ...(cfg.cacert ? { ca: readFileSync(cfg.cacert) } : {}),
            }
          : undefined;
        grpcServer = createOtlpGrpcServer(
          ingest,
          m,
          { maxBodyBytes: cfg.max_body_bytes, budget, ...(material ? { tls: material } : {}) },
          (e, signal) => log.error("OTLP/gRPC export failed", { signal, error: errorMessage(e) }),
        );
        try {
          grpcPort = await bindGrpc(
            grpcServer,
            formatAddress(grpcAddr.hostname, grpcAddr.port),
            grpcCredentials(material),
          );
        } catch (e) {
          await server?.stop();
          server = undefined;
          // grpc-js folds the bind error into its message; its code gives the usual explanation.
          const code = /EADDRINUSE|EACCES|EADDRNOTAVAIL/.exec(errorMessage(e))?.[0];
          throw listenError(
            "OTLP/gRPC receiver",
            cfg.grpc.listen,
            "ingest.otlp.grpc.listen",
            code ? Object.assign(new Error(errorMessage(e)), { code }) : e,
          );
        }
        log.info("listening", {
          module: "otlp-grpc",
          address: formatAddress(grpcAddr.hostname, grpcPort),
          tls,
          client_certs: Boolean(tls && cfg.cacert),
        });
      }
    },
    async stop() {
      const s = server;
      const g = grpcServer;
      server = undefined;
      grpcServer = undefined;
      // In-flight exports finish (their rows reach the lake before it flushes and closes).
      await Promise.all([
        s?.stop(),
        g
          ? new Promise<void>((resolve) => {
              const force = setTimeout(() => g.forceShutdown(), 10_000);
              g.tryShutdown(() => {
                clearTimeout(force);
                resolve();
              });
            })
          : undefined,
      ]);
    },
    httpUrl: () =>
      httpAddr
        ? `${tls ? "https" : "http"}://${clientHost(httpAddr.hostname)}:${server?.port ?? httpAddr.port}`
        : undefined,
    grpcAddress: () => (grpcAddr ? `${clientHost(grpcAddr.hostname)}:${grpcPort ?? grpcAddr.port}` : undefined),
    inflightBytes: () => budget.inUse(),
  };
}
