/**
 * HEP listeners on the ingest thread (ingest.hep.threads = 1, the default): rows, counters and the
 * backlog bound cross from the worker to the lake on the main thread; threads = 0 keeps the old
 * single-thread path working.
 */
import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { freeUdpPort } from "../peers/process.ts";
import { invite } from "../fixtures/sip.ts";

const packet = (callId: string, i: number) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 6,
    timestampUs: Date.now() * 1000 + i,
    protoType: 1,
    captureId: 7,
    payload: invite({ callId, from: "a", to: "b" }),
  });

/** The value of one series in the Prometheus text (0 when absent). */
function series(text: string, name: string, labels = ""): number {
  const line = text.split("\n").find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

describe("HEP ingest thread", () => {
  test("rows and counters reach the main thread, and max_buffered_rows holds across the threads", async () => {
    await using dir = tempDir();
    const prefix = `thread-${crypto.randomUUID()}`;
    const sent = 3000;
    {
      await using a = await startTestAppliance(dir.path, {
        storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000, max_buffered_rows: 1000 } },
      });
      const { ingest, metrics } = a.app;
      // Over TCP: no kernel drops, so every packet is either stored or counted as backlog_full.
      let drained: (() => void) | undefined;
      const tcp = await Bun.connect({
        hostname: "127.0.0.1",
        port: ingest!.listeners.tcp!.port(),
        socket: { data() {}, drain: () => drained?.() },
      });
      const burst = async (from: number, to: number) => {
        const frames = new Uint8Array(
          Array.from({ length: to - from }, (_, i) => [...packet(`${prefix}-${from + i}@x`, from + i)]).flat(),
        );
        for (let off = 0; off < frames.length; ) {
          // What the socket did not take now goes when it asks for more (drain).
          const wait = new Promise<void>((r) => (drained = r));
          off += tcp.write(frames.subarray(off));
          if (off < frames.length) await wait;
        }
        tcp.flush();
      };
      // 600 rows first, until the main thread holds them (the lake's backlog), then the rest: the
      // ingest thread must count the lake's rows, not only its own open batch, to stop at 1000.
      await burst(0, 600);
      await waitFor("the first rows in the lake's backlog", () => a.app.lake!.backlog() === 600 || undefined, 15_000);
      await burst(600, sent);
      await waitFor(
        "every packet counted on the main thread",
        () => metrics.sumOf("svc_hep_packets_received_total") === sent || undefined,
        15_000,
      );
      const text = metrics.render();
      expect(series(text, "svc_hep_packets_received_total", 'transport="tcp"')).toBe(sent);
      expect(series(text, "svc_hep_packets_decoded_total", 'proto="1"')).toBe(sent);
      expect(series(text, "svc_hep_connections_total", 'transport="tcp"')).toBe(1);
      // The lake holds at most max_buffered_rows that are not in Parquet: the rest is refused and counted.
      const accepted = series(text, "svc_hep_rows_accepted_total", 'table="main.hep_proto_1_call"');
      expect(accepted).toBe(1000);
      expect(series(text, "svc_hep_packets_dropped_total", 'reason="backlog_full"')).toBe(sent - accepted);
      await waitFor("the accepted rows in the lake's buffer", async () => {
        await a.app.lake!.sync();
        const r = await a.app.lake!.query(
          `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`,
          [`${prefix}-%`],
        );
        return Number(r.rows[0]!.n) === accepted || undefined;
      });
      tcp.end();
    }
    // Stopped (flushed) and opened again: exactly the accepted rows, in Parquet.
    await using b = await startTestAppliance(dir.path);
    const r = await b.app.lake!.query(
      `SELECT count(*) AS n, count(DISTINCT session_id) AS d FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`,
      [`${prefix}-%`],
    );
    expect(Number(r.rows[0]!.n)).toBe(1000);
    expect(Number(r.rows[0]!.d)).toBe(1000);
  }, 60_000);

  test("HEP over HTTP on the thread: the 202 comes once the rows are in the lake's write path", async () => {
    await using dir = tempDir();
    // No timed seal for a minute on either side: only the hand-over the reply waits for can move rows.
    await using a = await startTestAppliance(dir.path, {
      ingest: { hep: { threads: 1 } },
      storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
    });
    expect(a.app.ingest!.thread).toBeDefined();
    const before = a.app.lake!.backlog();
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${a.app.nodeUrl}/api/v1/hep`, {
        method: "POST",
        body: Buffer.from(packet(`http-${i}-${crypto.randomUUID()}@x`, i)),
      });
      expect(res.status).toBe(202);
      // In the lake's backlog as soon as the reply is read, not one seal interval later.
      expect(a.app.lake!.backlog() - before).toBe(i + 1);
    }
  });

  test("a thread that dies is started again on the same UDP port, its socket closed", async () => {
    await using dir = tempDir();
    // A fixed port (found free just now): the restarted thread must bind the very same one.
    const port = await freeUdpPort();
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { udp: { listen: `127.0.0.1:${port}` } } } });
    // While no thread has the port bound the kernel answers "port unreachable": expected here.
    const udp = await Bun.udpSocket({ socket: { error() {} } });
    const stored = async (callId: string) => {
      await a.app.lake!.sync();
      const r = await a.app.lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE $1`,
        [callId],
      );
      return Number(r.rows[0]!.n);
    };
    udp.send(packet("before-crash@x", 0), port, "127.0.0.1");
    await waitFor("the first packet stored", async () => (await stored("before-crash@x")) === 1 || undefined);

    const first = a.app.ingest!.thread!.worker()!;
    await first.terminate(); // as if the thread had crashed
    await waitFor(
      "the restart counted",
      () => a.app.metrics.sumOf("svc_hep_ingest_thread_restarts_total") === 1 || undefined,
    );
    await waitFor("a new thread", () => (a.app.ingest!.thread!.worker() !== first ? true : undefined));
    // Until the new thread has bound the port, datagrams are refused: keep sending until one lands.
    let i = 0;
    await waitFor(
      "packets on the same port stored by the new thread",
      async () => {
        udp.send(packet(`after-crash-${i++}@x`, i), port, "127.0.0.1");
        return (await stored("after-crash-%")) > 0 || undefined;
      },
      15_000,
      50,
    );
    expect(a.app.ingest!.listeners.udp!.port()).toBe(port);
    udp.close();
  }, 30_000);

  test("a thread that cannot start (TCP port taken) releases the UDP port it had bound", async () => {
    await using dir = tempDir();
    const udpPort = await freeUdpPort();
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const start = startTestAppliance(dir.path, {
        ingest: { hep: { udp: { listen: `127.0.0.1:${udpPort}` }, tcp: { listen: `127.0.0.1:${taken.port}` } } },
      });
      expect(start).rejects.toThrow(/in use/i);
      await start.catch(() => {});
      // The UDP listener started before the TCP one failed: its socket must be closed again.
      const again = await Bun.udpSocket({ hostname: "127.0.0.1", port: udpPort });
      expect(again.port).toBe(udpPort);
      again.close();
    } finally {
      taken.stop(true);
    }
  });

  test("ingest.hep.threads = 0: the listeners run on the main thread", async () => {
    await using dir = tempDir();
    const callId = `main-${crypto.randomUUID()}@x`;
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { threads: 0 } } });
    const udp = await Bun.udpSocket({});
    udp.send(packet(callId, 0), a.app.ingest!.listeners.udp!.port(), "127.0.0.1");
    const n = await waitFor("the packet stored", async () => {
      await a.app.lake!.sync();
      const r = await a.app.lake!.query(
        `SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1`,
        [callId],
      );
      return Number(r.rows[0]!.n) || undefined;
    });
    expect(n).toBe(1);
    expect(a.app.metrics.sumOf("svc_hep_packets_received_total")).toBe(1);
    udp.close();
  });
});
