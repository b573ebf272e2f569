/**
 * OTLP wire checks (docs/OTLP.md "HTTP", "gRPC"): a protobuf body with an over-long (more than 10
 * bytes) or overflowing (bits beyond 64) varint is a 400 / INVALID_ARGUMENT, and a gRPC message
 * flagged gzip that does not inflate is INVALID_ARGUMENT like OTLP/HTTP's 400. The gRPC frames are
 * written by hand over node:http2: the official clients cannot send them.
 */
import { describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { GRPC_PATHS, RPC_STATUS } from "../../src/ingest/otlp/proto.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";
import { countSpans, grpcFrame, grpcRaw, post, tracesProto } from "./otlp-helpers.ts";

describe("OTLP wire checks", () => {
  test("an over-long or overflowing varint is a 400 over HTTP and INVALID_ARGUMENT over gRPC, not a 200", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { otlp: { enable: true } } });
    const otlp = a.app.otlp!;
    const over10 = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
    // An int64 attribute whose tenth varint byte carries bits beyond 64 (protobufjs would store -1).
    const av = [0x18, ...over10];
    const kv = [0x0a, 1, 0x6b, 0x12, av.length, ...av];
    const span = [0x4a, kv.length, ...kv];
    const ss = [0x12, span.length, ...span];
    const rs = [0x12, ss.length, ...ss];
    const overflowing = new Uint8Array([0x0a, rs.length, ...rs]);
    // An unknown field (99) whose varint has 11 bytes.
    const tooLong = new Uint8Array([0x98, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    for (const [body, says] of [
      [overflowing, "overflows 64 bits"],
      [tooLong, "longer than 10 bytes"],
    ] as const) {
      const r = await post(`${otlp.httpUrl()}/v1/traces`, body);
      expect(r.status).toBe(400);
      const st = RPC_STATUS.toObject(RPC_STATUS.decode(new Uint8Array(await r.arrayBuffer()))) as {
        code: number;
        message: string;
      };
      expect(st).toEqual({ code: 3, message: expect.stringContaining(says) });
      const g = await grpcRaw(otlp.grpcAddress()!, GRPC_PATHS.traces, grpcFrame(body, false));
      expect(g).toMatchObject({ status: 3, message: expect.stringContaining(says) });
    }
  }, 60_000);

  test("a gRPC message flagged gzip that does not inflate is INVALID_ARGUMENT, as OTLP/HTTP answers 400; sound gzip is stored", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { otlp: { enable: true } } });
    const otlp = a.app.otlp!;
    // A gzip-flagged message that is not gzip: the client's mistake, as over HTTP (400).
    const corrupt = await grpcRaw(
      otlp.grpcAddress()!,
      GRPC_PATHS.traces,
      grpcFrame(new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7]), true),
      { "grpc-encoding": "gzip" },
    );
    expect(corrupt).toMatchObject({ status: 3, message: expect.stringContaining("could not be decompressed") });
    const corruptHttp = await post(
      `${otlp.httpUrl()}/v1/traces`,
      new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3]),
      "application/x-protobuf",
      { "content-encoding": "gzip" },
    );
    expect(corruptHttp.status).toBe(400);
    // A sound gzip message still goes through.
    const svc = `wire-${crypto.randomUUID()}`;
    const good = await grpcRaw(otlp.grpcAddress()!, GRPC_PATHS.traces, grpcFrame(gzipSync(tracesProto(svc, 2)), true), {
      "grpc-encoding": "gzip",
    });
    expect(good.status).toBe(0);
    expect(await countSpans(a, svc)).toBe(2);
  }, 60_000);
});
