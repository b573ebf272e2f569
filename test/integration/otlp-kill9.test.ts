/**
 * An OTLP export answered as stored survives a kill -9 (docs/OTLP.md "What is kept"): the answer
 * leaves once the rows are in a spool file. The appliance runs as a child process without a flush
 * during the run, is killed the moment the last answer arrives (HTTP and gRPC), and an in-process
 * appliance on the same directories must find every answered span and log record.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { GRPC_PATHS, MESSAGES } from "../../src/ingest/otlp/proto.ts";
import { startTestAppliance, testConfigJson } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";

const ROOT = resolve(import.meta.dir, "../..");
const REQUESTS = 6;
const ITEMS = 200;
const OVERRIDES = {
  log: { level: "info" },
  ingest: { otlp: { enable: true } },
  storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
};

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("SVC_")) env[k] = v;
  return env;
}

const rnd = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));
const resource = { attributes: [{ key: "service.name", value: { stringValue: "kill9" } }] };
function spans(r: number): Uint8Array {
  const ns = BigInt(Date.now()) * 1_000_000n;
  const T = MESSAGES.traces.request;
  const items = Array.from({ length: ITEMS }, (_v, i) => ({
    traceId: rnd(16),
    spanId: rnd(8),
    name: `s-${r}-${i}`,
    startTimeUnixNano: String(ns + BigInt(i)),
    endTimeUnixNano: String(ns + BigInt(i) + 1000n),
  }));
  return T.encode(T.fromObject({ resourceSpans: [{ resource, scopeSpans: [{ spans: items }] }] })).finish();
}
function logs(r: number): Uint8Array {
  const ns = BigInt(Date.now()) * 1_000_000n;
  const T = MESSAGES.logs.request;
  const items = Array.from({ length: ITEMS }, (_v, i) => ({
    timeUnixNano: String(ns + BigInt(i)),
    severityNumber: 9,
    body: { stringValue: `l-${r}-${i}` },
  }));
  return T.encode(T.fromObject({ resourceLogs: [{ resource, scopeLogs: [{ logRecords: items }] }] })).finish();
}

test("every span and log record answered as stored is there after a kill -9 right after the answer", async () => {
  await using dir = tempDir();
  const cfgPath = join(dir.path, "svc.json");
  writeFileSync(cfgPath, JSON.stringify(testConfigJson(dir.path, OVERRIDES)));
  const proc = Bun.spawn([process.execPath, "src/main.ts", "serve", "--config-path", cfgPath], {
    cwd: ROOT,
    env: childEnv(),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let log = "";
  const addr: Record<string, string> = {};
  void (async () => {
    const dec = new TextDecoder();
    const reader = proc.stderr.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      log += dec.decode(r.value, { stream: true });
      for (const m of log.matchAll(/"msg":"listening"[^\n]*"module":"(otlp-http|otlp-grpc)","address":"([^"]+)"/g))
        addr[m[1]!] = m[2]!;
    }
  })();
  try {
    await waitFor(
      "the child's OTLP listeners",
      () => {
        if (proc.exitCode !== null) throw new Error(`child exited ${proc.exitCode}: ${log.slice(-500)}`);
        return addr["otlp-http"] && addr["otlp-grpc"];
      },
      30_000,
    );
    const client = new grpc.Client(addr["otlp-grpc"]!, grpc.credentials.createInsecure());
    try {
      for (let r = 0; r < REQUESTS; r++) {
        const res = await fetch(`http://${addr["otlp-http"]}/v1/traces`, {
          method: "POST",
          body: spans(r) as Uint8Array<ArrayBuffer>,
          headers: { "content-type": "application/x-protobuf" },
        });
        expect(res.status).toBe(200);
        const err = await new Promise<grpc.ServiceError | null>((done) =>
          client.makeUnaryRequest(
            GRPC_PATHS.logs,
            (b: Buffer) => b,
            (b: Buffer) => b,
            Buffer.from(logs(r)),
            (e) => done(e),
          ),
        );
        expect(err).toBeNull();
      }
    } finally {
      client.close();
    }
    // The moment the last answer is in: without the wait for the spool, the last rows are still in memory.
    proc.kill("SIGKILL");
    await proc.exited;
  } finally {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  }

  await using a = await startTestAppliance(dir.path);
  const n = async (table: string) =>
    Number(
      (
        await a.app.lake!.query(
          `SELECT count(DISTINCT ${table === "otlp_traces" ? "name" : "body"}) AS n FROM svc_lake.main.${table}`,
        )
      ).rows[0]!.n,
    );
  expect(await n("otlp_traces")).toBe(REQUESTS * ITEMS);
  expect(await n("otlp_logs")).toBe(REQUESTS * ITEMS);
}, 90_000);
