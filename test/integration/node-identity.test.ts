/**
 * Node and lake identity and the node token (docs/ARCHITECTURE.md "Node identity" and "Node
 * authentication"): kept in the state directories across starts; a token is generated (once)
 * only for a node port beyond loopback without a configured one; the coordinator's node list
 * folds coordinator.hep_stream.nodes in.
 */
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { bearerMatches, clusterNodes, loadNodeIdentity } from "../../src/cluster/index.ts";
import { createLogger } from "../../src/core/index.ts";
import { startAppliance } from "../../src/main.ts";
import { testConfig } from "../appliance.ts";
import { tempDir } from "../harness.ts";

test("ids are generated once and kept; a token only beyond loopback, generated once, mode 0600", async () => {
  await using dir = tempDir();
  const loop = testConfig(dir.path);
  const first = loadNodeIdentity(loop);
  expect(first.nodeId).toMatch(/^[0-9a-f-]{36}$/);
  expect(first.token).toBeUndefined();
  expect(loadNodeIdentity(loop)).toEqual(first);
  const wide = testConfig(dir.path, { node: { http_server: { listen: "0.0.0.0:0" } } });
  const generated = loadNodeIdentity(wide);
  expect(generated.generatedToken?.token).toBe(generated.token!);
  expect(generated.token!.length).toBeGreaterThanOrEqual(40);
  expect(statSync(generated.generatedToken!.path).mode & 0o777).toBe(0o600);
  const again = loadNodeIdentity(wide);
  expect({ token: again.token, generated: again.generatedToken, nodeId: again.nodeId }).toEqual({
    token: generated.token,
    generated: undefined,
    nodeId: first.nodeId,
  });
  const configured = loadNodeIdentity(
    testConfig(dir.path, { node: { http_server: { listen: "0.0.0.0:0", token: "configured-token" } } }),
  );
  expect(configured.token).toBe("configured-token");
  // Another catalog directory is another lake; the node id stays (same settings directory).
  const other = loadNodeIdentity(
    testConfig(dir.path, { storage: { lakehouse: { catalog_path: `${dir.path}/other/catalog.sqlite` } } }),
  );
  expect(other.lakeId).not.toBe(first.lakeId);
  expect(other.nodeId).toBe(first.nodeId);
});

test("bearerMatches: the exact token only", () => {
  expect(bearerMatches("Bearer abc", "abc")).toBe(true);
  expect(bearerMatches("bearer abc", "abc")).toBe(true);
  for (const h of [null, "", "abc", "Bearer ab", "Bearer abcd", "Basic abc", "Bearer abc def"])
    expect(bearerMatches(h, "abc")).toBe(false);
});

test("coordinator.hep_stream.nodes folds into coordinator.nodes, once per URL, with a warning", async () => {
  await using dir = tempDir();
  const config = testConfig(dir.path, {
    coordinator: {
      nodes: ["http://127.0.0.1:9001", { name: "two", url: "http://127.0.0.1:9002/", token: "t", timeout_ms: 50 }],
      hep_stream: { enable: true, nodes: ["ws://127.0.0.1:9002/stream", "127.0.0.1:9003"] },
    },
  });
  const nodes = clusterNodes(config.coordinator, createLogger({ test: true }));
  expect(nodes).toEqual([
    { name: "127.0.0.1:9001", url: "http://127.0.0.1:9001", timeoutMs: 10000 },
    { name: "two", url: "http://127.0.0.1:9002", token: "t", timeoutMs: 50 },
    { name: "127.0.0.1:9003", url: "http://127.0.0.1:9003", timeoutMs: 10000 },
  ]);
  expect(() =>
    clusterNodes(
      testConfig(dir.path, { coordinator: { nodes: ["ftp://x:1"] } }).coordinator,
      createLogger({ test: true }),
    ),
  ).toThrow(/coordinator\.nodes\[0\]\.url/);
});

test("a node port beyond loopback without a token: one is generated, handed out once at the first start, and required", async () => {
  await using dir = tempDir();
  const config = testConfig(dir.path, {
    coordinator: { enable: false },
    node: { http_server: { listen: "0.0.0.0:0" } },
  });
  const shown: string[] = [];
  const start = () =>
    startAppliance(config, createLogger({ test: true }), { onFirstRunNodeToken: (t) => shown.push(t.token) });
  let app = await start();
  try {
    expect(shown.length).toBe(1);
    const url = app.nodeUrl!.replace("0.0.0.0", "127.0.0.1");
    const ask = (token?: string) =>
      fetch(`${url}/api/v1/search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ param: { limit: 1 } }),
      });
    expect((await ask()).status).toBe(401);
    expect((await ask(shown[0])).status).toBe(200);
    // The metadata stay open (node.http_server.open_metadata true by default).
    expect((await fetch(`${url}/api/v1/metadata/stats`)).status).toBe(200);
  } finally {
    await app.stop();
  }
  app = await start();
  await app.stop();
  expect(shown.length).toBe(1);
});
