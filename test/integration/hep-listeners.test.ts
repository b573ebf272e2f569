import { describe, expect, test } from "bun:test";
import { encodeHep3 } from "../../src/hep/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";
import { invite } from "../fixtures/sip.ts";

const packet = (callId: string, tsUs = Date.now() * 1000) =>
  encodeHep3({
    srcIp: "192.0.2.1",
    dstIp: "192.0.2.2",
    srcPort: 5060,
    dstPort: 5060,
    ipProtocol: 6,
    timestampUs: tsUs,
    protoType: 1,
    payload: invite({ callId, from: "a", to: "b" }),
  });

async function countCall(
  lake: NonNullable<Awaited<ReturnType<typeof startTestAppliance>>["app"]["lake"]>,
  callId: string,
): Promise<number> {
  await lake.sync();
  const r = await lake.query(`SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1`, [
    callId,
  ]);
  return Number(r.rows[0]!.n);
}

describe("HEP listeners and node endpoints", () => {
  peerTest("HEP over TLS with the configured certificate", [OPENSSL], async () => {
    await using dir = tempDir();
    const { cert, key } = selfSignedCert(dir.path);
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { tls: { cert, key } } } });
    const tls = a.app.ingest!.listeners.tls;
    expect(tls).toBeDefined();
    // Bun's TLS client drops writes made before the handshake completes: write after it.
    const { promise: handshake, resolve } = Promise.withResolvers<void>();
    const s = await Bun.connect({
      hostname: "127.0.0.1",
      port: tls!.port(),
      tls: { rejectUnauthorized: false },
      socket: { data() {}, handshake: () => resolve() },
    });
    await handshake;
    s.write(packet("tls-call-1"));
    s.write(packet("tls-call-2"));
    s.flush();
    await waitFor(
      "both TLS packets stored",
      async () => (await countCall(a.app.lake!, "tls-call-1")) + (await countCall(a.app.lake!, "tls-call-2")) === 2,
    );
    expect(a.app.metrics.render()).toMatch(/svc_hep_packets_received_total\{transport="tls"\} 2/);
    s.end();
  });

  test("random and mutated input on UDP, TCP and HTTP never stops ingest; every reject is counted", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const { ingest, lake, nodeUrl, metrics } = a.app;
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const good = packet("fuzz-anchor");
    const udp = await Bun.udpSocket({});
    const tcp = await Bun.connect({
      hostname: "127.0.0.1",
      port: ingest!.listeners.tcp!.port(),
      socket: { data() {} },
    });
    let sentBad = 0;
    for (let i = 0; i < 2000; i++) {
      let buf: Uint8Array;
      if (i % 2 === 0) {
        buf = new Uint8Array(1 + Math.floor(rnd() * 1200));
        for (let j = 0; j < buf.length; j++) buf[j] = Math.floor(rnd() * 256);
      } else {
        buf = good.slice();
        const flips = 1 + Math.floor(rnd() * 8);
        for (let f = 0; f < flips; f++) {
          const at = Math.floor(rnd() * buf.length);
          buf[at] = (buf[at] ?? 0) ^ (1 << Math.floor(rnd() * 8));
        }
        if (rnd() < 0.3) buf = buf.subarray(0, Math.floor(rnd() * buf.length));
      }
      udp.send(buf, ingest!.listeners.udp!.port(), "127.0.0.1");
      if (i % 10 === 0) tcp.write(buf);
      if (i % 100 === 0)
        await fetch(`${nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.from(buf) }).then((r) => r.arrayBuffer());
      sentBad++;
    }
    tcp.flush();
    // After the garbage, well-formed packets on every transport are still stored.
    udp.send(packet("after-fuzz-udp"), ingest!.listeners.udp!.port(), "127.0.0.1");
    tcp.write(packet("after-fuzz-tcp"));
    tcp.flush();
    const res = await fetch(`${nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.from(packet("after-fuzz-http")) });
    expect(res.status).toBe(202);
    await waitFor(
      "packets after the fuzz stored",
      async () => (await countCall(lake!, "after-fuzz-udp")) === 1 && (await countCall(lake!, "after-fuzz-http")) === 1,
    );
    await waitFor("tcp stream resynchronised", async () => (await countCall(lake!, "after-fuzz-tcp")) === 1);
    const text = metrics.render();
    const sum = (re: RegExp) => [...text.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);
    const received = sum(/svc_hep_packets_received_total\{transport="udp"\} (\d+)/g);
    const decoded = sum(/svc_hep_packets_decoded_total\{proto="[^"]*"\} (\d+)/g);
    const dropped = sum(/svc_hep_packets_dropped_total\{reason="[^"]*"\} (\d+)/g);
    expect(received).toBeGreaterThan(sentBad * 0.5); // UDP on loopback may drop a few under load
    expect(dropped).toBeGreaterThan(0);
    // Every packet that reached the pipeline was either decoded or dropped with a reason.
    const allReceived = sum(/svc_hep_packets_received_total\{transport="[^"]*"\} (\d+)/g);
    expect(decoded + dropped).toBe(allReceived);
    udp.close();
    tcp.end();
  });

  test("ingest.hep.udp.batch_receive = false: Bun's UDP socket stores the packets", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path, { ingest: { hep: { udp: { batch_receive: false } } } });
    const udp = await Bun.udpSocket({});
    for (let i = 0; i < 3; i++) udp.send(packet(`bun-udp-${i}`), a.app.ingest!.listeners.udp!.port(), "127.0.0.1");
    await waitFor("three UDP packets stored", async () => {
      let n = 0;
      for (let i = 0; i < 3; i++) n += await countCall(a.app.lake!, `bun-udp-${i}`);
      return n === 3;
    });
    expect(a.app.metrics.render()).toMatch(/svc_hep_packets_received_total\{transport="udp"\} 3/);
    udp.close();
  });

  test("node metadata: has_data by time overlap, stats with row counts; bad bodies are 400", async () => {
    await using dir = tempDir();
    await using a = await startTestAppliance(dir.path);
    const { ingest, lake, nodeUrl } = a.app;
    const empty = (await (await fetch(`${nodeUrl}/api/v1/metadata/stats`)).json()) as Record<string, unknown>;
    expect(empty).toMatchObject({ row_count: 0, catalog_type: "sqlite", oldest_data: null });
    const t0 = Date.UTC(2026, 0, 10, 12, 0, 0) * 1000;
    const udp = await Bun.udpSocket({});
    udp.send(packet("meta-1", t0), ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.send(packet("meta-2", t0 + 3_600_000_000), ingest!.listeners.udp!.port(), "127.0.0.1");
    udp.close();
    await waitFor("rows", async () => (await countCall(lake!, "meta-1")) + (await countCall(lake!, "meta-2")) === 2);
    await lake!.flush();
    const stats = (await (await fetch(`${nodeUrl}/api/v1/metadata/stats`)).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({
      row_count: 2,
      min_timestamp: t0 * 1000,
      max_timestamp: (t0 + 3_600_000_000) * 1000,
      oldest_data: "2026-01-10T12:00:00.000Z",
    });
    const check = async (minMs: number, maxMs: number) =>
      (await (
        await fetch(`${nodeUrl}/api/v1/metadata/check`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ min_ts: minMs * 1e6, max_ts: maxMs * 1e6 }),
        })
      ).json()) as Record<string, unknown>;
    const inside = await check(t0 / 1000 + 60_000, t0 / 1000 + 120_000);
    expect(inside).toMatchObject({ has_data: true, data_span_hours: 1 });
    expect((await check(t0 / 1000 - 7_200_000, t0 / 1000 - 3_600_000)).has_data).toBe(false);
    const bad = await fetch(`${nodeUrl}/api/v1/metadata/check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ min_ts: "x" }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe("VALIDATION");
    const emptyHep = await fetch(`${nodeUrl}/api/v1/hep`, { method: "POST", body: new Uint8Array() });
    expect(emptyHep.status).toBe(400);
  });
});

describe("capture agents", () => {
  test("agents seen by ingest are listed by GET /agents with node name, address and packet count", async () => {
    const { sha256Hex } = await import("../../src/auth/index.ts");
    await using dir = tempDir();
    const overrides = { coordinator: { auth: { admin_password_hash: sha256Hex("agents-pass") } } };
    {
      await using a = await startTestAppliance(dir.path, overrides);
      const udp = await Bun.udpSocket({});
      for (let i = 0; i < 5; i++) {
        udp.send(
          encodeHep3({
            srcIp: "192.0.2.1",
            dstIp: "192.0.2.2",
            timestampUs: Date.now() * 1000,
            protoType: 1,
            captureId: 4242,
            nodeName: "edge-agent",
            payload: invite({ callId: `ag-${i}`, from: "a", to: "b" }),
          }),
          a.app.ingest!.listeners.udp!.port(),
          "127.0.0.1",
        );
      }
      udp.close();
      await waitFor("packets stored", async () => (await countCall(a.app.lake!, "ag-4")) === 1);
    } // stop drains the agent activity into the settings database
    await using a = await startTestAppliance(dir.path, overrides);
    const api = `${a.app.coordinatorUrl}/api/v4`;
    const login = (await (
      await fetch(`${api}/auth/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: "agents-pass" }),
      })
    ).json()) as { token: string };
    const list = (await (
      await fetch(`${api}/agents`, { headers: { authorization: `Bearer ${login.token}` } })
    ).json()) as { data: { items: Array<Record<string, unknown>> } };
    const agent = list.data.items.find((x) => x.node_id === "4242");
    expect(agent).toMatchObject({ node_name: "edge-agent", ip: "127.0.0.1", packets: 5 });
  });
});
