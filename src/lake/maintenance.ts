import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, type Counter, type Logger, type MetricsRegistry, type TableDef } from "../core/index.ts";
import type { LakeCatalog, LiveDataFile, NewDataFile, TableInfo } from "./catalog-port.ts";
import type { Engine } from "./engine.ts";
import { filesSelect } from "./query/views.ts";
import type { LakeWriter } from "./writer/writer.ts";
import { writeDataFile } from "./writer/data-file.ts";

/**
 * Lake housekeeping, one pass every `check_interval_sec` (spec doc 2 "Compaction", "Recovery"):
 *  - compaction ("default merge"): per table and partition, files below `max_file_size_bytes`
 *    committed at least `min_age_sec` ago are merged, sorted, into files up to that size, at most
 *    `max_compacted_files` outputs per table per pass; the swap is one catalog transaction that
 *    checks record counts (the catalog rolls back on a mismatch);
 *  - retention: files whose newest row is older than `retention.days` are retired;
 *  - expiry: snapshots older than `snapshot_retention_sec` are dropped and the files no snapshot
 *    sees any more are deleted from disk (superseded files stay readable by time travel until then);
 *  - at start only: Parquet files under the data path that the catalog does not reference
 *    (written by a flush that crashed before its commit) are removed.
 * The heavy COPY runs on a background connection; only the swap and view refresh run on the
 * writer chain, so ingest never waits for a merge.
 */
export interface MaintenanceOptions {
  dataPath: string;
  rowGroupRows: number;
  compaction: { enable: boolean; minAgeSec: number; maxFileSizeBytes: number; maxCompactedFiles: number };
  retentionDays: number;
  snapshotRetentionSec: number;
}

export interface MaintainedTable {
  def: TableDef;
  info: TableInfo;
}

export class LakeMaintenance {
  private readonly merged: Counter<"table">;
  private readonly retired: Counter<"table">;
  private readonly deleted: Counter;
  private running = false;

  constructor(
    private readonly engine: Engine,
    private readonly catalog: LakeCatalog,
    private readonly writer: LakeWriter,
    private readonly tables: () => MaintainedTable[],
    private readonly refresh: (key: string) => Promise<void>,
    private readonly opts: MaintenanceOptions,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
  ) {
    this.merged = metrics.counter("svc_lake_compacted_files_total", "Data files merged away by compaction, per table.", ["table"]);
    this.retired = metrics.counter("svc_lake_retired_files_total", "Data files retired by retention, per table.", ["table"]);
    this.deleted = metrics.counter("svc_lake_deleted_files_total", "Data files deleted from disk after snapshot expiry or as orphans.");
  }

  /** One full pass; concurrent calls return at once. Never throws (errors are logged). */
  async runOnce(nowMs = Date.now()): Promise<{ merged: number; retired: number; deleted: number }> {
    if (this.running) return { merged: 0, retired: 0, deleted: 0 };
    this.running = true;
    const out = { merged: 0, retired: 0, deleted: 0 };
    try {
      for (const t of this.tables()) {
        const key = `${t.def.schema}.${t.def.name}`;
        try {
          if (this.opts.retentionDays > 0) out.retired += await this.retain(t, key, nowMs);
          if (this.opts.compaction.enable) out.merged += await this.compact(t, key, nowMs);
        } catch (e) {
          this.logger.error("lake maintenance failed for a table; retried next pass", { table: key, error: errorMessage(e) });
        }
      }
      try {
        out.deleted += this.expire(nowMs);
      } catch (e) {
        // A full disk fails the catalog write here too: logged, retried next pass, never an
        // unhandled rejection of the timer (docs/ARCHITECTURE.md "When a flush fails").
        this.logger.error("lake snapshot expiry failed; retried next pass", { error: errorMessage(e) });
      }
    } finally {
      this.running = false;
    }
    return out;
  }

  private async retain(t: MaintainedTable, key: string, nowMs: number): Promise<number> {
    const cutoffMs = nowMs - this.opts.retentionDays * 86_400_000;
    const cutoff = new Date(cutoffMs).toISOString().replace("T", " ").replace("Z", "");
    const r = await this.writer.exclusive(async () => {
      const res = this.catalog.retireFilesBefore(t.info.tableId, t.def.timeColumn, cutoff);
      if (res.files > 0) await this.refresh(key);
      return res;
    });
    if (r.files > 0) {
      this.retired.inc({ table: key }, r.files);
      this.logger.info("retention retired files", { table: key, files: r.files, cutoff });
    }
    return r.files;
  }

