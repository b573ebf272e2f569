/**
 * Starting the real appliance in-process for integration tests: every listener on 127.0.0.1:0,
 * every path in a temp dir, small flush interval so tests see Parquet files quickly.
 */
import { loadConfig, type Config } from "../src/config/index.ts";
import { createLogger } from "../src/core/index.ts";
import { startAppliance, type RunningApp } from "../src/main.ts";
import { freePort } from "./peers/process.ts";

type Json = Record<string, unknown>;

function merge(a: Json, b: Json): Json {
  const out: Json = { ...a };
  for (const [k, v] of Object.entries(b)) {
    out[k] =
      v && typeof v === "object" && !Array.isArray(v) && a[k] && typeof a[k] === "object"
        ? merge(a[k] as Json, v as Json)
        : v;
  }
  return out;
}

export function testConfigJson(dir: string, overrides: Json = {}): Json {
  const base: Json = {
    log: { level: (process.env.SVC_TEST_LOG as string | undefined) ?? "error", format: "json" },
    coordinator: { http_server: { listen: "127.0.0.1:0" }, settings_db_path: `${dir}/settings.db` },
    node: { http_server: { listen: "127.0.0.1:0" } },
    ingest: {
      // Fixed ports below the ephemeral range, not 0: an ingest thread that dies starts again on
      // the port it had, which the kernel may meanwhile give to any other socket (test/peers/process.ts).
      hep: {
        udp: { listen: `127.0.0.1:${freePort()}`, socket_buffer_bytes: 8388608 },
        tcp: { listen: `127.0.0.1:${freePort()}` },
        tls: { listen: `127.0.0.1:${freePort()}` },
        // SVC_TEST_HEP_THREADS=N runs these appliances on N ingest threads (docs/STYLE.md "Tests").
        ...(process.env.SVC_TEST_HEP_THREADS ? { threads: Number(process.env.SVC_TEST_HEP_THREADS) } : {}),
      },
      line_protocol: { listen: "127.0.0.1:0" },
      otlp: { http: { listen: "127.0.0.1:0" }, grpc: { listen: "127.0.0.1:0" } },
    },
    storage: {
      lakehouse: {
        catalog_path: `${dir}/catalog.sqlite`,
        data_path: `${dir}/lake/`,
        flush_interval_sec: 1,
        tuning: { threads: 2, memory_limit: "1GB" },
        // SVC_TEST_SPOOL_FORMAT=csv runs these appliances on the CSV spool (docs/STYLE.md "Tests").
        ...(process.env.SVC_TEST_SPOOL_FORMAT ? { spool_format: process.env.SVC_TEST_SPOOL_FORMAT } : {}),
      },
    },
  };
  return merge(base, overrides);
}

export function testConfig(dir: string, overrides: Json = {}): Config {
  return loadConfig({ json: testConfigJson(dir, overrides), env: {} }).config;
}

export interface TestAppliance extends AsyncDisposable {
  app: RunningApp;
}

/** `await using a = await startTestAppliance(dir)` — stopped (and flushed) at scope exit. */
export async function startTestAppliance(dir: string, overrides: Json = {}): Promise<TestAppliance> {
  const app = await startAppliance(testConfig(dir, overrides), createLogger({ test: true }));
  let stopped = false;
  return {
    app,
    async [Symbol.asyncDispose]() {
      if (stopped) return;
      stopped = true;
      await app.stop();
    },
  };
}
