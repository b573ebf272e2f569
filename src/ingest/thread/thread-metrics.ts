/**
 * Per-thread figures of the HEP ingest threads (docs/ARCHITECTURE.md "Several ingest threads"),
 * taken from each hand-over's counter deltas and CPU clock: packets, drops by reason (the kernel's
 * receive-buffer drops of the thread's own socket as reason `kernel`) and CPU seconds, so a thread
 * that falls behind shows by name in /metrics and /health. The process-wide counters stay as
 * they are; these add the thread.
 */
import type { Counter, MetricsRegistry } from "../../core/index.ts";

/** CPU share is judged over this long (several hand-overs, so one busy tick is not "behind"). */
const CPU_WINDOW_MS = 5_000;
/** Kernel drops are judged over a minute, as /health judges rows lost. */
const DROPS_WINDOW_MS = 60_000;

interface Sample {
  atMs: number;
  cpuSec: number | undefined;
  kernelDrops: number;
}

export class ThreadMetrics {
  private readonly packets: Counter<"thread">;
  private readonly drops: Counter<"thread" | "reason">;
  private readonly cpu: Counter<"thread">;
  private readonly samples: Sample[][];
  private readonly kernelTotal: number[];
  private readonly lastCpu: Array<number | undefined>;

  constructor(metrics: MetricsRegistry, count: number) {
    this.packets = metrics.counter(
      "svc_hep_thread_packets_total",
      "HEP packets each ingest thread received (UDP, TCP, TLS, and the HTTP bodies and forward batches it was given).",
      ["thread"],
    );
    this.drops = metrics.counter(
      "svc_hep_thread_drops_total",
      "HEP packets each ingest thread did not store, per reason: the reasons of svc_hep_packets_dropped_total, and `kernel` for datagrams the kernel dropped on the thread's own UDP socket (its receive buffer full: the thread falls behind).",
      ["thread", "reason"],
    );
    this.cpu = metrics.counter(
      "svc_hep_thread_cpu_seconds_total",
      "CPU seconds each ingest thread used (its own clock, CLOCK_THREAD_CPUTIME_ID); a rate near 1 means the thread is saturated.",
      ["thread"],
    );
    this.samples = Array.from({ length: count }, () => []);
    this.kernelTotal = Array.from({ length: count }, () => 0);
    this.lastCpu = Array.from({ length: count }, () => undefined);
    for (let i = 0; i < count; i++) {
      this.packets.inc({ thread: String(i) }, 0);
      this.drops.inc({ thread: String(i), reason: "kernel" }, 0);
    }
  }

  /** A hand-over of thread `i`: its counter deltas (name, rendered labels, delta) and CPU clock. */
  handOver(i: number, deltas: ReadonlyArray<readonly [string, string, number]>, cpuSec: number | undefined): void {
    const thread = String(i);
    for (const [name, key, d] of deltas) {
      if (name === "svc_hep_packets_received_total") this.packets.inc({ thread }, d);
      else if (name === "svc_hep_packets_dropped_total") {
        const reason = /^reason="(.*)"$/.exec(key)?.[1];
        if (reason !== undefined) this.drops.inc({ thread, reason }, d);
      } else if (name === "svc_hep_udp_kernel_drops_total") {
        this.drops.inc({ thread, reason: "kernel" }, d);
        this.kernelTotal[i] = (this.kernelTotal[i] ?? 0) + d;
      }
    }
    const last = this.lastCpu[i];
    // A restarted thread's clock starts again from 0.
    if (cpuSec !== undefined && last !== undefined && cpuSec >= last) this.cpu.inc({ thread }, cpuSec - last);
    else if (cpuSec !== undefined && last === undefined) this.cpu.inc({ thread }, cpuSec);
    this.lastCpu[i] = cpuSec;
    const now = Date.now();
    const list = this.samples[i]!;
    list.push({ atMs: now, cpuSec, kernelDrops: this.kernelTotal[i] ?? 0 });
    while (list.length > 2 && now - list[0]!.atMs > DROPS_WINDOW_MS) list.shift();
  }

  /** Thread `i` over its recent hand-overs: CPU share (0..1) and kernel drops in the last minute. */
  state(i: number): { cpuShare: number | undefined; kernelDropsLastMinute: number } {
    const list = this.samples[i] ?? [];
    const newest = list[list.length - 1];
    if (!newest) return { cpuShare: undefined, kernelDropsLastMinute: 0 };
    let from = list.length - 1;
    while (from > 0 && newest.atMs - list[from - 1]!.atMs <= CPU_WINDOW_MS) from--;
    const old = list[from]!;
    const ms = newest.atMs - old.atMs;
    const cpuShare =
      ms > 0 && old.cpuSec !== undefined && newest.cpuSec !== undefined && newest.cpuSec >= old.cpuSec
        ? (newest.cpuSec - old.cpuSec) / (ms / 1000)
        : undefined;
    return { cpuShare, kernelDropsLastMinute: newest.kernelDrops - list[0]!.kernelDrops };
  }
}
