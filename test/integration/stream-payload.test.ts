/**
 * The raw payload on the live stream (docs/STREAM.md "Security"), real WebSocket clients on
 * loopback: with `coordinator.hep_stream.allow_payload` false no frame carries it, on the node's
 * `/stream` and on the coordinator, asked (`include_payload=1`) or not, live or replayed from
 * history; with it true an administrator on the coordinator gets it (text as captured, binary as
 * base64) while the node's anonymous clients still never do.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";
import { connectStream, hep, login, series, udpSender, type StreamClient } from "./stream-helpers.ts";

const PASSWORD = "payload-admin-password";
const call = { callId: `payload-${crypto.randomUUID()}@pbx`, from: "alice", to: "bob" };
/** RTCP sender report header (RFC 3550 section 6.4.1): binary. */
const RTCP = new Uint8Array([0x80, 0xc8, 0x00, 0x06, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 1]);
const TRAFFIC = [hep({ srcPort: 6200, payload: invite(call) }), hep({ proto: 5, srcPort: 6201, payload: RTCP })];

async function appliance(dir: string, allowPayload: boolean) {
  return await startTestAppliance(dir, {
    coordinator: {
      auth: { admin_password_hash: sha256Hex(PASSWORD) },
      hep_stream: { enable: true, allow_payload: allowPayload },
    },
    ingest: { hep_stream: { enable: true, rate_per_sub_pps: 0 } },
  });
}

const nodeWs = (a: TestAppliance, q: string) => `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream?${q}`;
const coordWs = (a: TestAppliance, q: string) =>
  `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?${q}`;
/** The two test events a subscriber got (probes and others left out). */
const events = (c: StreamClient) => c.frames.filter((f) => f.src_port === 6200 || f.src_port === 6201);

/** What a plain GET says the caller would get. */
async function granted(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  const r = await fetch(url.replace(/^ws/, "http"), { headers });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: { filter: { include_payload: boolean } } }).data.filter.include_payload;
}

describe("live-stream payload", () => {
  test("allow_payload false: no payload on the node /stream nor the coordinator, asked or not, live or from history", async () => {
    await using dir = tempDir();
    await using a = await appliance(dir.path, false);
    const admin = await login(a.app.coordinatorUrl!, "admin", PASSWORD);
    const auth = { authorization: `Bearer ${admin.token}` };
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    const live: Array<[string, StreamClient]> = [
      ["node, asked", connectStream(nodeWs(a, "include_payload=1"))],
      ["node, not asked", connectStream(nodeWs(a, ""))],
      ["coordinator admin, asked", connectStream(coordWs(a, "include_payload=1"), auth)],
      ["coordinator admin, not asked", connectStream(coordWs(a, ""), auth)],
    ];
    await Promise.all(live.map(([, c]) => c.opened));
    await waitFor(
      "the live subscribers",
      () => series(a.app.metrics.render(), "svc_stream_subscribers") === live.length,
    );
    udp.send(TRAFFIC);
    for (const [name, c] of live) await waitFor(`${name}: both events`, () => events(c).length === 2);
    // Replayed from the ring: the same rule.
    const replayed: Array<[string, StreamClient]> = [
      ["node history, asked", connectStream(nodeWs(a, "include_payload=1&history=10"))],
      ["coordinator history, asked", connectStream(coordWs(a, "include_payload=1&history=10"), auth)],
    ];
    for (const [name, c] of replayed) await waitFor(`${name}: both events`, () => events(c).length === 2);
    for (const [name, c] of [...live, ...replayed]) {
      expect({ name, payload: events(c).map((f) => "payload" in f) }).toEqual({ name, payload: [false, false] });
      expect({ name, raw: c.raw.some((r) => r.includes("INVITE sip:")) }).toEqual({ name, raw: false });
    }
    expect(await granted(nodeWs(a, "include_payload=1"))).toBe(false);
    expect(await granted(coordWs(a, "include_payload=1"), auth)).toBe(false);
    for (const [, c] of [...live, ...replayed]) c.close();
    udp.close();
  }, 60_000);

  test("allow_payload true: an administrator on the coordinator gets the payload; the node's anonymous clients never", async () => {
    await using dir = tempDir();
    await using a = await appliance(dir.path, true);
    const admin = await login(a.app.coordinatorUrl!, "admin", PASSWORD);
    const auth = { authorization: `Bearer ${admin.token}` };
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using node = connectStream(nodeWs(a, "include_payload=1"));
    using coord = connectStream(coordWs(a, "include_payload=1"), auth);
    await Promise.all([node.opened, coord.opened]);
    await waitFor("both subscribers", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 2);
    udp.send(TRAFFIC);
    await waitFor("both events at both", () => events(node).length === 2 && events(coord).length === 2);
    expect(events(coord).map((f) => [f.payload, f.payload_encoding])).toEqual([
      [invite(call), undefined],
      [Buffer.from(RTCP).toString("base64"), "base64"],
    ]);
    expect(events(node).map((f) => "payload" in f)).toEqual([false, false]);
    using replay = connectStream(nodeWs(a, "include_payload=1&history=10"));
    await waitFor("the node's replay", () => events(replay).length === 2);
    expect(events(replay).map((f) => "payload" in f)).toEqual([false, false]);
    expect(await granted(nodeWs(a, "include_payload=1"))).toBe(false);
    expect(await granted(coordWs(a, "include_payload=1"), auth)).toBe(true);
    udp.close();
  }, 60_000);
});
