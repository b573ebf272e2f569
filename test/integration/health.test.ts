/**
 * GET /health (docs/ARCHITECTURE.md "Health") on the real appliance: pass when all is well, fail
 * (503) with the reason while rows are being lost or the HEP ingest thread is gone, warn after it
 * was restarted. The full-disk cases are in lake-disk-full.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { invite } from "../fixtures/sip.ts";
import { tempDir, waitFor } from "../harness.ts";
import { health } from "./health-helpers.ts";

describe("/health and lost rows", () => {
  test("HEP packets dropped because the backlog is full make /health fail (503) with the reason; pass before", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, {
      ingest: { line_protocol: { enable: true } },
      storage: {
        lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000, max_buffered_rows: 1000, min_free_bytes: 1 },
      },
    });
    const { ingest, metrics, nodeUrl, coordinatorUrl } = a.app;
    const before = await health(coordinatorUrl!);
    expect(before.status).toBe(200);
    expect(before.body.status).toBe("pass");
    expect(Object.keys(before.body.checks).sort()).toEqual([
      "disk:free",
      "ingest:thread",
      "lake:backlog",
      "lake:flush",
      "lake:rows_lost",
      "startup",
    ]);
    expect(before.text).not.toContain(dir.path);
    expect(before.body.output).toBeUndefined();
    const lpHealth = async () => {
      const res = await fetch(`${a.app.lineProtocol!.url()}/health`);
      return { status: res.status, body: (await res.json()) as { status: string; message: string } };
    };
    expect(await lpHealth()).toMatchObject({ status: 200, body: { status: "pass", message: "ready for writes" } });

    // Over TCP (no kernel drops): 1000 rows fill the backlog, the rest is dropped as backlog_full.
    const sent = 1500;
    const frames = Buffer.concat(
      Array.from({ length: sent }, (_, i) =>
        encodeHep3({
          srcIp: "192.0.2.1",
          dstIp: "192.0.2.2",
          srcPort: 5060,
          dstPort: 5060,
          ipProtocol: 6,
          timestampUs: Date.now() * 1000 + i,
          protoType: 1,
          captureId: 7,
          payload: invite({ callId: `full-${i}@x`, from: "a", to: "b" }),
        }),
      ),
    );
    let drained: (() => void) | undefined;
    const tcp = await Bun.connect({
      hostname: "127.0.0.1",
      port: ingest!.listeners.tcp!.port(),
      socket: { data() {}, drain: () => drained?.() },
    });
    for (let off = 0; off < frames.length; ) {
      const wait = new Promise<void>((r) => (drained = r));
      off += tcp.write(frames.subarray(off));
      if (off < frames.length) await wait;
    }
    tcp.flush();
    await waitFor(
      "every packet counted",
      () => metrics.sumOf("svc_hep_packets_received_total") === sent || undefined,
      15_000,
    );
    tcp.end();

    for (const base of [nodeUrl!, coordinatorUrl!]) {
      const h = await health(base);
      expect(h.status).toBe(503);
      expect(h.body.status).toBe("fail");
      const lost = h.body.checks["lake:rows_lost"]![0]!;
      expect(lost.status).toBe("fail");
      expect(lost.observedValue).toBe(sent - 1000);
      expect(lost.output).toContain(`backlog_full: ${sent - 1000}`);
      expect(h.body.checks["lake:backlog"]![0]!.status).toBe("fail");
      // The thread is running and was never restarted; a burst may mark it saturated (warn) for a moment.
      const thread = h.body.checks["ingest:thread"]![0]!;
      expect(thread.status).not.toBe("fail");
      expect(thread.output ?? "").not.toContain("restarted");
      expect(h.body.output).toContain(`lake:rows_lost: rows lost by reason: backlog_full: ${sent - 1000}`);
    }
    // The line-protocol receiver's InfluxDB-style /health tells a client the same (pass | fail only).
    const lp = await lpHealth();
    expect(lp.status).toBe(503);
    expect(lp.body.status).toBe("fail");
    expect(lp.body.message).toContain(`backlog_full: ${sent - 1000}`);
  }, 60_000);

  test("a HEP ingest thread that dies: /health fails until a new one runs, then warns for the restart", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { storage: { lakehouse: { min_free_bytes: 1 } } });
    const thread = a.app.ingest!.thread!;
    const base = a.app.nodeUrl!;
    const check = async () => (await health(base)).body.checks["ingest:thread"]![0]!;
    expect((await check()).status).toBe("pass");

    // The first restart is immediate; a second crash within 5 s waits for the next start slot,
    // and meanwhile no thread reads the sockets.
    await thread.worker()!.terminate();
    await waitFor(
      "the first restart",
      () => a.app.metrics.sumOf("svc_hep_ingest_thread_restarts_total") === 1 || undefined,
    );
    await waitFor("the new thread handing over", async () => (await check()).status === "warn" || undefined);
    expect((await check()).output).toContain("restarted 1 times");
    await thread.worker()!.terminate();
    await waitFor(
      "the second restart counted",
      () => a.app.metrics.sumOf("svc_hep_ingest_thread_restarts_total") === 2 || undefined,
    );
    const down = await health(base);
    expect(down.status).toBe(503);
    expect(down.body.checks["ingest:thread"]![0]!.status).toBe("fail");
    await waitFor("the third thread handing over", async () => (await check()).status === "warn" || undefined, 15_000);
    expect((await health(base)).status).toBe(200);
  }, 60_000);
});
