/**
 * What the live stream costs the main thread per event with several ingest threads
 * (docs/STREAM.md "Several ingest threads"): N threads' chunks of realistic SIP records (bench
 * hep-packets INVITEs, capture times interleaved across the threads as random UDP spreading
 * gives) handed to the broker directly (one thread, arrival order) or through StreamMerge (held,
 * settled, sorted by capture time). The broker keeps its ring (ingest.hep_stream.enable) and has
 * no subscriber, so this is the per-event cost every event pays; JSON is built only for events
 * that are sent (docs/BENCHMARKS.md "Live stream: merging several threads").
 *   bun bench/stream/merge.ts [--threads 4] [--chunk 2500] [--seconds 5]
 */
import { MetricsRegistry } from "../../src/core/index.ts";
import { decodeHep, StreamCapture } from "../../src/hep/index.ts";
import { parseSip } from "../../src/sip/index.ts";
import { StreamBroker, streamMetrics } from "../../src/stream/broker.ts";
import { StreamMerge } from "../../src/stream/merge.ts";
import { packetSource } from "../hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const threads = Number(args.get("threads") ?? 4);
const perChunk = Number(args.get("chunk") ?? 2500);
const seconds = Number(args.get("seconds") ?? 5);

/** One chunk per thread, as one hand-over round brings them: thread t holds every threads-th packet. */
function round(base: number): Array<[Uint8Array, number]> {
  const src = packetSource("merge");
  const tmp = src.template.slice();
  const out: Array<[Uint8Array, number]> = [];
  for (let t = 0; t < threads; t++) {
    const c = new StreamCapture({ initialBytes: 1 << 20 });
    for (let i = 0; i < perChunk; i++) {
      const n = base + i * threads + t;
      const r = decodeHep(src.packet(n, tmp), {
        nowMs: Date.now(),
        maxAgeMs: Number.POSITIVE_INFINITY,
        maxSkewMs: Number.POSITIVE_INFINITY,
      });
      if (!r.ok) throw new Error(r.reason);
      r.value.timestampUs = 1_780_000_000_000_000 + n;
      const sip = parseSip(r.value.payload);
      c.tap(r.value, sip.ok ? sip.value : undefined);
    }
    const s = c.seal()!;
    out.push([new Uint8Array(s.buffer, 0, s.length).slice(), s.count]);
  }
  return out;
}

const rounds = Array.from({ length: 8 }, (_, i) => round(i * perChunk * threads));
const config = {
  buffer_size: 100_000,
  per_sub_queue_len: 1000,
  rate_per_sub_pps: 0,
  max_subscribers: 32,
  max_subscribers_per_address: 8,
  max_subscribers_per_user: 8,
};

function measure(mode: "direct" | "merge"): { events: number; nsPerEvent: number } {
  const broker = new StreamBroker(config, streamMetrics(new MetricsRegistry()), { retain: true });
  const merge = new StreamMerge((events) => broker.acceptEvents(events), {
    threads,
    maxHoldMs: 1000,
    maxHeld: 100_000,
  });
  let events = 0;
  const cpu0 = process.cpuUsage();
  const end = performance.now() + seconds * 1000;
  for (let r = 0; performance.now() < end; r++) {
    for (const [t, [bytes, count]] of rounds[r % rounds.length]!.entries()) {
      if (mode === "direct") broker.accept(bytes, count);
      else {
        merge.accept(bytes, count);
        merge.handedOver(t);
      }
      events += count;
    }
  }
  merge.close();
  const cpu = process.cpuUsage(cpu0);
  return { events, nsPerEvent: Math.round(((cpu.user + cpu.system) * 1000) / events) };
}

for (const mode of ["direct", "merge", "direct", "merge"] as const) {
  const r = measure(mode);
  console.log(JSON.stringify({ mode, threads, chunk: perChunk, ...r }));
}
