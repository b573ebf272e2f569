/**
 * A coordinator over several nodes (docs/ARCHITECTURE.md "Coordinator over several nodes"), with
 * real appliances on loopback: three nodes and the coordinator's own lake each hold different
 * calls; POST /transactions/search finds every call exactly once, its newest N are those of one
 * global sort, a node without data in the window is skipped, a stopped node is failed, a node that
 * never answers is timeout, the coordinator's own node port is not searched twice, and the node
 * endpoint refuses a missing or wrong token with 401.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { startWithApi, type ApiAppliance, type ApiResult } from "./export-helpers.ts";
import { freePort } from "../peers/process.ts";

const NOW_MS = Date.now();
const OLD_MS = NOW_MS - 150 * 60_000; // node B's old calls: 2.5 h ago
const TOKEN_C = "node-c-token-0123456789abcdef";
const SMALL = {
  ingest: { hep: { threads: 0 } },
  storage: { lakehouse: { tuning: { threads: 1, memory_limit: "512MB" } } },
};

type Item = Record<string, unknown>;
interface NodeReport {
  name: string;
  status: string;
  rows: number;
  ms: number;
  error?: string;
}
interface Meta {
  pagination: { total: number; total_exact: boolean; has_more: boolean; next_cursor: string | null };
  nodes?: NodeReport[];
  partial?: boolean;
}

let dir: TempDir;
let nodeA: TestAppliance;
let nodeB: TestAppliance;
let nodeC: TestAppliance;
let coord: ApiAppliance;
let edge: ApiAppliance;
let slow: { port: number; stop(closeActive?: boolean): void };
/** Every call sent, with the node it went to and its time (epoch µs). */
const sent: Array<{ callId: string; node: string; us: number }> = [];

async function sendCalls(a: TestAppliance, node: string, n: number, atMs: (i: number) => number, from = 0) {
  const packets: Uint8Array[] = [];
  for (let i = from; i < n; i++) {
    const callId = `${node}-${i}@fanout`;
    // Two calls of different nodes share every third time: ties across nodes, broken by uuid.
    const us = atMs(i) * 1000 + (i % 3 === 0 ? 0 : i);
    sent.push({ callId, node, us });
    packets.push(
      encodeHep3({
        srcIp: "192.0.2.1",
        dstIp: "192.0.2.2",
        srcPort: 5060,
        dstPort: 5060,
        ipProtocol: 17,
        timestampUs: us,
        protoType: 1,
        payload: invite({ callId, from: "a", to: "b" }),
      }),
    );
  }
  const r = await fetch(`${a.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(packets) });
  expect(r.status).toBe(202);
  await waitFor(`${node} stored its calls`, async () => (await a.app.lake!.summary()).rows >= n);
}

const items = (r: ApiResult) => (r.json?.data?.items ?? []) as Item[];
const meta = (r: ApiResult) => (r.json as unknown as { meta: Meta }).meta;
const byName = (r: ApiResult) => Object.fromEntries((meta(r).nodes ?? []).map((n) => [n.name, n]));
const search = (
  api: ApiAppliance["api"],
  limit: number,
  range = { from: NOW_MS - 4 * 3_600_000, to: NOW_MS + 60_000 },
) =>
  api.call("POST", "/transactions/search", {
    filter: { proto_type: 1, event_type: "call" },
    param: { limit },
    timestamp: range,
  });

beforeAll(async () => {
  dir = tempDir("svc-fan-out-");
  nodeA = await startTestAppliance(`${dir.path}/a`, SMALL);
  nodeB = await startTestAppliance(`${dir.path}/b`, {
    ...SMALL,
    storage: { lakehouse: { ...SMALL.storage.lakehouse, flush_interval_sec: 3600 } },
  });
  nodeC = await startTestAppliance(`${dir.path}/c`, {
    ...SMALL,
    node: { http_server: { listen: "127.0.0.1:0", token: TOKEN_C } },
  });
  const deadUrl = `http://127.0.0.1:${freePort()}`;
  // Accepts the connection and never answers.
  slow = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  // Its own node port listed too: the same process, searched once as `local`.
  const selfPort = freePort();
  coord = await startWithApi(`${dir.path}/coord`, {
    ...SMALL,
    node: { http_server: { listen: `127.0.0.1:${selfPort}` } },
    coordinator: {
      nodes: [
        nodeA.app.nodeUrl!,
        { name: "b", url: nodeB.app.nodeUrl! },
        { name: "c", url: nodeC.app.nodeUrl!, token: TOKEN_C },
        { name: "self", url: `http://127.0.0.1:${selfPort}` },
      ],
    },
  });
  // A coordinator without a lake of its own: one good node, a stopped one, one that never answers.
  edge = await startWithApi(`${dir.path}/edge`, {
    storage: { lakehouse: { enable: false } },
    ingest: { hep: { enable: false } },
    coordinator: {
      // Only the silent node has a short time-out: a busy machine never turns a's answer into one.
      nodes: [
        { name: "a", url: nodeA.app.nodeUrl! },
        { name: "dead", url: deadUrl },
        { name: "slow", url: `http://127.0.0.1:${slow.port}`, timeout_ms: 300 },
      ],
    },
  });
  await sendCalls(nodeA, "a", 12, (i) => NOW_MS - 60_000 * (i + 1));
  // Node B: six calls in a data file, three in the buffer.
  const bAt = (i: number) => (i < 4 ? OLD_MS - 60_000 * i : NOW_MS - 60_000 * (i + 1));
  await sendCalls(nodeB, "b", 6, bAt);
  await nodeB.app.lake!.flush();
  await sendCalls(nodeB, "b", 9, bAt, 6);
  await sendCalls(nodeC, "c", 7, (i) => NOW_MS - 60_000 * (i + 1));
  await sendCalls(coord.a, "local", 5, (i) => NOW_MS - 90_000 * (i + 1));
}, 120_000);

