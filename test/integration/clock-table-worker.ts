/**
 * A thread of test/integration/clock-table.test.ts: updates one source's entry of the shared
 * clock table `rounds` times, each adding 1 to its offset (a read, then a write, under the lock),
 * and a source of its own alongside; posts when done.
 */
import { SharedClockTable } from "../../src/ingest/hep/clock-table.ts";

declare const self: Worker;

self.onmessage = (e: MessageEvent<{ buffer: SharedArrayBuffer; rounds: number; name: string }>) => {
  const { buffer, rounds, name } = e.data;
  const table = new SharedClockTable(buffer);
  for (let i = 0; i < rounds; i++) {
    table.update("10.0.0.1|7", (known) => ({ offsetUs: (known?.offsetUs ?? 0) + 1, lastMs: i }));
    table.update(`${name}|1`, (known) => ({ offsetUs: (known?.offsetUs ?? 0) + 2, lastMs: i }));
  }
  self.postMessage("done");
};
