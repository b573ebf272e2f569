/**
 * The UDP listener on real sockets: the kernel's drops for its socket are counted, and the batch
 * reader, which shares its thread with TCP agents, timers and the main thread's messages, still
 * gives the event loop its turns under a flood (the pipeline stands in for a slow one, 50 µs per
 * packet, so a single sender process keeps the socket from ever running dry).
 */
import { expect, test } from "bun:test";
import { createLogger, MetricsRegistry } from "../../core/index.ts";
import type { HepPipeline } from "../pipeline.ts";
import { createUdpListener } from "./udp.ts";
import { batchReceiveAvailable } from "./udp-batch.ts";
import { waitFor } from "../../../test/harness.ts";

test.skipIf(!batchReceiveAvailable())(
  "under a UDP flood the batch reader still lets timers run",
  async () => {
    let handled = 0;
    const slow = {
      handlePacket() {
        handled++;
        const until = performance.now() + 0.05;
        while (performance.now() < until);
      },
    } as unknown as HepPipeline;
    const listener = createUdpListener(
      slow,
      { listen: "127.0.0.1:0", socketBufferBytes: 1 << 20, batchReceive: true },
      createLogger(),
    );
    await listener.start();
    const flood = Bun.spawn(
      [
        process.execPath,
        "-e",
        `const s = await Bun.udpSocket({});
       const p = new Uint8Array(200);
       const end = Date.now() + 30000;
       while (Date.now() < end) { for (let i = 0; i < 64; i++) s.send(p, ${listener.port()}, "127.0.0.1"); await new Promise((r) => setImmediate(r)); }`,
      ],
      { stdout: "ignore", stderr: "inherit" },
    );
    try {
      // Wait until the reader is busy, then ask for a timer: it only fires if the reader yields.
      await waitFor("the reader busy", () => handled >= 2000 || undefined, 10_000, 5);
      const atTimer = await new Promise<number>((resolve) => setTimeout(() => resolve(handled), 10));
      expect(flood.exitCode).toBeNull();
      // And the reader went on reading after the timer's turn.
      await waitFor(
        "more packets read after the timer's turn",
        () => handled >= atTimer + 2000 || undefined,
        10_000,
        5,
      );
    } finally {
      flood.kill();
      await flood.exited;
      await listener.stop();
    }
  },
  20_000,
);

for (const batchReceive of [true, false]) {
  test(`datagrams the kernel drops are counted: received + dropped = sent (${batchReceive ? "batch reader" : "Bun's socket"})`, async () => {
    let handled = 0;
    const counting = { handlePacket: () => void handled++ } as unknown as HepPipeline;
    const kernelDrops = new MetricsRegistry().counter("svc_hep_udp_kernel_drops_total", "x");
    // A tiny receive buffer, and every datagram sent before this thread can read any of them.
    const listener = createUdpListener(
      counting,
      { listen: "127.0.0.1:0", socketBufferBytes: 8192, batchReceive, kernelDrops },
      createLogger(),
    );
    await listener.start();
    try {
      const client = await Bun.udpSocket({ hostname: "127.0.0.1" });
      const sent = 3000;
      for (let i = 0; i < sent; i++) client.send(new Uint8Array(200), listener.port(), "127.0.0.1");
      client.close();
      await waitFor(
        "every datagram read or counted as dropped",
        () => handled + kernelDrops.total() >= sent || undefined,
        10_000,
        50,
      ).catch(() => {});
      expect(kernelDrops.total()).toBeGreaterThan(0);
      expect(handled + kernelDrops.total()).toBe(sent);
    } finally {
      await listener.stop();
    }
  }, 20_000);
}
