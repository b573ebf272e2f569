/**
 * Several HEP ingest threads (ingest.hep.threads = N, docs/ARCHITECTURE.md "Several ingest
 * threads"): one UDP flow from a single address and port is spread over every thread and stored
 * exactly once, and rows with the same capture time keep the order they were sent in (ids carry the
 * kernel receive time); HEP over HTTP goes to the threads in turn; /health and /metrics name each thread;
 * a UDP port another socket shares is refused.
 */
import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { openBatchSocket } from "../../src/ingest/hep/udp-batch.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";
import { connect } from "./hep-stream-helpers.ts";

const packet = (callId: string, i: number, timestampUs = Date.now() * 1000 + i) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 17,
    timestampUs,
    protoType: 1,
    captureId: 7,
    payload: invite({ callId, from: "a", to: "b" }),
  });

/** Every series of one family as label text → value. */
function family(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of text.split("\n")) {
    if (!l.startsWith(`${name}{`)) continue;
    out.set(l.slice(name.length + 1, l.indexOf("}")), Number(l.slice(l.lastIndexOf(" ") + 1)));
  }
  return out;
}

describe("several HEP ingest threads", () => {
  test("one UDP flow from one address and port is spread over 3 threads and stored exactly once", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { threads: 3, udp: { socket_buffer_bytes: 8_388_608 } } },
    });
    const port = a.app.ingest!.listeners.udp!.port();
    const prefix = `spread-${crypto.randomUUID()}`;
    const sent = 900;
    // One socket: every datagram has the same source address and port (one kernel flow).
    const udp = await Bun.udpSocket({});
    for (let i = 0; i < sent; i++) {
      udp.send(packet(`${prefix}-${i}@x`, i), port, "127.0.0.1");
      // In steps the receive buffers hold whatever net.core.rmem_max allows them (no loss to tell apart).
      if (i % 50 === 49)
        await waitFor(
          "the step received",
          () => a.app.metrics.sumOf("svc_hep_thread_packets_total") >= i + 1 || undefined,
          20_000,
          5,
        );
    }
    udp.close();
    await waitFor(
      "every datagram received",
      () => a.app.metrics.sumOf("svc_hep_packets_received_total") === sent || undefined,
      20_000,
    );
    const perThread = family(a.app.metrics.render(), "svc_hep_thread_packets_total");
    expect([...perThread.keys()].sort()).toEqual(['thread="0"', 'thread="1"', 'thread="2"']);
    // A random pick per datagram: each of 3 threads gets about 300 (0 or a whole share would be a hash pick).
    for (const [k, n] of perThread) {
      expect(n, k).toBeGreaterThan(150);
      expect(n, k).toBeLessThan(450);
    }
    expect([...perThread.values()].reduce((x, y) => x + y, 0)).toBe(sent);
    await waitFor("every row in the lake, once", async () => {
      await a.app.lake!.sync();
      const r = await a.app.lake!.query(
        `SELECT count(*) AS n, count(DISTINCT session_id) AS d FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`,
        [`${prefix}-%`],
      );
      return (Number(r.rows[0]!.n) === sent && Number(r.rows[0]!.d) === sent) || undefined;
    });
  }, 60_000);

  test("datagrams with one capture time, read by 3 threads, keep the order they were sent in (time, then id)", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { threads: 3 } } });
    const port = a.app.ingest!.listeners.udp!.port();
    const prefix = `tie-${crypto.randomUUID()}`;
    const sent = 300;
    const ts = Date.now() * 1000;
    const udp = await Bun.udpSocket({});
    // In bursts of 30: each thread reads its share in its own polling turn, not when it arrived.
    for (let i = 0; i < sent; i++) {
      udp.send(packet(`${prefix}-${i}@x`, i, ts), port, "127.0.0.1");
      if (i % 30 === 29)
        await waitFor(
          "the burst received",
          () => a.app.metrics.sumOf("svc_hep_thread_packets_total") >= i + 1 || undefined,
          20_000,
          5,
        );
    }
    udp.close();
    const perThread = family(a.app.metrics.render(), "svc_hep_thread_packets_total");
    for (const [k, n] of perThread) expect(n, k).toBeGreaterThan(0);
    let order: number[] = [];
    await waitFor("every row in the lake", async () => {
      await a.app.lake!.sync();
      const r = await a.app.lake!.query(
        `SELECT session_id FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1 ORDER BY "timestamp", uuid`,
        [`${prefix}-%`],
      );
      order = r.rows.map((row) => Number(String(row.session_id).slice(prefix.length + 1, -2)));
      return order.length === sent || undefined;
    });
    // The order readers use (docs/ARCHITECTURE.md "Several ingest threads", "Order") is the send order.
    expect(order).toEqual(Array.from({ length: sent }, (_, i) => i));
  }, 60_000);

  test("HEP over HTTP goes to the threads in turn; /health lists each thread", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { threads: 2 } } });
    const prefix = `http-${crypto.randomUUID()}`;
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${a.app.nodeUrl}/api/v1/hep`, {
        method: "POST",
        body: Buffer.from(packet(`${prefix}-${i}@x`, i)),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ accepted: 1, rejected: {} });
    }
    // A body that is not HEP: the thread's answer becomes the same 400 as on one thread.
    const bad = await fetch(`${a.app.nodeUrl}/api/v1/hep`, {
      method: "POST",
      body: new Uint8Array([1, 2, 3, 4, 5, 6, 7]),
    });
    expect(bad.status).toBe(400);
    const perThread = family(a.app.metrics.render(), "svc_hep_thread_packets_total");
    await waitFor("both threads counted their bodies", () => {
      const m = family(a.app.metrics.render(), "svc_hep_thread_packets_total");
      return ((m.get('thread="0"') ?? 0) >= 2 && (m.get('thread="1"') ?? 0) >= 2) || undefined;
    });
    expect(perThread.size).toBe(2);
    await waitFor("every row in the lake", async () => {
      await a.app.lake!.sync();
      const r = await a.app.lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`,
        [`${prefix}-%`],
      );
      return Number(r.rows[0]!.n) === 4 || undefined;
    });
    const health = (await (await fetch(`${a.app.nodeUrl}/health`)).json()) as {
      checks: Record<string, Array<{ componentId?: string; status: string; kernel_drops_last_minute?: number }>>;
    };
    const threads = health.checks["ingest:thread"]!;
    expect(threads.map((t) => t.componentId)).toEqual(["thread-0", "thread-1"]);
    for (const t of threads) {
      expect(t.status).toBe("pass");
      expect(t.kernel_drops_last_minute).toBe(0);
    }
    // One thread dies: /health names it.
    await a.app.ingest!.thread!.worker(1)!.terminate();
    await waitFor("thread 1 reported down or restarted", async () => {
      const h = (await (await fetch(`${a.app.nodeUrl}/health`)).json()) as typeof health;
      const t1 = h.checks["ingest:thread"]!.find((t) => t.componentId === "thread-1")!;
      return t1.status !== "pass" || undefined;
    });
  }, 60_000);

  test("a UDP port that another SO_REUSEPORT socket already shares is refused, not split", async () => {
    await using dir = tempDir();
    // Another process of the same user could join the port's group silently; here one socket stands for it.
    const other = openBatchSocket("127.0.0.1", 0, { size: 2, first: true });
    if (!other) {
      console.warn("skip: batch UDP receive needs Linux with glibc");
      return;
    }
    try {
      const start = startTestAppliance(dir.path, {
        ingest: { hep: { threads: 2, udp: { listen: `127.0.0.1:${other.port}` } } },
      });
      expect(start).rejects.toThrow(/in use/i);
      await start.catch(() => {});
    } finally {
      other.close();
    }
  });

  test("TCP connections spread over 3 threads; max_connections holds over all of them", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: {
        hep: { threads: 3, tcp: { max_connections: 8, max_connections_per_ip: 8, reserved_for_known_percent: 0 } },
      },
    });
    const port = a.app.ingest!.listeners.tcp!.port();
    const prefix = `tcp-${crypto.randomUUID()}`;
    const conns = await Promise.all(Array.from({ length: 12 }, () => connect(port)));
    // Refused at accept on whichever thread the kernel gave them to: 8 held over all three.
    await waitFor(
      "four connections refused over the threads",
      () => a.app.metrics.sumOf("svc_hep_connections_closed_total") === 4 || undefined,
      15_000,
    );
    await waitFor("the refused ones closed", () => conns.filter((c) => c.isClosed()).length === 4 || undefined);
    const open = conns.filter((c) => !c.isClosed());
    open.forEach((c, i) => c.socket.write(packet(`${prefix}-${i}@x`, i)));
    await waitFor(
      "a packet from every open connection",
      () => a.app.metrics.sumOf("svc_hep_thread_packets_total") === open.length || undefined,
      15_000,
    );
    // The kernel's accept spread is a hash per connection: 8 connections reach more than one thread.
    const perThread = family(a.app.metrics.render(), "svc_hep_thread_packets_total");
    expect([...perThread.values()].filter((n) => n > 0).length).toBeGreaterThan(1);
    expect(a.app.metrics.sumOf("svc_hep_connections_total")).toBe(8);
    for (const c of conns) c.socket.end();
  }, 60_000);

  test("a TCP port another SO_REUSEPORT listener already has is refused, not shared", async () => {
    await using dir = tempDir();
    const reuse = { reusePort: true } as Record<string, unknown>;
    const other = Bun.listen({ hostname: "127.0.0.1", port: 0, ...reuse, socket: { data() {} } });
    try {
      const start = startTestAppliance(dir.path, {
        ingest: { hep: { threads: 2, tcp: { listen: `127.0.0.1:${other.port}` } } },
      });
      expect(start).rejects.toThrow(/in use/i);
      await start.catch(() => {});
    } finally {
      other.stop(true);
    }
  });
});
