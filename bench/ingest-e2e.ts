/**
 * End-to-end ingest benchmark (docs/BENCHMARKS.md "Ingest: end to end"): the real appliance as a child process, a sender process
 * on the same machine, N seconds at a fixed rate; then every row is counted in the lake.
 *   bun bench/ingest-e2e.ts --rate 50000 --seconds 60 --transport udp [--threads N] [--sources K] [--profile /tmp/prof] [--log-level debug --log /tmp/app.log] [--batch-size N] [--spool-format csv|parquet]
 * Reports: sent, stored, loss %, bytes on disk per message, peak RSS, visibility latency.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join } from "node:path";
import { testConfigJson } from "../test/appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const rate = Number(args.get("rate") ?? "20000");
const seconds = Number(args.get("seconds") ?? "10");
const transport = args.get("transport") ?? "udp";
// --sources K: the sender's UDP source ports (K agents); --threads N: ingest.hep.threads (default auto).
const sources = Number(args.get("sources") ?? "1");
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-bench-"));
const cfgPath = join(dir, "svc.json");
const PASSWORD = "bench-password";
await Bun.write(
  cfgPath,
  JSON.stringify(
    testConfigJson(dir, {
      coordinator: { auth: { admin_password_hash: new Bun.CryptoHasher("sha256").update(PASSWORD).digest("hex") } },
      log: { level: args.get("log-level") ?? "info" },
      // --batch-size N: storage.lakehouse.batch_size (rows per table before a flush; default the config's).
      storage: {
        lakehouse: {
          flush_interval_sec: 5,
          ...(args.has("batch-size") ? { batch_size: Number(args.get("batch-size")) } : {}),
          // --spool-format csv|parquet: storage.lakehouse.spool_format (docs/STORAGE.md "Parquet written by svc").
          ...(args.has("spool-format") ? { spool_format: args.get("spool-format") } : {}),
          tuning: { threads: 2, memory_limit: "2GB" },
        },
      },
      ingest: {
        hep: {
          udp: { socket_buffer_bytes: 67108864 },
          ...(args.has("threads") ? { threads: Number(args.get("threads")) } : {}),
        },
      },
    }),
  ),
);

// --profile DIR: the appliance writes a JS CPU profile (markdown) there when it exits.
const profile = args.get("profile");
const child = Bun.spawn(
  [
    process.execPath,
    ...(profile ? ["--cpu-prof-md", `--cpu-prof-dir=${profile}`] : []),
    "src/main.ts",
    "serve",
    "--config-path",
    cfgPath,
  ],
  {
    stderr: "pipe",
    stdout: "inherit",
  },
);
const ports: Record<string, number> = {};
const reader = child.stderr.getReader();
let pending = "";
const decoder = new TextDecoder();
const logLines: string[] = [];
(async () => {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      logLines.push(line);
      try {
        const j = JSON.parse(line) as { msg?: string; module?: string; address?: string };
        if (j.msg === "listening" && j.module && j.address) ports[j.module] = Number(j.address.split(":").pop());
      } catch {
        /* not JSON */
      }
    }
  }
})();
const deadline = Date.now() + 30_000;
while (!(ports["hep-udp"] && ports["node-http"] && ports["hep-tcp"] && ports["coordinator-http"])) {
  if (Date.now() > deadline) throw new Error("appliance did not start:\n" + logLines.join("\n"));
  await Bun.sleep(50);
}
let peakRss = 0;
const rssTimer = setInterval(async () => {
  const status = await Bun.file(`/proc/${child.pid}/status`)
    .text()
    .catch(() => "");
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  if (m) peakRss = Math.max(peakRss, Number(m[1]) * 1024);
}, 250);

