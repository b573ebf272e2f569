/**
 * Store-and-forward over a kill -9 of the central (docs/DEPLOY.md "Forward protocol"): the central
 * runs as a child process (`svc serve`, test/peers/svc-child.ts) behind a TCP proxy, the edge in this process.
 * The central is killed with SIGKILL while batches flow, the edge keeps accepting, the central
 * starts again on the same directories (the proxy follows it to its new port) and the edge catches
 * it up. Afterwards the central holds every Call-ID the edge holds, each exactly as often.
 */
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestAppliance, testConfigJson, type TestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { TcpProxy } from "../peers/tcp-proxy.ts";
import { forwardPacket } from "../peers/forward-packet.ts";
import { spawnSvc } from "../peers/svc-child.ts";

const TOKEN = "forward-kill9-central-token-0123456789";
const CALL = "svc_lake.main.hep_proto_1_call";

/** `svc serve` as a child (test/peers/svc-child.ts) on `dir` with `overrides`: its node port and URLs. */
async function spawnFrom(dir: string, overrides: Record<string, unknown>) {
  const cfgPath = join(dir, "config.json");
  writeFileSync(cfgPath, JSON.stringify(testConfigJson(dir, overrides)));
  const child = await spawnSvc("svc", cfgPath);
  return {
    proc: child.proc,
    port: child.port("node-http"),
    node: `http://${child.addr.get("node-http")}`,
    metrics: `http://${child.addr.get("coordinator-http")}/metrics`,
  };
}

/**
 * The central as a child behind a TCP proxy (the edge's forward URL), which follows it to its new
 * port when it starts again on the same directories after a kill -9.
 */
