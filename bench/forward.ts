/**
 * Store-and-forward figures (docs/BENCHMARKS.md "Store-and-forward"): an edge in this process, the
 * central as a child process (`svc serve`), the link through a TCP proxy on loopback.
 *
 *   bun bench/forward.ts [--backlog 50000] [--rate 2000] [--seconds 10]
 *
 * 1. catch-up: the link cut, `backlog` INVITEs accepted by the edge (HEP over HTTP), the link
 *    restored; packets per second until the edge's log is acknowledged to its end.
 * 2. steady: `rate` packets/s over UDP for `seconds`, once without and once with forwarding; the
 *    edge process's CPU seconds per second (the central's CPU is in its own process) and the lag.
 * 4. catch-up beside live capture: the link cut, `backlog` packets waiting, the link restored while
 *    `rate` packets/s arrive over UDP for `seconds`: how fast the waiting packets go, and whether
 *    the edge still received every live datagram (its counters and the kernel's drops).
 * 3. found on the central: with the link up, `probes` INVITEs one after the other, each sent to
 *    the edge and then searched by its Call-ID through the central's coordinator API until found
 *    (polled every 20 ms, the figure's resolution).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sha256Hex } from "../src/auth/index.ts";
import { createLogger } from "../src/core/index.ts";
import { startAppliance, type RunningApp } from "../src/main.ts";
import { testConfig, testConfigJson } from "../test/appliance.ts";
import { waitFor } from "../test/harness.ts";
import { forwardPacket } from "../test/peers/forward-packet.ts";
import { TcpProxy } from "../test/peers/tcp-proxy.ts";
import { startChildAppliance } from "./child-appliance.ts";

const { values } = parseArgs({
  options: {
    backlog: { type: "string", default: "50000" },
    rate: { type: "string", default: "2000" },
    seconds: { type: "string", default: "10" },
    probes: { type: "string", default: "20" },
  },
});
const PROBES = Number(values.probes);
const PASSWORD = "bench-forward-admin-password";
const BACKLOG = Number(values.backlog);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const TOKEN = "bench-forward-token-0123456789abcdef";

/** Waits for `cond`, polled every 5 ms: the catch-up time is read from when it turns true. */
const until = (what: string, cond: () => boolean, timeoutMs: number) =>
  waitFor(what, () => cond() || undefined, timeoutMs, 5);

const root = mkdtempSync(join(tmpdir(), "svc-bench-forward-"));
const cfgPath = join(root, "central.json");
const centralDir = join(root, "central");
writeFileSync(
  cfgPath,
  JSON.stringify(
    testConfigJson(centralDir, {
      node: { http_server: { token: TOKEN } },
      coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
      log: { level: "info", format: "json" },
    }),
  ),
);
const central = await startChildAppliance(cfgPath, ["node-http", "coordinator-http"]);
const proxy = new TcpProxy(central.port("node-http")).start();

async function edge(name: string, forward: boolean): Promise<RunningApp> {
  const dir = join(root, name);
  return await startAppliance(
    testConfig(
      dir,
      forward ? { ingest: { forward: { enable: true, url: `http://127.0.0.1:${proxy.port}`, token: TOKEN } } } : {},
    ),
    createLogger({ test: true }),
  );
}

