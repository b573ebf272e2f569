/**
 * Backpressure of the live stream (docs/STREAM.md "Backpressure: nothing waits for a subscriber"): a
 * subscriber that never reads loses frames from its own queue only (counted queue_full) while
 * another subscriber gets every event and ingest stores every packet; a subscriber over
 * rate_per_sub_pps loses the excess (counted rate_limit).
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../../src/auth/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";
import { captureOn, connectStream, hep, login, rawHandshake, series, udpSender } from "./stream-helpers.ts";

/** HEP over TCP: no datagram the kernel could drop, so every packet is accounted for. */
async function tcpSender(port: number) {
  let drained: (() => void) | undefined;
  const tcp = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, drain: () => drained?.() } });
  return {
    async send(packets: Uint8Array[]) {
      const bytes = Buffer.concat(packets);
      for (let off = 0; off < bytes.length; ) {
        const wait = new Promise<void>((r) => (drained = r));
        off += tcp.write(bytes.subarray(off));
        if (off < bytes.length) await wait;
      }
      tcp.flush();
    },
    close: () => tcp.end(),
  };
}

const packet = (i: number) =>
  hep({ srcPort: 10_000 + (i % 50_000), payload: invite({ callId: `bp-${i}@pbx`, from: "alice", to: "bob" }) });

describe("stream backpressure", () => {
  test("a subscriber that never reads drops only its own frames (counted); another gets every event, ingest stores every packet", async () => {
    await using dir = tempDir();
    // The slow subscriber is the coordinator's administrator with the payload (the node port never sends it), on the same broker.
    await using a = await startTestAppliance(dir.path, {
      coordinator: {
        auth: { admin_password_hash: sha256Hex("bp-admin-password") },
        hep_stream: { enable: true, allow_payload: true },
      },
      ingest: { hep_stream: { enable: true, rate_per_sub_pps: 0, per_sub_queue_len: 256 } },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const admin = await login(a.app.coordinatorUrl!, "admin", "bp-admin-password");
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    using _sentinel = await captureOn(base, udp.send);
    using fast = connectStream(`${base}?proto=1`);
    await fast.opened;
    // With payload (about 1 kB a frame) so the socket's buffers fill quickly.
    const slow = await rawHandshake(
      `${a.app.coordinatorUrl!.replace(/^http/, "ws")}/api/v4/stream/hep?proto=1&include_payload=1`,
      { authorization: `Bearer ${admin.token}` },
    );
    expect(slow.status).toBe(101);
    await waitFor("three subscribers", () => series(a.app.metrics.render(), "svc_stream_subscribers") === 3);
    const tcp = await tcpSender(a.app.ingest!.listeners.tcp!.port());
    const total = 10_000;
    // Paced by the fast subscriber: the next 500 go once it has every event so far.
    for (let sent = 0; sent < total; ) {
      const n = Math.min(500, total - sent);
      await tcp.send(Array.from({ length: n }, (_, i) => packet(sent + i)));
      sent += n;
      await waitFor(`the fast subscriber to have ${sent} events`, () => fast.frames.length >= sent, 20_000);
    }
    expect(fast.frames.length).toBe(total);
    expect(fast.frames.map((f) => f.sip?.callid)).toEqual(Array.from({ length: total }, (_, i) => `bp-${i}@pbx`));
    const text = a.app.metrics.render();
    const queueFull = series(text, "svc_stream_events_dropped_total", 'reason="queue_full"');
    expect(queueFull).toBeGreaterThan(0);
    expect(queueFull).toBeLessThan(total);
    expect(series(text, "svc_stream_events_dropped_total", 'reason="rate_limit"')).toBe(0);
    // Ingest was not held back: every packet became a row.
    await waitFor(
      "every row accepted",
      () => series(a.app.metrics.render(), "svc_hep_rows_accepted_total", 'table="main.hep_proto_1_call"') === total,
    );
    expect(series(a.app.metrics.render(), "svc_hep_packets_dropped_total", 'reason="backlog_full"')).toBe(0);
    // The slow subscriber is still connected (dropping is per frame, not per subscriber).
    expect(series(a.app.metrics.render(), "svc_stream_subscribers")).toBe(3);
    slow.socket.destroy();
    tcp.close();
    udp.close();
  }, 120_000);

  test("events over rate_per_sub_pps are dropped for that subscriber and counted", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep_stream: { enable: true, rate_per_sub_pps: 20 } },
    });
    const base = `${a.app.nodeUrl!.replace(/^http/, "ws")}/stream`;
    const udp = await udpSender(a.app.ingest!.listeners.udp!.port());
    // The only subscriber; it also proves capture is on.
    using sub = await captureOn(base, udp.send);
    const before = sub.frames.length;
    const droppedBefore = series(a.app.metrics.render(), "svc_stream_events_dropped_total", 'reason="rate_limit"');
    const tcp = await tcpSender(a.app.ingest!.listeners.tcp!.port());
    const burst = 200;
    await tcp.send(Array.from({ length: burst }, (_, i) => packet(i)));
    await waitFor("every event delivered or counted", () => {
      const dropped =
        series(a.app.metrics.render(), "svc_stream_events_dropped_total", 'reason="rate_limit"') - droppedBefore;
      return sub.frames.length - before + dropped === burst;
    });
    const got = sub.frames.length - before;
    // A bucket of one second (20 events) passes a few more as it refills, never the burst.
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(burst);
    tcp.close();
    udp.close();
  }, 60_000);
});
