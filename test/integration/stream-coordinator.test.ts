/**
 * Coordinator `/api/v4/stream/hep` (docs/STREAM.md "Security"; docs/API.md "Authentication";
 * docs/STREAM.md "Coordinator fan-in"): the JWT by header, `svc_session` cookie or `?access_token=`; the payload only
 * for an administrator who asked while allow_payload is on; history capped at history_limit; 404
 * while coordinator.hep_stream.enable is off; fan-in from a node's /stream that survives the
 * node's restart and a node that never answers the handshake.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";
import { captureOn, connectStream, hep, rawHandshake, series, udpSender, type StreamClient } from "./stream-helpers.ts";

const PASSWORD = "stream-admin-password";

async function login(a: TestAppliance, username: string, password: string): Promise<{ token: string; cookie: string }> {
  const r = await fetch(`${a.app.coordinatorUrl}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  expect(r.status).toBe(201);
  const body = (await r.json()) as { token: string };
  return { token: body.token, cookie: (r.headers.get("set-cookie") ?? "").split(";")[0]! };
}

async function coordinator(dir: string, hepStream: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return await startTestAppliance(dir, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, hep_stream: { enable: true, ...hepStream } },
    ...extra,
  });
}

const wsUrl = (a: TestAppliance, q = "") =>
  `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep${q ? `?${q}` : ""}`;
const sip = (n: number, srcPort: number) =>
  hep({ srcPort, payload: invite({ callId: `co-${n}@pbx`, from: "alice", to: "bob" }) });

describe("coordinator /api/v4/stream/hep", () => {
  test("authenticates by header, cookie and access_token; the payload only for an admin who asked (allow_payload on)", async () => {
    await using dir = tempDir();
    await using a = await coordinator(dir.path, { allow_payload: true });
    const admin = await login(a, "admin", PASSWORD);
    const created = await fetch(`${a.app.coordinatorUrl}/api/v4/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
      body: JSON.stringify({ username: "viewer", password: "viewer-password" }),
    });
    expect(created.status).toBe(201);
    const viewer = await login(a, "viewer", "viewer-password");
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using _sentinel = await captureOn(wsUrl(a, `access_token=${admin.token}`), udp.send);

    // Refused before the upgrade: no credential, a wrong token, a query token on a plain GET.
    expect((await rawHandshake(wsUrl(a, "proto=1").replace(/^ws/, "http"))).status).toBe(401);
    expect((await rawHandshake(wsUrl(a, "access_token=not-a-jwt").replace(/^ws/, "http"))).status).toBe(401);
    expect((await fetch(wsUrl(a, `access_token=${admin.token}`).replace(/^ws/, "http"))).status).toBe(401);
    // A bad filter of an authenticated caller: 400 naming it.
    const bad = await rawHandshake(wsUrl(a, "method=FOO").replace(/^ws/, "http"), {
      authorization: `Bearer ${admin.token}`,
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('method \\"FOO\\" is not a SIP method');

    // A plain GET answers what the caller would get: the payload policy applied.
    const granted = async (token: string) => {
      const r = await fetch(wsUrl(a, "proto=1&include_payload=1").replace(/^ws/, "http"), {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(r.status).toBe(200);
      return ((await r.json()) as { data: { filter: { include_payload: boolean } } }).data.filter.include_payload;
    };
    expect([await granted(admin.token), await granted(viewer.token)]).toEqual([true, false]);

    const subs: Array<[string, StreamClient, boolean]> = [
      [
        "admin header, payload asked",
        connectStream(wsUrl(a, "proto=1&include_payload=1"), { authorization: `Bearer ${admin.token}` }),
        true,
      ],
      [
        "admin cookie, payload asked",
        connectStream(wsUrl(a, "proto=1&include_payload=1"), { cookie: admin.cookie }),
        true,
      ],
      [
        "admin access_token, payload asked",
        connectStream(wsUrl(a, `proto=1&include_payload=1&access_token=${admin.token}`)),
        true,
      ],
      [
        "admin, payload not asked",
        connectStream(wsUrl(a, "proto=1"), { authorization: `Bearer ${admin.token}` }),
        false,
      ],
      [
        "viewer header, payload asked",
        connectStream(wsUrl(a, "proto=1&include_payload=1"), { authorization: `Bearer ${viewer.token}` }),
        false,
      ],
      [
        "viewer cookie, payload asked",
        connectStream(wsUrl(a, "proto=1&include_payload=1"), { cookie: viewer.cookie }),
        false,
      ],
      [
        "viewer access_token, payload asked",
        connectStream(wsUrl(a, `proto=1&include_payload=1&access_token=${viewer.token}`)),
        false,
      ],
    ];
    await Promise.all(subs.map(([, c]) => c.opened));
    udp.send([sip(1, 6001)]);
    for (const [name, c, payload] of subs) {
      await waitFor(`${name}: the event`, () => c.frames.length === 1);
      expect({ name, callid: c.frames[0]!.sip?.callid, payload: c.frames[0]!.payload }).toEqual({
        name,
        callid: "co-1@pbx",
        payload: payload ? invite({ callId: "co-1@pbx", from: "alice", to: "bob" }) : undefined,
      });
      c.close();
    }
    udp.close();
  }, 60_000);

  test("allow_payload off: no payload even for an admin; history capped at history_limit", async () => {
    await using dir = tempDir();
    await using a = await coordinator(dir.path, { allow_payload: false, history_limit: 2 });
    const admin = await login(a, "admin", PASSWORD);
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using sentinel = await captureOn(wsUrl(a, `access_token=${admin.token}`), udp.send);
    udp.send([1, 2, 3, 4].map((n) => sip(n, 6000 + n)));
    await waitFor("four events", () => sentinel.frames.filter((f) => f.proto === 1).length === 4);
    using c = connectStream(wsUrl(a, "proto=1&history=5&include_payload=1"), {
      authorization: `Bearer ${admin.token}`,
    });
    await waitFor("the capped replay", () => c.frames.length === 2);
    udp.send([sip(5, 6005)]);
    await waitFor("the live event", () => c.frames.length === 3);
    expect(c.frames.map((f) => f.sip?.callid)).toEqual(["co-3@pbx", "co-4@pbx", "co-5@pbx"]);
    for (const f of c.frames) expect(f.payload).toBeUndefined();
    udp.close();
  }, 60_000);

  test("in-process source alone (ingest.hep_stream.enable off): capture only while somebody subscribes", async () => {
    await using dir = tempDir();
    // One ingest thread, whatever SVC_TEST_HEP_THREADS says: the check below needs "the" thread's
    // next hand-over (with several, each stops capturing at its own, which a packet cannot target).
    await using a = await coordinator(dir.path, {}, { ingest: { hep: { threads: 1 } } });
    const admin = await login(a, "admin", PASSWORD);
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    const rows = () => series(a.app.metrics.render(), "svc_hep_rows_accepted_total", 'table="main.hep_proto_1_call"');
    const stored = async (n: number, port: number) => {
      const before = rows();
      udp.send([sip(n, port)]);
      await waitFor("the row", () => rows() === before + 1);
    };
    // Nobody subscribed yet: the packet is stored, the broker gets nothing (no copy on the ingest path).
    await stored(1, 6001);
    expect(series(a.app.metrics.render(), "svc_stream_events_total")).toBe(0);
    const sentinel = await captureOn(wsUrl(a, `access_token=${admin.token}`), udp.send);
    using c = connectStream(wsUrl(a, "proto=1&history=10"), { authorization: `Bearer ${admin.token}` });
    await c.opened;
    await stored(2, 6002);
    await waitFor("the live event", () => c.frames.length === 1);
    // The packet from before the first subscriber is not in the ring.
    expect(c.frames.map((f) => f.sip?.callid)).toEqual(["co-2@pbx"]);

    // Nobody left: the ingest thread stops capturing at its next hand-over (the flag is read there).
    sentinel.close();
    c.close();
    await waitFor("no subscriber", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 0);
    // Two packets, each waited for as a row: a hand-over that read the cleared flag lies between.
    await stored(3, 6003);
    await stored(4, 6004);
    const events = series(a.app.metrics.render(), "svc_stream_events_total");
    await stored(5, 6005);
    expect(series(a.app.metrics.render(), "svc_stream_events_total")).toBe(events);
    udp.close();
  }, 60_000);

  test("coordinator.hep_stream.enable off: 404 for an authenticated caller", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
    });
    const admin = await login(a, "admin", PASSWORD);
    const r = await rawHandshake(wsUrl(a, "proto=1").replace(/^ws/, "http"), {
      authorization: `Bearer ${admin.token}`,
    });
    expect(r.status).toBe(404);
  }, 60_000);

  test("fans in from a node's /stream, reconnects after the node restarts, and retries a node that never answers", async () => {
    await using dir = tempDir();
    const nodeDir = `${dir.path}/node`;
    // A "node" that accepts TCP and never answers the handshake: fan_out_timeout_ms ends each try.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    let node = await startTestAppliance(nodeDir, {
      coordinator: { enable: false },
      ingest: { hep_stream: { enable: true } },
    });
    const nodePort = Number(new URL(node.app.nodeUrl!).port);
    try {
      await using k = await coordinator(
        `${dir.path}/coordinator`,
        { nodes: [node.app.nodeUrl!, `http://127.0.0.1:${silent.port}`], fan_out_timeout_ms: 200 },
        { storage: { lakehouse: { enable: false } } },
      );
      // Without HEP ingest of its own, the coordinator has no in-process broker.
      expect(k.app.ingest).toBeUndefined();
      const admin = await login(k, "admin", PASSWORD);
      let udp = await udpSender(node.app.ingest!.listeners.udp!.port());
      using client = await captureOn(wsUrl(k, `access_token=${admin.token}`), udp.send);
      udp.send([sip(1, 6001)]);
      await waitFor("the node's event at the coordinator", () =>
        client.frames.some((f) => f.sip?.callid === "co-1@pbx"),
      );
      await waitFor(
        "the silent node tried again",
        () =>
          series(
            k.app.metrics.render(),
            "svc_stream_node_reconnects_total",
            `node="http://127.0.0.1:${silent.port}"`,
          ) >= 2,
      );

      // The node restarts on the same port: the coordinator connects again by itself, the client stays.
      await node[Symbol.asyncDispose]();
      udp.close();
      node = await startTestAppliance(nodeDir, {
        coordinator: { enable: false },
        node: { http_server: { listen: `127.0.0.1:${nodePort}` } },
        ingest: { hep_stream: { enable: true } },
      });
      udp = await udpSender(node.app.ingest!.listeners.udp!.port());
      const seen = client.frames.length;
      await waitFor(
        "events through the new connection",
        () => {
          if (client.frames.length > seen) return true;
          udp.send([sip(2, 6002)]);
          return false;
        },
        30_000,
        200,
      );
      expect(client.frames.slice(seen).some((f) => f.sip?.callid === "co-2@pbx")).toBe(true);
      expect(
        series(k.app.metrics.render(), "svc_stream_node_reconnects_total", `node="${node.app.nodeUrl}"`),
      ).toBeGreaterThanOrEqual(1);
      udp.close();
    } finally {
      await node[Symbol.asyncDispose]();
      silent.stop(true);
    }
  }, 90_000);

  test("the fan-in sends the node token: a locked node (open_metadata false) streams to its coordinator only", async () => {
    await using dir = tempDir();
    const token = "stream-node-token-0123456789abcdef";
    await using node = await startTestAppliance(`${dir.path}/node`, {
      coordinator: { enable: false },
      node: { http_server: { listen: "127.0.0.1:0", token, open_metadata: false } },
      ingest: { hep_stream: { enable: true } },
    });
    const nodeStream = `${node.app.nodeUrl!.replace(/^http/, "ws")}/stream?proto=1`;
    // Without the token, or with a wrong one: 401 before the upgrade.
    expect((await rawHandshake(nodeStream.replace(/^ws/, "http"))).status).toBe(401);
    expect((await rawHandshake(nodeStream.replace(/^ws/, "http"), { authorization: "Bearer wrong" })).status).toBe(401);
    await using k = await coordinator(
      `${dir.path}/coordinator`,
      { fan_out_timeout_ms: 500 },
      {
        storage: { lakehouse: { enable: false } },
        coordinator: {
          auth: { admin_password_hash: sha256Hex(PASSWORD) },
          hep_stream: { enable: true, fan_out_timeout_ms: 500 },
          nodes: [{ name: "locked", url: node.app.nodeUrl!, token }],
        },
      },
    );
    const admin = await login(k, "admin", PASSWORD);
    const udp = await udpSender(node.app.ingest!.listeners.udp!.port());
    using client = await captureOn(wsUrl(k, `access_token=${admin.token}`), udp.send);
    udp.send([sip(3, 6003)]);
    await waitFor("the locked node's event at the coordinator", () =>
      client.frames.some((f) => f.sip?.callid === "co-3@pbx"),
    );
    udp.close();
  }, 60_000);
});