  /** Groups of small, settled files per partition, each group one merge. */
  private plan(t: MaintainedTable, nowMs: number): LiveDataFile[][] {
    const { minAgeSec, maxFileSizeBytes, maxCompactedFiles } = this.opts.compaction;
    const byPart = new Map<string, LiveDataFile[]>();
    for (const f of this.catalog.listDataFiles(t.info.tableId)) {
      if (f.fileSizeBytes >= maxFileSizeBytes) continue;
      const at = this.catalog.snapshotTimeMs(f.beginSnapshot);
      if (at !== undefined && nowMs - at < minAgeSec * 1000) continue;
      const part = JSON.stringify(f.partitionValues);
      const list = byPart.get(part);
      if (list) list.push(f);
      else byPart.set(part, [f]);
    }
    const groups: LiveDataFile[][] = [];
    for (const files of byPart.values()) {
      files.sort((a, b) => a.dataFileId - b.dataFileId);
      let cur: LiveDataFile[] = [];
      let size = 0;
      for (const f of files) {
        if (cur.length > 0 && size + f.fileSizeBytes > maxFileSizeBytes) {
          if (cur.length > 1) groups.push(cur);
          cur = [];
          size = 0;
        }
        cur.push(f);
        size += f.fileSizeBytes;
      }
      if (cur.length > 1) groups.push(cur);
      if (groups.length >= maxCompactedFiles) break;
    }
    return groups.slice(0, maxCompactedFiles);
  }

  private async compact(t: MaintainedTable, key: string, nowMs: number): Promise<number> {
    let merged = 0;
    for (const group of this.plan(t, nowMs)) {
      const partitionValue = t.def.partitionBy ? group[0]!.partitionValues[t.def.partitionBy] : undefined;
      let file: NewDataFile;
      try {
        file = await writeDataFile(
          (sql) => this.engine.runBackground(sql),
          (sql) => this.engine.readBackground(sql),
          filesSelect(t.def, group).join(" UNION ALL "),
          {
            def: t.def,
            info: t.info,
            dataPath: this.opts.dataPath,
            relPath: this.catalog.newDataFilePath(t.info.tableId, partitionValue),
            rowGroupRows: this.opts.rowGroupRows,
            ...(partitionValue !== undefined ? { partitionValue } : {}),
          },
        );
      } catch (e) {
        this.logger.error("compaction merge failed", { table: key, files: group.length, error: errorMessage(e) });
        continue;
      }
      try {
        await this.writer.exclusive(async () => {
          this.catalog.replaceDataFiles(
            t.info.tableId,
            group.map((f) => f.dataFileId),
            [file],
          );
          await this.refresh(key);
        });
        merged += group.length;
        this.merged.inc({ table: key }, group.length);
        this.logger.debug("compacted", { table: key, files: group.length, rows: file.recordCount, bytes: file.fileSizeBytes });
      } catch (e) {
        // Record counts differ or the files changed meanwhile: drop the merged file, retry next pass.
        rmSync(join(this.opts.dataPath, file.path), { force: true });
        this.logger.warn("compaction swap rolled back", { table: key, error: errorMessage(e) });
      }
    }
    return merged;
  }

  private expire(nowMs: number): number {
    this.catalog.expireSnapshots(nowMs - this.opts.snapshotRetentionSec * 1000);
    const scheduled = this.catalog.listScheduledDeletions();
    if (scheduled.length === 0) return 0;
    for (const d of scheduled) rmSync(d.absolutePath, { force: true });
    this.catalog.forgetFiles(scheduled.map((d) => d.dataFileId));
    this.deleted.inc(undefined, scheduled.length);
    return scheduled.length;
  }

  /** Removes Parquet files no catalog row references (a flush that died before its commit). */
  removeOrphans(): number {
    const referenced = this.catalog.referencedPaths();
    let removed = 0;
    const walk = (dir: string) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        const p = join(dir, name);
        const st = statSync(p, { throwIfNoEntry: false });
        if (!st) continue;
        if (st.isDirectory()) walk(p);
        // Only our own naming (DuckLake layout): never touch other files someone put there.
        else if (name.startsWith("ducklake-") && name.endsWith(".parquet") && !referenced.has(p)) {
          rmSync(p, { force: true });
          removed++;
        }
      }
    };
    walk(this.opts.dataPath);
    if (removed > 0) {
      this.deleted.inc(undefined, removed);
      this.logger.info("removed unreferenced data files left by an interrupted flush", { files: removed });
    }
    return removed;
  }
}
