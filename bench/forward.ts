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
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createLogger } from "../src/core/index.ts";
import { startAppliance, type RunningApp } from "../src/main.ts";
import { testConfig, testConfigJson } from "../test/appliance.ts";
import { waitFor } from "../test/harness.ts";
import { forwardPacket } from "../test/peers/forward-packet.ts";
import { TcpProxy } from "../test/peers/tcp-proxy.ts";
import { startChildAppliance } from "./child-appliance.ts";

const { values } = parseArgs({ options: { backlog: { type: "string", default: "50000" }, rate: { type: "string", default: "2000" }, seconds: { type: "string", default: "10" } } });
const BACKLOG = Number(values.backlog);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const TOKEN = "bench-forward-token-0123456789abcdef";

/** Waits for `cond`, polled every 5 ms: the catch-up time is read from when it turns true. */
const until = (what: string, cond: () => boolean, timeoutMs: number) => waitFor(what, () => cond() || undefined, timeoutMs, 5);

const root = mkdtempSync(join(tmpdir(), "svc-bench-forward-"));
const cfgPath = join(root, "central.json");
const centralDir = join(root, "central");
writeFileSync(cfgPath, JSON.stringify(testConfigJson(centralDir, { node: { http_server: { token: TOKEN } }, log: { level: "info", format: "json" } })));
const central = await startChildAppliance(cfgPath, ["node-http"]);
const proxy = new TcpProxy(central.port("node-http")).start();

async function edge(name: string, forward: boolean): Promise<RunningApp> {
  const dir = join(root, name);
  return await startAppliance(testConfig(dir, forward ? { ingest: { forward: { enable: true, url: `http://127.0.0.1:${proxy.port}`, token: TOKEN } } } : {}), createLogger({ test: true }));
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
async function steady(app: RunningApp, prefix: string): Promise<{ cpu: number; maxLag: number }> {
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
  return { cpu: (used.user + used.system) / 1e6 / wall, maxLag };
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
  await on.stop();
  console.log(
    `steady ${RATE} packets/s over UDP for ${SECONDS} s: edge CPU ${(base.cpu * 100).toFixed(1)} % of a core without forwarding, ${(fwd.cpu * 100).toFixed(1)} % with (+${((fwd.cpu - base.cpu) * 100).toFixed(1)} points); max lag ${fwd.maxLag.toFixed(2)} s`,
  );
} finally {
  proxy.stop();
  central.child.kill("SIGTERM");
  await central.child.exited;
  rmSync(root, { recursive: true, force: true });
}
