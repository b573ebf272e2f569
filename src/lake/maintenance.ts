import { rmSync } from "node:fs";
import { resolve } from "node:path";
import type { Config } from "../config/index.ts";
import { errorMessage, type Counter, type Logger, type MetricsRegistry, type TableDef } from "../core/index.ts";
import { ORPHAN_GRACE_MS, sweepOrphans } from "./admin/quarantine.ts";
import type { LakeCatalog, TableInfo } from "./catalog-port.ts";
import { parseMemorySize, ROW_GROUP_SHARE } from "./compaction/config.ts";
import { Compactor } from "./compaction/compactor.ts";
import { CompactionDb } from "./compaction/duck.ts";
import type { LakeWriter } from "./writer/writer.ts";
import type { RemoteFiles } from "./remote/remote-files.ts";

/**
 * Lake housekeeping, one pass every `check_interval_sec` (docs/OPERATIONS.md "Automatic repair at start";
 * docs/ARCHITECTURE.md "Maintenance"):
 *  - retention: files whose newest row is older than `retention.days` are retired;
 *  - compaction (src/lake/compaction): the default merge or the native engine, per table;
 *  - expiry: snapshots older than `snapshot_retention_sec` are dropped and the files no snapshot
 *    sees any more are deleted from disk (superseded files stay readable by time travel until then);
 *  - at start only: `ducklake-*.parquet` files under the data path that the catalog does not
 *    reference are deleted when the writer had reserved them (a flush or merge that crashed before
 *    its commit), else moved into `<data_path>/_quarantine` (src/lake/admin/quarantine.ts).
 */
export interface MaintenanceOptions {
  dataPath: string;
  /** The engine's spill directory (tuning.temp_directory); compaction uses `<it>/compaction`. */
  tempDirectory: string;
  rowGroupRows: number;
  compaction: Config["storage"]["lakehouse"]["compaction"];
  retentionDays: number;
  snapshotRetentionSec: number;
  /** A remote data_path: merges go through the read cache and expiry deletes the store's objects (docs/STORAGE.md). */
  remote?: RemoteFiles;
  /**
   * A shared (PostgreSQL) catalog: only the holder of the maintainer lock runs a pass or the orphan
   * sweep, asked before each (docs/DUCKLAKE.md "PostgreSQL catalog", "One maintainer").
   */
  maintainer?: { tryBecomeMaintainer(): Promise<boolean> };
  /** Worker entry that cuts merged files into pages (src/core/parquet/repage-worker.ts); absent: on this thread. */
  repageWorker?: URL;
  /** The orphan sweep leaves files younger than this alone (a shared lake: another writer's file in flight). */
  orphanMinAgeMs?: number;
}

export interface MaintainedTable {
  def: TableDef;
  info: TableInfo;
}

/**
 * Uncompressed bytes one merge (one DuckDB sort) may hold: 8 x (compaction.memory_limit - 128MB).
 * DuckDB spills a sort to disk, but it needs a fixed part of the memory and the rest still grows
 * with the input: for HEP rows (8.4x compressed) 256MB sorted 2.5 GB and failed on 5 GB, 224MB
 * sorted 540 MB and failed on 2.5 GB, 192MB sorted 135 MB and failed on 1.3 GB, 128MB failed on
 * 135 MB (docs/BENCHMARKS.md "Compaction memory"). A merge that still runs out is split in two.
 */
const sortBytesFor = (memory: number) => Math.max(16e6, 8 * (memory - 128e6));
export class LakeMaintenance {
  private readonly retired: Counter<"table">;
  private readonly deleted: Counter;
  private readonly quarantined: Counter;
  private running: Promise<unknown> | undefined;
  private stopping = false;
  /** Last answer of the maintainer election (always true without one). */
  private maintaining: boolean;
  /** The orphan sweep ran since this process last became the maintainer. */
  private swept = false;

