import { describe, expect, test } from "bun:test";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { lakeConfig } from "../../src/config/index.ts";
import { Lake } from "../../src/lake/index.ts";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import type { LakeCatalog } from "../../src/lake/catalog-port.ts";
import { testConfig } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { probeTable } from "./lake-probe.ts";

const def = probeTable("ff_probe");

/**
 * A catalog commit that fails (injected) leaves the flush's rows in the buffer; later flushes —
 * also while long queries hold the query connections — retry them, never commit past them, and
 * every row ends up in Parquet exactly once.
 */
describe("flush failures", () => {
  test("commits that fail (injected) are retried in order; no row lost or doubled", async () => {
    await using dir = tempDir();
    let commits = 0;
    const failAt = new Set([1, 3]);
    const openCatalog = (o: { path: string; dataPath: string }): LakeCatalog => {
      const real = openLakeCatalog(o);
      return new Proxy(real, {
        get(target, prop) {
          const v = Reflect.get(target, prop) as unknown;
          if (prop === "commitDataFiles") {
            return async (...args: Parameters<LakeCatalog["commitDataFiles"]>) => {
              if (failAt.has(++commits)) throw new Error(`injected commit failure #${commits}`);
              return await target.commitDataFiles(...args);
            };
          }
          return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
    };
    const config = testConfig(dir.path, { storage: { lakehouse: { batch_size: 1, flush_interval_sec: 0.05 } } });
    const lake = new Lake({
      config: lakeConfig(config),
      logger: createLogger({ test: true }),
      metrics: new MetricsRegistry(),
      openCatalog,
      sealIntervalMs: 20,
    });
    await lake.start();
    try {
      await lake.defineTable(def);
      const key = "main.ff_probe";
      const t0 = Date.UTC(2026, 10, 24, 12) * 1000;
      let n = 0;
      // Long queries hold the query connections meanwhile (flushes must not depend on them).
      let busy: Promise<unknown> | undefined;
      for (let burst = 0; burst < 30; burst++) {
        if (burst === 3)
          busy = Promise.all([0, 1, 2, 3].map(() => lake.query("SELECT sum(i) AS s FROM range(300000000) t(i)")));
        for (let i = 0; i < 50; i++, n++)
          lake
            .row(key)!
            .time(t0 + n)
            .str(`r${n}`)
            .end();
        // Each burst its own spool file and at least one flush attempt (commit) before the next.
        const attempted = commits;
        await lake.sync();
        await waitFor("a flush attempt", () => commits > attempted || undefined, 10_000, 5);
      }
      await busy;
      await lake.flush();
      expect(commits).toBeGreaterThanOrEqual(2); // the first commit (injected failure) and a retry at least
      const r = await lake.query(
        `SELECT count(*) AS n, count(DISTINCT k) AS d FROM (${await lake.scanSql(key, { buffer: false })}) t`,
      );
      expect(r.rows[0]).toEqual({ n, d: n });
      const all = await lake.query(`SELECT count(*) AS n FROM svc_lake.main.ff_probe`);
      expect(all.rows[0]!.n).toBe(n);
    } finally {
      await lake.stop();
    }
  });
});
