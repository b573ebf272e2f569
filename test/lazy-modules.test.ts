/**
 * What `svc serve` does not need at start is not loaded with the code (docs/ARCHITECTURE.md
 * "Start-up"): importing src/main.ts in a fresh process loads neither the OTLP receiver (its
 * protobuf schema, gRPC server, protobufjs and @grpc/grpc-js), nor the MCP SDK, nor the load
 * generator. The module registry of that process (require.cache, ES modules included in Bun) is
 * the import graph.
 */
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

test("importing src/main.ts loads no OTLP, MCP SDK or load-generator module", () => {
  const script = `await import(${JSON.stringify(`${ROOT}/src/main.ts`)}); console.log(JSON.stringify(Object.keys(require.cache)));`;
  const r = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  const loaded = JSON.parse(r.stdout.toString()) as string[];
  // The import worked: the graph holds main.ts and the forward decoders that must not pull OTLP in.
  expect(loaded).toContain(`${ROOT}/src/main.ts`);
  expect(loaded).toContain(`${ROOT}/src/ingest/forward/decoders.ts`);
  const lazy = loaded.filter((p) =>
    /\/src\/ingest\/otlp\/(index|proto|grpc|receiver|ingest|http)\.ts$|\/node_modules\/(protobufjs|@grpc\/grpc-js|@modelcontextprotocol)\/|\/src\/loadgen\/|\/src\/mcp\/(stdio|tools)\.ts$/.test(p),
  );
  expect(lazy).toEqual([]);
});