  private constructor(
    private readonly catalog: LakeCatalog,
    private readonly writer: LakeWriter,
    private readonly tables: () => MaintainedTable[],
    private readonly refresh: (key: string) => Promise<void>,
    private readonly opts: MaintenanceOptions,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
    private readonly db: CompactionDb | undefined,
    private readonly compactor: Compactor | undefined,
  ) {
    this.maintaining = opts.maintainer === undefined;
    this.retired = metrics.counter("svc_lake_retired_files_total", "Data files retired by retention, per table.", [
      "table",
    ]);
    this.deleted = metrics.counter(
      "svc_lake_deleted_files_total",
      "Data files deleted from disk after snapshot expiry or as orphans.",
    );
    this.quarantined = metrics.counter(
      "svc_lake_quarantined_files_total",
      "Unreferenced data files the start moved into <data_path>/_quarantine instead of deleting them.",
    );
  }

  /** Opens the compaction engine when compaction is on (the configuration was checked by compactionConfigProblems). */
  static async open(
    catalog: LakeCatalog,
    writer: LakeWriter,
    tables: () => MaintainedTable[],
    refresh: (key: string) => Promise<void>,
    opts: MaintenanceOptions,
    logger: Logger,
    metrics: MetricsRegistry,
  ): Promise<LakeMaintenance> {
    const c = opts.compaction;
    let db: CompactionDb | undefined;
    let compactor: Compactor | undefined;
    if (c.enable) {
      const memory = parseMemorySize(c.memory_limit) ?? 0;
      db = await CompactionDb.open({
        memoryLimit: c.memory_limit,
        tempDirectory: opts.tempDirectory,
        dataPath: opts.dataPath,
      });
      compactor = new Compactor(
        db,
        catalog,
        (job) => writer.exclusive(job),
        refresh,
        {
          engine: c.engine,
          dataPath: opts.dataPath,
          rowGroupRows: opts.rowGroupRows,
          minAgeSec: c.min_age_sec,
          maxFileSizeBytes: c.max_file_size_bytes,
          maxCompactedFiles: c.max_compacted_files,
          rowsPerPage: c.rows_per_page,
          ...(opts.repageWorker ? { repageWorker: opts.repageWorker } : {}),
          targetFileSizeBytes: c.target_file_size_bytes,
          maxRowGroupBytes: Math.min(c.max_row_group_bytes, Math.floor(memory / ROW_GROUP_SHARE)),
          maxSortBytes: sortBytesFor(memory),
          retentionDays: opts.retentionDays,
          ...(opts.remote ? { remote: opts.remote } : {}),
        },
        logger,
        metrics,
      );
    }
    return new LakeMaintenance(catalog, writer, tables, refresh, opts, logger, metrics, db, compactor);
  }

  /** One full pass; a call while one runs returns at once. Never throws (errors are logged). */
  async runOnce(nowMs = Date.now()): Promise<{ merged: number; retired: number; deleted: number }> {
    if (this.running || this.stopping) return { merged: 0, retired: 0, deleted: 0 };
    const pass = this.maintainerPass(nowMs);
    this.running = pass;
    try {
      return await pass;
    } finally {
      this.running = undefined;
    }
  }

  /** Interrupts a merge in progress, waits for the pass to end and closes the compaction engine. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.running) {
      this.db?.interrupt();
      await this.running.catch(() => undefined);
    }
    this.db?.close();
  }

  /**
   * Whether this process maintains the lake now; logs when that changes. An election that fails
   * (database unreachable) counts as "not the maintainer" until the next tick.
   */
  async electMaintainer(): Promise<boolean> {
    const m = this.opts.maintainer;
    if (!m) return true;
    let now = false;
    try {
      now = await m.tryBecomeMaintainer();
    } catch (e) {
      this.logger.error("the maintainer election failed; maintenance waits for the next pass", {
        error: errorMessage(e),
      });
    }
    if (now !== this.maintaining) {
      if (now)
        this.logger.info(
          "this process is now the lake maintainer: it runs compaction, expiry, retention and the orphan sweep",
        );
      else
        this.logger.info(
          "this process is no longer the lake maintainer: another writer of the shared catalog maintains it",
        );
      this.swept = false;
    }
    this.maintaining = now;
    return now;
  }

  /** With a maintainer election (a PostgreSQL catalog): its last answer; undefined without one. */
  maintainerState(): { isMaintainer: boolean } | undefined {
    return this.opts.maintainer ? { isMaintainer: this.maintaining } : undefined;
  }

