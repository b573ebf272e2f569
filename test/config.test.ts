import { describe, expect, test } from "bun:test";
import { engineThreadCount, hepThreadCount, loadConfig, maskSecrets } from "../src/config/index.ts";
import { tempDir } from "./harness.ts";

describe("config load order: defaults ← file ← env", () => {
  test("defaults have the spec's listen addresses", () => {
    const { config } = loadConfig({ env: {} });
    expect(config.coordinator.http_server.listen).toBe(":8080");
    // The node port has no authentication: loopback unless configured (docs/STREAM.md "Security").
    expect(config.node.http_server.listen).toBe("127.0.0.1:8081");
    expect(config.ingest.hep.udp.listen).toBe(":9060");
    expect(config.ingest.hep.tcp.listen).toBe(":9060");
    expect(config.ingest.hep.tls.listen).toBe(":9061");
    expect(config.ingest.line_protocol.listen).toBe(":8086");
    expect(config.storage.lakehouse.batch_size).toBe(10000);
    expect(Object.isFrozen(config.coordinator)).toBe(true);
  });

  test("file overrides defaults and env overrides the file", async () => {
    await using dir = tempDir();
    const path = `${dir.path}/c.json`;
    await Bun.write(
      path,
      JSON.stringify({
        coordinator: { http_server: { listen: "127.0.0.1:1" } },
        storage: { lakehouse: { batch_size: 7 } },
      }),
    );
    const { config } = loadConfig({ path, env: { SVC_COORDINATOR_HTTP_SERVER_LISTEN: "127.0.0.1:18080" } });
    expect(config.coordinator.http_server.listen).toBe("127.0.0.1:18080");
    expect(config.storage.lakehouse.batch_size).toBe(7);
  });

  test.each([
    [
      "SVC_COORDINATOR_AUTH_DISABLE_PASSWORD_LOGIN",
      "true",
      (c: ReturnType<typeof loadConfig>["config"]) => c.coordinator.auth.disable_password_login,
      true,
    ],
    [
      "SVC_STORAGE_LAKEHOUSE_FLUSH_INTERVAL_SEC",
      "0.5",
      (c: ReturnType<typeof loadConfig>["config"]) => c.storage.lakehouse.flush_interval_sec,
      0.5,
    ],
    [
      "SVC_INGEST_SIP_CUSTOM_HEADERS",
      "X-A, X-B",
      (c: ReturnType<typeof loadConfig>["config"]) => c.ingest.sip.custom_headers,
      ["X-A", "X-B"],
    ],
    [
      "SVC_STORAGE_LAKEHOUSE_TUNING_MEMORY_LIMIT",
      "1GB",
      (c: ReturnType<typeof loadConfig>["config"]) => c.storage.lakehouse.tuning.memory_limit,
      "1GB",
    ],
  ])("env %s is typed by the schema", (name, value, pick, expected) => {
    const { config } = loadConfig({ env: { [name]: value } });
    expect(pick(config)).toEqual(expected as never);
  });

  test("every unknown key and wrong type is named in one error", () => {
    let message = "";
    try {
      loadConfig({
        json: { coordinator: { nope: 1, http_server: { listen: 5 } }, extra: true },
        env: { SVC_NOT_A_KEY: "x" },
      });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain("coordinator.nope: unknown key");
    expect(message).toContain("extra: unknown key");
    expect(message).toContain("SVC_NOT_A_KEY");
    expect(message).toContain("coordinator.http_server.listen");
  });

  test("coordinator.auth accepts the string form", () => {
    const { config } = loadConfig({ json: { coordinator: { auth: "internal" } }, env: {} });
    expect(config.coordinator.auth.type).toBe("internal");
    expect(config.coordinator.auth.admin_user).toBe("admin");
  });

  test("deprecated oauth2_providers migrates the first usable enabled row (position, then name) with a warning", () => {
    const complete = {
      client_id: "c",
      client_secret: "s",
      auth_url: "https://idp/a",
      token_url: "https://idp/t",
      profile_url: "https://idp/u",
      redirect_url: "https://svc/cb",
    };
    const { config, warnings } = loadConfig({
      json: {
        coordinator: {
          oauth2_providers: [
            { enable: true, name: "half", position: 0, client_id: "c" }, // enabled and first, but not usable
            { enable: false, name: "off", position: 0, ...complete },
            { enable: true, name: "b", position: 1, ...complete },
            { enable: true, name: "a", position: 1, ...complete },
            { enable: true, name: "pkce", position: 2, ...complete, client_secret: "", use_pkce: true },
          ],
        },
      },
      env: {},
    });
    expect(config.coordinator.oauth2_provider.name).toBe("a");
    expect(config.coordinator.oauth2_provider.client_secret).toBe("s");
    expect(warnings.join()).toContain("deprecated");
    const none = loadConfig({
      json: { coordinator: { oauth2_providers: [{ enable: true, name: "half", client_id: "c" }] } },
      env: {},
    });
    expect(none.config.coordinator.oauth2_provider.name).toBe("");
    expect(none.warnings.join()).toContain("no enabled row is complete");
  });

  test("SVC_COORDINATOR_OAUTH2_PROVIDER_<KEY> overrides the file's scalar keys", () => {
    const { config } = loadConfig({
      json: { coordinator: { oauth2_provider: { enable: false, name: "corp", client_id: "file" } } },
      env: {
        SVC_COORDINATOR_OAUTH2_PROVIDER_ENABLE: "true",
        SVC_COORDINATOR_OAUTH2_PROVIDER_CLIENT_ID: "env-id",
        SVC_COORDINATOR_OAUTH2_PROVIDER_USE_PKCE: "true",
        SVC_COORDINATOR_OAUTH2_PROVIDER_CALLBACK_URL: "https://svc.example/",
      },
    });
    const p = config.coordinator.oauth2_provider;
    expect([p.enable, p.name, p.client_id, p.use_pkce, p.callback_url]).toEqual([
      true,
      "corp",
      "env-id",
      true,
      "https://svc.example/",
    ]);
  });

  test("show-config masks secrets that are set and only those", () => {
    const { config } = loadConfig({ env: { SVC_COORDINATOR_JWT_SECRET: "s3cr3t-value" } });
    const shown = JSON.stringify(maskSecrets(config));
    expect(shown).not.toContain("s3cr3t-value");
    expect((maskSecrets(config).coordinator as { jwt: { secret: string } }).jwt.secret).toBe("***");
    expect(
      (maskSecrets(config).coordinator as { auth: { admin_password_hash: string } }).auth.admin_password_hash,
    ).toBe("");
  });

  test("show-config masks the password of a postgres catalog URL (storage.lakehouse.catalog_path) and keeps the rest", () => {
    const { config } = loadConfig({
      json: {
        storage: {
          lakehouse: { catalog_type: "postgres", catalog_path: "postgres://svc:pa55-w0rd@db.example:5432/lake" },
        },
      },
      env: {},
    });
    const shown = maskSecrets(config).storage as { lakehouse: { catalog_path: string } };
    expect(JSON.stringify(maskSecrets(config))).not.toContain("pa55-w0rd");
    expect(shown.lakehouse.catalog_path).toBe("postgres://svc:***@db.example:5432/lake");
  });

  test("show-config masks the token of a node in coordinator.nodes and keeps the rest of the list", () => {
    const { config } = loadConfig({
      json: {
        coordinator: {
          nodes: ["http://10.0.0.1:8081", { name: "b", url: "http://10.0.0.2:8081", token: "node-t0ken-value" }],
        },
      },
      env: {},
    });
    const shown = maskSecrets(config).coordinator as { nodes: unknown[] };
    expect(JSON.stringify(shown)).not.toContain("node-t0ken-value");
    expect(shown.nodes).toEqual(["http://10.0.0.1:8081", { name: "b", url: "http://10.0.0.2:8081", token: "***" }]);
  });
});

test("config file accepts // and /* */ comments outside strings, and errors still name the file", async () => {
  await using dir = tempDir();
  const path = `${dir.path}/svc.json`;
  await Bun.write(
    path,
    `// shipped default (appliance/svc.json)
{
  /* block
     comment */
  "runtime": { "cache_dir": "/var//cache/*svc*/" }, // a trailing comment
  "storage": { "lakehouse": { "batch_size": 7 /* inline */ } }
}`,
  );
  const { config } = loadConfig({ path, env: {} });
  expect(config.runtime.cache_dir).toBe("/var//cache/*svc*/");
  expect(config.storage.lakehouse.batch_size).toBe(7);

  await Bun.write(path, `{\n  // comment\n  "coordinator": { "nope": 1 }\n}`);
  expect(() => loadConfig({ path, env: {} })).toThrow("coordinator.nope: unknown key");
  await Bun.write(path, `{ "runtime": { /* unterminated }`);
  expect(() => loadConfig({ path, env: {} })).toThrow(path);
});

describe("thread counts derived from the cores", () => {
  const cfg = (json: Record<string, unknown>) => loadConfig({ env: {}, json }).config;
  test("ingest.hep.threads auto = the cores less a quarter (half with the CSV spool), 1 to 16; a number is taken as it is", () => {
    expect([1, 2, 3, 4, 8, 16, 64].map((c) => hepThreadCount("auto", c))).toEqual([1, 1, 2, 3, 6, 12, 16]);
    expect([1, 2, 3, 4, 8, 16, 64].map((c) => hepThreadCount("auto", c, "csv"))).toEqual([1, 1, 1, 2, 4, 8, 16]);
    expect(hepThreadCount(0, 16)).toBe(0);
    expect(hepThreadCount(5, 2)).toBe(5);
  });
  test("storage.lakehouse.tuning.threads auto = half the cores (CSV spool: the cores left by the ingest threads and the main thread), at least 2", () => {
    const auto = cfg({});
    expect([2, 4, 8, 16].map((c) => engineThreadCount(auto, c))).toEqual([2, 2, 4, 8]);
    const csv = (json: Record<string, unknown>) => cfg({ ...json, storage: { lakehouse: { spool_format: "csv" } } });
    expect([2, 4, 8, 16].map((c) => engineThreadCount(csv({}), c))).toEqual([2, 2, 3, 7]);
    expect(engineThreadCount(csv({ ingest: { hep: { threads: 2 } } }), 16)).toBe(13);
    expect(engineThreadCount(csv({ ingest: { hep: { enable: false } } }), 16)).toBe(15);
    expect(engineThreadCount(cfg({ storage: { lakehouse: { tuning: { threads: 3 } } } }), 16)).toBe(3);
  });
  test("both keys take auto or a number, also from the environment", () => {
    const c = loadConfig({
      env: { SVC_INGEST_HEP_THREADS: "4", SVC_STORAGE_LAKEHOUSE_TUNING_THREADS: "auto" },
      json: {},
    }).config;
    expect(c.ingest.hep.threads).toBe(4);
    expect(c.storage.lakehouse.tuning.threads).toBe("auto");
    expect(() => loadConfig({ env: {}, json: { ingest: { hep: { threads: "many" } } } })).toThrow(
      /ingest\.hep\.threads/,
    );
  });
});
