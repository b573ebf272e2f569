/**
 * Store-and-forward details (docs/DEPLOY.md): an https url is verified against ingest.forward.ca
 * (the central behind a TLS terminator, here a Bun TLS server passing requests on), and the forward
 * log keeps its sequence numbers over a restart, cutting off a record torn by a crash mid-append.
 */
import { expect, test } from "bun:test";
import { appendFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { testConfig, startTestAppliance } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { forwardPacket } from "../peers/forward-packet.ts";
import { makePki, OPENSSL } from "../peers/tls.ts";
import { HepRelay } from "../../src/ingest/index.ts";

const TOKEN = "forward-tls-central-token-0123456789";

peerTest(
  "an https url: batches reach the central through TLS verified with ingest.forward.ca, and not without it",
  [OPENSSL],
  async () => {
    await using dc = tempDir("svc-fwd-tls-central-");
    await using de = tempDir("svc-fwd-tls-edge-");
    await using dr = tempDir("svc-fwd-tls-rogue-");
    await using pki = tempDir("svc-fwd-pki-");
    const p = makePki(pki.path);
    await using c = await startTestAppliance(dc.path, { node: { http_server: { token: TOKEN } } });
    const upstream = c.app.nodeUrl!;
    // The TLS terminator in front of the central's node port (docs/DEPLOY.md "N edges and a central writer").
    const terminator = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: Bun.file(p.serverCrt), key: Bun.file(p.serverKey) },
      fetch: async (req) => {
        const u = new URL(req.url);
        const res = await fetch(`${upstream}${u.pathname}`, {
          method: req.method,
          headers: req.headers,
          body: await req.arrayBuffer(),
        });
        return new Response(await res.arrayBuffer(), {
          status: res.status,
          headers: { "content-type": res.headers.get("content-type") ?? "application/json" },
        });
      },
    });
    try {
      const url = `https://127.0.0.1:${terminator.port}`;
      const send = async (e: Awaited<ReturnType<typeof startTestAppliance>>, prefix: string) => {
        const parts: Uint8Array[] = [];
        for (let i = 0; i < 100; i++) parts.push(forwardPacket(`${prefix}-${i}`, i));
        expect(
          (await fetch(`${e.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(parts) })).status,
        ).toBe(202);
      };
      {
        // Without the CA the central's certificate is not trusted: nothing goes, forward is down.
        await using rogue = await startTestAppliance(dr.path, {
          ingest: { forward: { enable: true, url, token: TOKEN, timeout_sec: 2 } },
        });
        await send(rogue, "tr");
        await waitFor("forward down", () => rogue.app.relay!.health()?.state === "down" || undefined, 15_000);
        expect(rogue.app.metrics.sumOf("svc_forward_sent_packets_total")).toBe(0);
      }
      await using e = await startTestAppliance(de.path, {
        ingest: { forward: { enable: true, url, token: TOKEN, ca: p.caCrt, timeout_sec: 2 } },
      });
      await send(e, "tl");
      await waitFor(
        "acknowledged through TLS",
        () => e.app.metrics.sumOf("svc_forward_sent_packets_total") === 100 || undefined,
        15_000,
      );
      // Forwarded rows are queryable once committed (docs/DEPLOY.md "Forward protocol"): within flush_interval_sec.
      const count = async () =>
        Number(
          (
            await c.app.lake!.query(
              "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'tl-%'",
            )
          ).rows[0]!.n,
        );
      await waitFor("the forwarded rows committed", async () => (await count()) >= 100 || undefined, 15_000);
      expect(await count()).toBe(100);
    } finally {
      terminator.stop(true);
    }
  },
);

peerTest(
  "the central's own node port with mutual TLS: an edge with ingest.forward.cert and key is taken, one without is refused",
  [OPENSSL],
  async () => {
    await using dc = tempDir("svc-fwd-mtls-central-");
    await using de = tempDir("svc-fwd-mtls-edge-");
    await using dn = tempDir("svc-fwd-mtls-nocert-");
    await using pki = tempDir("svc-fwd-mtls-pki-");
    const p = makePki(pki.path);
    await using c = await startTestAppliance(dc.path, {
      node: { http_server: { token: TOKEN, cert: p.serverCrt, key: p.serverKey, cacert: p.caCrt } },
    });
    const url = c.app.nodeUrl!;
    expect(url).toStartWith("https://");
    const send = async (e: Awaited<ReturnType<typeof startTestAppliance>>, prefix: string) => {
      const parts: Uint8Array[] = [];
      for (let i = 0; i < 50; i++) parts.push(forwardPacket(`${prefix}-${i}`, i));
      expect((await fetch(`${e.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(parts) })).status).toBe(
        202,
      );
    };
    {
      await using nocert = await startTestAppliance(dn.path, {
        ingest: { forward: { enable: true, url, token: TOKEN, ca: p.caCrt, timeout_sec: 2 } },
      });
      await send(nocert, "mn");
      await waitFor(
        "forward down without a client certificate",
        () => nocert.app.relay!.health()?.state === "down" || undefined,
        15_000,
      );
      expect(nocert.app.metrics.sumOf("svc_forward_sent_packets_total")).toBe(0);
    }
    await using e = await startTestAppliance(de.path, {
      ingest: {
        forward: { enable: true, url, token: TOKEN, ca: p.caCrt, cert: p.clientCrt, key: p.clientKey, timeout_sec: 2 },
      },
    });
    await send(e, "mt");
    await waitFor(
      "acknowledged over mutual TLS",
      () => e.app.metrics.sumOf("svc_forward_sent_packets_total") === 50 || undefined,
      15_000,
    );
    // Forwarded rows are queryable once committed (docs/DEPLOY.md "Forward protocol"): within flush_interval_sec.
    const count = async () =>
      Number(
        (
          await c.app.lake!.query(
            "SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id LIKE 'mt-%'",
          )
        ).rows[0]!.n,
      );
    await waitFor("the forwarded rows committed", async () => (await count()) >= 50 || undefined, 15_000);
    expect(await count()).toBe(50);
  },
);

test("the forward log continues its sequence over a restart and cuts off a torn record", async () => {
  await using d = tempDir("svc-fwd-log-");
  const cfg = testConfig(d.path, {
    ingest: { forward: { enable: true, url: "http://127.0.0.1:9", timeout_sec: 1 } },
  }).ingest;
  const dir = join(d.path, "forward");
  const open = () => new HepRelay(cfg, dir, createLogger({ test: true }), new MetricsRegistry());
  const first = open();
  await first.start();
  const id = first.senderId();
  for (let i = 0; i < 10; i++) first.acceptPacket(forwardPacket(`lg-${i}`, i));
  await first.stop();
  expect(first.health()?.backlogPackets).toBe(10);
  // A crash mid-append: a length prefix promising more bytes than follow.
  const seg = readdirSync(dir).find((f) => f.endsWith(".seg"))!;
  appendFileSync(join(dir, seg), Buffer.from([0, 0, 1, 0, 0x48, 0x45]));
  const second = open();
  await second.start();
  expect(second.senderId()).toBe(id);
  expect(second.health()?.backlogPackets).toBe(10);
  second.acceptPacket(forwardPacket("lg-10", 10));
  await second.stop();
  expect(second.health()?.backlogPackets).toBe(11);
  const third = open();
  await third.start();
  expect(third.health()?.backlogPackets).toBe(11);
  await third.stop();
});