  private async maintainerPass(nowMs: number): Promise<{ merged: number; retired: number; deleted: number }> {
    if (!(await this.electMaintainer())) return { merged: 0, retired: 0, deleted: 0 };
    if (this.opts.maintainer && !this.swept) {
      // A writer that takes over sweeps once, as a lone writer does at start.
      try {
        await this.removeOrphans(false);
      } catch (e) {
        this.logger.error("the orphan sweep failed; retried next pass", { error: errorMessage(e) });
      }
    }
    if (this.opts.maintainer) {
      try {
        await this.removeDeadReservations();
      } catch (e) {
        this.logger.error("clearing the reservations of writers that are gone failed; retried next pass", {
          error: errorMessage(e),
        });
      }
    }
    return await this.pass(nowMs);
  }

  /**
   * A shared catalog: files other writers reserved and never committed, older than the orphan grace,
   * whose writer is gone (no connection to the server), are deleted and their reservations
   * forgotten; their writer, had it lived, would have done the same at its start (docs/DUCKLAKE.md
   * "In-flight files"). Without this a host that never came back left its rows and files for ever.
   */
  private async removeDeadReservations(): Promise<number> {
    const { deadReservations, forgetReservations } = this.catalog;
    if (!deadReservations || !forgetReservations) return 0;
    const grace = this.opts.orphanMinAgeMs ?? ORPHAN_GRACE_MS;
    const dead = await deadReservations.call(this.catalog, grace);
    if (dead.length === 0) return 0;
    // A reserved path is never a committed file: the commit that registers a file deletes its
    // reservation in the same transaction (referencedPaths would count these as referenced).
    const files = dead.map((p) => resolve(this.opts.dataPath, p));
    // Remote: the objects go first; a store that fails keeps the reservations for the next pass.
    if (this.opts.remote) await this.opts.remote.remove(files);
    for (const f of files) rmSync(f, { force: true });
    const forgotten = await forgetReservations.call(this.catalog, dead, grace);
    this.deleted.inc(undefined, files.length);
    this.logger.info("removed uncommitted data files of writers that are gone, and their reservations", {
      files: files.length,
      reservations: forgotten,
    });
    return files.length;
  }

  private async pass(nowMs: number): Promise<{ merged: number; retired: number; deleted: number }> {
    const out = { merged: 0, retired: 0, deleted: 0 };
    let nativeOk = true;
    try {
      // Native compaction skips catalogs with rows inlined by another writer (docs/ARCHITECTURE.md "Compaction engines").
      nativeOk = !(await this.catalog.hasInlinedRows());
    } catch (e) {
      this.logger.error("lake maintenance could not read the catalog; retried next pass", { error: errorMessage(e) });
    }
    for (const t of this.tables()) {
      if (this.stopping) break;
      const key = `${t.def.schema}.${t.def.name}`;
      try {
        if (this.opts.retentionDays > 0) out.retired += await this.retain(t, key, nowMs);
        if (this.compactor) out.merged += await this.compactor.compactTable(t, key, nowMs, nativeOk);
      } catch (e) {
        // stop() interrupts a merge in progress on purpose: that is the stop, not a failure.
        if (this.stopping)
          this.logger.info("lake maintenance of a table interrupted by the stop; done at the next start", {
            table: key,
          });
        else
          this.logger.error("lake maintenance failed for a table; retried next pass", {
            table: key,
            error: errorMessage(e),
          });
      }
    }
    try {
      await this.compactor?.afterCycle();
    } catch (e) {
      this.logger.error("compaction's post-cycle catalog check failed; retried next pass", { error: errorMessage(e) });
    }
    try {
      out.deleted += await this.expire(nowMs);
    } catch (e) {
      // A full disk fails the catalog write here too: logged, retried next pass, never an
      // unhandled rejection of the timer (docs/ARCHITECTURE.md "When a flush fails").
      this.logger.error("lake snapshot expiry failed; retried next pass", { error: errorMessage(e) });
    }
    return out;
  }

