/**
 * The official OpenTelemetry JS SDK and exporters as test peers (docs/OTLP.md "Tested clients"):
 * one tracer, meter and logger provider per transport, each exporting to the test appliance.
 */
import http2 from "node:http2";
import { credentials } from "@grpc/grpc-js";
import { context, trace, ValueType } from "@opentelemetry/api";
import { SeverityNumber } from "@opentelemetry/api-logs";
import { OTLPLogExporter as LogsGrpc } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPLogExporter as LogsHttp } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as LogsProto } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPMetricExporter as MetricsGrpc } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as MetricsHttp } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as MetricsProto } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as TraceGrpc } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as TraceHttp } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as TraceProto } from "@opentelemetry/exporter-trace-otlp-proto";
import type { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MESSAGES } from "../../src/ingest/otlp/proto.ts";
import type { TestAppliance } from "../appliance.ts";

export type Transport = "http-json" | "http-proto" | "grpc";

export interface Sent {
  service: string;
  callId: string;
  traceId: string;
  rootSpanId: string;
  childSpanId: string;
}

/** Sends 2 spans, 3 metrics (counter 5, histogram of 3 values, gauge 42.5) and 2 log records. */
export async function sendAll(transport: Transport, httpUrl: string, grpcAddress: string): Promise<Sent> {
  const service = `otel-${transport}`;
  const callId = `otel-call-${crypto.randomUUID()}@pbx`;
  const resource = resourceFromAttributes({ "service.name": service, "deployment.environment": "test" });
  // gzip over gRPC and HTTP protobuf (the receiver inflates both), none over HTTP JSON.
  const compression = "gzip" as CompressionAlgorithm;
  const grpcOpts = { url: `http://${grpcAddress}`, credentials: credentials.createInsecure(), compression };
  const exporters =
    transport === "grpc"
      ? { trace: new TraceGrpc(grpcOpts), metrics: new MetricsGrpc(grpcOpts), logs: new LogsGrpc(grpcOpts) }
      : transport === "http-proto"
        ? {
            trace: new TraceProto({ url: `${httpUrl}/v1/traces`, compression }),
            metrics: new MetricsProto({ url: `${httpUrl}/v1/metrics`, compression }),
            logs: new LogsProto({ url: `${httpUrl}/v1/logs`, compression }),
          }
        : {
            trace: new TraceHttp({ url: `${httpUrl}/v1/traces` }),
            metrics: new MetricsHttp({ url: `${httpUrl}/v1/metrics` }),
            logs: new LogsHttp({ url: `${httpUrl}/v1/logs` }),
          };

  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new SimpleSpanProcessor(exporters.trace)],
  });
  const tracer = tracerProvider.getTracer("svc-test-scope", "1.0.0");
  // API SpanKind SERVER (1) and CLIENT (2) are OTLP kinds 2 and 3.
  const root = tracer.startSpan("INVITE", {
    kind: 1,
    attributes: { "sip.call_id": callId, "sip.method": "INVITE", "net.peer.port": 5060 },
  });
  const ctx = root.spanContext();
  const child = tracer.startSpan(
    "route lookup",
    { kind: 2, attributes: { "db.rows": 3 } },
    trace.setSpan(context.active(), root),
  );
  child.setStatus({ code: 2, message: "no route" });
  child.end();
  root.end();
  await tracerProvider.forceFlush();

  const reader = new PeriodicExportingMetricReader({ exporter: exporters.metrics, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ resource, readers: [reader] });
  const meter = meterProvider.getMeter("svc-test-meter");
  meter
    .createCounter("sip.calls", { description: "calls seen", unit: "{call}", valueType: ValueType.INT })
    .add(5, { trunk: "a" });
  const h = meter.createHistogram("sip.pdd", { unit: "ms" });
  for (const v of [100, 200, 600]) h.record(v);
  meter.createObservableGauge("rtp.mos").addCallback((r) => r.observe(42.5, { leg: "b" }));
  // One collection, exported at shutdown (a forceFlush first would export the cumulative points twice).

  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new SimpleLogRecordProcessor({ exporter: exporters.logs })],
  });
  const logger = loggerProvider.getLogger("svc-test-logger");
  logger.emit({
    body: `call ${callId} failed: 503`,
    severityNumber: SeverityNumber.ERROR,
    severityText: "ERROR",
    attributes: { "sip.call_id": callId },
    context: trace.setSpan(context.active(), root),
  });
  logger.emit({
    body: { event: "registered", expires: 3600 },
    severityNumber: SeverityNumber.INFO,
    severityText: "INFO",
  });
  await loggerProvider.forceFlush();

  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown(), loggerProvider.shutdown()]);
  return { service, callId, traceId: ctx.traceId, rootSpanId: ctx.spanId, childSpanId: child.spanContext().spanId };
}

const nowNs = () => String(BigInt(Date.now()) * 1_000_000n);
export const hexId = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes)));

/** A protobuf trace request: `spans` spans of service `svc`, each with `attrs` integer attributes (about 80 bytes a span, 16 an attribute). */
export function tracesProto(svc: string, spans: number, attrs = 1): Uint8Array<ArrayBuffer> {
  const attributes = Array.from({ length: attrs }, (_v, i) => ({ key: `k${i}`, value: { intValue: i } }));
  const T = MESSAGES.traces.request;
  return T.encode(
    T.fromObject({
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: svc } }] },
          scopeSpans: [
            {
              spans: Array.from({ length: spans }, (_v, i) => ({
                traceId: hexId(16),
                spanId: hexId(8),
                name: `s${i}`,
                startTimeUnixNano: nowNs(),
                attributes,
              })),
            },
          ],
        },
      ],
    }),
  ).finish() as Uint8Array<ArrayBuffer>;
}

/** One length-prefixed gRPC message (gRPC over HTTP/2 "Length-Prefixed-Message"). */
export const grpcFrame = (payload: Uint8Array, compressed: boolean) => {
  const out = Buffer.alloc(5 + payload.byteLength);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
};

/** A unary gRPC call written by hand: the grpc-status, grpc-message and status details of the answer. */
export function grpcRaw(
  address: string,
  path: string,
  frame: Uint8Array,
  headers: Record<string, string> = {},
): Promise<{ status: number; message: string; details?: Buffer }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...headers,
    });
    const fields: Record<string, unknown> = {};
    req.on("response", (h) => Object.assign(fields, h));
    req.on("trailers", (h) => Object.assign(fields, h));
    req.on("data", () => undefined);
    req.on("error", reject);
    req.on("close", () => {
      session.close();
      const details = fields["grpc-status-details-bin"];
      resolve({
        status: Number(fields["grpc-status"]),
        message: decodeURIComponent(String(fields["grpc-message"] ?? "")),
        ...(typeof details === "string" ? { details: Buffer.from(details, "base64") } : {}),
      });
    });
    req.end(frame);
  });
}

export const post = (
  url: string,
  body: BodyInit,
  type = "application/x-protobuf",
  headers: Record<string, string> = {},
) => fetch(url, { method: "POST", body, headers: { "content-type": type, ...headers } });

export async function countSpans(a: TestAppliance, svc: string): Promise<number> {
  await a.app.lake!.sync();
  return Number(
    (await a.app.lake!.query("SELECT count(*) AS n FROM svc_lake.main.otlp_traces WHERE service_name = $1", [svc]))
      .rows[0]!.n,
  );
}

export const metricsText = async (a: TestAppliance) => (await fetch(`${a.app.coordinatorUrl}/metrics`)).text();
