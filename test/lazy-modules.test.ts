/**
 * What `svc serve` does not need at start is not loaded with the code (docs/ARCHITECTURE.md
 * "Start-up"): importing src/main.ts in a fresh process loads neither the OTLP receiver (its
 * protobuf schema, gRPC server, protobufjs and @grpc/grpc-js), nor the MCP SDK, nor the load
 * generator. The module registry of that process (require.cache, ES modules included in Bun) is
 * the import graph. Nor does phase one of `svc serve` load the DuckDB driver (last test).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { tempDir } from "./harness.ts";

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
    /\/src\/ingest\/otlp\/(index|proto|grpc|receiver|ingest|http)\.ts$|\/node_modules\/(protobufjs|@grpc\/grpc-js|@modelcontextprotocol)\/|\/src\/loadgen\/|\/src\/mcp\/(stdio|tools)\.ts$/.test(
      p,
    ),
  );
  expect(lazy).toEqual([]);
});

/**
 * The DuckDB driver loads in phase two, with the lake (docs/ARCHITECTURE.md "Start-up"): a fresh
 * process starts the appliance with the lake held before it opens, so phase one (the HTTP ports,
 * the settings database, the logins) has run; the driver must not be in the module registry then,
 * and must be once the lake is let go and everything has started.
 */
test("phase one of the start loads no DuckDB module; the lake loads it in phase two", async () => {
  await using dir = tempDir("svc-lazy-duckdb-");
  const script = `
    const { startAppliance } = await import(${JSON.stringify(`${ROOT}/src/main.ts`)});
    const { testConfig } = await import(${JSON.stringify(`${ROOT}/test/appliance.ts`)});
    const { configureLogging, createLogger } = await import(${JSON.stringify(`${ROOT}/src/core/index.ts`)});
    configureLogging({ level: "error", format: "json" });
    const duckdb = () => Object.keys(require.cache).filter((p) => p.includes("/@duckdb/"));
    let release;
    const holdLake = new Promise((r) => (release = r));
    const app = await startAppliance(testConfig(${JSON.stringify(dir.path)}), createLogger({ test: true }), { background: true, holdLake });
    const providers = (await fetch(app.coordinatorUrl + "/api/v4/auth/providers")).status;
    const phaseOne = duckdb();
    release();
    await app.startup.whenReady();
    const phaseTwo = duckdb();
    await app.stop();
    console.log(JSON.stringify({ providers, phaseOne, phaseTwo }));`;
  const proc = Bun.spawn([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect(err).toBe("");
  expect(code).toBe(0);
  const r = JSON.parse(out) as { providers: number; phaseOne: string[]; phaseTwo: string[] };
  expect(r.providers).toBe(200);
  expect(r.phaseOne).toEqual([]);
  expect(r.phaseTwo.some((p) => p.endsWith("/@duckdb/node-api/lib/index.js"))).toBe(true);
});

/**
 * Bun's PostgreSQL client (bun:sql, 7-13 ms to load) loads when first read from the Bun object: a
 * value import of `SQL` from "bun" anywhere in the graph loads it at start for every appliance,
 * although only a PostgreSQL catalog or shared auth store uses it. Type imports are free.
 */
test("no source file imports SQL from bun as a value (Bun.SQL where it is used)", () => {
  const offenders: string[] = [];
  for (const file of new Bun.Glob("src/**/*.ts").scanSync({ cwd: ROOT })) {
    if (file.endsWith(".test.ts")) continue;
    const text = readFileSync(`${ROOT}/${file}`, "utf8");
    for (const m of text.matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+"bun";/gm)) {
      if (m[1]) continue;
      const names = m[2]!.split(",").map((n) => n.trim());
      if (names.some((n) => /^SQL\b/.test(n))) offenders.push(file);
    }
  }
  expect(offenders).toEqual([]);
});
