/**
 * HEP stream slots over several listener threads (docs/ARCHITECTURE.md "Slots over several
 * threads"): one shared state, several listeners, the limits held over all of them. Real Workers
 * on one SO_REUSEPORT port, and listeners on the main thread where a test must choose which
 * listener a client reaches; real TCP clients from addresses of 127.0.0.0/8.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createSharedKnown } from "../../src/ingest/hep/shared-known.ts";
import { createSharedSlots, releaseThread, sharedSlotsUsage } from "../../src/ingest/hep/shared-slots.ts";
import { reservedSlots } from "../../src/ingest/hep/slots.ts";
import { waitFor } from "../harness.ts";
import {
  type ListenerCounts,
  seenBy,
  startThreadListener,
  type ThreadListenerInit,
} from "./hep-shared-slots-helpers.ts";
import type { StressInit } from "./hep-shared-slots-stress-worker.ts";
import { type Client, connect, packet } from "./hep-stream-helpers.ts";

const clients: Client[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.socket.destroy();
  for (const f of cleanups.splice(0).reverse()) await f();
});

/** A client, closed after the test. */
async function client(port: number, from: string): Promise<Client> {
  const c = await connect(port, from);
  clients.push(c);
  return c;
}

/** A listener thread in a real Worker. */
async function startWorker(init: ThreadListenerInit) {
  const worker = new Worker(new URL("./hep-shared-slots-worker.ts", import.meta.url).href);
  const exited = new Promise<void>((resolve) => worker.addEventListener("close", () => resolve()));
  let waiting: ((m: { type: string; port?: number; counts?: ListenerCounts; message?: string }) => void) | undefined;
  worker.onmessage = (e) => waiting?.(e.data);
  const ask = <T>(msg: unknown) =>
    new Promise<T>((resolve, reject) => {
      waiting = (m) => (m.type === "failed" ? reject(new Error(`listener thread: ${m.message}`)) : resolve(m as T));
      worker.postMessage(msg);
    });
  const { port } = await ask<{ port: number }>({ type: "start", init });
  let alive = true;
  const w = {
    port,
    worker,
    counts: async () => (await ask<{ counts: ListenerCounts }>({ type: "counts" })).counts,
    async kill() {
      alive = false;
      worker.terminate();
      await exited;
    },
  };
  cleanups.push(() => (alive ? w.kill() : undefined));
  return w;
}

type Thread = { counts(): ListenerCounts | Promise<ListenerCounts> };

/** Connections accepted or refused at accept over `threads`. */
async function seenOver(threads: Thread[]): Promise<number> {
  let n = 0;
  for (const t of threads) n += seenBy(await t.counts());
  return n;
}

/** Connects from `from` and waits until one of `threads` accepted or refused it; whether it was refused. */
async function connectSeen(threads: Thread[], port: number, from: string): Promise<{ c: Client; refused: boolean }> {
  const before = await seenOver(threads);
  const accepted = await Promise.all(threads.map(async (t) => (await t.counts()).accepted));
  const c = await client(port, from);
  await waitFor(`a listener saw the connection from ${from}`, async () => (await seenOver(threads)) > before);
  const after = await Promise.all(threads.map(async (t) => (await t.counts()).accepted));
  return { c, refused: after.every((n, i) => n === accepted[i]) };
}

/** Limits as the listener options say them, and the shared state made from them. */
function sharedSlots(maxConnections: number, maxConnectionsPerIp: number, reservedForKnownPercent: number) {
  const limits = { maxConnections, maxConnectionsPerIp, reservedForKnownPercent };
  return {
    limits,
    slots: createSharedSlots(
      { maxConnections, maxConnectionsPerIp, reservedForKnown: reservedSlots(maxConnections, reservedForKnownPercent) },
      { threads: 2 },
    ),
  };
}

