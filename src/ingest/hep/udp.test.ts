/**
 * The UDP listener's batch reader shares its thread with TCP agents, timers and the main thread's
 * messages: under a flood it must still give the event loop its turns. A real socket and a real
 * sender process; the pipeline stands in for a slow one (50 µs per packet), so a single sender
 * keeps the socket from ever running dry.
 */
import { expect, test } from "bun:test";
import { createLogger } from "../../core/index.ts";
import type { HepPipeline } from "../pipeline.ts";
import { createUdpListener } from "./udp.ts";
import { batchReceiveAvailable } from "./udp-batch.ts";

test.skipIf(!batchReceiveAvailable())("under a UDP flood the batch reader still lets timers run", async () => {
  let handled = 0;
  const slow = {
    handlePacket() {
      handled++;
      const until = performance.now() + 0.05;
      while (performance.now() < until);
    },
  } as unknown as HepPipeline;
  const listener = createUdpListener(slow, { listen: "127.0.0.1:0", socketBufferBytes: 1 << 20, batchReceive: true }, createLogger());
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
    while (handled < 2000) await Bun.sleep(5);
    const atTimer = await new Promise<number>((resolve) => setTimeout(() => resolve(handled), 10));
    expect(flood.exitCode).toBeNull();
    // And the reader went on reading after the timer's turn.
    while (handled < atTimer + 2000) await Bun.sleep(5);
    expect(handled).toBeGreaterThan(atTimer);
  } finally {
    flood.kill();
    await flood.exited;
    await listener.stop();
  }
}, 20_000);