async function sendHttp(app: RunningApp, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const parts: Uint8Array[] = [];
    for (let k = i; k < Math.min(n, i + 1000); k++) parts.push(forwardPacket(`${prefix}-${k}`, k));
    const res = await fetch(`${app.nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.concat(parts) });
    if (res.status !== 202) throw new Error(`edge answered ${res.status}`);
  }
}

/** `RATE` packets/s over UDP for `SECONDS`; the edge process's CPU share over that time. */
async function steady(app: RunningApp, prefix: string): Promise<{ cpu: number; maxLag: number; sent: number }> {
  const sock = await Bun.udpSocket({});
  const port = app.ingest!.listeners.udp!.port();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let sent = 0;
  let maxLag = 0;
  while (performance.now() - t0 < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - t0) / 1000) * RATE);
    for (; sent < due; sent++) sock.send(forwardPacket(`${prefix}-${sent}`, sent), port, "127.0.0.1");
    maxLag = Math.max(maxLag, app.relay?.health()?.lagSec ?? 0);
    // The sender's clock: packets go out at RATE per second, a slice every 2 ms (a bench, not a wait).
    await Bun.sleep(2);
  }
  const used = process.cpuUsage(cpu0);
  const wall = (performance.now() - t0) / 1000;
  sock.close();
  return { cpu: (used.user + used.system) / 1e6 / wall, maxLag, sent };
}

/** Milliseconds from the edge's 202 until the central's coordinator finds the Call-ID, per probe. */
async function foundOnCentral(app: RunningApp): Promise<number[]> {
  const base = `http://127.0.0.1:${central.port("coordinator-http")}/api/v4`;
  const login = await fetch(`${base}/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const found = async (callId: string, fromMs: number): Promise<boolean> => {
    const body = {
      param: { limit: 1 },
      timestamp: { from: fromMs - 60_000, to: Date.now() + 60_000 },
      filter: { proto_type: 1, event_type: "call", call_id: callId },
    };
    const r = await fetch(`${base}/transactions/search`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return r.status === 200 && ((await r.json()) as { data: { items: unknown[] } }).data.items.length > 0;
  };
  const ms: number[] = [];
  for (let i = 0; i < PROBES; i++) {
    const callId = `probe-${i}-${crypto.randomUUID()}`;
    const at = Date.now();
    const res = await fetch(`${app.nodeUrl}/api/v1/hep`, {
      method: "POST",
      body: Buffer.from(forwardPacket(callId, i)),
    });
    if (res.status !== 202) throw new Error(`edge answered ${res.status}`);
    const t0 = performance.now();
    await waitFor(`probe ${i} on the central`, async () => (await found(callId, at)) || undefined, 60_000, 20);
    ms.push(performance.now() - t0);
  }
  return ms;
}

try {
  const a = await edge("edge-catchup", true);
  proxy.cut();
  const t0 = performance.now();
  await sendHttp(a, "cu", BACKLOG);
  const fillSec = (performance.now() - t0) / 1000;
  await until("the backlog built up", () => (a.relay!.health()?.backlogPackets ?? 0) >= BACKLOG, 60_000);
  const backlogBytes = a.relay!.health()!.backlogBytes;
  proxy.restore();
  const t1 = performance.now();
  // The sender is in its back-off (up to 30 s after a long outage): the rate counts from its first acknowledged batch.
  const sent = () => a.metrics.sumOf("svc_forward_sent_packets_total");
  await until("the first acknowledged batch", () => sent() > 0, 60_000);
  const t2 = performance.now();
  const first = sent();
  await until("the backlog sent", () => a.relay!.health()?.backlogPackets === 0, 600_000);
  const catchSec = (performance.now() - t2) / 1000;
  await a.stop();
  console.log(
    `catch-up: ${BACKLOG} packets (${(backlogBytes / 1e6).toFixed(1)} MB log) accepted in ${fillSec.toFixed(1)} s; first batch acknowledged ${((t2 - t1) / 1000).toFixed(1)} s after the link came back (back-off), the other ${BACKLOG - first} packets in ${catchSec.toFixed(1)} s = ${Math.round((BACKLOG - first) / catchSec)} packets/s`,
  );

  const off = await edge("edge-off", false);
  const base = await steady(off, "off");
  await off.stop();
  const on = await edge("edge-on", true);
  const fwd = await steady(on, "on");
  await until("the log sent", () => on.relay!.health()?.backlogPackets === 0, 60_000);
  const probes = (await foundOnCentral(on)).sort((x, y) => x - y);
  await on.stop();

  const lv = await edge("edge-live", true);
  proxy.cut();
  await sendHttp(lv, "lw", BACKLOG);
  await until("the backlog built up", () => (lv.relay!.health()?.backlogPackets ?? 0) >= BACKLOG, 60_000);
  const sentBefore = lv.metrics.sumOf("svc_forward_sent_packets_total");
  proxy.restore();
  const t3 = performance.now();
  const live = steady(lv, "live");
  const liveSent = () => lv.metrics.sumOf("svc_forward_sent_packets_total") - sentBefore;
  await until("the first acknowledged batch", () => liveSent() > 0, 600_000);
  const t4 = performance.now();
  const firstLive = liveSent();
  await until("the waiting packets sent", () => liveSent() >= BACKLOG, 600_000);
  const caughtUpSec = (performance.now() - t3) / 1000;
  const afterFirstSec = (performance.now() - t4) / 1000;
  const liveRun = await live;
  // Received counts the backlog's HEP-over-HTTP packets too.
  const udpReceived = () => lv.metrics.sumOf("svc_hep_packets_received_total") - BACKLOG;
  await until("every live packet counted", () => udpReceived() >= liveRun.sent, 10_000).catch(() => undefined);
  const liveReceived = udpReceived();
  const kernelDrops = lv.metrics.sumOf("svc_hep_udp_kernel_drops_total");
  await lv.stop();
  console.log(
    `steady ${RATE} packets/s over UDP for ${SECONDS} s: edge CPU ${(base.cpu * 100).toFixed(1)} % of a core without forwarding, ${(fwd.cpu * 100).toFixed(1)} % with (+${((fwd.cpu - base.cpu) * 100).toFixed(1)} points); max lag ${fwd.maxLag.toFixed(2)} s`,
  );
  const at = (q: number) => Math.round(probes[Math.min(probes.length - 1, Math.floor(q * probes.length))]!);
  console.log(
    `found on the central's coordinator after the edge's 202 (${probes.length} probes): p50 ${at(0.5)} ms, max ${at(1)} ms`,
  );
  console.log(
    `catch-up beside live capture at ${RATE}/s: ${BACKLOG} waiting packets sent in ${caughtUpSec.toFixed(1)} s after the link came back, the first batch acknowledged after ${(caughtUpSec - afterFirstSec).toFixed(1)} s (back-off), then ${Math.round((BACKLOG - firstLive) / afterFirstSec)} packets/s; live datagrams received ${liveReceived} of ${liveRun.sent}, kernel drops ${kernelDrops}`,
  );
} finally {
  proxy.stop();
  central.child.kill("SIGTERM");
  await central.child.exited;
  rmSync(root, { recursive: true, force: true });
}
