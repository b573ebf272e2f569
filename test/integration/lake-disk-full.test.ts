/**
 * A real full disk (a small tmpfs, docs/ARCHITECTURE.md "When a flush fails"): failed flushes back
 * off instead of retrying several times a second, partial free space commits the buffer in pieces
 * that fit, /health says what is wrong, and once there is room every row accepted lands in Parquet
 * exactly once. Also: a spool on a full disk counts its lost rows and /health fails.
 */
import { describe, expect } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { mountTmpfs, TMPFS_PEER } from "../peers/tmpfs.ts";
import { health } from "./health-helpers.ts";
import { lpWrite } from "./lineproto-helpers.ts";

const ROWS_PER_BATCH = 200;
/** Point times: recent, or retention (the default keeps 14 days) retires the first files mid-test. */
const BASE_MS = Date.now() - 3_600_000;

/** One LP body of `ROWS_PER_BATCH` rows numbered from `from`, each with 1000 random hex characters (≈ 500 B of Parquet). */
function lpBatch(measurement: string, from: number, compressible = false): string {
  const lines: string[] = [];
  for (let i = from; i < from + ROWS_PER_BATCH; i++) {
    const hex = compressible
      ? "0123456789abcdef".repeat(62)
      : Buffer.from(crypto.getRandomValues(new Uint8Array(500))).toString("hex");
    lines.push(`${measurement},host=h i=${i}i,p="${hex}" ${BASE_MS + i}`);
  }
  return lines.join("\n");
}

/** The appliance with the line-protocol receiver, flushing as soon as rows are sealed, no compaction. */
function startOnDisk(
  dir: string,
  lakehouse: {
    data_path: string;
    catalog_path: string;
    min_free_bytes: number;
    reserve_free_bytes: number;
    spool_format?: string;
  },
) {
  return startTestAppliance(dir, {
    ingest: { line_protocol: { enable: true, listen: "127.0.0.1:0" } },
    storage: {
      lakehouse: { ...lakehouse, flush_interval_sec: 0.05, batch_size: 1_000_000, compaction: { enable: false } },
    },
  });
}

