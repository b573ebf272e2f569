/**
 * Live-stream slots (docs/STREAM.md "Subscriber slots") with the default keys, real WebSocket
 * clients on loopback: anonymous node `/stream` clients get at most 4 slots per remote address
 * (other addresses of 127.0.0.0/8 come in beside), one user at most 8 on the coordinator, and an
 * administrator is never refused for lack of a slot: the oldest anonymous subscriber is closed
 * with 1013 and the reason. Refusals are counted per reason, evictions apart. A coordinator that
 * only fans in from nodes keeps the same shares.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { connectStream, createViewer, login, series, settled, type StreamClient } from "./stream-helpers.ts";

const PASSWORD = "slots-admin-password";

/** Node /stream and the coordinator's stream on one broker: anonymous clients and users share its 32 slots. */
const both = (dir: string) =>
  startTestAppliance(dir, {
    coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) }, hep_stream: { enable: true } },
    ingest: { hep_stream: { enable: true } },
  });

const subscribers = (a: TestAppliance) => series(a.app.metrics.render(), "svc_stream_subscribers");
const refused = (a: TestAppliance, reason: string) =>
  series(a.app.metrics.render(), "svc_stream_subscribers_refused_total", `reason="${reason}"`);
const nodeWs = (a: TestAppliance) => `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
const coordWs = (a: TestAppliance) => `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep`;

/** Opens `n` anonymous subscribers from `address` one after the other, each waited for in the gauge (so arrival order is known). */
async function anonymous(a: TestAppliance, address: string, n: number): Promise<StreamClient[]> {
  const out: StreamClient[] = [];
  for (let i = 0; i < n; i++) {
    const before = subscribers(a);
    const c = connectStream(nodeWs(a), {}, { localAddress: address });
    await c.opened;
    await waitFor(`subscriber ${i + 1} from ${address}`, () => subscribers(a) === before + 1);
    out.push(c);
  }
  return out;
}

describe("live-stream slots", () => {
  test("anonymous node clients: at most 4 per remote address; another address still gets in; the refusal is counted", async () => {
    await using dir = tempDir();
    await using a = await both(dir.path);
    const four = await anonymous(a, "127.0.0.2", 4);
    const fifth = connectStream(nodeWs(a), {}, { localAddress: "127.0.0.2" });
    const end = await settled(fifth, () => subscribers(a) === 5);
    expect(end?.code).toBe(1013);
    expect(end?.reason).toBe(
      "127.0.0.2 has 4 live-stream subscribers, its share (ingest.hep_stream.max_subscribers_per_address)",
    );
    expect(refused(a, "per_address")).toBe(1);
    expect(refused(a, "max_subscribers")).toBe(0);
    // Another address is not held back by the first one's share.
    const other = await anonymous(a, "127.0.0.3", 1);
    expect(subscribers(a)).toBe(5);
    // A slot given back is the address's again.
    four[0]!.close();
    await waitFor("a slot of 127.0.0.2 free", () => subscribers(a) === 4);
    const again = await anonymous(a, "127.0.0.2", 1);
    for (const c of [...four, ...other, ...again]) c.close();
  }, 60_000);

  test("one user holds at most 8 subscribers; an administrator still gets in; the refusal is counted", async () => {
    await using dir = tempDir();
    await using a = await both(dir.path);
    const admin = await login(a.app.coordinatorUrl!, "admin", PASSWORD);
    await createViewer(a.app.coordinatorUrl!, admin.token, "viewer", "viewer-password");
    const viewer = await login(a.app.coordinatorUrl!, "viewer", "viewer-password");
    const eight: StreamClient[] = [];
    for (let i = 0; i < 8; i++) {
      const c = connectStream(coordWs(a), { authorization: `Bearer ${viewer.token}` });
      await c.opened;
      eight.push(c);
    }
    await waitFor("eight subscribers of the viewer", () => subscribers(a) === 8);
    const ninth = connectStream(coordWs(a), { cookie: viewer.cookie });
    const end = await settled(ninth, () => subscribers(a) === 9);
    expect(end?.code).toBe(1013);
    expect(end?.reason).toBe(
      "user viewer has 8 live-stream subscribers, the share of one user (ingest.hep_stream.max_subscribers_per_user)",
    );
    expect(refused(a, "per_user")).toBe(1);
    using adminSub = connectStream(coordWs(a), { authorization: `Bearer ${admin.token}` });
    expect(await settled(adminSub, () => subscribers(a) === 9)).toBeUndefined();
    for (const c of eight) c.close();
  }, 60_000);

  test("a coordinator without HEP ingest (fan-in from a node only) keeps the same per-user share", async () => {
    await using dir = tempDir();
    // The node sees every coordinator client as one more anonymous subscriber from 127.0.0.1: its share is raised.
    await using node = await startTestAppliance(`${dir.path}/node`, {
      coordinator: { enable: false },
      ingest: { hep_stream: { enable: true, max_subscribers_per_address: 32 } },
    });
    await using k = await startTestAppliance(`${dir.path}/coordinator`, {
      coordinator: {
        auth: { admin_password_hash: sha256Hex(PASSWORD) },
        hep_stream: { enable: true, nodes: [node.app.nodeUrl!] },
      },
      storage: { lakehouse: { enable: false } },
    });
    const admin = await login(k.app.coordinatorUrl!, "admin", PASSWORD);
    await createViewer(k.app.coordinatorUrl!, admin.token, "viewer", "viewer-password");
    const viewer = await login(k.app.coordinatorUrl!, "viewer", "viewer-password");
    // Each coordinator client holds one link to the node: the node's gauge counts the clients kept.
    const links = () => subscribers(node);
    const eight: StreamClient[] = [];
    for (let i = 0; i < 8; i++) {
      const c = connectStream(coordWs(k), { authorization: `Bearer ${viewer.token}` });
      await c.opened;
      await waitFor(`link ${i + 1} at the node`, () => links() === i + 1);
      eight.push(c);
    }
    const ninth = connectStream(coordWs(k), { authorization: `Bearer ${viewer.token}` });
    const end = await settled(ninth, () => links() === 9);
    expect(end).toEqual({
      code: 1013,
      reason:
        "user viewer has 8 live-stream subscribers, the share of one user (ingest.hep_stream.max_subscribers_per_user)",
    });
    expect(refused(k, "per_user")).toBe(1);
    // A client that leaves gives its slot back.
    eight[0]!.close();
    await waitFor("the link closed at the node", () => links() === 7);
    using again = connectStream(coordWs(k), { authorization: `Bearer ${viewer.token}` });
    expect(await settled(again, () => links() === 8)).toBeUndefined();
    for (const c of eight) c.close();
  }, 60_000);

  test("every slot taken: a user is refused, an administrator gets one and the oldest anonymous subscriber is closed with 1013 and the reason", async () => {
    await using dir = tempDir();
    await using a = await both(dir.path);
    const admin = await login(a.app.coordinatorUrl!, "admin", PASSWORD);
    await createViewer(a.app.coordinatorUrl!, admin.token, "viewer", "viewer-password");
    const viewer = await login(a.app.coordinatorUrl!, "viewer", "viewer-password");
    // 32 anonymous subscribers, 4 from each of 8 addresses, in a known order.
    const anon: StreamClient[] = [];
    for (let i = 0; i < 8; i++) anon.push(...(await anonymous(a, `127.0.1.${i + 1}`, 4)));
    expect(subscribers(a)).toBe(32);
    const gone = anon.map(() => false);
    for (const [i, c] of anon.entries()) void c.closed.then(() => (gone[i] = true));

    const user = connectStream(coordWs(a), { authorization: `Bearer ${viewer.token}` });
    const refusedEnd = await settled(user, () => subscribers(a) === 33);
    expect(refusedEnd?.code).toBe(1013);
    expect(refusedEnd?.reason).toBe(
      "the live stream has 32 subscribers, its limit (ingest.hep_stream.max_subscribers)",
    );
    expect(refused(a, "max_subscribers")).toBe(1);

    using adminSub = connectStream(coordWs(a), { authorization: `Bearer ${admin.token}` });
    const evicted = () => series(a.app.metrics.render(), "svc_stream_subscribers_evicted_total") === 1;
    expect(await settled(adminSub, evicted)).toBeUndefined();
    const oldest = await anon[0]!.closed;
    expect(oldest).toEqual({
      code: 1013,
      reason:
        "an administrator took this live-stream slot (ingest.hep_stream.max_subscribers is reached); try again later",
    });
    expect(subscribers(a)).toBe(32);
    expect(gone.slice(1).some(Boolean)).toBe(false);
    expect(refused(a, "max_subscribers")).toBe(1);
    for (const c of anon) c.close();
  }, 60_000);
});
