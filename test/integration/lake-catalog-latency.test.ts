/**
 * The catalog port is asynchronous (docs/DUCKLAKE.md "The catalog port"): a catalog across the
 * network answers a call a round trip later, and a flush can commit meanwhile. Readers that pair
 * the catalog's files with the writer's buffer (the views, scan plans, the lake summary) hold the
 * writer's commit gate (src/lake/writer/commit-gate.ts), so a flush that moves rows from the
 * buffer into a file is never half seen: no row twice, none lost. Here the SQLite catalog answers
 * calls late (lateCatalog) while rows are written and flushed all the time.
 */
import { describe, expect, test } from "bun:test";
import { createLogger, MetricsRegistry, type TableDef } from "../../src/core/index.ts";
import { lakeConfig } from "../../src/config/index.ts";
import { Lake } from "../../src/lake/index.ts";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import type { LakeCatalog } from "../../src/lake/catalog-port.ts";
import { testConfig } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "latency_probe",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "k", type: "varchar" },
  ],
  timeColumn: "timestamp",
  sortBy: ["timestamp"],
};

/**
 * The SQLite catalog answering like one across the network: each call is computed when it is made
 * (the server runs it at once) and its reply delivered later. A listing's reply waits for the next
 * commit's reply to be delivered first (at most 20 ms): the worst order for a reader, which saw
 * the catalog before that commit and goes on after it.
 */
function lateCatalog(o: { path: string; dataPath: string }): LakeCatalog {
  const real = openLakeCatalog(o);
  let committed: Array<() => void> = [];
  const nextCommit = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20);
      committed.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  return new Proxy(real, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (typeof v !== "function") return v;
      return async (...args: unknown[]) => {
        const answer = (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const wait = prop === "listDataFiles" ? nextCommit() : turn();
        const settled = await answer.then(
          (r) => ({ r }),
          (e: unknown) => ({ e }),
        );
        await wait;
        if (prop === "commitDataFiles") {
          const waiting = committed;
          committed = [];
          for (const w of waiting) w();
        }
        if ("e" in settled) throw settled.e;
        return settled.r;
      };
    },
  });
}

describe("a catalog that answers a round trip later", () => {
  test("views, scan plans and the summary never show a row twice or lose one while flushes commit", async () => {
    await using dir = tempDir();
    const config = testConfig(dir.path, { storage: { lakehouse: { batch_size: 150, flush_interval_sec: 0.05 } } });
    const lake = new Lake({
      config: lakeConfig(config),
      logger: createLogger({ test: true }),
      metrics: new MetricsRegistry(),
      openCatalog: lateCatalog,
      sealIntervalMs: 10,
    });
    await lake.start();
    try {
      await lake.defineTable(def);
      const key = "main.latency_probe";
      const t0 = Date.UTC(2026, 10, 25) * 1000;
      let written = 0;
      let writing = true;
      const writer = (async () => {
        while (writing && written < 15_000) {
          for (let i = 0; i < 50; i++, written++)
            lake
              .row(key)!
              .time(t0 + written)
              .str(`r${written}`)
              .end();
          await lake.sync();
        }
      })();
      // A failed check stops the writer before the lake stops (its report is the check's).
      const stopWriter = async () => {
        writing = false;
        await writer;
      };
      const last = { view: 0, plan: 0, summary: 0 };
      const snapshots = new Set<number>();
      try {
        for (let i = 0; i < 120 || snapshots.size < 8; i++) {
          const view = await lake.query(
            `SELECT count(*) AS n, count(DISTINCT k) AS d FROM svc_lake.main.latency_probe`,
          );
          const plan = await lake.query(
            `SELECT count(*) AS n, count(DISTINCT k) AS d FROM (${await lake.scanSql(key, { buffer: true })}) t`,
          );
          const summary = await lake.summary();
          for (const [what, r] of [
            ["view", view],
            ["plan", plan],
          ] as const) {
            const n = Number(r.rows[0]!.n);
            expect({ what, distinct: Number(r.rows[0]!.d) }).toEqual({ what, distinct: n }); // never a row twice
            expect(n).toBeGreaterThanOrEqual(last[what]); // never a row gone
            expect(n).toBeLessThanOrEqual(written);
            last[what] = n;
          }
          expect(summary.rows).toBeGreaterThanOrEqual(last.summary);
          expect(summary.rows).toBeLessThanOrEqual(written);
          last.summary = summary.rows;
          snapshots.add(await lake.snapshotId());
          if (written >= 15_000 && i >= 120) break;
        }
      } finally {
        await stopWriter();
      }
      await lake.flush();
      const all = await lake.query(`SELECT count(*) AS n, count(DISTINCT k) AS d FROM svc_lake.main.latency_probe`);
      expect(all.rows[0]).toEqual({ n: written, d: written });
      expect((await lake.summary()).rows).toBe(written);
      // The reads ran across many commits, or the test proved nothing.
      expect(snapshots.size).toBeGreaterThan(5);
    } finally {
      await lake.stop();
    }
  }, 90_000);
});