afterAll(async () => {
  await edge?.[Symbol.asyncDispose]();
  await coord?.[Symbol.asyncDispose]();
  for (const a of [nodeC, nodeB, nodeA]) await a?.[Symbol.asyncDispose]();
  slow?.stop(true);
  await dir?.[Symbol.asyncDispose]();
});

describe("POST /transactions/search over coordinator.nodes", () => {
  test("every call of every node and of the coordinator's lake, each exactly once; the own node port is skipped", async () => {
    const r = await search(coord.api, 1000);
    expect(r.status).toBe(200);
    const got = items(r).map((i) => String(i.sid));
    expect(got.length).toBe(sent.length);
    expect(new Set(got)).toEqual(new Set(sent.map((s) => s.callId)));
    const m = meta(r);
    expect(m.pagination).toMatchObject({ total: sent.length, total_exact: true, has_more: false });
    expect(m.partial).toBe(false);
    const nodes = byName(r);
    expect(nodes.local).toMatchObject({ status: "ok", rows: 5 });
    expect(nodes.b).toMatchObject({ status: "ok", rows: 9 });
    expect(nodes.c).toMatchObject({ status: "ok", rows: 7 });
    expect(nodes.self).toMatchObject({ status: "skipped" });
    // Each row names the node it came from (node a by its host:port, having no name).
    const nameOf = (node: string) => (node === "a" ? nodeA.app.nodeUrl!.replace(/^http:\/\//, "") : node);
    for (const i of items(r))
      expect({ sid: i.sid, node: i.node }).toEqual({
        sid: i.sid,
        node: nameOf(sent.find((s) => s.callId === i.sid)!.node),
      });
  });

  test("the newest N across nodes are the first N of one global sort (time, then uuid), and the pages follow it", async () => {
    const all = items(await search(coord.api, 1000));
    const global = [...all].sort(
      (x, y) => Number(y.timestamp_us) - Number(x.timestamp_us) || (String(x.uuid) < String(y.uuid) ? 1 : -1),
    );
    expect(all.map((i) => i.uuid)).toEqual(global.map((i) => i.uuid));
    const first = await search(coord.api, 10);
    expect(items(first).map((i) => i.uuid)).toEqual(global.slice(0, 10).map((i) => i.uuid));
    expect(meta(first).pagination).toMatchObject({ total: sent.length, has_more: true });
    const cursor = meta(first).pagination.next_cursor!;
    const second = await coord.api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: "call" },
      param: { limit: 10, cursor },
      timestamp: { from: NOW_MS - 4 * 3_600_000, to: NOW_MS + 60_000 },
    });
    expect(items(second).map((i) => i.uuid)).toEqual(global.slice(10, 20).map((i) => i.uuid));
    expect(items(second).map((i) => i.id)).toEqual(Array.from({ length: 10 }, (_, k) => 11 + k));
  });

  test("GET /transactions lists over the nodes too, and the answers are counted per node", async () => {
    const r = await coord.api.call(
      "GET",
      `/transactions?from=${NOW_MS - 4 * 3_600_000}&to=${NOW_MS + 60_000}&limit=1000`,
    );
    expect(r.status).toBe(200);
    expect(new Set(items(r).map((i) => String(i.sid)))).toEqual(new Set(sent.map((s) => s.callId)));
    expect(byName(r).c).toMatchObject({ status: "ok", rows: 7 });
    expect(coord.a.app.metrics.sumOf("svc_search_node_answers_total")).toBeGreaterThan(0);
  });

  test("a node without data in the window is skipped; the others still answer", async () => {
    const r = await search(coord.api, 100, { from: OLD_MS - 3_600_000, to: OLD_MS + 60_000 });
    expect(r.status).toBe(200);
    expect(
      items(r)
        .map((i) => String(i.sid))
        .sort(),
    ).toEqual(["b-0@fanout", "b-1@fanout", "b-2@fanout", "b-3@fanout"]);
    const nodes = byName(r);
    expect(nodes.b).toMatchObject({ status: "ok", rows: 4 });
    expect(nodes.c).toMatchObject({ status: "skipped", rows: 0, error: "no data in the window" });
    expect(meta(r).partial).toBe(false);
  });

  test("a malformed request refused by every node is a 400 with the node's message, as without nodes", async () => {
    // No lake of its own: node a refuses it; the stopped and the silent node do not make it right.
    const r = await edge.api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: "nope" },
      param: { limit: 5 },
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: "VALIDATION" });
    expect(r.json?.message).toContain('event_type "nope"');
    const direct = await fetch(`${nodeA.app.nodeUrl}/api/v1/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ filter: { proto_type: 1, event_type: "nope" } }),
    });
    expect(direct.status).toBe(400);
    const local = await coord.api.call("POST", "/transactions/search", {
      filter: { proto_type: 1, event_type: "nope" },
      param: { limit: 5 },
    });
    expect(local.status).toBe(400);
  });

  test("a stopped node is failed, a node that never answers is timeout, and the rest is returned as partial", async () => {
    const r = await search(edge.api, 1000);
    expect(r.status).toBe(200);
    const nodes = byName(r);
    expect(nodes.a).toMatchObject({ status: "ok", rows: 12 });
    expect(nodes.dead?.status).toBe("failed");
    expect(nodes.slow?.status).toBe("timeout");
    expect(meta(r).partial).toBe(true);
    expect(
      items(r)
        .map((i) => String(i.sid))
        .sort(),
    ).toEqual(
      sent
        .filter((s) => s.node === "a")
        .map((s) => s.callId)
        .sort(),
    );
  });
});

describe("node endpoints", () => {
  const body = JSON.stringify({
    filter: { proto_type: 1 },
    param: { limit: 5 },
    timestamp: { from: NOW_MS - 3_600_000, to: NOW_MS + 60_000 },
  });
  const post = (token?: string) =>
    fetch(`${nodeC.app.nodeUrl}/api/v1/search`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });

  test("POST /api/v1/search needs the node token: missing or wrong is 401, right is the node's rows with sort keys", async () => {
    for (const t of [undefined, "wrong", `${TOKEN_C}x`]) {
      const r = await post(t);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: string }).error).toBe("UNAUTHORIZED");
    }
    const ok = await post(TOKEN_C);
    expect(ok.status).toBe(200);
    const j = (await ok.json()) as {
      data: { items: Item[]; sort_keys: Array<[number, string]> };
      meta: Meta;
      node: { node_id: string; lake_id: string };
    };
    expect(j.data.items.length).toBe(5);
    expect(j.data.sort_keys.map((k) => k[1])).toEqual(j.data.items.map((i) => String(i.uuid)));
    expect(j.meta.pagination).toMatchObject({ total: 7, has_more: true });
    expect(j.node.node_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("buffer_only gives the rows not yet in data files (what a second node of a shared lake is asked for)", async () => {
    const ask = async (bufferOnly: boolean) =>
      (await (
        await fetch(`${nodeB.app.nodeUrl}/api/v1/search`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            filter: { proto_type: 1 },
            param: { limit: 100 },
            timestamp: { from: NOW_MS - 4 * 3_600_000, to: NOW_MS + 60_000 },
            buffer_only: bufferOnly,
          }),
        })
      ).json()) as { data: { items: Item[] }; meta: Meta };
    const all = await ask(false);
    expect(all.data.items.length).toBe(9);
    const buffered = await ask(true);
    expect(buffered.data.items.map((i) => String(i.sid)).sort()).toEqual(["b-6@fanout", "b-7@fanout", "b-8@fanout"]);
    expect(buffered.meta.pagination).toMatchObject({ total: 3, total_exact: true, has_more: false });
  });

  test("stats and check name the node and its lake; different nodes, different lakes; metadata stays open", async () => {
    const stats = async (a: TestAppliance) =>
      (await (await fetch(`${a.app.nodeUrl}/api/v1/metadata/stats`)).json()) as { node_id: string; lake_id: string };
    const [a, c] = [await stats(nodeA), await stats(nodeC)];
    expect(a.node_id).not.toBe(c.node_id);
    expect(a.lake_id).not.toBe(c.lake_id);
    const check = (await (
      await fetch(`${nodeC.app.nodeUrl}/api/v1/metadata/check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ min_ts: 0, max_ts: 4e18 }),
      })
    ).json()) as { node_id: string; lake_id: string; has_data: boolean };
    expect(check).toMatchObject({ node_id: c.node_id, lake_id: c.lake_id, has_data: true });
  });
});
