/**
 * Live-stream cost on the ingest path (docs/STREAM.md "Benchmark", results in docs/BENCHMARKS.md "Live stream: cost on the ingest path"):
 * the appliance as a child process, UDP HEP at a fixed rate from bench/hep-sender.ts, first with
 * no subscriber, then with N subscribers on the node's /stream (bench/stream/subscribers.ts, its
 * own process), in the same run. Reports per phase: sent, received, kernel drops (loss), CPU of
 * the HEP ingest thread (the task named "Worker") and of the main JS thread, and the stream's own
 * counters (events, frames sent, drops by reason).
 *   bun bench/stream/run.ts --rate 100000 --seconds 30 --subscribers 10 [--filter "proto=1"] [--rate-per-sub 500]
 * Smoke run: bun bench/stream/run.ts --rate 2000 --seconds 2 --subscribers 2
 * With ingest.hep_stream.enable the ring fills with nobody subscribed, so `no-subscribers` includes
 * the capture; `--stream-off 1` runs one phase with the stream off, the baseline of that cost.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { testConfigJson } from "../../test/appliance.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const rate = Number(args.get("rate") ?? "100000");
const seconds = Number(args.get("seconds") ?? "20");
const subscribers = Number(args.get("subscribers") ?? "10");
const filter = args.get("filter") ?? "";
const ratePerSub = Number(args.get("rate-per-sub") ?? "500");
const streamOff = args.get("stream-off") === "1";
const dir = mkdtempSync(join(args.get("dir") ?? tmpdir(), "svc-bench-stream-"));
const cfgPath = join(dir, "svc.json");
await Bun.write(
  cfgPath,
  JSON.stringify(
    testConfigJson(dir, {
      log: { level: "info" },
      storage: { lakehouse: { flush_interval_sec: 5, tuning: { threads: 2, memory_limit: "2GB" } } },
      ingest: {
        hep: { udp: { socket_buffer_bytes: 67108864 } },
        hep_stream: {
          enable: !streamOff,
          max_subscribers: Math.max(32, subscribers),
          // Every subscriber comes from 127.0.0.1: its share (docs/STREAM.md "Subscriber slots") is the cap.
          max_subscribers_per_address: Math.max(32, subscribers),
          rate_per_sub_pps: ratePerSub,
        },
      },
    }),
  ),
);

const child = Bun.spawn([process.execPath, "src/main.ts", "serve", "--config-path", cfgPath], {
  stderr: "pipe",
  stdout: "inherit",
});
const ports: Record<string, number> = {};
const logLines: string[] = [];
void (async () => {
  const decoder = new TextDecoder();
  let pending = "";
  const reader = child.stderr.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    pending += decoder.decode(r.value, { stream: true });
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      logLines.push(line);
      try {
        const j = JSON.parse(line) as { msg?: string; module?: string; address?: string; ports?: { udp?: number } };
        if (j.msg === "listening" && j.module && j.address) ports[j.module] = Number(j.address.split(":").pop());
        if (j.msg === "HEP ingest thread started" && j.ports?.udp) ports["hep-udp"] = j.ports.udp;
      } catch {
        /* not JSON */
      }
    }
  }
})();
const deadline = Date.now() + 30_000;
while (!(ports["hep-udp"] && ports["node-http"] && ports["coordinator-http"])) {
  if (Date.now() > deadline || child.exitCode !== null)
    throw new Error(`appliance did not start:\n${logLines.join("\n")}`);
  await Bun.sleep(50);
}

const metrics = async () => await (await fetch(`http://127.0.0.1:${ports["coordinator-http"]}/metrics`)).text();
const sum = (text: string, name: string, labels = "") =>
  text
    .split("\n")
    .filter((l) => l.startsWith(labels ? `${name}{${labels}}` : `${name} `) || (!labels && l.startsWith(`${name}{`)))
    .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);

/** CPU ticks (1/100 s) of the ingest thread ("Worker") and the main JS thread. */
async function threadTicks(): Promise<{ ingest: number; main: number }> {
  let ingest = 0;
  let main = 0;
  for (const tid of readdirSync(`/proc/${child.pid}/task`)) {
    const st = await Bun.file(`/proc/${child.pid}/task/${tid}/stat`)
      .text()
      .catch(() => "");
    if (!st) continue;
    const name = st.slice(st.indexOf("(") + 1, st.lastIndexOf(")"));
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    const t = Number(f[11]) + Number(f[12]);
    if (Number(tid) === child.pid) main += t;
    else if (name === "Worker") ingest += t;
  }
  return { ingest, main };
}

