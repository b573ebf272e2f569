/**
 * The clock table of several ingest threads (src/ingest/hep/clock-table.ts) under real threads:
 * four Workers update one source's entry at once, each a read and a write under the bucket's
 * lock; not one update is lost, and each thread's own source is intact beside it.
 */
import { expect, test } from "bun:test";
import { createClockTableBuffer, SharedClockTable } from "../../src/ingest/hep/clock-table.ts";

test("four threads updating one source under the bucket lock lose no update", async () => {
  // Room for 4 sources: one bucket, so every update of every thread takes the same lock.
  const buffer = createClockTableBuffer(4);
  const rounds = 50_000;
  const names = ["t0", "t1", "t2", "t3"];
  const workers = names.map(() => new Worker(new URL("./clock-table-worker.ts", import.meta.url).href));
  try {
    await Promise.all(
      workers.map(
        (w, i) =>
          new Promise<void>((resolve, reject) => {
            w.onmessage = () => resolve();
            w.onerror = (e) => reject(new Error(e.message));
            w.postMessage({ buffer, rounds, name: names[i] });
          }),
      ),
    );
  } finally {
    for (const w of workers) w.terminate();
  }
  const table = new SharedClockTable(buffer);
  const read = (source: string) => table.update(source, (known) => known ?? { offsetUs: -1, lastMs: -1 }).offsetUs;
  expect(read("10.0.0.1|7")).toBe(names.length * rounds);
  expect(names.map((n) => read(`${n}|1`))).toEqual(names.map(() => 2 * rounds));
  expect(table.size).toBe(1 + names.length);
}, 60_000);

test("a lock left held by a thread that ended is taken over after 1 s, so the table never stops ingest", () => {
  const buffer = createClockTableBuffer(4);
  // One bucket: its lock is the word after the bucket count. A Worker ended by terminate() between
  // taking it and giving it back would leave it at 1.
  Atomics.store(new Int32Array(buffer, 4, 1), 0, 1);
  const table = new SharedClockTable(buffer);
  expect(table.update("10.0.0.9|1", () => ({ offsetUs: 5, lastMs: 1 })).offsetUs).toBe(5);
  expect(table.update("10.0.0.9|1", (known) => ({ offsetUs: (known?.offsetUs ?? 0) + 1, lastMs: 2 })).offsetUs).toBe(6);
});
