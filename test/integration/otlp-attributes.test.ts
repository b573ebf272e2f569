/**
 * The attribute count limit per item (docs/OTLP.md "Limits"): attributes over
 * `ingest.otlp.max_attributes` (128) of spans, span events, resources, log records and data points
 * sent by the official OpenTelemetry exporters are dropped, counted in dropped_attributes_count, the
 * partial success message and svc_otlp_attributes_dropped_total; a span with 400 000 attributes is
 * stored with 128, never a crash.
 */
import { describe, expect, test } from "bun:test";
import { credentials } from "@grpc/grpc-js";
import { OTLPLogExporter as LogsProto } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPMetricExporter as MetricsGrpc } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPTraceExporter as TraceGrpc } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as TraceHttp } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as TraceProto } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MESSAGES } from "../../src/ingest/otlp/proto.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";
import { hexId, metricsText, post, tracesProto } from "./otlp-helpers.ts";

describe("OTLP attribute limit", () => {
  test("attributes over max_attributes are dropped and counted from the official exporters' spans, logs and metrics; 400 000 attributes never crash", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { otlp: { enable: true } } });
    const otlp = a.app.otlp!;
    const many = (prefix: string, n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_v, i) => [`${prefix}${i}`, i]));
    const grpcOpts = { url: `http://${otlp.grpcAddress()}`, credentials: credentials.createInsecure() };
    const q = async (sql: string, svc: string) => {
      await a.app.lake!.sync();
      return (await a.app.lake!.query(sql, [svc])).rows;
    };
    const keys = (v: unknown) => Object.keys(JSON.parse(String(v)) as object).length;

    for (const [transport, exporter] of [
      ["http-json", new TraceHttp({ url: `${otlp.httpUrl()}/v1/traces` })],
      ["http-proto", new TraceProto({ url: `${otlp.httpUrl()}/v1/traces` })],
      ["grpc", new TraceGrpc(grpcOpts)],
    ] as const) {
      const svc = `attrs-${transport}-${crypto.randomUUID()}`;
      // The SDK's own limit is 128 too: raised so that the receiver's limit is what drops.
      const provider = new BasicTracerProvider({
        resource: resourceFromAttributes({ "service.name": svc, ...many("r", 199) }),
        spanLimits: { attributeCountLimit: 1000, attributePerEventCountLimit: 1000 },
        spanProcessors: [new SimpleSpanProcessor(exporter)],
      });
      const span = provider.getTracer("limits").startSpan("wide", { attributes: many("a", 200) });
      span.addEvent("wide-event", many("e", 130));
      span.end();
      await provider.forceFlush();
      await provider.shutdown();
      const [row] = await q(
        "SELECT resource_attrs, span_attrs, raw FROM svc_lake.main.otlp_traces WHERE service_name = $1",
        svc,
      );
      expect(row).toBeDefined();
      expect(keys(row!.span_attrs)).toBe(128);
      expect(keys(row!.resource_attrs)).toBe(128);
      const raw = JSON.parse(String(row!.raw)) as {
        droppedAttributesCount: number;
        events: { attributes: unknown[]; droppedAttributesCount: number }[];
      };
      expect(raw.droppedAttributesCount).toBe(72);
      expect(raw.events[0]!.attributes.length).toBe(128);
      expect(raw.events[0]!.droppedAttributesCount).toBe(2);
    }

    // Logs over OTLP/HTTP protobuf and metrics over gRPC.
    const svc = `attrs-signals-${crypto.randomUUID()}`;
    const resource = resourceFromAttributes({ "service.name": svc });
    const logs = new LoggerProvider({
      resource,
      logRecordLimits: { attributeCountLimit: 1000 },
      processors: [new SimpleLogRecordProcessor({ exporter: new LogsProto({ url: `${otlp.httpUrl()}/v1/logs` }) })],
    });
    logs.getLogger("limits").emit({ body: "wide", attributes: many("l", 300) });
    await logs.forceFlush();
    await logs.shutdown();
    const [log] = await q("SELECT attributes, raw FROM svc_lake.main.otlp_logs WHERE service_name = $1", svc);
    expect(keys(log!.attributes)).toBe(128);
    expect((JSON.parse(String(log!.raw)) as { droppedAttributesCount: number }).droppedAttributesCount).toBe(172);
    const meters = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({ exporter: new MetricsGrpc(grpcOpts), exportIntervalMillis: 3_600_000 }),
      ],
    });
    meters.getMeter("limits").createCounter("wide.counter").add(1, many("m", 150));
    await meters.shutdown();
    const [point] = await q("SELECT attributes FROM svc_lake.main.otlp_metrics WHERE service_name = $1", svc);
    expect(keys(point!.attributes)).toBe(128);

    // What the client is told: a partial success with nothing rejected and the reason (JSON and protobuf).
    const wide = { key: "w", value: { stringValue: "x" } };
    const jsonBody = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: svc } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: hexId(16).toString("hex"),
                  spanId: hexId(8).toString("hex"),
                  name: "j",
                  attributes: Array.from({ length: 130 }, (_v, i) => ({ ...wide, key: `w${i}` })),
                },
              ],
            },
          ],
        },
      ],
    };
    const j = await post(`${otlp.httpUrl()}/v1/traces`, JSON.stringify(jsonBody), "application/json");
    expect(j.status).toBe(200);
    expect(await j.json()).toEqual({
      partialSuccess: {
        rejectedSpans: 0,
        errorMessage: expect.stringContaining("2 attribute(s) over ingest.otlp.max_attributes"),
      },
    });

    // 400 000 attributes on one span (6.3 MB): stored with 128, answered 200, no crash.
    const huge = tracesProto(svc, 1, 400_000);
    expect(huge.byteLength).toBeGreaterThan(6_000_000);
    const h = await post(`${otlp.httpUrl()}/v1/traces`, huge);
    expect(h.status).toBe(200);
    const hr = MESSAGES.traces.response.toObject(
      MESSAGES.traces.response.decode(new Uint8Array(await h.arrayBuffer())),
      { longs: Number },
    ) as {
      partialSuccess?: { rejectedSpans?: number; errorMessage: string };
    };
    expect(hr.partialSuccess?.rejectedSpans ?? 0).toBe(0);
    expect(hr.partialSuccess?.errorMessage).toContain("399872 attribute(s) over ingest.otlp.max_attributes");
    const stored = await q(
      "SELECT span_attrs FROM svc_lake.main.otlp_traces WHERE service_name = $1 AND name = 's0'",
      svc,
    );
    expect(stored.map((r) => keys(r.span_attrs))).toEqual([128]);

    const text = await metricsText(a);
    expect(text).toMatch(/svc_otlp_attributes_dropped_total\{signal="logs"\} 172\b/);
    expect(text).toMatch(/svc_otlp_attributes_dropped_total\{signal="metrics"\} 22\b/);
  }, 120_000);
});
