/**
 * A commit whose answer is lost (docs/DUCKLAKE.md "When the catalog is down"): the catalog's
 * connection breaks after COMMIT reached the server, so the commit landed but the writer saw
 * UNAVAILABLE. Injected by a catalog that commits for real and then throws, as Bun.SQL does when the
 * connection closes before the answer. The writer must neither delete the committed Parquet files
 * nor commit the batch a second time: it reads its spool watermark before the next attempt.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { lakeConfig } from "../../src/config/index.ts";
import { AppError, createLogger, MetricsRegistry, type TableDef } from "../../src/core/index.ts";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import type { LakeCatalog } from "../../src/lake/catalog-port.ts";
import { Lake } from "../../src/lake/index.ts";
import { testConfig } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "lost_answer",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "k", type: "varchar" },
  ],
  timeColumn: "timestamp",
  sortBy: ["timestamp"],
};

test("a commit that landed but whose answer was lost: its files stay, its rows are stored once", async () => {
  await using dir = tempDir();
  let commits = 0;
  const openCatalog = (o: { path: string; dataPath: string }): LakeCatalog => {
    const real = openLakeCatalog(o);
    return new Proxy(real, {
      get(target, prop) {
        const v = Reflect.get(target, prop) as unknown;
        if (prop === "commitDataFiles") {
          return async (...args: Parameters<LakeCatalog["commitDataFiles"]>) => {
            const r = await target.commitDataFiles(...args);
            if (++commits === 1)
              throw new AppError(
                "UNAVAILABLE",
                "catalog database unavailable: Connection closed (injected after COMMIT)",
              );
            return r;
          };
        }
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  const config = testConfig(dir.path, { storage: { lakehouse: { flush_interval_sec: 600 } } });
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
    const t0 = Date.UTC(2026, 10, 29, 6) * 1000;
    for (let i = 0; i < 40; i++)
      lake
        .row("main.lost_answer")!
        .time(t0 + i)
        .str(`r${i}`)
        .end();
    await lake.flush(); // the commit lands, the writer is told it failed
    await lake.flush(); // the next attempt
    const files = await lake.files("main.lost_answer");
    expect(files.filter((f) => !existsSync(`${dir.path}/lake/${f.path}`))).toEqual([]);
    const r = await lake.query(`SELECT count(*) AS n, count(DISTINCT k) AS d FROM svc_lake.main.lost_answer`);
    expect(r.rows[0]).toEqual({ n: 40, d: 40 });
  } finally {
    await lake.stop();
  }
});