async function phase(name: string) {
  const m0 = await metrics();
  const t0 = await threadTicks();
  const sender = Bun.spawn(
    [
      process.execPath,
      "bench/hep-sender.ts",
      "--target",
      `127.0.0.1:${ports["hep-udp"]}`,
      "--transport",
      "udp",
      "--rate",
      String(rate),
      "--seconds",
      String(seconds),
      "--prefix",
      name,
    ],
    { stdout: "pipe", stderr: "inherit" },
  );
  const out = JSON.parse((await new Response(sender.stdout).text()).trim()) as { sent: number; rate: number };
  // The last datagrams are read and counted within a hand-over or two.
  await Bun.sleep(500);
  const t1 = await threadTicks();
  const m1 = await metrics();
  const d = (n: string, labels = "") => sum(m1, n, labels) - sum(m0, n, labels);
  const received = d("svc_hep_packets_received_total");
  const cores = (ticks: number) => Math.round((ticks / 100 / seconds) * 1000) / 1000;
  return {
    phase: name,
    sent: out.sent,
    sender_rate: out.rate,
    received,
    kernel_drops: d("svc_hep_udp_kernel_drops_total"),
    loss_pct: Math.round(((out.sent - received) / Math.max(1, out.sent)) * 10000) / 100,
    backlog_full: d("svc_hep_packets_dropped_total", 'reason="backlog_full"'),
    ingest_thread_cores: cores(t1.ingest - t0.ingest),
    main_thread_cores: cores(t1.main - t0.main),
    stream_events: d("svc_stream_events_total"),
    stream_frames_sent: d("svc_stream_frames_sent_total"),
    stream_dropped: Object.fromEntries(
      ["ring_overflow", "rate_limit", "queue_full", "capture_full"].map((r) => [
        r,
        d("svc_stream_events_dropped_total", `reason="${r}"`),
      ]),
    ),
  };
}

/** The issue's comparison: no subscriber, then N subscribers, in the same appliance. */
async function compareSubscribers(): Promise<void> {
  const none = await phase("no-subscribers");
  const url = `ws://127.0.0.1:${ports["node-http"]}/stream${filter ? `?${filter}` : ""}`;
  const subs = Bun.spawn(
    [process.execPath, "bench/stream/subscribers.ts", "--url", url, "--count", String(subscribers)],
    { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
  );
  const reader = subs.stdout.getReader();
  let text = "";
  while (!text.includes("ready\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`subscribers ended: ${text}`);
    text += new TextDecoder().decode(value);
  }
  // Capture is on already (ingest.hep_stream.enable fills the ring); let the subscriptions settle.
  await Bun.sleep(300);
  const withSubs = await phase(`${subscribers}-subscribers`);
  subs.stdin.end();
  while (!text.includes("}\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const received = JSON.parse(text.slice(text.indexOf("{")).trim()) as {
    frames: number;
    bytes: number;
    per_subscriber: number[];
  };
  console.log(
    JSON.stringify({
      target_rate: rate,
      seconds,
      subscribers,
      filter,
      rate_per_sub_pps: ratePerSub,
      phases: [none, { ...withSubs, subscriber_frames: received.frames, subscriber_bytes: received.bytes }],
      ingest_thread_cpu_change_pct:
        none.ingest_thread_cores > 0
          ? Math.round(((withSubs.ingest_thread_cores - none.ingest_thread_cores) / none.ingest_thread_cores) * 1000) /
            10
          : null,
      cpu: cpus()[0]?.model,
      cores: cpus().length,
    }),
  );
}

try {
  if (streamOff)
    console.log(
      JSON.stringify({
        target_rate: rate,
        seconds,
        phases: [await phase("stream-off")],
        cpu: cpus()[0]?.model,
        cores: cpus().length,
      }),
    );
  else await compareSubscribers();
} finally {
  child.kill("SIGTERM");
  await child.exited;
  if (!args.has("keep")) rmSync(dir, { recursive: true, force: true });
}
