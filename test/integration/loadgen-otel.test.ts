/**
 * OTLP log export of loadgen (docs/LOADGEN.md "OTLP logs"): every ended call is one log record
 * POSTed as OTLP/HTTP JSON to a collector endpoint (here a loopback HTTP server that keeps what
 * it gets), failures with their reason; a collector answering 500 is counted, not fatal. Over gRPC
 * the request reaches LogsService/Export and is read here field by field (opentelemetry-proto
 * logs/v1 field numbers), independently of the encoder's schema.
 */
import * as grpc from "@grpc/grpc-js";
import { describe, expect, test } from "bun:test";
import { Engine } from "../../src/loadgen/index.ts";
import { opts, startUas } from "./loadgen-harness.ts";

interface OtlpRecord {
  severityText: string;
  body: { stringValue: string };
  attributes: Array<{ key: string; value: { stringValue?: string } }>;
}

function collector(status = 200) {
  const records: OtlpRecord[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: OtlpRecord[] }> }> };
      for (const rl of body.resourceLogs) for (const sl of rl.scopeLogs) records.push(...sl.logRecords);
      return new Response("{}", { status, headers: { "content-type": "application/json" } });
    },
  });
  return { records, url: `http://127.0.0.1:${server.port}/v1/logs`, [Symbol.dispose]: () => void server.stop(true) };
}

const attr = (r: OtlpRecord, key: string) => r.attributes.find((a) => a.key === key)?.value.stringValue;

describe("loadgen OTLP logs", () => {
  test("one record per call with its Call-ID and result; a failed call carries its reason", async () => {
    using otlp = collector();
    const uas = await startUas();
    try {
      const ok = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
          rate: 100,
          total_calls: 4,
          log_otel_endpoint: otlp.url,
        }),
        mode: "load",
      });
      await ok.start();
      await ok.done;
      // OPTIONS to a port that never answers fails after the recv timeout.
      const silent = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
      const bad = new Engine({
        opts: opts({
          scenario_name: "options",
          remote_addr: `127.0.0.1:${silent.port}`,
          rate: 100,
          total_calls: 1,
          recv_timeout_ms: 50,
          log_otel_endpoint: otlp.url,
        }),
        mode: "load",
      });
      await bad.start();
      await bad.done;
      silent.close();
      const calls = otlp.records.filter((r) => attr(r, "sip.call_id"));
      expect(calls.filter((r) => attr(r, "loadgen.result") === "successful")).toHaveLength(4);
      expect(new Set(calls.map((r) => attr(r, "sip.call_id"))).size).toBe(5);
      const failed = calls.filter((r) => attr(r, "loadgen.result") === "failed");
      expect(failed.map((r) => [r.severityText, r.body.stringValue, attr(r, "loadgen.reason")])).toEqual([
        ["WARN", "call failed: recv_timeout", "recv_timeout"],
      ]);
      expect(otlp.records.filter((r) => r.body.stringValue === "engine stopped")).toHaveLength(2);
      expect(ok.snapshot().log_export_errors).toBe(0);
    } finally {
      await uas.stop();
    }
  });

  test("a collector that refuses is counted in log_export_errors", async () => {
    using otlp = collector(500);
    const uas = await startUas();
    try {
      const e = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
          rate: 100,
          total_calls: 2,
          log_otel_endpoint: otlp.url,
        }),
        mode: "load",
      });
      await e.start();
      await e.done;
      expect(e.snapshot().calls_successful).toBe(2);
      expect(e.snapshot().log_export_errors).toBeGreaterThanOrEqual(1);
    } finally {
      await uas.stop();
    }
  });

  test("gRPC: LogsService/Export receives protobuf records with the Call-ID", async () => {
    const bodies: Buffer[] = [];
    const server = new grpc.Server();
    server.addService(
      {
        Export: {
          path: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Buffer) => b,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: () => Buffer.alloc(0),
          responseDeserialize: (b: Buffer) => b,
        },
      },
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
          bodies.push(call.request);
          cb(null, Buffer.alloc(0));
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    const uas = await startUas();
    try {
      const e = new Engine({
        opts: opts({
          scenario_name: "uac",
          remote_addr: `127.0.0.1:${uas.binds[0]!.port}`,
          rate: 100,
          total_calls: 3,
          log_otel_endpoint: `127.0.0.1:${port}`,
          log_otel_proto: "grpc",
          log_otel_insecure: true,
        }),
        mode: "load",
      });
      await e.start();
      await e.done;
      expect(e.snapshot().log_export_errors).toBe(0);
      // ExportLogsServiceRequest.resource_logs(1) → ResourceLogs.scope_logs(2) → ScopeLogs.log_records(2).
      const records = bodies.flatMap((b) => fields(b, 1).flatMap((rl) => fields(rl, 2).flatMap((sl) => fields(sl, 2))));
      const calls = records
        .map((r) => ({
          severity: fields(r, 3)[0]?.toString(),
          // LogRecord.attributes(6): KeyValue key(1), value(2) → AnyValue string_value(1)
          attrs: Object.fromEntries(
            fields(r, 6).map((kv) => [fields(kv, 1)[0]!.toString(), fields(fields(kv, 2)[0]!, 1)[0]?.toString()]),
          ),
        }))
        .filter((r) => r.attrs["sip.call_id"]);
      expect(calls.map((c) => [c.severity, c.attrs["loadgen.result"]])).toEqual([
        ["INFO", "successful"],
        ["INFO", "successful"],
        ["INFO", "successful"],
      ]);
      expect(new Set(calls.map((c) => c.attrs["sip.call_id"])).size).toBe(3);
    } finally {
      await uas.stop();
      server.forceShutdown();
    }
  });
});

/** The length-delimited values of field `no` in a protobuf message (wire format, no schema). */
function fields(buf: Buffer, no: number): Buffer[] {
  const out: Buffer[] = [];
  let i = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const [field, wire] = [key >>> 3, key & 7];
    if (wire === 0) varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = Number(varint());
      if (field === no) out.push(buf.subarray(i, i + len));
      i += len;
    } else throw new Error(`wire type ${wire}`);
  }
  return out;
}
