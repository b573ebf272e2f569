/**
 * The in-flight byte budget (docs/OTLP.md "Limits"), one for OTLP/HTTP and OTLP/gRPC together:
 * past `ingest.otlp.max_inflight_bytes` a request is refused whole with 429 + Retry-After /
 * RESOURCE_EXHAUSTED carrying google.rpc.RetryInfo; the official OTLP/HTTP exporter backs off and
 * succeeds; of a burst over both transports the rest is accepted and every accepted span is stored.
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { OTLPTraceExporter as TraceProto } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { GRPC_PATHS, RETRY_INFO, RPC_STATUS } from "../../src/ingest/otlp/proto.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { countSpans, grpcFrame, grpcRaw, metricsText, post, tracesProto } from "./otlp-helpers.ts";

describe("OTLP in-flight budget", () => {
  test("the in-flight budget: past it 429 + Retry-After and RESOURCE_EXHAUSTED with RetryInfo, shared by both transports; the rest is accepted and nothing accepted is lost", async () => {
    await using dir = tempDir();
    const budget = 64 * 1024;
    await using a = await startTestAppliance(dir.path, {
      ingest: { otlp: { enable: true, max_body_bytes: 48 * 1024, max_inflight_bytes: budget } },
    });
    const otlp = a.app.otlp!;
    const url = new URL(`${otlp.httpUrl()}/v1/traces`);

    // A request whose body is still arriving holds what it has sent: all but its last byte.
    const heldSvc = `held-${crypto.randomUUID()}`;
    const heldBody = tracesProto(heldSvc, 500, 3);
    expect(heldBody.byteLength).toBeGreaterThan(36_000);
    expect(heldBody.byteLength).toBeLessThan(48 * 1024);
    const socket = connect(Number(url.port), url.hostname);
    let answer = "";
    socket.on("data", (d) => {
      answer += d.toString("latin1");
    });
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(
      `POST /v1/traces HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${heldBody.byteLength}\r\n\r\n`,
    );
    socket.write(heldBody.subarray(0, -1));
    await waitFor("the held request's bytes in flight", () => otlp.inflightBytes() >= heldBody.byteLength - 1);

    // Beside it nothing of 30 KB fits: every HTTP request is 429, every gRPC call RESOURCE_EXHAUSTED.
    const refusedSvc = `refused-${crypto.randomUUID()}`;
    const body = tracesProto(refusedSvc, 400, 3);
    expect(body.byteLength + heldBody.byteLength).toBeGreaterThan(budget);
    const http = await Promise.all(Array.from({ length: 8 }, () => post(url.href, body)));
    for (const r of http) {
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(RPC_STATUS.toObject(RPC_STATUS.decode(new Uint8Array(await r.arrayBuffer())))).toMatchObject({
        code: 8,
        message: expect.stringContaining("max_inflight_bytes"),
      });
    }
    const g = await grpcRaw(otlp.grpcAddress()!, GRPC_PATHS.traces, grpcFrame(body, false));
    expect(g).toMatchObject({ status: 8, message: expect.stringContaining("max_inflight_bytes") });
    const st = RPC_STATUS.decode(g.details!) as unknown as { details: { typeUrl: string; value: Uint8Array }[] };
    expect(st.details[0]!.typeUrl).toBe("type.googleapis.com/google.rpc.RetryInfo");
    expect(RETRY_INFO.toObject(RETRY_INFO.decode(st.details[0]!.value), { longs: Number })).toEqual({
      retryDelay: { seconds: 1 },
    });
    // Gzip over gRPC is counted inflated.
    expect(
      (
        await grpcRaw(otlp.grpcAddress()!, GRPC_PATHS.traces, grpcFrame(gzipSync(body), true), {
          "grpc-encoding": "gzip",
        })
      ).status,
    ).toBe(8);

    // The official OTLP/HTTP exporter is refused too, backs off and succeeds once the held request is answered.
    const exporterSvc = `exporter-${crypto.randomUUID()}`;
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": exporterSvc, pad: "p".repeat(30_000) }),
      spanProcessors: [new SimpleSpanProcessor(new TraceProto({ url: url.href }))],
    });
    provider.getTracer("limits").startSpan("retried").end();
    const flushed = provider.forceFlush();
    await waitFor("the exporter refused once", async () =>
      /svc_otlp_requests_total\{transport="http",signal="traces",outcome="throttled"\} 9\b/.test(await metricsText(a)),
    );
    socket.write(heldBody.subarray(-1));
    await waitFor("the held request answered", () => answer.includes("\r\n\r\n") && answer);
    expect(answer.startsWith("HTTP/1.1 200")).toBe(true);
    socket.end();
    await flushed;
    await provider.shutdown();
    expect(await countSpans(a, exporterSvc)).toBe(1);

    // A burst of big requests over both transports: each is accepted or refused whole, and every accepted span is stored.
    const accepted: number[] = [];
    const burst = Array.from({ length: 12 }, async (_v, i) => {
      const s = `burst-${i}-${crypto.randomUUID()}`;
      const b = tracesProto(s, 400, 3);
      const ok =
        i % 2 === 0
          ? (await post(url.href, b)).status
          : (await grpcRaw(otlp.grpcAddress()!, GRPC_PATHS.traces, grpcFrame(b, false))).status;
      expect([200, 429, 0, 8]).toContain(ok);
      if (ok === 200 || ok === 0) accepted.push(i);
      return { s, ok: ok === 200 || ok === 0 };
    });
    const results = await Promise.all(burst);
    expect(accepted.length).toBeGreaterThan(0);
    for (const r of results) expect(await countSpans(a, r.s)).toBe(r.ok ? 400 : 0);
    expect(await countSpans(a, heldSvc)).toBe(500);
    expect(await countSpans(a, refusedSvc)).toBe(0);
    await waitFor("the budget released", () => otlp.inflightBytes() === 0);
  }, 120_000);
});
