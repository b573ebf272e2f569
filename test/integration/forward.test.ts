/**
 * Store-and-forward from an edge to a central (docs/DEPLOY.md "N edges and a central writer"):
 * both real appliances in this process on loopback port 0, the edge's ingest.forward.url pointing
 * at the central's node port (through a TCP proxy where the link fails). "Same rows" on the
 * central (docs/DEPLOY.md "What arrives on the central"): the same Call-IDs, each as often as on the
 * edge, with the same capture times; uuids differ (each side assigns its own on decode), and none
 * appears twice on the central.
 */
import { expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { forwardPacket } from "../peers/forward-packet.ts";
import { TcpProxy } from "../peers/tcp-proxy.ts";

const TOKEN = "forward-test-central-token-0123456789";
/**
 * How long the cut link stays cut beyond the six sends (SVC_TEST_LINK_CUT_SEC, seconds; 0 by
 * default so the suite stays short): the length of the experiment, during which the edge keeps
 * taking 500 packets a second. Run with 60 for the one-minute outage (docs/BENCHMARKS.md
 * "Store-and-forward").
 */
const LINK_CUT_SEC = Number(process.env.SVC_TEST_LINK_CUT_SEC ?? 0);
const CALL = "svc_lake.main.hep_proto_1_call";

/** `n` packets in one HEP-over-HTTP body to the edge (202 once every one is accepted). */
async function sendToEdge(edge: TestAppliance, prefix: string, from: number, n: number): Promise<void> {
  const parts: Uint8Array[] = [];
  for (let i = from; i < from + n; i++) parts.push(forwardPacket(`${prefix}-${i}`, i));
  const res = await fetch(`${edge.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(parts) });
  expect(res.status).toBe(202);
  expect(((await res.json()) as { accepted: number }).accepted).toBe(n);
}

async function callRows(
  a: TestAppliance,
  prefix: string,
): Promise<{ n: number; uuids: number; calls: Map<string, number> }> {
  const lake = a.app.lake!;
  if (!lake.table("main.hep_proto_1_call")) return { n: 0, uuids: 0, calls: new Map() };
  const r = await lake.query(
    `SELECT session_id AS c, epoch_us("timestamp") AS t, count(*) OVER () AS n, count(DISTINCT uuid) OVER () AS u FROM ${CALL} WHERE session_id LIKE '${prefix}-%'`,
  );
  const calls = new Map<string, number>();
  for (const row of r.rows) calls.set(`${row.c}@${row.t}`, (calls.get(`${row.c}@${row.t}`) ?? 0) + 1);
  return { n: r.rows.length, uuids: Number(r.rows[0]?.u ?? 0), calls };
}

const central = (dir: string) => startTestAppliance(dir, { node: { http_server: { token: TOKEN } } });
const edge = (dir: string, url: string, forward: Record<string, unknown> = {}) =>
  startTestAppliance(dir, { ingest: { forward: { enable: true, url, token: TOKEN, timeout_sec: 1, ...forward } } });

const health = async (a: TestAppliance) =>
  (await (await fetch(`${a.app.nodeUrl}/health`)).json()) as { checks: Record<string, Array<Record<string, unknown>>> };
const gauge = (a: TestAppliance, name: string) => {
  const line = a.app.metrics
    .render()
    .split("\n")
    .find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : Number.NaN;
};

test("an edge forwards every accepted packet: the central holds the same calls, each once", async () => {
  await using dc = tempDir("svc-fwd-central-");
  await using de = tempDir("svc-fwd-edge-");
  await using c = await central(dc.path);
  await using e = await edge(de.path, c.app.nodeUrl!);
  let sent = 0;
  for (let step = 0; step < 10; step++, sent += 300) await sendToEdge(e, "fs", sent, 300);
  await waitFor("the central holds every packet", async () => (await callRows(c, "fs")).n >= sent || undefined, 20_000);
  await waitFor(
    "the edge's log acknowledged",
    () => gauge(e, "svc_forward_backlog_packets") === 0 || undefined,
    10_000,
  );
  const [onEdge, onCentral] = [await callRows(e, "fs"), await callRows(c, "fs")];
  expect(onCentral.n).toBe(sent);
  expect(onCentral.uuids).toBe(sent);
  expect(onCentral.calls).toEqual(onEdge.calls);
  expect(e.app.metrics.sumOf("svc_forward_sent_packets_total")).toBe(sent);
  expect((await health(e)).checks.forward?.[0]).toMatchObject({ state: "ok", status: "pass", backlog_packets: 0 });
});

test("a replayed, overlapping batch keeps only its new tail; a wrong token is refused (a central that captures nothing itself)", async () => {
  await using dc = tempDir("svc-fwd-replay-");
  await using c = await startTestAppliance(dc.path, {
    node: { http_server: { token: TOKEN } },
    ingest: { hep: { enable: false } },
  });
  const body = (from: number, to: number) => {
    const parts: Uint8Array[] = [];
    for (let i = from; i <= to; i++) {
      const p = forwardPacket(`rp-${i}`, i);
      const len = Buffer.alloc(4);
      len.writeUInt32BE(p.length);
      parts.push(len, p);
    }
    return Bun.gzipSync(Buffer.concat(parts));
  };
  const post = (from: number, to: number, token = TOKEN) =>
    fetch(`${c.app.nodeUrl}/api/v1/forward`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-encoding": "gzip",
        "x-svc-forward-sender": "edge-a",
        "x-svc-forward-first": String(from),
        "x-svc-forward-last": String(to),
      },
      body: body(from, to),
    });
  expect((await post(1, 10, "wrong-token")).status).toBe(401);
  const first = await post(1, 10);
  expect(first.status).toBe(200);
  expect(await first.json()).toMatchObject({ last: 10, committed: 0, accepted: 10, duplicates: 0 });
  const again = await post(6, 15);
  expect(await again.json()).toMatchObject({ last: 15, accepted: 5, duplicates: 5 });
  expect(await (await post(1, 15)).json()).toMatchObject({ last: 15, accepted: 0, duplicates: 15 });
  // A count that does not match the body is the sender's mistake.
  expect((await post(16, 30).then(async (r) => ({ s: r.status, b: await r.text() }))).s).toBe(200);
  const bad = await fetch(`${c.app.nodeUrl}/api/v1/forward`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      "content-encoding": "gzip",
      "x-svc-forward-sender": "edge-a",
      "x-svc-forward-first": "31",
      "x-svc-forward-last": "40",
    },
    body: body(31, 35),
  });
  expect(bad.status).toBe(400);
  // Held rows are committed with the sender's mark within flush_interval_sec (1 s here).
  const position = async () =>
    (await (
      await fetch(`${c.app.nodeUrl}/api/v1/forward?sender=edge-a`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { last: number; committed: number };
  await waitFor("the held rows committed", async () => (await position()).committed === 30 || undefined, 15_000);
  expect(await position()).toEqual({ last: 30, committed: 30 });
  // The position is the writer mark forward:<sender>, committed in the same transaction as the rows.
  expect(await c.app.lake!.writerMark("forward:edge-a")).toBe(30);
  const rows = await callRows(c, "rp");
  expect(rows.n).toBe(30);
  expect(rows.uuids).toBe(30);
  expect([...rows.calls.values()].every((n) => n === 1)).toBe(true);
});

test(
  "the link stops passing bytes, then resumes: the edge stays searchable, the central ends with the same calls",
  async () => {
    await using dc = tempDir("svc-fwd-cut-central-");
    await using de = tempDir("svc-fwd-cut-edge-");
    await using c = await central(dc.path);
    const proxy = new TcpProxy(Number(new URL(c.app.nodeUrl!).port)).start();
    try {
      // Room for what a long cut offers (about 0.35 MB a second): this test counts no drops.
      const cap = (4 << 20) + LINK_CUT_SEC * (1 << 20);
      await using e = await edge(de.path, `http://127.0.0.1:${proxy.port}`, {
        max_backlog_bytes: cap,
        segment_bytes: 262_144,
      });
      await sendToEdge(e, "lc", 0, 500);
      await waitFor(
        "the first packets on the central",
        async () => (await callRows(c, "lc")).n >= 500 || undefined,
        20_000,
      );
      proxy.cut();
      let sent = 500;
      const cutAt = performance.now();
      for (let step = 0; step < 6 || performance.now() - cutAt < LINK_CUT_SEC * 1000; step++, sent += 500) {
        const stepAt = performance.now();
        await sendToEdge(e, "lc", sent, 500);
        // Searchable on the edge all along.
        await waitFor(
          "the edge finds its own rows",
          async () => (await callRows(e, "lc")).n >= sent + 500 || undefined,
          10_000,
        );
        // A long cut offers 500 packets a second: the pace of the experiment, not a wait for a state.
        if (step >= 5 && LINK_CUT_SEC > 0) await Bun.sleep(Math.max(0, 1000 - (performance.now() - stepAt)));
      }
      const cutSec = (performance.now() - cutAt) / 1000;
      await waitFor(
        "forward reported down",
        async () => (await health(e)).checks.forward?.[0]?.state === "down" || undefined,
        15_000,
      );
      expect(gauge(e, "svc_forward_backlog_bytes")).toBeLessThanOrEqual(cap);
      expect(gauge(e, "svc_forward_backlog_packets")).toBeGreaterThan(0);
      expect((await callRows(c, "lc")).n).toBeLessThan(sent);
      proxy.restore();
      const restoredAt = performance.now();
      await waitFor(
        "the central caught up",
        async () => (await callRows(c, "lc")).n >= sent || undefined,
        25_000 + LINK_CUT_SEC * 1000,
      );
      if (LINK_CUT_SEC > 0)
        console.log(
          `link cut ${cutSec.toFixed(1)} s, ${sent} packets at the edge; the central had them all ${((performance.now() - restoredAt) / 1000).toFixed(1)} s after the link came back`,
        );
      await waitFor(
        "forward ok again",
        async () => (await health(e)).checks.forward?.[0]?.state === "ok" || undefined,
        10_000,
      );
      const [onEdge, onCentral] = [await callRows(e, "lc"), await callRows(c, "lc")];
      expect(onCentral.n).toBe(sent);
      expect(onCentral.uuids).toBe(sent);
      expect(onCentral.calls).toEqual(onEdge.calls);
      expect(e.app.metrics.sumOf("svc_forward_retries_total")).toBeGreaterThan(0);
      expect(e.app.metrics.sumOf("svc_forward_dropped_packets_total")).toBe(0);
    } finally {
      proxy.stop();
    }
  },
  60_000 + 2 * LINK_CUT_SEC * 1000,
);

