/**
 * OTLP receiver memory under concurrent big bodies (docs/OTLP.md "Limits", docs/BENCHMARKS.md
 * "OTLP: memory under concurrent big bodies"): the real appliance as a child process; this process
 * posts `--concurrency` copies of one pre-encoded protobuf body at once (OTLP/HTTP or OTLP/gRPC) and
 * samples the child's RSS (/proc/<pid>/status every 5 ms, and VmHWM, reset before each burst through
 * /proc/<pid>/clear_refs). Nothing is retried: every answer is counted as it comes.
 *   bun bench/otlp/memory.ts --shape wide|many --transport http|grpc --concurrency 1,32 [--max_inflight_bytes N]
 * wide: one span with 400 000 integer attributes (about 6.7 MB); many: 3 125 spans of 128 attributes
 * (the same 400 000 attributes, none over the attribute limit). Prints one JSON line per burst.
 */
import * as grpc from "@grpc/grpc-js";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GRPC_PATHS, MESSAGES } from "../../src/ingest/otlp/proto.ts";
import { testConfigJson } from "../../test/appliance.ts";
import { startChildAppliance } from "../child-appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const shape = args.get("shape") ?? "wide";
const transport = args.get("transport") ?? "http";
const bursts = (args.get("concurrency") ?? "1,32").split(",").map(Number);
const maxInflight = args.get("max_inflight_bytes");
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-otlp-mem-"));
const MiB = 1024 * 1024;

const cfgPath = join(dir, "svc.json");
await Bun.write(
  cfgPath,
  JSON.stringify(
    testConfigJson(dir, {
      log: { level: "info" },
      ingest: {
        otlp: {
          enable: true,
          http: { listen: "127.0.0.1:0" },
          grpc: { listen: "127.0.0.1:0" },
          ...(maxInflight ? { max_inflight_bytes: Number(maxInflight) } : {}),
        },
      },
      storage: { lakehouse: { flush_interval_sec: 10, tuning: { threads: 2, memory_limit: "2GB" } } },
    }),
  ),
);

const rnd = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));
function body(): Uint8Array {
  const [spans, attrs] = shape === "wide" ? [1, 400_000] : [3_125, 128];
  const attributes = Array.from({ length: attrs }, (_v, i) => ({ key: `k${i}`, value: { intValue: i } }));
  const ns = String(BigInt(Date.now()) * 1_000_000n);
  const T = MESSAGES.traces.request;
  return T.encode(
    T.fromObject({
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: `mem-${shape}` } }] },
          scopeSpans: [
            {
              spans: Array.from({ length: spans }, (_v, i) => ({
                traceId: rnd(16),
                spanId: rnd(8),
                name: `s${i}`,
                startTimeUnixNano: ns,
                attributes,
              })),
            },
          ],
        },
      ],
    }),
  ).finish();
}
const payload = body();

const { child, addresses } = await startChildAppliance(cfgPath, ["otlp-http", "otlp-grpc"]);
const pid = child.pid;
const kb = (field: string) =>
  Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const client = new grpc.Client(addresses["otlp-grpc"]!, grpc.credentials.createInsecure(), {
  "grpc.max_send_message_length": 64 * MiB,
});

/** One export; its outcome as an HTTP status or `grpc-<code>`. */
async function send(): Promise<string> {
  if (transport === "http") {
    const r = await fetch(`http://${addresses["otlp-http"]}/v1/traces`, {
      method: "POST",
      body: payload as Uint8Array<ArrayBuffer>,
      headers: { "content-type": "application/x-protobuf" },
    });
    await r.arrayBuffer();
    return String(r.status);
  }
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      GRPC_PATHS.traces,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(payload),
      (err) => resolve(err ? `grpc-${err.code}` : "grpc-0"),
    ),
  );
}

await send(); // warm-up: code paths compiled, tables defined
for (const n of bursts) {
  await Bun.sleep(2000);
  const before = kb("VmRSS");
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  let sampled = before;
  const timer = setInterval(() => {
    sampled = Math.max(sampled, kb("VmRSS"));
  }, 5);
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: n }, () => send()));
  const ms = Math.round(performance.now() - t0);
  clearInterval(timer);
  const peak = Math.max(sampled, kb("VmHWM"));
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  console.log(
    JSON.stringify({
      shape,
      transport,
      body_mb: +(payload.byteLength / 1e6).toFixed(2),
      concurrency: n,
      rss_before_mib: Math.round(before / MiB),
      rss_peak_mib: Math.round(peak / MiB),
      rise_mib: Math.round((peak - before) / MiB),
      ms,
      outcomes: counts,
    }),
  );
}
client.close();
child.kill("SIGTERM");
await child.exited;
rmSync(dir, { recursive: true, force: true });
