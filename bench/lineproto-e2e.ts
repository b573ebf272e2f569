/**
 * Line-protocol end-to-end benchmark (docs/BENCHMARKS.md "Line protocol: end to end"): the real appliance as a child process, the official
 * npm client (`@influxdata/influxdb-client`, v2 API, gzip) in this process writing telegraf-like
 * points at a target rate, then: points/s acknowledged (204), points/s until searchable (every
 * point counted through POST /api/v4/query), and the visibility latency of probe points written
 * every 250 ms (204 → found by the search API with proto 300).
 *   bun bench/lineproto-e2e.ts --rate 100000 --seconds 20 --batch 5000 --writers 4 [--gzip 0]
 * --rate 0 writes as fast as the writers can; --gzip 0 sends plain bodies. Prints one JSON line.
 */
import { InfluxDB, setLogger } from "@influxdata/influxdb-client";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../src/auth/index.ts";
import { testConfigJson } from "../test/appliance.ts";
import { startChildAppliance } from "./child-appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const rate = Number(args.get("rate") ?? "50000");
const seconds = Number(args.get("seconds") ?? "10");
const batch = Number(args.get("batch") ?? "5000");
const writers = Number(args.get("writers") ?? "4");
const gzip = (args.get("gzip") ?? "1") !== "0";
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-lp-bench-"));
const PASSWORD = "lp-bench-password";
setLogger({ error: (m: string) => console.error(m), warn: () => {} });

const cfgPath = join(dir, "svc.json");
const cfg = testConfigJson(dir, {
  log: { level: "info" },
  coordinator: { auth: { admin_password_hash: sha256Hex(PASSWORD) } },
  ingest: { line_protocol: { enable: true, listen: "127.0.0.1:0" } },
  storage: { lakehouse: { flush_interval_sec: 10, tuning: { threads: 2, memory_limit: "2GB" } } },
});
await Bun.write(cfgPath, JSON.stringify(cfg));