describe("HEP stream slots over several threads", () => {
  test("two Workers on one reusePort port: the kernel spreads connections, max_connections and the per-IP cap hold over both, a dead thread's slots come back with releaseThread", async () => {
    const { slots, limits } = sharedSlots(4, 2, 0);
    const known = createSharedKnown({ knownAddresses: 16, ttlMs: 60_000 });
    const w0 = await startWorker({ port: 0, slots, known, threadIndex: 0, reusePort: true, limits });
    const w1 = await startWorker({ port: w0.port, slots, known, threadIndex: 1, reusePort: true, limits });
    expect(w1.port).toBe(w0.port);
    const workers = [w0, w1];
    const port = w0.port;

    // Spread: connect and hang up until each Worker has accepted one (the odds of 64 on one side are 2^-63).
    for (let i = 1; i <= 64; i++) {
      const accepted = await Promise.all(workers.map(async (w) => (await w.counts()).accepted));
      if (accepted.every((n) => n > 0)) break;
      const { c } = await connectSeen(workers, port, `127.0.2.${i}`);
      c.socket.destroy();
      await waitFor("the slot released", () => sharedSlotsUsage(slots).total === 0);
    }
    expect((await w0.counts()).accepted).toBeGreaterThan(0);
    expect((await w1.counts()).accepted).toBeGreaterThan(0);

    // Per address: 2 of 3 from one address, whichever Worker each reaches.
    const fromOne: Array<{ c: Client; refused: boolean }> = [];
    for (let i = 0; i < 3; i++) fromOne.push(await connectSeen(workers, port, "127.0.3.1"));
    expect(fromOne.map((x) => x.refused)).toEqual([false, false, true]);
    // In all: 4, whichever Worker each reaches.
    const others: Array<{ c: Client; refused: boolean }> = [];
    for (let i = 2; i <= 5; i++) others.push(await connectSeen(workers, port, `127.0.3.${i}`));
    expect(others.map((x) => x.refused)).toEqual([false, false, true, true]);
    await waitFor("the refused clients closed", () =>
      [fromOne[2]!, others[2]!, others[3]!].every((x) => x.c.isClosed()),
    );
    expect(sharedSlotsUsage(slots).total).toBe(4);
    const closed = { ...(await w0.counts()).closed };
    for (const [k, v] of Object.entries((await w1.counts()).closed)) closed[k] = (closed[k] ?? 0) + v;
    expect(closed).toEqual({ per_ip_limit: 1, max_connections: 2 });

    // A thread dies holding slots: they stay taken until the host releases its share.
    const dead = sharedSlotsUsage(slots).perThread[0]! > 0 ? 0 : 1;
    const survivor = workers[1 - dead]!;
    const held = sharedSlotsUsage(slots).perThread[dead]!;
    expect(held).toBeGreaterThan(0);
    await workers[dead]!.kill();
    // Every connection now reaches the survivor (the dead thread's socket is closed).
    expect((await connectSeen([survivor], port, "127.0.4.1")).refused).toBe(true);
    expect(sharedSlotsUsage(slots).perThread[dead]).toBe(held);
    releaseThread(slots, dead);
    expect(sharedSlotsUsage(slots).total).toBe(4 - held);
    expect((await connectSeen([survivor], port, "127.0.4.2")).refused).toBe(false);
  }, 60_000);

  test("two listener threads: the reserved share holds over both, a known address (valid HEP on one) gets a reserved slot on the other, eviction stays on a listener's own thread", async () => {
    const { slots, limits } = sharedSlots(4, 2, 50);
    const known = createSharedKnown({ knownAddresses: 16, ttlMs: 60_000 });
    // Two ports, so that the test chooses which thread each client reaches.
    const a = await startThreadListener({ port: 0, slots, known, threadIndex: 0, reusePort: false, limits });
    cleanups.push(() => a.stop());
    const b = await startThreadListener({ port: 0, slots, known, threadIndex: 1, reusePort: false, limits });
    cleanups.push(() => b.stop());
    const both = [a, b];
    const sendFrame = async (c: Client, on: typeof a, callId: string) => {
      const before = Number(on.received());
      c.socket.write(packet(callId));
      await waitFor(`frame ${callId} taken`, () => Number(on.received()) === before + 1);
    };

    // Agent 2 sends a frame on thread 0 and hangs up: it stays known.
    const early = await connectSeen(both, a.port, "127.0.0.6");
    await sendFrame(early.c, a, "agent2-early");
    early.c.socket.destroy();
    await waitFor("agent 2's slot released", () => sharedSlotsUsage(slots).total === 0);
    // Agent 1 holds a slot on thread 0 and sends HEP on it.
    const agent = await connectSeen(both, a.port, "127.0.0.5");
    await sendFrame(agent.c, a, "agent1-on-a");
    // 1 of 4 taken, 2 reserved: one unknown address more on thread 1, then none, though thread 1 holds only one.
    const silent = await connectSeen(both, b.port, "127.0.1.1");
    expect(silent.refused).toBe(false);
    expect((await connectSeen(both, b.port, "127.0.1.2")).refused).toBe(true);
    expect(b.counts().closed).toEqual({ reserved_for_known: 1 });
    // Agent 1, known from its frame on thread 0, gets a reserved slot on thread 1 and sends HEP there.
    const agentOnB = await connectSeen(both, b.port, "127.0.0.5");
    expect(agentOnB.refused).toBe(false);
    await sendFrame(agentOnB.c, b, "agent1-on-b");
    // Its address holds 2, one per thread: a third is refused.
    expect((await connectSeen(both, a.port, "127.0.0.5")).refused).toBe(true);
    expect(a.counts().closed).toEqual({ per_ip_limit: 1 });
    // Agent 2 (known) takes the last slot on thread 1 and sends nothing yet.
    expect((await connectSeen(both, b.port, "127.0.0.6")).refused).toBe(false);
    expect(sharedSlotsUsage(slots)).toEqual({ total: 4, perThread: [1, 3] });
    // Full. Thread 0 has no connection without a valid frame: agent 2 is refused there, though thread 1 has two.
    expect((await connectSeen(both, a.port, "127.0.0.6")).refused).toBe(true);
    expect(a.counts().closed).toEqual({ per_ip_limit: 1, max_connections: 1 });
    // On thread 1 it takes the slot of the oldest connection that never sent a valid frame.
    expect((await connectSeen(both, b.port, "127.0.0.6")).refused).toBe(false);
    await waitFor("the silent connection closed by the server", () => silent.c.isClosed());
    expect(b.counts().closed).toEqual({ reserved_for_known: 1, evicted_for_known: 1 });
    expect(agent.c.isClosed() || agentOnB.c.isClosed()).toBe(false);
    expect(sharedSlotsUsage(slots)).toEqual({ total: 4, perThread: [1, 3] });
  }, 60_000);

  test("a listener refuses shared slots made for other limits, and a thread index already in use", async () => {
    const { slots, limits } = sharedSlots(4, 2, 50);
    const known = createSharedKnown({ knownAddresses: 16, ttlMs: 60_000 });
    await expect(
      startThreadListener({
        port: 0,
        slots,
        known,
        threadIndex: 0,
        reusePort: false,
        limits: { ...limits, maxConnectionsPerIp: 3 },
      }),
    ).rejects.toThrow(/other limits/);
    const a = await startThreadListener({ port: 0, slots, known, threadIndex: 0, reusePort: false, limits });
    cleanups.push(() => a.stop());
    await expect(
      startThreadListener({ port: 0, slots, known, threadIndex: 0, reusePort: false, limits }),
    ).rejects.toThrow(/in use/);
  });

  test("four Workers racing for slots never hold more than max_connections, or more than the per-IP cap for one address, at any instant", async () => {
    const maxConnections = 6;
    const maxConnectionsPerIp = 2;
    const addresses = 8;
    const threads = 4;
    const slots = createSharedSlots({ maxConnections, maxConnectionsPerIp, reservedForKnown: 0 }, { threads });
    const taken = new SharedArrayBuffer(4 * (3 + addresses));
    const results = Promise.all(
      Array.from({ length: threads }, (_, threadIndex) => {
        const worker = new Worker(new URL("./hep-shared-slots-stress-worker.ts", import.meta.url).href);
        cleanups.push(() => worker.terminate());
        return new Promise<{ violations: number; admitted: number }>((resolve) => {
          worker.onmessage = (e) => resolve(e.data);
          const init: StressInit = {
            slots,
            taken,
            threadIndex,
            iterations: 200_000,
            addresses,
            maxConnections,
            maxConnectionsPerIp,
          };
          worker.postMessage(init);
        });
      }),
    );
    const signal = new Int32Array(taken);
    await waitFor("every racing thread ready", () => Atomics.load(signal, 0) === threads);
    Atomics.store(signal, 1, 1);
    Atomics.notify(signal, 1);
    expect((await results).map((r) => r.violations)).toEqual([0, 0, 0, 0]);
    for (const r of await results) expect(r.admitted).toBeGreaterThan(1000);
    // Every slot given back: the counts are exact after the race.
    expect(sharedSlotsUsage(slots)).toEqual({ total: 0, perThread: [0, 0, 0, 0] });
  }, 60_000);
});