test("over max_backlog_bytes the oldest segment is deleted and its packets counted", async () => {
  await using de = tempDir("svc-fwd-cap-");
  // Nothing listens there: every batch fails, the log only grows.
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const url = `http://127.0.0.1:${closed.port}`;
  closed.stop(true);
  const cap = 1 << 20;
  await using e = await edge(de.path, url, { max_backlog_bytes: cap, segment_bytes: 65_536 });
  let sent = 0;
  for (; sent < 6000; sent += 500) await sendToEdge(e, "bc", sent, 500);
  await waitFor(
    "segments dropped",
    () => e.app.metrics.sumOf("svc_forward_dropped_packets_total") > 0 || undefined,
    10_000,
  );
  // Every packet is either waiting in the log or counted as dropped (once the last hand-over is in).
  const accounted = () =>
    e.app.metrics.sumOf("svc_forward_dropped_packets_total") + e.app.relay!.health()!.backlogPackets;
  await waitFor("every packet in the log or dropped", () => accounted() === sent || undefined, 10_000);
  const dir = join(de.path, "forward");
  const onDisk = readdirSync(dir)
    .filter((f) => f.endsWith(".seg"))
    .reduce((a, f) => a + statSync(join(dir, f)).size, 0);
  expect(onDisk).toBeLessThanOrEqual(cap);
  // The edge keeps its own rows whatever the log dropped.
  await waitFor("every row on the edge", async () => (await callRows(e, "bc")).n >= sent || undefined, 10_000);
});

