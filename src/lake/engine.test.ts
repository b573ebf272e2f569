import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "./engine.ts";

/**
 * The engine's settings must hold on every connection, not just the one that ran the SETs: in
 * DuckDB 1.5 a plain SET is per session, and lock_configuration then stops the others from
 * setting it (a search connection ran on the host zone, re-parsed footers, never late-materialised).
 */
describe("Engine settings", () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-engine-"));
    engine = await Engine.open({
      threads: 1,
      memoryLimit: "256MB",
      tempDirectory: join(dir, "tmp"),
      allowedDirectories: [dir],
      queryConnections: 3,
    });
  });
  afterAll(() => {
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("every query connection sees the engine's settings", async () => {
    const sql =
      "SELECT current_setting('TimeZone') AS tz, current_setting('late_materialization_max_rows')::BIGINT AS lm, " +
      "current_setting('parquet_metadata_cache') AS cache, current_setting('enable_external_access') AS ext, current_setting('lock_configuration') AS locked";
    // Concurrent queries take different connections from the pool.
    const all = await Promise.all([0, 1, 2, 3, 4, 5].map(() => engine.query(sql)));
    for (const r of all) expect(r.rows[0]).toEqual({ tz: "UTC", lm: 1000, cache: true, ext: false, locked: true });
    expect(await engine.readAll(sql)).toEqual([{ tz: "UTC", lm: 1000, cache: true, ext: false, locked: true }]);
    // The eager pool differs in late materialisation only.
    const eager = await Promise.all(
      [0, 1, 2, 3, 4].map(() => engine.query(sql, undefined, { lateMaterialization: false })),
    );
    for (const r of eager) expect(r.rows[0]).toEqual({ tz: "UTC", lm: 50, cache: true, ext: false, locked: true });
  });

  test("no connection can loosen the configuration", async () => {
    await expect(engine.query("SET enable_external_access = true")).rejects.toThrow(/lock|configuration/i);
    await expect(engine.query("SET GLOBAL late_materialization_max_rows = 5")).rejects.toThrow(/lock|configuration/i);
    await expect(
      engine.query("SET late_materialization_max_rows = 5000", undefined, { lateMaterialization: false }),
    ).rejects.toThrow(/lock|configuration/i);
  });
});

/** A failed statement inside BEGIN … COMMIT must not leave the shared DDL connection aborted. */
describe("Engine.transaction", () => {
  let dir: string;
  let engine: Engine;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-engine-tx-"));
    engine = await Engine.open({
      threads: 1,
      memoryLimit: "256MB",
      tempDirectory: join(dir, "tmp"),
      allowedDirectories: [dir],
      queryConnections: 1,
    });
  });
  afterAll(() => {
    engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a failing statement rolls the whole transaction back and the connection keeps working", async () => {
    await expect(
      engine.transaction([
        "CREATE VIEW svc_lake.main.tx_first AS SELECT 1 AS x",
        "CREATE VIEW svc_lake.information_schema.tables AS SELECT 1 AS x",
      ]),
    ).rejects.toThrow(/information_schema/);
    // Nothing of the failed transaction is visible…
    const views = await engine.query("SELECT count(*) AS n FROM duckdb_views() WHERE view_name = 'tx_first'");
    expect(views.rows[0]).toEqual({ n: 0 });
    // …and the next DDL on the same connection runs (it failed with "transaction is aborted" before).
    await engine.transaction(["CREATE VIEW svc_lake.main.tx_second AS SELECT 2 AS x"]);
    await engine.ddl("CREATE OR REPLACE VIEW svc_lake.main.tx_third AS SELECT 3 AS x");
    expect((await engine.query("SELECT x FROM svc_lake.main.tx_second")).rows).toEqual([{ x: 2 }]);
    expect((await engine.query("SELECT x FROM svc_lake.main.tx_third")).rows).toEqual([{ x: 3 }]);
  });
});

/** User SQL's own instance (docs/ARCHITECTURE.md "Query memory"): its caps, the same lock-down and views. */
describe("Engine user-SQL instance", () => {
  test("readOnly queries run with sql_memory_limit and sql_threads, locked down, on the same views; a refused value names its key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-engine-sql-"));
    const tmp = join(dir, "tmp");
    const engine = await Engine.open({
      threads: 2,
      memoryLimit: "256MB",
      tempDirectory: tmp,
      allowedDirectories: [dir],
      sql: { memoryLimit: "96MB", threads: 1, maxTempDirectorySize: "64MB" },
    });
    try {
      await engine.ddl("CREATE OR REPLACE VIEW svc_lake.main.v AS SELECT 42 AS n");
      const sql =
        "SELECT current_setting('memory_limit') AS mem, current_setting('threads')::BIGINT AS threads, current_setting('temp_directory') AS temp, " +
        "current_setting('lock_configuration') AS locked, current_setting('enable_external_access') AS ext, (SELECT n FROM svc_lake.main.v) AS n";
      expect((await engine.query(sql, undefined, { readOnly: true })).rows[0]).toEqual({
        mem: "91.5 MiB",
        threads: 1,
        temp: join(tmp, "sql"),
        locked: true,
        ext: false,
        n: 42,
      });
      expect((await engine.query(sql)).rows[0]).toMatchObject({ mem: "244.1 MiB", threads: 2, temp: tmp, n: 42 });
      // Over the cap: 413 naming the key, no SQL; the next query runs.
      const err = await engine
        .query("SELECT length(string_agg(repeat('x', 1000) || i, '')) AS n FROM range(200000) t(i)", undefined, {
          readOnly: true,
        })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
        details: { reason: "memory_limit", memory_limit: "96MB" },
      });
      expect(String((err as Error).message)).toContain("storage.lakehouse.tuning.sql_memory_limit (96MB)");
      expect((await engine.query("SELECT 1 AS one", undefined, { readOnly: true })).rows).toEqual([{ one: 1 }]);
    } finally {
      engine.close();
    }
    const bad = await Engine.open({
      threads: 1,
      memoryLimit: "256MB",
      tempDirectory: tmp,
      allowedDirectories: [dir],
      sql: { memoryLimit: "lots", threads: 1, maxTempDirectorySize: "64MB" },
    }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "CONFIG_INVALID" });
    expect(String((bad as Error).message)).toContain('tuning.sql_memory_limit "lots"');
    rmSync(dir, { recursive: true, force: true });
  });
});