describe("disk full", () => {
  peerTest(
    "flushes back off, /health is not pass, partial free space commits pieces, then every accepted row lands in Parquet exactly once",
    [TMPFS_PEER],
    async () => {
      await using dir = tempDir();
      // Parquet on an 8 MiB tmpfs; catalog and spool on the ordinary disk (the flush fails, ingest goes on).
      await using disk = mountTmpfs(join(dir.path, "lake"), 8 << 20);
      await using a = await startOnDisk(dir.path, {
        data_path: disk.path,
        catalog_path: `${dir.path}/state/catalog.sqlite`,
        min_free_bytes: 1 << 20,
        reserve_free_bytes: 256 << 10,
      });
      const { lake, metrics, nodeUrl, coordinatorUrl } = a.app;
      const lp = a.app.lineProtocol!.url();
      const written = () => metrics.sumOf("svc_lake_rows_written_total");
      const failures = () => metrics.sumOf("svc_lake_flush_failures_total");
      let accepted = 0;
      const write = async () => {
        const r = await lpWrite(lp, "/write?precision=ms", lpBatch("diskfull", accepted));
        expect(r.status).toBe(204);
        accepted += ROWS_PER_BATCH;
        await lake!.sync(); // its own spool file
      };

      await write();
      await waitFor("the first batch in Parquet", () => written() === ROWS_PER_BATCH || undefined, 30_000);
      expect((await health(nodeUrl!)).body.status).toBe("pass");

      // Full: every flush fails for lack of space.
      const filler = disk.fill(0);
      for (let b = 0; b < 20; b++) await write();
      const backlogRows = accepted - ROWS_PER_BATCH;
      expect(lake!.backlog()).toBe(backlogRows);
      await waitFor(
        "a flush that failed for lack of space",
        () =>
          metrics.render().includes('svc_lake_flush_failures_total{table="main.diskfull",reason="no_space"}') ||
          undefined,
        30_000,
      );

      // /health on both ports: 503, the flush check names the table and the reason, no path
      // (free space is read at most once a second).
      await waitFor(
        "/health to see the full disk",
        async () => (await health(nodeUrl!)).status === 503 || undefined,
        10_000,
      );
      for (const base of [nodeUrl!, coordinatorUrl!]) {
        const h = await health(base);
        expect(h.status).toBe(503);
        expect(h.body.status).toBe("fail");
        expect(h.body.checks["lake:flush"]![0]!.status).toBe("warn");
        expect(h.body.checks["lake:flush"]![0]!.output).toContain("main.diskfull: no_space");
        expect(h.body.checks["disk:free"]!.find((c) => c.componentId === "data")!.status).toBe("fail");
        expect(h.text).not.toContain(dir.path);
      }

      // Back-off: the attempts over the window the next five failures took, through the metric.
      // Without it a failing flush was retried at every writer tick (≥ 4 a second).
      const f0 = failures();
      const t0 = performance.now();
      await waitFor("five more failed flushes", () => failures() >= f0 + 5 || undefined, 60_000);
      const perSecond = (failures() - f0) / ((performance.now() - t0) / 1000);
      expect(perSecond).toBeLessThan(2);
      expect(written()).toBe(ROWS_PER_BATCH);

      // Partial free space: less than the backlog needs; pieces of it still commit.
      rmSync(filler);
      const leave = 700 << 10;
      const filler2 = disk.fill(leave);
      await waitFor("a piece of the backlog in Parquet", () => written() > ROWS_PER_BATCH || undefined, 90_000);

      // Room again: the rest lands, nothing lost or doubled.
      rmSync(filler2);
      await waitFor("the whole backlog in Parquet", () => lake!.backlog() === 0 || undefined, 90_000);
      expect(written()).toBe(accepted);
      const files = await lake!.files("main.diskfull");
      expect(files.reduce((s, f) => s + f.rows, 0)).toBe(accepted);
      // The partial phase was partial: the backlog's Parquet needed more than the space left then.
      const backlogBytes = files.reduce((s, f) => s + f.bytes, 0) * (backlogRows / accepted);
      expect(backlogBytes).toBeGreaterThan(leave);
      // No partial file of a failed flush is left taking space: every Parquet file on disk is committed.
      const onDisk = readdirSync(disk.path, { recursive: true, encoding: "utf8" }).filter((f) =>
        f.endsWith(".parquet"),
      );
      expect(onDisk.length).toBe(files.length);
      const r = await lake!.query(
        `SELECT count(*) AS n, count(DISTINCT i) AS d, min(i) AS lo, max(i) AS hi FROM svc_lake.main.diskfull`,
      );
      expect(r.rows[0]).toEqual({ n: accepted, d: accepted, lo: 0, hi: accepted - 1 });
      expect(metrics.sumOf("svc_lake_rows_lost_total")).toBe(0);
      await waitFor("/health passes again", async () => (await health(nodeUrl!)).status === 200 || undefined, 10_000);
      expect((await health(nodeUrl!)).body.status).toBe("pass");
    },
    240_000,
  );

  peerTest(
    "a spool on a full disk counts the rows it loses (no partial files left), /health fails; with room again new rows are stored",
    [TMPFS_PEER],
    async () => {
      await using dir = tempDir();
      // Everything on a 16 MiB tmpfs: Parquet, catalog and the spool beside it; no reserve, so the
      // spool itself meets the full disk.
      await using disk = mountTmpfs(join(dir.path, "all"), 16 << 20);
      await using a = await startOnDisk(dir.path, {
        data_path: `${disk.path}/lake`,
        catalog_path: `${disk.path}/catalog.sqlite`,
        min_free_bytes: 1 << 20,
        reserve_free_bytes: 0,
      });
      const { lake, metrics, nodeUrl } = a.app;
      const lp = a.app.lineProtocol!.url();
      // The table exists (its catalog rows) before the disk fills.
      expect((await lpWrite(lp, "/write?precision=ms", lpBatch("spoolfull", 0))).status).toBe(204);
      await waitFor(
        "the first batch in Parquet",
        () => metrics.sumOf("svc_lake_rows_written_total") === ROWS_PER_BATCH || undefined,
        30_000,
      );

      const filler = disk.fill(0);
      // Answered after the spool write: its failure is a 503 the client retries, not a 204 for
      // rows that are gone.
      const refused = await lpWrite(lp, "/write?precision=ms", lpBatch("spoolfull", ROWS_PER_BATCH));
      expect(refused.status).toBe(503);
      expect(refused.body?.error).toContain("could not write the points to disk");
      await lake!.sync();
      const lost = () =>
        a.app.metrics.render().match(/svc_lake_rows_lost_total\{reason="spool_write_failed"\} (\d+)/)?.[1];
      await waitFor("rows counted as lost by the spool", () => lost() === String(ROWS_PER_BATCH) || undefined, 10_000);
      const spool = join(disk.path, "spool", "main.spoolfull");
      expect(readdirSync(spool).filter((f) => f.endsWith(".tmp"))).toEqual([]);
      const h = await health(nodeUrl!);
      expect(h.status).toBe(503);
      expect(h.body.checks["lake:rows_lost"]![0]!.status).toBe("fail");
      expect(h.body.checks["lake:rows_lost"]![0]!.observedValue).toBe(ROWS_PER_BATCH);
      expect(h.body.checks["lake:rows_lost"]![0]!.output).toContain(`spool_write_failed: ${ROWS_PER_BATCH}`);
      expect(h.text).not.toContain(dir.path);

      rmSync(filler);
      expect((await lpWrite(lp, "/write?precision=ms", lpBatch("spoolfull", 2 * ROWS_PER_BATCH))).status).toBe(204);
      await waitFor(
        "the new rows in Parquet",
        () => metrics.sumOf("svc_lake_rows_written_total") === 2 * ROWS_PER_BATCH || undefined,
        30_000,
      );
      const r = await lake!.query(
        `SELECT count(*) AS n, min(i) AS lo FROM svc_lake.main.spoolfull WHERE i >= ${ROWS_PER_BATCH}`,
      );
      expect(r.rows[0]).toEqual({ n: ROWS_PER_BATCH, lo: 2 * ROWS_PER_BATCH });
    },
    120_000,
  );

  peerTest(
    "the spool stops at reserve_free_bytes (line protocol 503 for the whole body), flushes free it, and every row answered 204 lands exactly once without freeing anything",
    [TMPFS_PEER],
    async () => {
      await using dir = tempDir();
      await using disk = mountTmpfs(join(dir.path, "all"), 16 << 20);
      const reserve = 2 << 20;
      // The CSV spool: a body's spool file is about its size, so sixteen bodies fill the room above
      // the reserve several times over (Parquet seals of these rows are twenty times smaller).
      await using a = await startOnDisk(dir.path, {
        data_path: `${disk.path}/lake`,
        catalog_path: `${disk.path}/catalog.sqlite`,
        min_free_bytes: 4 << 20,
        reserve_free_bytes: reserve,
        spool_format: "csv",
      });
      const { lake, metrics, nodeUrl } = a.app;
      const lp = a.app.lineProtocol!.url();
      const written = () => metrics.sumOf("svc_lake_rows_written_total");
      expect((await lpWrite(lp, "/write?precision=ms", lpBatch("reserve", 0, true))).status).toBe(204);
      let accepted = ROWS_PER_BATCH;
      await waitFor("the first batch in Parquet", () => written() === accepted || undefined, 30_000);

      // 1 MiB above the reserve: room for about five spool files of ≈ 210 kB (their Parquet is
      // small). Sixteen accepted batches need the spool freed by flushes several times over.
      disk.fill(reserve + (1 << 20));
      // The writer reads the free space every tick (100 ms).
      await waitFor(
        "the writer to see the filled disk",
        () => (lake!.writerHealth()?.spoolFreeBytes ?? Infinity) < reserve + (2 << 20) || undefined,
      );
      let refused = 0;
      let next = accepted; // first value of `i` in the next body (refused bodies leave gaps)
      while (accepted < 17 * ROWS_PER_BATCH) {
        // Four clients at once: a write is answered after its rows are spooled (the next seal),
        // so one client alone would give every batch its own spool and Parquet file.
        const bodies = [0, 1, 2, 3].map(() => {
          const from = next;
          next += ROWS_PER_BATCH;
          return lpBatch("reserve", from, true);
        });
        const results = await Promise.all(bodies.map((b) => lpWrite(lp, "/write?precision=ms", b)));
        let full = false;
        for (const r of results) {
          if (r.status === 204) {
            accepted += ROWS_PER_BATCH;
            continue;
          }
          // Refused (503) whole: the body is measured against the room above the reserve first
          // (a body cut after its first rows would be retried whole by the client: stored twice).
          expect(r.status).toBe(503);
          expect(r.body?.written).toBe(0);
          expect(r.body?.error).toContain("reserve_free_bytes");
          full = true;
        }
        if (!full) continue;
        if (++refused === 1) {
          const h = await health(nodeUrl!);
          expect(h.body.checks["disk:free"]!.find((c) => c.componentId === "state")!.status).not.toBe("pass");
        }
        // A flush commits, its spool files go (≥ 2 s grace), the writer sees the room.
        await waitFor(
          "room above the reserve again",
          () => (lake!.writerHealth()?.spoolFreeBytes ?? 0) > reserve + (512 << 10) || undefined,
          30_000,
        );
      }
      expect(refused).toBeGreaterThan(0);
      await waitFor(
        "every accepted row in Parquet",
        () => (lake!.backlog() === 0 && written() === accepted) || undefined,
        60_000,
      );
      const r = await lake!.query(`SELECT count(*) AS n, count(DISTINCT i) AS d FROM svc_lake.main.reserve`);
      expect(r.rows[0]).toEqual({ n: accepted, d: accepted });
      expect(metrics.sumOf("svc_lake_rows_lost_total")).toBe(0);
    },
    180_000,
  );
});