// Visibility probes during the load: a packet with a unique Call-ID, then search until it is found.
const api = `http://127.0.0.1:${ports["coordinator-http"]}/api/v4`;
const token = (
  (await (
    await fetch(`${api}/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: PASSWORD }),
    })
  ).json()) as {
    token: string;
  }
).token;
const { encodeHep3 } = await import("../src/hep/index.ts");
const { invite } = await import("../test/fixtures/sip.ts");
const probeSock = await Bun.udpSocket({});
const visibility: number[] = [];
/** How long each search request took (the probe's latency includes at least one). */
const searchMs: number[] = [];
// --probe-ms N: one visibility probe every N ms (default 400); 0 = none (pure ingest capacity).
const probeMs = Number(args.get("probe-ms") ?? 400);
let probing = probeMs > 0;
const probes = (async () => {
  for (let n = 0; probing; n++) {
    const callId = `probe-${n}-${crypto.randomUUID()}`;
    const sentAt = performance.now();
    probeSock.send(
      encodeHep3({
        srcIp: "192.0.2.99",
        dstIp: "192.0.2.98",
        timestampUs: Date.now() * 1000,
        protoType: 1,
        payload: invite({ callId, from: "p", to: "q" }),
      }),
      ports["hep-udp"]!,
      "127.0.0.1",
    );
    for (;;) {
      const asked = performance.now();
      const r = (await (
        await fetch(`${api}/transactions/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({
            filter: { call_id: callId },
            timestamp: { from: Date.now() - 60_000, to: Date.now() + 60_000 },
          }),
        })
      ).json()) as { data: { items: unknown[] } };
      searchMs.push(performance.now() - asked);
      if (r.data.items.length > 0) break;
      if (performance.now() - sentAt > 10_000) break; // lost (UDP) or very late; counted as 10 s
      await Bun.sleep(10);
    }
    visibility.push(performance.now() - sentAt);
    await Bun.sleep(probeMs);
  }
})();

// CPU per thread name (JS thread "bun", DuckDB workers, Bun's pools, GC helpers): where the time goes.
const threadTicks = async () => {
  const out = new Map<string, number>();
  const { readdirSync } = await import("node:fs");
  for (const tid of readdirSync(`/proc/${child.pid}/task`)) {
    const st = await Bun.file(`/proc/${child.pid}/task/${tid}/stat`)
      .text()
      .catch(() => "");
    if (!st) continue;
    // DuckDB's worker threads inherit the name of the thread that opened it ("bun.exe", like the
    // JS thread, which is the process' own pid): the JS thread is told apart by its tid.
    const raw = st.slice(st.indexOf("(") + 1, st.lastIndexOf(")")).replace(/[0-9]+$/, "#");
    const name = Number(tid) === child.pid ? "js-main" : raw;
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    out.set(name, (out.get(name) ?? 0) + Number(f[11]) + Number(f[12]));
  }
  return out;
};
const machineTicks = async () => {
  const f = (await Bun.file("/proc/stat").text()).split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { busy: f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!, all: f.reduce((a, b) => a + b, 0) };
};
const threadsBefore = await threadTicks();
const machineBefore = await machineTicks();
const cpuBefore = await Bun.file(`/proc/${child.pid}/stat`).text();
const sender = Bun.spawn(
  [
    process.execPath,
    "bench/hep-sender.ts",
    "--target",
    `127.0.0.1:${transport === "udp" ? ports["hep-udp"] : ports["hep-tcp"]}`,
    "--transport",
    transport,
    "--rate",
    String(rate),
    "--seconds",
    String(seconds),
    "--prefix",
    "e2e",
    "--sources",
    String(sources),
  ],
  { stdout: "pipe", stderr: "inherit" },
);
const senderOut = JSON.parse((await new Response(sender.stdout).text()).trim()) as {
  sent: number;
  rate: number;
  packet_bytes: number;
};
// The peak while the load ran; peak_rss_mb also covers the count afterwards and the stop's last flush.
const loadPeakRss = peakRss;
const cpuAfter = await Bun.file(`/proc/${child.pid}/stat`).text();
const threadsAfter = await threadTicks();
const machineAfter = await machineTicks();
const senderCpu = sender.resourceUsage()?.cpuTime;
const perThread = Object.fromEntries(
  [...threadsAfter.entries()]
    .map(([k, v]) => [k, Math.round(((v - (threadsBefore.get(k) ?? 0)) / 100 / seconds) * 100) / 100] as const)
    .filter(([, v]) => v > 0)
    .sort((a, b) => b[1] - a[1]),
);
const ticks = (s: string) => {
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
};
const cpuSeconds = (ticks(cpuAfter) - ticks(cpuBefore)) / 100;

probing = false;
await probes;
probeSock.close();
const pct = (q: number, of = visibility) => {
  const v = [...of].sort((a, b) => a - b);
  return Math.round(v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? NaN);
};
// Stored rows: poll node stats until the count stops growing.
const stats = async () =>
  (await (await fetch(`http://127.0.0.1:${ports["node-http"]}/api/v1/metadata/stats`)).json()) as { row_count: number };