  private async retain(t: MaintainedTable, key: string, nowMs: number): Promise<number> {
    const cutoffMs = nowMs - this.opts.retentionDays * 86_400_000;
    const cutoff = new Date(cutoffMs).toISOString().replace("T", " ").replace("Z", "");
    const r = await this.writer.exclusive(async () => {
      const res = await this.catalog.retireFilesBefore(t.info.tableId, t.def.timeColumn, cutoff);
      if (res.files > 0) await this.refresh(key);
      return res;
    });
    if (r.files > 0) {
      this.retired.inc({ table: key }, r.files);
      this.logger.info("retention retired files", { table: key, files: r.files, cutoff });
    }
    return r.files;
  }

  /**
   * Expiry and the deletion of files no snapshot sees. Not on the writer chain: only files that left
   * every snapshot are scheduled, and no flush, swap or reader can bring one back; the pass itself
   * runs one at a time (runOnce), so two expiries never delete the same list.
   */
  private async expire(nowMs: number): Promise<number> {
    await this.catalog.expireSnapshots(nowMs - this.opts.snapshotRetentionSec * 1000);
    const scheduled = await this.catalog.listScheduledDeletions();
    if (scheduled.length === 0) return 0;
    // Remote: the objects go first; a store that fails keeps them scheduled for the next pass.
    if (this.opts.remote) await this.opts.remote.remove(scheduled.map((d) => d.absolutePath));
    for (const d of scheduled) rmSync(d.absolutePath, { force: true });
    await this.catalog.forgetFiles(scheduled.map((d) => d.dataFileId));
    this.deleted.inc(undefined, scheduled.length);
    return scheduled.length;
  }

  /**
   * The start's sweep of files no catalog row references (docs/OPERATIONS.md "Orphans at start and
   * the quarantine"): the writer's own uncommitted files are deleted, unknown ones quarantined.
   * Returns the files deleted.
   */
  /**
   * A writer of a shared catalog that is not the maintainer still deletes, at its start, the files it
   * reserved before a crash and never committed (nothing of its own is in flight yet).
   */
  private async removeOwnLeftovers(): Promise<number> {
    const referenced = await this.catalog.referencedPaths();
    let deleted = 0;
    for (const p of await this.catalog.inflightPaths()) {
      const abs = resolve(this.opts.dataPath, p);
      if (referenced.has(abs)) continue;
      rmSync(abs, { force: true });
      deleted++;
    }
    await this.catalog.clearInflight();
    if (deleted > 0) {
      this.deleted.inc(undefined, deleted);
      this.logger.info("removed this writer's uncommitted data files left by an interrupted flush", { files: deleted });
    }
    return deleted;
  }

  async removeOrphans(atStart = true): Promise<number> {
    // A shared catalog: only the maintainer sweeps, and it spares files younger than orphanMinAgeMs
    // (a stock DuckDB writer reserves nothing; docs/DUCKLAKE.md "PostgreSQL catalog").
    if (!(await this.electMaintainer())) return atStart ? await this.removeOwnLeftovers() : 0;
    this.swept = true;
    // Before the writer starts (Lake.start): no reservation or commit can land between the two
    // reads, the sweep and clearInflight.
    const referenced = await this.catalog.referencedPaths();
    let inflight = await this.catalog.inflightPaths();
    if (!atStart) {
      // A takeover while this writer runs: its own reservations are flushes in progress, kept.
      for (const p of inflight) referenced.add(resolve(this.opts.dataPath, p));
      inflight = new Set();
    }
    const r = sweepOrphans(
      this.opts.dataPath,
      referenced,
      inflight,
      this.logger,
      new Date(),
      this.opts.orphanMinAgeMs ?? ORPHAN_GRACE_MS,
    );
    if (atStart) await this.catalog.clearInflight();
    if (r.deleted > 0) {
      this.deleted.inc(undefined, r.deleted);
      this.logger.info("removed unreferenced data files left by an interrupted flush", { files: r.deleted });
    }
    if (r.young > 0)
      this.logger.info(
        "left unreferenced data files younger than an hour in place (another writer's, or set aside at a later start)",
        { files: r.young },
      );
    if (r.quarantined > 0) {
      this.quarantined.inc(undefined, r.quarantined);
      this.logger.warn(
        "moved data files the catalog does not reference into the quarantine (not deleted); svc catalog quarantine lists them",
        {
          files: r.quarantined,
          folder: r.folder,
        },
      );
    }
    return r.deleted;
  }
}
