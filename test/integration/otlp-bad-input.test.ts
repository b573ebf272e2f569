/**
 * OTLP bad input (docs/OTLP.md "What is kept, and when it is answered"): a body
 * that does not decode is a 400 with a google.rpc.Status in the request's encoding, an oversized
 * one a 413, items that cannot be stored are reported as OTLP partial success while the rest is
 * written; the same over gRPC.
 */
import { describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import * as grpc from "@grpc/grpc-js";
import { GRPC_PATHS, MESSAGES, RPC_STATUS } from "../../src/ingest/otlp/proto.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const nowNs = () => String(BigInt(Date.now()) * 1_000_000n);
const hexId = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** An OTLP/JSON trace request; `traceIds` one span each under service `svc`. */
function tracesJson(svc: string, traceIds: string[]) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: svc } }] },
        scopeSpans: [
          {
            scope: { name: "bad-input" },
            spans: traceIds.map((t, i) => ({
              traceId: t,
              spanId: hexId(8),
              name: `span-${i}`,
              kind: 2,
              startTimeUnixNano: nowNs(),
              endTimeUnixNano: nowNs(),
            })),
          },
        ],
      },
    ],
  };
}

/** The same as protobuf (our schema encodes it; the exporters test covers the official encoders). */
function tracesProto(svc: string, traceIds: string[]): Uint8Array<ArrayBuffer> {
  const j = tracesJson(svc, traceIds);
  for (const s of j.resourceSpans[0]!.scopeSpans[0]!.spans)
    Object.assign(s, { traceId: Buffer.from(s.traceId, "hex"), spanId: Buffer.from(s.spanId, "hex") });
  const T = MESSAGES.traces.request;
  return T.encode(T.fromObject(j)).finish() as Uint8Array<ArrayBuffer>;
}