let stored = 0;
for (let stable = 0; stable < 6; ) {
  await Bun.sleep(500);
  const n = (await stats()).row_count;
  stable = n === stored ? stable + 1 : 0;
  stored = n;
}
// Why rows went missing: the appliance's own drop counters (kernel receive-buffer drops are the rest).
const metricsText = await (await fetch(`http://127.0.0.1:${ports["coordinator-http"]}/metrics`)).text().catch(() => "");
const dropReasons = Object.fromEntries(
  [...metricsText.matchAll(/^svc_hep_packets_dropped_total\{reason="([^"]+)"\} (\d+)/gm)]
    .filter((m) => Number(m[2]) > 0)
    .map((m) => [m[1]!, Number(m[2])]),
);
const udpErrors = (await Bun.file("/proc/net/snmp").text()).split("\n").filter((l) => l.startsWith("Udp:"));
child.kill("SIGTERM");
const exit = await child.exited;
clearInterval(rssTimer);
const dropped = logLines.filter((l) => l.includes('"level":"error"')).length;
const du = Bun.spawnSync(["du", "-sb", join(dir, "lake")])
  .stdout.toString()
  .split("\t")[0];
const bytesOnDisk = Number(du);
const result = {
  transport,
  target_rate: rate,
  seconds,
  sender_rate: senderOut.rate,
  sent: senderOut.sent,
  stored,
  loss_pct: Math.round(((senderOut.sent - (stored - visibility.length)) / senderOut.sent) * 10000) / 100,
  bytes_per_msg_on_disk: Math.round((bytesOnDisk / Math.max(1, stored)) * 10) / 10,
  packet_bytes: senderOut.packet_bytes,
  peak_rss_mb: Math.round(peakRss / 1048576),
  peak_rss_under_load_mb: Math.round(loadPeakRss / 1048576),
  visible_ms_p50: pct(0.5),
  visible_ms_p95: pct(0.95),
  visible_ms_max: pct(1),
  probes: visibility.length,
  search_ms_p50: pct(0.5, searchMs),
  search_ms_p95: pct(0.95, searchMs),
  appliance_cpu_seconds: cpuSeconds,
  appliance_cores_busy: Math.round((cpuSeconds / seconds) * 100) / 100,
  appliance_cores_by_thread: perThread,
  appliance_cpu_us_per_msg: Math.round(((cpuSeconds * 1e6) / Math.max(1, senderOut.sent)) * 10) / 10,
  sender_cores_busy: senderCpu ? Math.round((Number(senderCpu.total) / 1e6 / seconds) * 100) / 100 : null,
  machine_cores_busy:
    Math.round(
      ((machineAfter.busy - machineBefore.busy) / (machineAfter.all - machineBefore.all)) * cpus().length * 100,
    ) / 100,
  appliance_drops: dropReasons,
  // This run's datagrams the kernel dropped for the appliance's UDP socket (the line below is machine-wide and cumulative).
  socket_kernel_drops: Number(/^svc_hep_udp_kernel_drops_total (\d+)/m.exec(metricsText)?.[1] ?? NaN),
  // Per ingest thread: packets and CPU seconds (several threads; docs/ARCHITECTURE.md "Several ingest threads").
  thread_packets: Object.fromEntries(
    [...metricsText.matchAll(/^svc_hep_thread_packets_total\{thread="(\d+)"\} (\d+)/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  ),
  thread_cpu_sec: Object.fromEntries(
    [...metricsText.matchAll(/^svc_hep_thread_cpu_seconds_total\{thread="(\d+)"\} ([\d.e+-]+)/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  ),
  kernel_udp_after: udpErrors[1]
    ? Object.fromEntries(
        udpErrors[0]!
          .split(/\s+/)
          .slice(1)
          .map((k, i) => [k, Number(udpErrors[1]!.split(/\s+/)[i + 1])])
          .filter(([k]) => k === "RcvbufErrors" || k === "InErrors"),
      )
    : null,
  exit_code: exit,
  error_log_lines: dropped,
  cpu: cpus()[0]?.model,
  cores: cpus().length,
};
console.log(JSON.stringify(result));
if (args.has("log")) await Bun.write(args.get("log")!, logLines.join("\n") + "\n");
if (!args.has("keep")) rmSync(dir, { recursive: true, force: true });