// --- the appliance, ports from its "listening" log lines ---------------------------------------
const { child, errorLines, port } = await startChildAppliance(cfgPath, ["lineproto-receiver", "coordinator-http"]);
const lpUrl = `http://127.0.0.1:${port("lineproto-receiver")}`;
const api = `http://127.0.0.1:${port("coordinator-http")}/api/v4`;
const login = await fetch(`${api}/auth/sessions`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ username: "admin", password: PASSWORD }),
});
const token = ((await login.json()) as { token: string }).token;
const call = async (path: string, body: unknown) =>
  (await (
    await fetch(`${api}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    })
  ).json()) as {
    data: { rows?: Array<Record<string, unknown>>; items?: unknown[] };
  };

// --- telegraf-like points ------------------------------------------------------------------------
let seq = 0;
function lines(n: number, nowMs: number): string[] {
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const k = seq++;
    const host = `web-${k % 50}`;
    const ns = `${nowMs}${String(k % 1_000_000).padStart(6, "0")}`;
    switch (k % 3) {
      case 0:
        out[i] =
          `cpu,cpu=cpu${k % 8},host=${host},dc=eu-west-1 usage_user=${(k % 1000) / 10},usage_system=${(k % 333) / 10},usage_idle=${(k % 777) / 10},usage_iowait=0.25,usage_steal=0 ${ns}`;
        break;
      case 1:
        out[i] =
          `mem,host=${host},dc=eu-west-1 total=${17179869184 + k}i,available=${k * 4096}i,used=${k * 1024}i,used_percent=${(k % 100) + 0.5} ${ns}`;
        break;
      default:
        out[i] =
          `disk,device=nvme0n1p${k % 4},fstype=ext4,host=${host},path=/var/lib/data free=${k * 8192}i,total=1099511627776i,used_percent=${(k % 97) + 0.25},inodes_free=${k}i ${ns}`;
    }
  }
  return out;
}

// --- visibility probes: 204 → found by the search API (proto 300) ----------------------------------
const latencies: number[] = [];
let probing = true;
const probeLoop = (async () => {
  let n = 0;
  while (probing) {
    const id = `q${n++}z`;
    const nowMs = Date.now();
    let r = await fetch(`${lpUrl}/api/v2/write?bucket=bench&org=o&precision=ms`, {
      method: "POST",
      body: `probe,id=${id} v=1 ${nowMs}`,
    });
    // 503 = the lake's buffer is full (back-pressure): retry after Retry-After like a client would.
    while (r.status === 503) {
      await Bun.sleep(Number(r.headers.get("retry-after") ?? "1") * 1000);
      r = await fetch(`${lpUrl}/api/v2/write?bucket=bench&org=o&precision=ms`, {
        method: "POST",
        body: `probe,id=${id} v=1 ${nowMs}`,
      });
    }
    const acked = performance.now();
    if (r.status !== 204) throw new Error(`probe write: ${r.status} ${await r.text()}`);
    for (;;) {
      const s = await call("/transactions/search", {
        filter: { proto_type: 300, event_type: "bench__probe", payload: id },
        param: { limit: 1 },
        timestamp: { from: nowMs - 1000, to: nowMs + 1000 },
      });
      if ((s.data.items?.length ?? 0) > 0) break;
      await Bun.sleep(5);
    }
    latencies.push(performance.now() - acked);
    await Bun.sleep(250);
  }
})();

// --- the write load ---------------------------------------------------------------------------------
const influx = new InfluxDB({ url: lpUrl, token: "ignored", timeout: 60_000 });
const cpuTicks = async () => {
  const f = (await Bun.file(`/proc/${child.pid}/stat`).text()).split(") ")[1]!.split(" ");
  return Number(f[11]) + Number(f[12]);
};
let peakRss = 0;
const rssTimer = setInterval(async () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(
    await Bun.file(`/proc/${child.pid}/status`)
      .text()
      .catch(() => ""),
  );
  if (m) peakRss = Math.max(peakRss, Number(m[1]) * 1024);
}, 250);
const cpu0 = await cpuTicks();
const t0 = performance.now();
const endAt = t0 + seconds * 1000;
let acked = 0;
let failed = 0;
await Promise.all(
  Array.from({ length: writers }, async () => {
    const w = influx.getWriteApi("o", "bench", "ns", {
      batchSize: batch + 1,
      flushInterval: 0,
      gzipThreshold: gzip ? 0 : Number.MAX_SAFE_INTEGER,
      maxRetries: 10,
      minRetryDelay: 200,
      maxRetryDelay: 2000,
    });
    for (;;) {
      const now = performance.now();
      if (now >= endAt) break;
      if (rate > 0 && acked >= (rate * (now - t0)) / 1000) {
        await Bun.sleep(2);
        continue;
      }
      w.writeRecords(lines(batch, Date.now()));
      try {
        await w.flush();
        acked += batch;
      } catch (e) {
        failed += batch;
        console.error(String(e));
      }
    }
    await w.close();
  }),
);
const writeSeconds = (performance.now() - t0) / 1000;
if (args.has("verbose")) console.error("write phase done", { acked, failed, writeSeconds });
const total = acked;
// Everything acknowledged is counted through SQL; the clock stops when the last point is visible.
const countSql = `SELECT (SELECT count(*) FROM svc_lake.bench.cpu) + (SELECT count(*) FROM svc_lake.bench.mem) + (SELECT count(*) FROM svc_lake.bench.disk) AS n`;
// Points a client gave up on after retries may still arrive through its retry buffer: the count
// stops when it reaches what was acknowledged or stays the same for 2 s.
let visible = 0;
let searchableSeconds = 0;
for (let lastChange = performance.now(); visible < total && performance.now() - lastChange < 2000; ) {
  const n = Number((await call("/query", { sql: countSql })).data.rows?.[0]?.n ?? 0);
  if (n !== visible) {
    visible = n;
    lastChange = performance.now();
    searchableSeconds = (lastChange - t0) / 1000;
  }
  if (visible < total) await Bun.sleep(20);
}
const cpuSeconds = ((await cpuTicks()) - cpu0) / 100;
probing = false;
await probeLoop;
clearInterval(rssTimer);
child.kill("SIGTERM");
const exit = await child.exited;

const sorted = [...latencies].sort((a, b) => a - b);
const pct = (p: number) =>
  Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN);
console.log(
  JSON.stringify({
    target_rate: rate,
    seconds,
    batch,
    writers,
    gzip,
    points_acked: total,
    points_visible: visible,
    points_failed: failed,
    acked_points_per_s: Math.round(total / writeSeconds),
    searchable_points_per_s: Math.round(visible / searchableSeconds),
    last_point_visible_after_write_phase_ms: Math.round((searchableSeconds - writeSeconds) * 1000),
    probe_visibility_ms: { n: sorted.length, p50: pct(50), p99: pct(99), max: Math.round(sorted.at(-1) ?? NaN) },
    appliance_cpu_seconds: cpuSeconds,
    appliance_cores_busy: Math.round((cpuSeconds / searchableSeconds) * 100) / 100,
    peak_rss_mb: Math.round(peakRss / 1048576),
    error_log_lines: errorLines.length,
    exit_code: exit,
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    bun: Bun.version,
  }),
);
if (!args.has("keep")) rmSync(dir, { recursive: true, force: true });
