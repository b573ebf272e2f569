/**
 * Engine caps (docs/OPERATIONS.md "Engine tuning" and "Disk full, I/O errors and engine
 * memory"): the engine runs with the tuning keys of storage.lakehouse or node.lakehouse, and a
 * DuckDB out-of-memory during a flush is survived as docs/ARCHITECTURE.md "When a flush fails" says: the rows stay in
 * the spool, the flush is retried, the log and the node stats say what to do (raise memory_limit
 * and restart), and after the restart every row is written once.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { configureLogging } from "../../src/core/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir, waitFor } from "../harness.ts";
import { health } from "./health-helpers.ts";
import { lpWrite } from "./lineproto-helpers.ts";

const settings = `SELECT current_setting('threads') AS threads, current_setting('memory_limit') AS memory_limit, current_setting('temp_directory') AS temp_directory`;

describe("engine tuning", () => {
  test.each([
    [
      "storage.lakehouse.tuning",
      { storage: { lakehouse: { tuning: { threads: 3, memory_limit: "384MiB", temp_directory: "SPILL" } } } },
    ],
    [
      "node.lakehouse.tuning",
      {
        node: { lakehouse: { tuning: { threads: 3, memory_limit: "384MiB", temp_directory: "SPILL" } } },
        storage: { lakehouse: { tuning: { threads: "auto", memory_limit: "4GB" } } },
      },
    ],
  ])("%s: threads, memory_limit and temp_directory are the engine's", async (_section, overrides) => {
    await using dir = tempDir();
    const spill = join(dir.path, "spill");
    const json = JSON.parse(JSON.stringify(overrides).replace('"SPILL"', JSON.stringify(spill))) as Record<
      string,
      unknown
    >;
    await using a = await startTestAppliance(dir.path, json);
    const r = await a.app.lake!.query(settings);
    expect(r.rows[0]).toEqual({ threads: 3, memory_limit: "384.0 MiB", temp_directory: spill });
    expect(existsSync(spill)).toBe(true);
  });
});

describe("DuckDB out of memory during a flush", () => {
  test("rows stay in the spool and the flush is retried; the log and node stats advise; after a restart with more memory every row is written once", async () => {
    const lines: Array<Record<string, unknown>> = [];
    configureLogging({
      level: "info",
      format: "json",
      sink: { write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) },
    });
    try {
      await using dir = tempDir();
      // The CSV spool: its flush is a DuckDB COPY, which is what runs out of memory here (Parquet
      // seals are joined without DuckDB, docs/STORAGE.md "Parquet written by svc").
      const lake = (memory_limit: string) => ({
        ingest: { line_protocol: { enable: true, listen: "127.0.0.1:0" } },
        storage: {
          lakehouse: {
            spool_format: "csv",
            flush_interval_sec: 0.05,
            batch_size: 1_000_000,
            tuning: { threads: 1, memory_limit },
            compaction: { enable: false },
          },
        },
      });
      const base = Date.now() - 3_600_000;
      const body = Array.from(
        { length: 2000 },
        (_, i) => `oom,host=h i=${i}i,p="${"ab".repeat(500)}" ${base + i}`,
      ).join("\n");
      {
        // 3 MB: too little for any flush of the spool (its CSV reader takes 2 MiB buffers,
        // src/lake/writer/spool-sql.ts, the Parquet writer its own), so every flush fails.
        await using a = await startTestAppliance(dir.path, lake("3MB"));
        const { metrics, nodeUrl } = a.app;
        expect((await lpWrite(a.app.lineProtocol!.url(), "/write?precision=ms", body)).status).toBe(204);
        await waitFor(
          "two failed flushes for lack of engine memory",
          () =>
            Number(
              /svc_lake_flush_failures_total\{table="main.oom",reason="out_of_memory"\} (\d+)/.exec(
                metrics.render(),
              )?.[1] ?? 0,
            ) >= 2 || undefined,
          30_000,
        );
        expect(a.app.lake!.backlog()).toBe(2000);
        expect(metrics.sumOf("svc_lake_rows_written_total")).toBe(0);
        const failed = lines.find(
          (l) =>
            l.msg === "flush failed; rows stay buffered and are retried with back-off" && l.reason === "out_of_memory",
        );
        expect(String(failed?.error)).toContain("Out of Memory Error");
        expect(String(failed?.advice)).toContain("raise memory_limit and restart svc");
        await waitFor("the writer's status", () => /^svc_lake_write_blocked 1$/m.test(metrics.render()) || undefined);
        const stats = (await (await fetch(`${nodeUrl}/api/v1/metadata/stats`)).json()) as {
          storage: Record<string, unknown>;
        };
        expect(stats.storage).toMatchObject({
          write_blocked: true,
          blocked_reason: "out_of_memory",
          backlog_rows: 2000,
        });
        const h = await health(nodeUrl!);
        expect(h.body.checks["lake:flush"]![0]!.output).toContain("main.oom: out_of_memory");
        // The engine itself goes on: other statements still run.
        expect((await a.app.lake!.query("SELECT 40 + 2 AS n")).rows[0]).toEqual({ n: 42 });
      }
      // Stopped with the flush still failing: the rows are in the spool, not lost.
      const spool = join(dir.path, "spool", "main.oom");
      expect(readdirSync(spool).filter((f) => f.endsWith(".csv")).length).toBeGreaterThan(0);
      {
        await using a = await startTestAppliance(dir.path, lake("1GB"));
        await waitFor(
          "the spool written after the restart",
          () =>
            (a.app.lake!.table("main.oom") &&
              a.app.lake!.backlog() === 0 &&
              a.app.metrics.sumOf("svc_lake_rows_written_total") === 2000) ||
            undefined,
          30_000,
        );
        const r = await a.app.lake!.query(`SELECT count(*) AS n, count(DISTINCT i) AS d FROM svc_lake.main.oom`);
        expect(r.rows[0]).toEqual({ n: 2000, d: 2000 });
        expect(a.app.metrics.sumOf("svc_lake_rows_lost_total")).toBe(0);
      }
    } finally {
      configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
    }
  }, 120_000);
});