test("ingest.mirror copies every accepted packet to a UDP and a TCP collector, unchanged", async () => {
  await using de = tempDir("svc-mirror-");
  const udpGot: Uint8Array[] = [];
  const udp = await Bun.udpSocket({
    hostname: "127.0.0.1",
    port: 0,
    socket: { data: (_s, buf) => void udpGot.push(new Uint8Array(buf)) },
  });
  let tcpBytes = Buffer.alloc(0);
  let connected = false;
  const tcp = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open: () => void (connected = true),
      data: (_s, buf) => void (tcpBytes = Buffer.concat([tcpBytes, buf])),
    },
  });
  try {
    await using e = await startTestAppliance(de.path, {
      ingest: { mirror: { destinations: [`udp://127.0.0.1:${udp.port}`, `tcp://127.0.0.1:${tcp.port}`] } },
    });
    const sentPackets: Uint8Array[] = [];
    for (let i = 0; i < 50; i++) sentPackets.push(forwardPacket(`mi-${i}`, i));
    await waitFor("the TCP mirror connected", () => connected || undefined);
    const res = await fetch(`${e.app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(sentPackets) });
    expect(res.status).toBe(202);
    const whole = Buffer.concat(sentPackets);
    await waitFor(
      "both collectors have every packet",
      () => (udpGot.length >= 50 && tcpBytes.length >= whole.length) || undefined,
      10_000,
    );
    expect(Buffer.concat(udpGot).equals(whole)).toBe(true);
    expect(tcpBytes.equals(whole)).toBe(true);
    expect(e.app.metrics.sumOf("svc_mirror_sent_total")).toBe(100);
  } finally {
    udp.close();
    tcp.stop(true);
  }
});
