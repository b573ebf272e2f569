/**
 * Every accepted configuration key does something, or `svc serve` refuses
 * it at start (exit 2) naming the key and the reason (src/config/effects.ts, docs/OPERATIONS.md
 * "Configuration keys refused at start"); node.lakehouse.tuning and storage.lakehouse.tuning are
 * one engine's caps (src/config/tuning.ts).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configWarnings, engineTuning, loadConfig, REFUSED_KEY_RULES, refusedKeys } from "../src/config/index.ts";
import { tempDir } from "./harness.ts";
import { isolatedServeEnv } from "./e2e/serve-env.ts";

const ROOT = join(import.meta.dir, "..");
const load = (json: unknown, env: Record<string, string> = {}) => loadConfig({ json, env }).config;

describe("keys that would do nothing are refused", () => {
  test("the defaults and the shipped appliance/svc.json refuse nothing", () => {
    expect(refusedKeys(load({}))).toEqual([]);
    const shipped = loadConfig({ path: join(ROOT, "appliance/svc.json"), env: {} }).config;
    expect(refusedKeys(shipped)).toEqual([]);
  });

  test("the live stream: off in a bare config, on in the shipped appliance/svc.json and npm start, payload off (docs/STREAM.md)", () => {
    const bare = load({});
    expect([bare.coordinator.hep_stream.enable, bare.ingest.hep_stream.enable]).toEqual([false, false]);
    const shipped = loadConfig({ path: join(ROOT, "appliance/svc.json"), env: {} }).config;
    expect([
      shipped.coordinator.hep_stream.enable,
      shipped.ingest.hep_stream.enable,
      shipped.coordinator.hep_stream.allow_payload,
    ]).toEqual([true, true, false]);
    // npm start: the environment its script sets, read by the same loader.
    const start = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } })
      .scripts.start;
    const env = Object.fromEntries([...start.matchAll(/\b(SVC_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    const started = load({}, env);
    expect([
      started.coordinator.hep_stream.enable,
      started.ingest.hep_stream.enable,
      started.coordinator.hep_stream.allow_payload,
    ]).toEqual([true, true, false]);
  });

  test.each([
    ["coordinator.lake_chunk_sec", { coordinator: { lake_chunk_sec: 3600 } }, "set that key on the nodes"],
    [
      "storage.lakehouse.s3.region",
      { storage: { lakehouse: { s3: { region: "eu-west-1" } } } },
      "object-store keys do nothing",
    ],
    [
      "storage.lakehouse.azure.connection_string",
      { storage: { lakehouse: { azure: { connection_string: "x" } } } },
      "object-store keys do nothing",
    ],
    [
      "storage.lakehouse.compaction.engine",
      { storage: { lakehouse: { data_path: "s3://bucket/lake/", compaction: { enable: true, engine: "native" } } } },
      "local data_path only",
    ],
    ["ingest.hep.tls.cert", { ingest: { hep: { tls: { key: "/etc/svc/key.pem" } } } }, "set both or neither"],
    [
      "node.lakehouse.tuning.memory_limit",
      { node: { lakehouse: { tuning: { memory_limit: "1GB" } } }, storage: { lakehouse: { enable: false } } },
      "runs no engine",
    ],
    [
      "node.lakehouse.tuning.threads",
      { node: { lakehouse: { tuning: { threads: 3 } } }, storage: { lakehouse: { tuning: { threads: 4 } } } },
      "one DuckDB engine",
    ],
  ])("%s", (key, json, reason) => {
    const refused = refusedKeys(load(json));
    expect(refused.length).toBe(1);
    expect(refused[0]!.startsWith(`${key}: `)).toBe(true);
    expect(refused[0]).toContain(reason);
  });

  test("the same keys set to what does something are accepted", () => {
    const ok = load({
      coordinator: {
        http_server: { gamedata_dir: "/srv/games" },
        ldap: { enable: true, host: "ldap.example" },
        auth: { type: "oauth", fallback_auth_type: "ldap" },
        oauth2_provider: { enable: true, name: "corp" },
        lake_chunk_sec: 86400,
      },
      ingest: { hep: { tls: { cert: "/c.pem", key: "/k.pem" } }, line_protocol: { enable: true } },
      node: { lakehouse: { tuning: { threads: 4 } } },
      storage: { lakehouse: { tuning: { threads: 4 } } },
    });
    expect(refusedKeys(ok)).toEqual([]);
  });

  test("every rule's key is a schema key and is listed in docs/OPERATIONS.md", () => {
    const doc = readFileSync(join(ROOT, "docs/OPERATIONS.md"), "utf8");
    const defaults = load({});
    for (const { key } of REFUSED_KEY_RULES) {
      let v: unknown = defaults;
      for (const p of key.split(".")) v = (v as Record<string, unknown>)[p];
      expect({ key, known: v !== undefined, documented: doc.includes(`\`${key}\``) }).toEqual({
        key,
        known: true,
        documented: true,
      });
    }
  });

  test("svc serve exits 2 with the key and the reason on stderr, before opening anything", async () => {
    await using dir = tempDir();
    const configPath = join(dir.path, "svc.json");
    await Bun.write(configPath, JSON.stringify({ coordinator: { lake_chunk_sec: 600 } }));
    const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", configPath], {
      cwd: dir.path,
      env: { PATH: process.env.PATH ?? "", HOME: dir.path, ...isolatedServeEnv(dir.path), SVC_LOG_FORMAT: "json" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    // A serve that starts instead of refusing is stopped, so the test fails rather than hangs.
    const guard = setTimeout(() => proc.kill(), 20_000);
    const stderr = await new Response(proc.stderr).text();
    clearTimeout(guard);
    expect(stderr).toContain(
      "coordinator.lake_chunk_sec: a coordinator over several nodes asks each node for its newest rows",
    );
    expect(await proc.exited).toBe(2);
    // Refused before a module started: no catalog, no settings database.
    expect(await Bun.file(join(dir.path, "catalog.sqlite")).exists()).toBe(false);
    expect(await Bun.file(join(dir.path, "settings.db")).exists()).toBe(false);
  });
});

describe("an old configuration with the file model's keys", () => {
  test("svc serve starts with one warning per legacy key", async () => {
    await using dir = tempDir();
    const configPath = join(dir.path, "svc.json");
    const old = {
      compaction: {
        level1_timeout_sec: 10,
        level2_timeout_sec: 100,
        level3_timeout_sec: 1000,
        level1_max_size_mb: 100,
        check_interval_sec: 60,
      },
    };
    await Bun.write(configPath, JSON.stringify(old));
    const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", configPath], {
      cwd: dir.path,
      env: { PATH: process.env.PATH ?? "", HOME: dir.path, ...isolatedServeEnv(dir.path), SVC_LOG_FORMAT: "json" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      // Read stderr until the coordinator listens (the warnings come before any module starts).
      const reader = proc.stderr.getReader();
      let text = "";
      const deadline = Date.now() + 30_000;
      while (!text.includes('"module":"coordinator-http"') && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      const warnings = text.split("\n").filter((l) => l.includes("superseded file model"));
      expect(warnings.length).toBe(5);
      expect(text).toContain('"module":"coordinator-http"');
      expect(proc.exitCode).toBeNull();
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 60_000);
});

describe("engine tuning: storage.lakehouse.tuning and node.lakehouse.tuning", () => {
  test("a key set under node.lakehouse.tuning replaces the storage one; unset, the storage one holds", () => {
    expect(engineTuning(load({}))).toMatchObject({ threads: 2, memory_limit: "4GB", temp_directory: "" });
    expect(
      engineTuning(
        load({ storage: { lakehouse: { tuning: { threads: 6, memory_limit: "2GB", temp_directory: "/spill" } } } }),
      ),
    ).toMatchObject({
      threads: 6,
      memory_limit: "2GB",
      temp_directory: "/spill",
    });
    expect(
      engineTuning(
        load({
          storage: { lakehouse: { tuning: { threads: 6 } } },
          node: { lakehouse: { tuning: { memory_limit: "512MiB" } } },
        }),
      ),
    ).toMatchObject({
      threads: 6,
      memory_limit: "512MiB",
      temp_directory: "",
    });
    // The environment names the node keys as well (docs/API.md "Conventions").
    const env = load(
      {},
      { SVC_NODE_LAKEHOUSE_TUNING_THREADS: "3", SVC_NODE_LAKEHOUSE_TUNING_TEMP_DIRECTORY: "/spill2" },
    );
    expect(engineTuning(env)).toMatchObject({ threads: 3, memory_limit: "4GB", temp_directory: "/spill2" });
  });
});

describe("keys accepted with a warning", () => {
  test("a coordinator-only process with line protocol and OTLP on: no refusal, one warning each", () => {
    const c = loadConfig({
      env: {},
      json: {
        ingest: { line_protocol: { enable: true }, otlp: { enable: true } },
        storage: { lakehouse: { enable: false } },
      },
    }).config;
    expect(refusedKeys(c)).toEqual([]);
    const w = configWarnings(c);
    expect(w.length).toBe(2);
    expect(w[0]).toStartWith("ingest.line_protocol.enable: no line-protocol listener");
    expect(w[1]).toStartWith("ingest.otlp.enable: no OTLP listener");
    expect(
      configWarnings(loadConfig({ env: {}, json: { ingest: { line_protocol: { enable: true } } } }).config),
    ).toEqual([]);
  });

  test('several coordinators without a shared store: a warning naming what stays per process (docs/AUTH.md "Several coordinators")', () => {
    const replicas = configWarnings(load({ coordinator: { replicas: 3, jwt: { secret: "s".repeat(40) } } }));
    expect(replicas).toEqual([
      expect.stringContaining("coordinator.replicas: 3 coordinators without coordinator.shared_store.url"),
    ]);
    expect(replicas[0]).toContain("logouts");
    const shared = configWarnings(load({ coordinator: { http_server: { reuse_port: true } } }));
    expect(shared).toEqual([
      expect.stringContaining(
        "coordinator.http_server.reuse_port: coordinators sharing one port without coordinator.shared_store.url",
      ),
    ]);
    // Each replica signing with its own generated secret: the other replicas refuse its sessions.
    expect(
      configWarnings(load({ coordinator: { replicas: 2, shared_store: { url: "postgres://svc:pw@db:5432/svc" } } })),
    ).toEqual([expect.stringContaining("coordinator.replicas: 2 coordinators with an empty coordinator.jwt.secret")]);
    // Declared and shared, or one coordinator: nothing to say.
    expect(
      configWarnings(
        load({
          coordinator: {
            replicas: 2,
            jwt: { secret: "s".repeat(40) },
            shared_store: { url: "postgres://svc:pw@db:5432/svc" },
          },
        }),
      ),
    ).toEqual([]);
    expect(configWarnings(load({}))).toEqual([]);
  });

  test("an old config with the file model's level and metadata keys loads, each key named once as ignored", () => {
    const json = {
      compaction: {
        level1_timeout_sec: 10,
        level2_timeout_sec: 100,
        level3_timeout_sec: 1000,
        level1_max_size_mb: 100,
        check_interval_sec: 60,
      },
      storage: { lakehouse: { compaction: { level2_max_size_mb: 400, min_age_sec: 120 } } },
      metadata: { bloom_false_positive: 0.01, retention_days: 14, vacuum_interval_hours: 24 },
      arrow_settings: {},
    };
    const loaded = loadConfig({ env: {}, json });
    expect(loaded.ignored.map((i) => i.key).sort()).toEqual(
      [
        "arrow_settings",
        "compaction.check_interval_sec",
        "compaction.level1_max_size_mb",
        "compaction.level1_timeout_sec",
        "compaction.level2_timeout_sec",
        "compaction.level3_timeout_sec",
        "metadata.bloom_false_positive",
        "metadata.retention_days",
        "metadata.vacuum_interval_hours",
        "storage.lakehouse.compaction.level2_max_size_mb",
      ].sort(),
    );
    expect(loaded.warnings.length).toBe(loaded.ignored.length);
    expect(loaded.warnings[0]).toContain("superseded file model");
    // A key of today's schema beside them is taken; the caller's object is left as it was.
    expect(loaded.config.storage.lakehouse.compaction.min_age_sec).toBe(120);
    expect(json.compaction.level1_timeout_sec).toBe(10);
    // Any other unknown key is still an error.
    expect(() => loadConfig({ env: {}, json: { compaction: { level9: 1 } } })).toThrow(/compaction: unknown key/);
  });
});
