/**
 * One thread of the shared-slots race test (hep-shared-slots.test.ts): admits and releases as fast
 * as it can over the shared state, and counts in a second shared array the slots really taken, so
 * that a limit passed on any thread, even for an instant, is seen.
 */
import { SharedConnectionSlots } from "../../src/ingest/hep/shared-slots.ts";

declare const self: Worker;

export interface StressInit {
  slots: SharedArrayBuffer;
  /** Int32: [0] threads ready, [1] the start signal, [2] slots taken in all, [3 + i] slots taken by address i. */
  taken: SharedArrayBuffer;
  threadIndex: number;
  iterations: number;
  addresses: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
}

self.onmessage = (e: MessageEvent<StressInit>) => {
  const init = e.data;
  const slots = new SharedConnectionSlots<number>(init.slots, init.threadIndex);
  const taken = new Int32Array(init.taken);
  const mine: Array<{ conn: number; i: number }> = [];
  let seed = 1 + init.threadIndex * 7919;
  // The high bits: the low bits of this generator repeat with a short period.
  const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % n;
  // Start together: a race needs the threads running at once.
  Atomics.add(taken, 0, 1);
  Atomics.wait(taken, 1, 0);
  let violations = 0;
  let admitted = 0;
  const release = (k: number) => {
    const [x] = mine.splice(k, 1);
    Atomics.sub(taken, 2, 1);
    Atomics.sub(taken, 3 + x!.i, 1);
    slots.release(x!.conn, `10.0.0.${x!.i}`);
  };
  for (let n = 0; n < init.iterations; n++) {
    // Admit twice as often as release: the threads stay at the limits, where the races are.
    if (mine.length > 0 && rnd(3) === 0) {
      release(rnd(mine.length));
      continue;
    }
    const i = rnd(init.addresses);
    if (!slots.admit(`10.0.0.${i}`, false).ok) continue;
    slots.add(n, `10.0.0.${i}`);
    admitted++;
    if (Atomics.add(taken, 2, 1) + 1 > init.maxConnections) violations++;
    if (Atomics.add(taken, 3 + i, 1) + 1 > init.maxConnectionsPerIp) violations++;
    mine.push({ conn: n, i });
  }
  while (mine.length > 0) release(0);
  postMessage({ violations, admitted });
};