const post = (url: string, body: BodyInit, type: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", body, headers: { "content-type": type, ...headers } });

describe("OTLP bad input", () => {
  test("OTLP/HTTP: 400 with google.rpc.Status, 413, 415, 405, 404, gzip, partial success, 503 when full; accepted rows stay", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { otlp: { enable: true, max_body_bytes: 300_000 } },
      storage: { lakehouse: { max_buffered_rows: 1000 } },
    });
    const { lake, otlp } = a.app;
    const url = `${otlp!.httpUrl()}/v1/traces`;
    const svc = `bad-${crypto.randomUUID()}`;
    const count = async () => {
      await lake!.sync();
      return Number(
        (await lake!.query("SELECT count(*) AS n FROM svc_lake.main.otlp_traces WHERE service_name = $1", [svc]))
          .rows[0]!.n,
      );
    };

    // Accepted first: a good request over each encoding, one gzip-compressed.
    expect((await post(url, JSON.stringify(tracesJson(svc, [hexId(16)])), "application/json")).status).toBe(200);
    const ok = await post(url, gzipSync(tracesProto(svc, [hexId(16)])), "application/x-protobuf", {
      "content-encoding": "gzip",
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/x-protobuf");
    expect(
      MESSAGES.traces.response.toObject(MESSAGES.traces.response.decode(new Uint8Array(await ok.arrayBuffer()))),
    ).toEqual({});
    expect(await count()).toBe(2);

    // Malformed protobuf: 400, a protobuf google.rpc.Status with INVALID_ARGUMENT.
    const badProto = await post(
      url,
      new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
      "application/x-protobuf",
    );
    expect(badProto.status).toBe(400);
    expect(badProto.headers.get("content-type")).toBe("application/x-protobuf");
    const st = RPC_STATUS.toObject(RPC_STATUS.decode(new Uint8Array(await badProto.arrayBuffer()))) as {
      code: number;
      message: string;
    };
    expect(st.code).toBe(3);
    expect(st.message).toContain("not a valid protobuf ExportTraceServiceRequest");

    // Malformed JSON and a JSON of the wrong shape: 400 with a JSON Status.
    for (const body of ['{"resourceSpans": [', "[1,2]", '{"resourceSpans": 7}']) {
      const r = await post(url, body, "application/json");
      expect(r.status).toBe(400);
      const j = (await r.json()) as { code: number; message: string };
      expect(j.code).toBe(3);
      expect(j.message.length).toBeGreaterThan(10);
    }
    // Not gzip although it says so: 400.
    expect((await post(url, "plain", "application/json", { "content-encoding": "gzip" })).status).toBe(400);

    // Oversized (on the wire, and as a small gzip that inflates past the cap): 413 with a Status.
    const big = JSON.stringify({ resourceSpans: [], pad: "x".repeat(310_000) });
    const tooBig = await post(url, big, "application/json");
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { code: number; message: string }).message).toContain(
      "ingest.otlp.max_body_bytes",
    );
    expect((await post(url, gzipSync(big), "application/json", { "content-encoding": "gzip" })).status).toBe(413);

    // A body nested 9 000 levels deep: its record is rejected (partial success), never a 500.
    const deep = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${'{"arrayValue":{"values":['.repeat(9_000)}{"stringValue":"x"}${"]}}".repeat(9_000)}}]}]}]}`;
    const deepRes = await post(`${otlp!.httpUrl()}/v1/logs`, deep, "application/json");
    expect(deepRes.status).toBe(200);
    expect(await deepRes.json()).toEqual({
      partialSuccess: { rejectedLogRecords: 1, errorMessage: expect.stringContaining("deeper than 32 levels") },
    });

    // Wrong media type, method, path.
    expect((await post(url, "x", "text/plain")).status).toBe(415);
    expect((await fetch(url)).status).toBe(405);
    expect((await post(`${otlp!.httpUrl()}/v1/profiles`, "{}", "application/json")).status).toBe(404);

    // Partial success: the span with a short trace id is rejected, the other two are written.
    const partial = await post(
      url,
      JSON.stringify(tracesJson(svc, [hexId(16), "abcd", hexId(16)])),
      "application/json",
    );
    expect(partial.status).toBe(200);
    expect(await partial.json()).toEqual({
      partialSuccess: { rejectedSpans: 1, errorMessage: expect.stringContaining("trace_id") },
    });
    const partialProto = await post(url, tracesProto(svc, [hexId(16), ""]), "application/x-protobuf");
    const pp = MESSAGES.traces.response.toObject(
      MESSAGES.traces.response.decode(new Uint8Array(await partialProto.arrayBuffer())),
      { longs: Number },
    ) as { partialSuccess: { rejectedSpans: number } };
    expect(pp.partialSuccess.rejectedSpans).toBe(1);
    expect(await count()).toBe(5);

    // More items than the lake's buffer may still take: refused whole with 503 + Retry-After, nothing half-written.
    const full = await post(
      url,
      gzipSync(
        JSON.stringify(
          tracesJson(
            svc,
            Array.from({ length: 1001 }, () => hexId(16)),
          ),
        ),
      ),
      "application/json",
      { "content-encoding": "gzip" },
    );
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toBe("1");
    expect(((await full.json()) as { code: number; message: string }).message).toContain("write buffer is full");
    expect(await count()).toBe(5);

    // Nothing accepted is lost across a restart; with the receiver off the stored tables are still read.
    await a[Symbol.asyncDispose]();
    await using b = await startTestAppliance(dir.path);
    expect(b.app.otlp).toBeUndefined();
    expect(
      Number(
        (await b.app.lake!.query("SELECT count(*) AS n FROM svc_lake.main.otlp_traces WHERE service_name = $1", [svc]))
          .rows[0]!.n,
      ),
    ).toBe(5);
  }, 60_000);

  test("OTLP/gRPC: INVALID_ARGUMENT for a bad message, RESOURCE_EXHAUSTED over the cap, partial success", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { otlp: { enable: true, max_body_bytes: 4096 } } });
    const client = new grpc.Client(a.app.otlp!.grpcAddress()!, grpc.credentials.createInsecure());
    const call = (bytes: Uint8Array) =>
      new Promise<{ err: grpc.ServiceError | null; res?: Buffer }>((resolve) =>
        client.makeUnaryRequest(
          GRPC_PATHS.traces,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from(bytes),
          (err, res) => resolve({ err, ...(res ? { res } : {}) }),
        ),
      );
    try {
      const bad = await call(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
      expect(bad.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(bad.err?.details).toContain("not a valid protobuf");
      const big = await call(new Uint8Array(8000));
      expect(big.err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const svc = `grpc-${crypto.randomUUID()}`;
      const partial = await call(tracesProto(svc, [hexId(16), ""]));
      expect(partial.err).toBeNull();
      const r = MESSAGES.traces.response.toObject(MESSAGES.traces.response.decode(partial.res!), { longs: Number }) as {
        partialSuccess: { rejectedSpans: number; errorMessage: string };
      };
      expect(r.partialSuccess).toEqual({ rejectedSpans: 1, errorMessage: expect.stringContaining("trace_id") });
      await a.app.lake!.sync();
      expect(
        Number(
          (
            await a.app.lake!.query("SELECT count(*) AS n FROM svc_lake.main.otlp_traces WHERE service_name = $1", [
              svc,
            ])
          ).rows[0]!.n,
        ),
      ).toBe(1);
    } finally {
      client.close();
    }
  }, 60_000);
});
