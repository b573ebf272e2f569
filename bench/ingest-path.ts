/**
 * The ingest thread's JS work per packet, without sockets: distinct realistic INVITE packets
 * (bench/hep-packets.ts, each its own small Uint8Array as a socket delivers it) → HEP decode →
 * SIP parse → rows in a BatchSink sealed every 4 096 rows (buffers given back, as the lake does).
 * Reports CPU µs per packet of this thread over --seconds after a warm-up; the receive syscall
 * and the socket callback (≈ 3 µs per datagram, bench/hep-receive.ts) come on top.
 *   bun bench/ingest-path.ts [--seconds 8] [--packets 65536] [--reader batch|bun] [--spool-format csv|parquet]
 */
import { MetricsRegistry, createLogger, type TableDef } from "../src/core/index.ts";
import { BatchSink, createHepPipeline } from "../src/ingest/index.ts";
import { loadConfig } from "../src/config/index.ts";
import { packetSource } from "./hep-packets.ts";

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2)
  args.set(process.argv[i]!.replace(/^--/, ""), process.argv[i + 1] ?? "");
const seconds = Number(args.get("seconds") ?? 8);
const count = Number(args.get("packets") ?? 65536);

const cfg = loadConfig({ env: {}, json: {} }).config;
const registry = new MetricsRegistry();
let rows = 0;
const sink: BatchSink = new BatchSink({
  define: async (def: TableDef) => def,
  backlog: () => 0,
  maxBufferedRows: 1e12,
  // --spool-format csv|parquet: what the sink seals (default the config's, docs/STORAGE.md "Parquet written by svc").
  format: (args.get("spool-format") as "csv" | "parquet" | undefined) ?? cfg.storage.lakehouse.spool_format,
  rowsLost: registry.counter("svc_lake_rows_lost_total", "x", ["reason"]),
});
const pipeline = createHepPipeline(cfg.ingest, sink, createLogger(), registry);
await pipeline.start();

const src = packetSource("path");
const tmp = src.template.slice();
const packets: Uint8Array[] = [];
for (let i = 0; i < count; i++) packets.push(Uint8Array.from(src.packet(i, tmp)));

// What the UDP listener hands on. `--reader batch` (default): the batch reader's views into one
// receive buffer of 64 KiB slots (the copy into it stands in for the kernel's); `--reader bun`:
// Bun's socket, a fresh Uint8Array per datagram copied into a scratch buffer.
const SLOT = 65536;
const slots = new Uint8Array(new ArrayBuffer(64 * SLOT));
let slot = 0;
const scratch = new Uint8Array(new ArrayBuffer(65536));
const deliver =
  args.get("reader") === "bun"
    ? (d: Uint8Array) => {
        const fresh = d.slice();
        scratch.set(fresh);
        pipeline.handlePacket(scratch.subarray(0, fresh.length), "udp", "127.0.0.1");
      }
    : (d: Uint8Array) => {
        const at = (slot = (slot + 1) & 63) * SLOT;
        slots.set(d, at);
        pipeline.handlePacket(slots.subarray(at, at + d.length), "udp", "127.0.0.1");
      };

const run = (ms: number) => {
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    for (let k = 0; k < 4096; k++) deliver(packets[(n + k) % count]!);
    n += 4096;
    for (const b of sink.seal()) {
      rows += b.rows;
      sink.giveBack(b.key, b.buffer);
    }
  }
  return n;
};
run(1500);
const cpu0 = process.cpuUsage();
const n = run(seconds * 1000);
const cpu = process.cpuUsage(cpu0);
const us = (cpu.user + cpu.system) / n;
console.log(
  JSON.stringify({
    packets: n,
    rows,
    us_per_packet: Math.round(us * 100) / 100,
    packets_per_cpu_second: Math.round(1e6 / us),
  }),
);