async function proxiedCentral(dir: string, overrides: Record<string, unknown>) {
  let central = await spawnFrom(dir, overrides);
  const proxy = new TcpProxy(central.port).start();
  return {
    url: `http://127.0.0.1:${proxy.port}`,
    /** What the running central committed of `sender`'s log (of `kind`'s, when given). */
    async committed(sender: string, kind?: string): Promise<number> {
      const r = await fetch(`${central.node}/api/v1/forward?sender=${sender}${kind ? `&kind=${kind}` : ""}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      return ((await r.json()) as { committed: number }).committed;
    },
    async kill9() {
      central.proc.kill("SIGKILL");
      expect(await central.proc.exited).not.toBe(0);
    },
    async restart() {
      central = await spawnFrom(dir, overrides);
      proxy.retarget(central.port);
    },
    async stop() {
      central.proc.kill("SIGTERM");
      expect(await central.proc.exited).toBe(0);
    },
    [Symbol.dispose]() {
      proxy.stop();
      if (central.proc.exitCode === null) central.proc.kill("SIGKILL");
    },
  };
}

async function sendToEdge(edge: TestAppliance | string, from: number, n: number): Promise<void> {
  const parts: Uint8Array[] = [];
  for (let i = from; i < from + n; i++) parts.push(forwardPacket(`k9-${i}`, i));
  const res = await fetch(`${typeof edge === "string" ? edge : edge.app.nodeUrl}/api/v1/hep`, {
    method: "POST",
    body: Buffer.concat(parts),
  });
  expect(res.status).toBe(202);
}

async function calls(a: TestAppliance): Promise<{ n: number; uuids: number; byCall: Map<string, number> }> {
  const r = await a.app.lake!.query(
    `SELECT session_id AS c, epoch_us("timestamp") AS t, count(DISTINCT uuid) OVER () AS u FROM ${CALL} WHERE session_id LIKE 'k9-%'`,
  );
  const byCall = new Map<string, number>();
  for (const row of r.rows) byCall.set(`${row.c}@${row.t}`, (byCall.get(`${row.c}@${row.t}`) ?? 0) + 1);
  return { n: r.rows.length, uuids: Number(r.rows[0]?.u ?? 0), byCall };
}

/**
 * Both lakes read in this process (the central's directories with its configuration): each holds
 * the `total` calls the edge took, the central each exactly as often as the edge.
 */
async function expectEdgeCallsOnCentral(
  centralDir: string,
  edgeDir: string,
  centralOverrides: Record<string, unknown>,
  total: number,
): Promise<void> {
  await using c = await startTestAppliance(centralDir, { ...centralOverrides, log: { level: "error" } });
  await using e = await startTestAppliance(edgeDir);
  const [onEdge, onCentral] = [await calls(e), await calls(c)];
  expect(onEdge.n).toBe(total);
  expect(onCentral.n).toBe(total);
  expect(onCentral.uuids).toBe(total);
  expect(onCentral.byCall).toEqual(onEdge.byCall);
}

test("kill -9 of the central mid-stream: after its restart it holds the edge's calls, each once", async () => {
  await using dc = tempDir("svc-fwd-k9-central-");
  await using de = tempDir("svc-fwd-k9-edge-");
  const centralOverrides = {
    node: { http_server: { token: TOKEN } },
    log: { level: "info" },
    storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
  };
  let total = 0;
  {
    using central = await proxiedCentral(dc.path, centralOverrides);
    {
      await using edge = await startTestAppliance(de.path, {
        ingest: { forward: { enable: true, url: central.url, token: TOKEN, timeout_sec: 1, batch_packets: 200 } },
      });
      const sent = () => edge.app.metrics.sumOf("svc_forward_sent_packets_total");
      for (; total < 1500; total += 300) await sendToEdge(edge, total, 300);
      // Mid-stream: some batches acknowledged, others still to go.
      await waitFor("batches flowing", () => sent() > 0 || undefined, 15_000, 1);
      await central.kill9();
      const before = sent();
      expect(before).toBeLessThan(total + 1);
      for (; total < 3000; total += 300) await sendToEdge(edge, total, 300);
      await central.restart();
      await waitFor(
        "the edge's log acknowledged up to its last packet",
        () => edge.app.relay?.health()?.backlogPackets === 0 || undefined,
        60_000,
      );
    }
    await central.stop();
  }
  await expectEdgeCallsOnCentral(dc.path, de.path, centralOverrides, total);
}, 90_000);

test("kill -9 of the edge mid-stream: after its restart the central holds every call of the edge, each once", async () => {
  await using dc = tempDir("svc-fwd-k9e-central-");
  await using de = tempDir("svc-fwd-k9e-edge-");
  await using c = await startTestAppliance(dc.path, { node: { http_server: { token: TOKEN } } });
  const edgeOverrides = {
    ingest: { forward: { enable: true, url: c.app.nodeUrl!, token: TOKEN, timeout_sec: 1, batch_packets: 200 } },
    log: { level: "info" },
    storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000 } },
  };
  const gauge = async (url: string, name: string) => {
    const line = (await (await fetch(url)).text()).split("\n").find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) : Number.NaN;
  };
  let edge = await spawnFrom(de.path, edgeOverrides);
  let total = 0;
  try {
    for (; total < 1500; total += 300) await sendToEdge(edge.node, total, 300);
    const received = () => c.app.metrics.sumOf("svc_forward_received_packets_total");
    await waitFor("batches flowing", () => received() > 0 || undefined, 15_000, 1);
    // Every packet sent so far is in the edge's forward log (acknowledged or waiting): HEP is fire
    // and forget, and on a loaded machine more than one 300-packet POST can still wait for the
    // ingest thread's hand-over; the kill then lands in the middle of the forwarding only.
    const logged = async () =>
      (await gauge(edge.metrics, "svc_forward_sent_packets_total")) +
      (await gauge(edge.metrics, "svc_forward_backlog_packets"));
    await waitFor(
      "the first 1500 in the edge's forward log",
      async () => (await logged()) >= total || undefined,
      15_000,
      1,
    );
    edge.proc.kill("SIGKILL");
    expect(await edge.proc.exited).not.toBe(0);
    edge = await spawnFrom(de.path, edgeOverrides);
    for (; total < 3000; total += 300) await sendToEdge(edge.node, total, 300);
    await waitFor(
      "the restarted edge's log acknowledged",
      async () => (await gauge(edge.metrics, "svc_forward_backlog_packets")) === 0 || undefined,
      60_000,
    );
    edge.proc.kill("SIGTERM");
    expect(await edge.proc.exited).toBe(0);
  } finally {
    if (edge.proc.exitCode === null) edge.proc.kill("SIGKILL");
  }
  // In this process on the same directories: the stop's last hand-over may still wait in the log.
  await using e = await startTestAppliance(de.path, { ...edgeOverrides, log: { level: "error" } });
  await waitFor(
    "the edge's log acknowledged to its end",
    () => e.app.relay!.health()?.backlogPackets === 0 || undefined,
    15_000,
  );
  await c.app.lake!.sync();
  const onEdge = await calls(e);
  // An empty backlog means the central holds every packet; held rows become visible at its next
  // commit (flush_interval_sec, docs/DEPLOY.md "Forward protocol"), so wait for that commit.
  const onCentral = await waitFor(
    "the central's commit of the edge's last batch",
    async () => {
      const x = await calls(c);
      return [...onEdge.byCall.keys()].every((k) => x.byCall.has(k)) ? x : undefined;
    },
    15_000,
  ).catch(() => calls(c));
  // The forward log is appended in the same step that hands the rows to the spool: what the kill
  // cut off is missing on both sides alike, or (rows still being written) only on the edge.
  expect(onCentral.uuids).toBe(onCentral.n);
  expect([...onCentral.byCall.values()].every((n) => n === 1)).toBe(true);
  for (const [k, n] of onEdge.byCall) expect({ k, n: onCentral.byCall.get(k) }).toEqual({ k, n });
  expect(onCentral.n).toBeGreaterThanOrEqual(total - 300);
}, 150_000);

test("kill -9 of the central at many points while it commits: the committed mark forward:<sender> keeps every call exactly once", async () => {
  await using dc = tempDir("svc-fwd-k9m-central-");
  await using de = tempDir("svc-fwd-k9m-edge-");
  // Group commits every 0.2 s or 300 rows: kills land before, during and after them.
  const centralOverrides = {
    node: { http_server: { token: TOKEN } },
    log: { level: "info" },
    storage: { lakehouse: { flush_interval_sec: 0.2, batch_size: 300 } },
  };
  let total = 0;
  const KILLS = 8;
  {
    using central = await proxiedCentral(dc.path, centralOverrides);
    {
      await using edge = await startTestAppliance(de.path, {
        ingest: { forward: { enable: true, url: central.url, token: TOKEN, timeout_sec: 1, batch_packets: 50 } },
      });
      const sent = () => edge.app.metrics.sumOf("svc_forward_sent_packets_total");
      for (let k = 0; k < KILLS; k++) {
        const base = sent();
        for (let i = 0; i < 2; i++, total += 300) await sendToEdge(edge, total, 300);
        // A different point of the stream each time: after 0, 50, 100 … packets of this round.
        const target = base + (k % 6) * 50;
        await waitFor("the round's packets flowing", () => sent() >= target || undefined, 30_000, 1);
        await central.kill9();
        await central.restart();
      }
      const sender = edge.app.relay!.senderId()!;
      // Every packet held and committed: the edge's idle question sees the last commit too.
      await waitFor(
        "the central committed every packet",
        async () => (await central.committed(sender)) === total || undefined,
        60_000,
      );
      await waitFor(
        "the edge's log acknowledged up to its last packet",
        () => edge.app.relay?.health()?.backlogPackets === 0 || undefined,
        30_000,
      );
    }
    await central.stop();
  }
  await expectEdgeCallsOnCentral(dc.path, de.path, centralOverrides, total);
  // No position file beside the spool: the catalog's mark is the position.
  expect(existsSync(join(dc.path, "forward-in"))).toBe(false);
}, 240_000);

test("kill -9 of the central while it takes forwarded line-protocol requests: every point exactly once", async () => {
  await using dc = tempDir("svc-fwd-k9lp-central-");
  await using de = tempDir("svc-fwd-k9lp-edge-");
  const centralOverrides = {
    node: { http_server: { token: TOKEN } },
    log: { level: "info" },
    storage: { lakehouse: { flush_interval_sec: 0.2, batch_size: 200 } },
  };
  let requests = 0;
  const write = async (url: string, n: number) => {
    for (let r = 0; r < n; r++, requests++) {
      const lines = Array.from(
        { length: 20 },
        (_, i) => `k9,req=r${requests} n=${i}i ${1_790_000_000_000_000_000n + BigInt(requests * 20 + i)}`,
      );
      const res = await fetch(`${url}/write?db=k9lp&precision=ns`, { method: "POST", body: lines.join("\n") });
      expect(res.status).toBe(204);
    }
  };
  {
    using central = await proxiedCentral(dc.path, centralOverrides);
    {
      await using edge = await startTestAppliance(de.path, {
        ingest: {
          line_protocol: { enable: true },
          forward: { enable: true, url: central.url, token: TOKEN, timeout_sec: 1, batch_packets: 5 },
        },
      });
      const sent = () => edge.app.metrics.sumOf("svc_forward_sent_packets_total");
      for (let k = 0; k < 3; k++) {
        const base = sent();
        await write(edge.app.lineProtocol!.url(), 40);
        await waitFor("the round's requests flowing", () => sent() >= base + k * 10 || undefined, 30_000, 1);
        await central.kill9();
        await central.restart();
      }
      const sender = edge.app.relay!.senderId()!;
      await waitFor(
        "the central committed every request",
        async () => (await central.committed(sender, "line_protocol")) === requests || undefined,
        60_000,
      );
    }
    await central.stop();
  }
  await using c = await startTestAppliance(dc.path, { ...centralOverrides, log: { level: "error" } });
  const r = await c.app.lake!.query("SELECT count(*) AS n, count(DISTINCT (req, n)) AS d FROM svc_lake.k9lp.k9");
  expect({ n: Number(r.rows[0]!.n), distinct: Number(r.rows[0]!.d) }).toEqual({
    n: requests * 20,
    distinct: requests * 20,
  });
}, 180_000);
