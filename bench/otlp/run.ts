/**
 * OTLP ingest benchmark (docs/BENCHMARKS.md "OTLP: spans/s and logs/s"): the real appliance as a child process, writers in this process
 * posting OTLP/HTTP protobuf (what the official `-proto` exporters send) or OTLP/gRPC Export calls
 * of `--batch` spans or log records each, as fast as the appliance answers, for `--seconds`. Prints
 * one JSON line: items/s acknowledged (200, nothing rejected) and items/s until every item is
 * counted through POST /api/v4/query (searchable).
 *   bun bench/otlp/run.ts --signal traces|logs --transport http|grpc --seconds 20 --batch 512 --writers 4
 * Figures go to docs/BENCHMARKS.md from a quiet machine only.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../src/auth/index.ts";
import { GRPC_PATHS, MESSAGES } from "../../src/ingest/otlp/proto.ts";
import { testConfigJson } from "../../test/appliance.ts";
import { startChildAppliance } from "../child-appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const signal = (args.get("signal") ?? "traces") as "traces" | "logs";
if (signal !== "traces" && signal !== "logs") throw new Error("--signal traces or logs");
const transport = args.get("transport") ?? "http";
const seconds = Number(args.get("seconds") ?? "10");
const batch = Number(args.get("batch") ?? "512");
const writers = Number(args.get("writers") ?? "4");
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-otlp-bench-"));
const PASSWORD = "otlp-bench-password";

const cfgPath = join(dir, "svc.json");
await Bun.write(
  cfgPath,
  JSON.stringify(
    testConfigJson(dir, {
      log: { level: "info" },
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      ingest: { otlp: { enable: true, http: { listen: "127.0.0.1:0" }, grpc: { listen: "127.0.0.1:0" } } },
      storage: { lakehouse: { flush_interval_sec: 10, tuning: { threads: 2, memory_limit: "2GB" } } },
    }),
  ),
);

// --- the appliance, addresses from its "listening" log lines -----------------------------------
const { child, addresses } = await startChildAppliance(cfgPath, ["otlp-http", "otlp-grpc", "coordinator-http"]);
const api = `http://${addresses["coordinator-http"]}/api/v4`;
const login = await fetch(`${api}/auth/sessions`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ username: "admin", password: PASSWORD }),
});
const token = ((await login.json()) as { token: string }).token;
const count = async (): Promise<number> => {
  const r = await fetch(`${api}/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ sql: `SELECT count(*) AS n FROM otlp_${signal}` }),
  });
  return Number(((await r.json()) as { data: { rows?: Array<{ n: unknown }> } }).data.rows?.[0]?.n ?? 0);
};

// --- request bodies: a SIP proxy's spans or log records, 16 variants with their own trace ids ----
const rnd = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));
const attr = (key: string, v: string | number) => ({
  key,
  value: typeof v === "number" ? { intValue: v } : { stringValue: v },
});
function body(): Uint8Array {
  const ns = BigInt(Date.now()) * 1_000_000n;
  const items = Array.from({ length: batch }, (_, i) => {
    const callId = `bench-${i}-${crypto.randomUUID()}@pbx`;
    const t = String(ns + BigInt(i) * 1000n);
    return signal === "traces"
      ? {
          traceId: rnd(16),
          spanId: rnd(8),
          parentSpanId: rnd(8),
          name: "INVITE",
          kind: 2,
          startTimeUnixNano: t,
          endTimeUnixNano: String(ns + BigInt(i) * 1000n + 250_000n),
          attributes: [attr("sip.call_id", callId), attr("sip.method", "INVITE"), attr("net.peer.port", 5060)],
          status: { code: 1 },
        }
      : {
          timeUnixNano: t,
          observedTimeUnixNano: t,
          severityNumber: 9,
          severityText: "INFO",
          body: { stringValue: `call ${callId} routed to gw-${i % 8}` },
          attributes: [attr("sip.call_id", callId)],
          traceId: rnd(16),
          spanId: rnd(8),
        };
  });
  const resource = { attributes: [attr("service.name", "bench-proxy"), attr("host.name", "bench")] };
  const scope = { name: "bench" };
  const req =
    signal === "traces"
      ? { resourceSpans: [{ resource, scopeSpans: [{ scope, spans: items }] }] }
      : { resourceLogs: [{ resource, scopeLogs: [{ scope, logRecords: items }] }] };
  const T = MESSAGES[signal].request;
  return T.encode(T.fromObject(req)).finish();
}
const bodies = Array.from({ length: 16 }, body);

const grpcClient =
  transport === "grpc" ? new grpc.Client(addresses["otlp-grpc"]!, grpc.credentials.createInsecure()) : undefined;
async function send(b: Uint8Array): Promise<boolean> {
  if (grpcClient) {
    return new Promise((resolve) =>
      grpcClient.makeUnaryRequest(
        GRPC_PATHS[signal],
        (x: Buffer) => x,
        (x: Buffer) => x,
        Buffer.from(b),
        (err, res) => resolve(!err && res !== undefined && res.length === 0),
      ),
    );
  }
  const r = await fetch(`http://${addresses["otlp-http"]}/v1/${signal}`, {
    method: "POST",
    body: b as Uint8Array<ArrayBuffer>,
    headers: { "content-type": "application/x-protobuf" },
  });
  const answer = new Uint8Array(await r.arrayBuffer());
  return r.status === 200 && answer.length === 0; // an empty response: no partial success
}

// --- the run ------------------------------------------------------------------------------------
let acked = 0;
let failed = 0;
const t0 = performance.now();
const stopAt = t0 + seconds * 1000;
await Promise.all(
  Array.from({ length: writers }, async (_w, w) => {
    for (let i = w; performance.now() < stopAt; i += writers) {
      if (await send(bodies[i % bodies.length]!)) acked += batch;
      else failed++;
    }
  }),
);
const sendSec = (performance.now() - t0) / 1000;
let stored = 0;
const countDeadline = Date.now() + 120_000;
while ((stored = await count()) < acked && Date.now() < countDeadline) await Bun.sleep(200);
const visibleSec = (performance.now() - t0) / 1000;
grpcClient?.close();
console.log(
  JSON.stringify({
    signal,
    transport,
    batch,
    writers,
    cpus: cpus().length,
    acked,
    failed_requests: failed,
    acked_per_sec: Math.round(acked / sendSec),
    stored,
    searchable_per_sec: Math.round(stored / visibleSec),
  }),
);
child.kill("SIGTERM");
await child.exited;
rmSync(dir, { recursive: true, force: true });
