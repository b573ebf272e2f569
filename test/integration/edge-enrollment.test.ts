/**
 * Edge enrolment (docs/DEPLOY.md "Finding the edges"), with real appliances on loopback: an edge
 * with node.enroll announces itself to a coordinator without a lake and without coordinator.nodes
 * (approval on). Pending, it is not searched; approved, its calls are found through the
 * coordinator; a re-announcement moves its address; a wrong enrolment token is 401 with a message;
 * the list never shows a node token; removal takes it out of the fan-out.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { statSync } from "node:fs";
import { loadEnrollmentToken } from "../../src/cluster/index.ts";
import { startTestAppliance, testConfig, type TestAppliance } from "../appliance.ts";
import { invite, response } from "../fixtures/sip.ts";
import { tempDir, waitFor, type TempDir } from "../harness.ts";
import { startWithApi, type ApiAppliance, type ApiResult } from "./export-helpers.ts";

const NOW_MS = Date.now();
const ENROLL_TOKEN = "enrol-token-0123456789abcdef-xyz";
const EDGE_TOKEN = "edge-node-token-0123456789abcdef";

let dir: TempDir;
let coord: ApiAppliance;
let edge: TestAppliance;

const sip = (atMs: number, payload: string) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs: atMs * 1000,
    protoType: 1,
    payload,
  });

beforeAll(async () => {
  dir = tempDir("svc-enroll-");
  coord = await startWithApi(`${dir.path}/coord`, {
    storage: { lakehouse: { enable: false } },
    coordinator: { enrollment: { enable: true, token: ENROLL_TOKEN, approval: true } },
  });
  edge = await startTestAppliance(`${dir.path}/edge`, {
    ingest: { hep: { threads: 0 } },
    storage: { lakehouse: { tuning: { threads: 1, memory_limit: "512MB" } } },
    node: {
      http_server: { listen: "127.0.0.1:0", token: EDGE_TOKEN },
      // One announcement at start: the test announces again itself.
      enroll: {
        enable: true,
        url: `${coord.a.app.coordinatorUrl}/api/v4`,
        token: ENROLL_TOKEN,
        name: "edge-1",
        interval_sec: 3600,
      },
    },
  });
  const call = { callId: "E@enroll", from: "alice", to: "bob" };
  const r = await fetch(`${edge.app.nodeUrl}/api/v1/hep`, {
    method: "POST",
    body: Buffer.concat([
      sip(NOW_MS - 60_000, invite(call)),
      sip(NOW_MS - 59_000, response(200, "OK", "INVITE", call)),
    ]),
  });
  expect(r.status).toBe(202);
  await waitFor("the edge stored its rows", async () => (await edge.app.lake!.summary()).rows >= 2);
}, 60_000);

afterAll(async () => {
  await edge?.[Symbol.asyncDispose]();
  await coord?.[Symbol.asyncDispose]();
  await dir?.[Symbol.asyncDispose]();
});

type Edge = { name: string; url: string; status: string; has_token: boolean };
const edges = async () => {
  const r = await coord.api.call("GET", "/admin/edges");
  expect(r.status).toBe(200);
  expect(r.text).not.toContain(EDGE_TOKEN);
  return (r.json as unknown as { data: { items: Edge[] } }).data.items;
};
const search = () =>
  coord.api.call("POST", "/transactions/search", {
    filter: { call_id: "E@enroll" },
    timestamp: { from: NOW_MS - 3_600_000, to: NOW_MS },
    param: { limit: 10 },
  });
const found = (r: ApiResult) =>
  r.json as unknown as { data: { items: unknown[] }; meta?: { nodes?: Array<{ name: string; status: string }> } };
const enroll = (body: unknown, token = ENROLL_TOKEN) =>
  fetch(`${coord.a.app.coordinatorUrl}/api/v4/cluster/enroll`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });

describe("edge enrolment", () => {
  test("a wrong or missing enrolment token is refused with 401 and a message; nothing is enrolled", async () => {
    for (const token of ["wrong-token", ""]) {
      const r = await enroll({ name: "intruder", url: "http://127.0.0.1:1", token: "x" }, token);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { message: string }).message).toContain("enrolment token");
    }
    await waitFor("the edge announced itself", async () => (await edges()).some((e) => e.name === "edge-1"));
    expect((await edges()).map((e) => e.name)).toEqual(["edge-1"]);
  });

  test("pending, the edge is not searched; approved, its calls are found through the coordinator", async () => {
    const [e] = await edges();
    expect(e).toMatchObject({ name: "edge-1", url: edge.app.nodeUrl, status: "pending", has_token: true });
    expect(edge.app.enroll?.state()).toEqual({ state: "enrolled", status: "pending" });
    const before = await search();
    expect(before.status).toBe(200);
    expect(found(before).data.items.length).toBe(0);
    expect((await coord.api.call("POST", "/admin/edges/edge-1/approve")).status).toBe(200);
    const after = await search();
    expect(found(after).data.items.length).toBe(2);
    expect(found(after).meta?.nodes).toEqual([expect.objectContaining({ name: "edge-1", status: "ok" })]);
    const view = await coord.api.call("POST", "/transactions/messages", {
      session_id: "E@enroll",
      timestamp: { from: NOW_MS - 3_600_000, to: NOW_MS },
    });
    expect(view.status).toBe(200);
    expect((view.json as unknown as { data: { items: unknown[] } }).data.items.length).toBe(2);
  });

  test("a re-announcement moves the edge's address; another node token cannot take its name", async () => {
    const moved = await enroll({ name: "edge-1", url: "http://127.0.0.1:9/", token: EDGE_TOKEN });
    expect(moved.status).toBe(200);
    expect((await edges())[0]).toMatchObject({ url: "http://127.0.0.1:9", status: "approved" });
    const taken = await enroll({ name: "edge-1", url: "http://127.0.0.1:10", token: "another-token" });
    expect(taken.status).toBe(409);
    expect(((await taken.json()) as { message: string }).message).toContain("another node token");
    // The edge's own next announcement brings its address back.
    await edge.app.enroll!.announce();
    expect((await edges())[0]).toMatchObject({ url: edge.app.nodeUrl, status: "approved" });
    expect(found(await search()).data.items.length).toBe(2);
  });

  test("removal takes the edge out of the fan-out", async () => {
    const r = await coord.api.call("DELETE", "/admin/edges/edge-1");
    expect(r.status).toBe(204);
    expect(await edges()).toEqual([]);
    const after = await search();
    expect(after.status).toBe(200);
    expect(found(after).data.items.length).toBe(0);
    expect(found(after).meta?.nodes ?? []).toEqual([]);
    expect((await coord.api.call("DELETE", "/admin/edges/edge-1")).status).toBe(404);
  });

  test("guessing the enrolment token is slowed: after 10 wrong tokens from one address, 429", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++)
      statuses.push((await enroll({ name: "guess", url: "http://127.0.0.1:1" }, `guess-${i}`)).status);
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    const r = await enroll({ name: "edge-1", url: edge.app.nodeUrl!, token: EDGE_TOKEN });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).not.toBeNull();
  });

  test("without coordinator.enrollment.token one is generated once and kept beside the settings database, mode 0600", async () => {
    await using d = tempDir("svc-enroll-token-");
    const config = testConfig(d.path, { coordinator: { enrollment: { enable: true } } });
    const first = loadEnrollmentToken(config);
    expect(first.token.length).toBeGreaterThanOrEqual(40);
    expect(loadEnrollmentToken(config).token).toBe(first.token);
    expect(statSync(first.path!).mode & 0o777).toBe(0o600);
  });
});
