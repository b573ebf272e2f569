import { rmSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, isAppError, type Logger, type MetricsRegistry, type TableDef } from "../../core/index.ts";
import { parseTimestampMicros } from "../catalog/index.ts";
import { filesSelect } from "../query/views.ts";
import { type DataFileTarget, writeDataFile } from "../writer/data-file.ts";
import { LOOKUP_COLUMNS } from "../bloom-index.ts";
import { forgetReservations } from "./reservations.ts";
import type { LakeCatalog, LiveDataFile, NewDataFile, PartitionSwapGuard, TableInfo } from "../catalog-port.ts";
import { isOutOfMemory, type CompactionDb } from "./duck.ts";
import { type CompactionMetrics, compactionMetrics } from "./metrics.ts";
import { FooterCache } from "./footers.ts";
import { MergeBudget } from "./merge-budget.ts";
import { planDefaultMerge, planNative, retentionCutPartition, sortCost, type FileFacts, type Skipped } from "./plan.ts";

/**
 * The two compaction engines over one table (docs/ARCHITECTURE.md "Compaction engines"):
 *  - `duckdb`, the default merge: planDefaultMerge, each merge swapped on its own
 *    (catalog.replaceDataFiles checks the replaced files' record count against the merged file's);
 *  - `native`: planNative, per settled partition, every merged file of the partition swapped in one
 *    transaction that also checks the partition's live files and row counts before and after
 *    (PartitionSwapGuard); after each cycle a catalog with duplicate snapshots switches it off
 *    until restart, and the default merge takes over.
 * A merge is one sorted COPY on the compaction's own DuckDB (CompactionDb), bounded by the planner
 * to what one sort holds in compaction.memory_limit; only the swap and the view refresh run on the
 * writer chain, so ingest never waits for a merge.
 */
export interface CompactorOptions {
  engine: "duckdb" | "native";
  dataPath: string;
  rowGroupRows: number;
  minAgeSec: number;
  maxFileSizeBytes: number;
  maxCompactedFiles: number;
  /** Rows per data page of a merged file's PLAIN chunks (docs/STORAGE.md "Paged data files"); 0: DuckDB's pages. */
  rowsPerPage?: number;
  /** Worker entry that cuts merged files into pages (src/core/parquet/repage-worker.ts); absent: on this thread. */
  repageWorker?: URL;
  targetFileSizeBytes: number;
  maxRowGroupBytes: number;
  /** Largest uncompressed size one merge (one DuckDB sort) holds (from compaction.memory_limit). */
  maxSortBytes: number;
  retentionDays: number;
  /** A remote data_path (docs/STORAGE.md "Compaction, retention and orphans"): inputs fetched, outputs uploaded before the swap. */
  remote?: CompactionRemote;
}

/** What the merge needs of src/lake/remote/remote-files.ts (RemoteFiles). */
export interface CompactionRemote {
  acquire(absPaths: readonly string[]): Promise<void>;
  release(absPaths: readonly string[]): void;
  upload(absPaths: readonly string[]): Promise<void>;
  committed(absPaths: readonly string[]): void;
}

export interface CompactedTable {
  def: TableDef;
  info: TableInfo;
}

/** The writer chain (LakeWriter.exclusive): catalog swaps queue behind flushes, never beside them. */
export type Exclusive = <T>(job: () => Promise<T>) => Promise<T>;

type Engine = "duckdb" | "native";

/** A merged file and the files it replaces. */
interface Piece {
  files: LiveDataFile[];
  out: NewDataFile;
}

export class Compactor {
  private nativeOff = false;
  private readonly footers: FooterCache;
  private readonly seen = new Set<string>();
  private readonly m: CompactionMetrics;
  private readonly budget: MergeBudget;
  /** How merged files are cut into pages (docs/STORAGE.md "Paged data files"); undefined: not. */
  private readonly paged: DataFileTarget["paged"];

  constructor(
    private readonly db: CompactionDb,
    private readonly catalog: LakeCatalog,
    private readonly exclusive: Exclusive,
    private readonly refresh: (key: string) => Promise<void>,
    private readonly opts: CompactorOptions,
    private readonly logger: Logger,
    metrics: MetricsRegistry,
  ) {
    this.footers = new FooterCache(db);
    const worker = opts.repageWorker;
    const onFallback = (reason: string) => logger.warn("page cutter worker gave no answer; cut here", { reason });
    this.paged = opts.rowsPerPage
      ? {
          rowsPerPage: opts.rowsPerPage,
          scratchDir: db.scratchDir,
          bloomColumns: LOOKUP_COLUMNS,
          ...(worker ? { worker, onFallback } : {}),
        }
      : undefined;
    this.budget = new MergeBudget(opts.maxSortBytes);
    this.m = compactionMetrics(metrics);
  }

  /** The engine the next cycle uses for partitioned tables. */
  get engine(): Engine {
    return this.opts.engine === "native" && !this.nativeOff ? "native" : "duckdb";
  }

  /** Compacts one table; returns the number of files merged away. `nativeOk`: false when the catalog holds inlined rows. */
  async compactTable(t: CompactedTable, key: string, nowMs: number, nativeOk: boolean): Promise<number> {
    const r = this.opts.remote;
    if (!r) return await this.compactListed(t, key, nowMs, nativeOk);
    // Remote: only files below max_file_size_bytes can be merged (the default merge; native is
    // refused for remote paths at start): those are fetched into the read cache and pinned.
    const paths = (await this.catalog.listDataFiles(t.info.tableId))
      .filter((f) => f.fileSizeBytes < this.opts.maxFileSizeBytes)
      .map((f) => f.absolutePath);
    if (paths.length < 2) return 0;
    await r.acquire(paths);
    try {
      return await this.compactListed(t, key, nowMs, nativeOk, new Set(paths));
    } finally {
      r.release(paths);
    }
  }

  private async compactListed(
    t: CompactedTable,
    key: string,
    nowMs: number,
    nativeOk: boolean,
    local?: ReadonlySet<string>,
  ): Promise<number> {
    const listed = await this.catalog.listDataFiles(t.info.tableId);
    // A file committed since the paths were acquired (remote) is left for the next cycle.
    const files = local ? listed.filter((f) => local.has(f.absolutePath)) : listed;
    for (const f of files) this.seen.add(f.absolutePath);
    if (files.length < 2) return 0;
    const footers = await this.footers.get(files.map((f) => f.absolutePath));
    const byId = new Map(files.map((f) => [f.dataFileId, f]));
    // One lookup per distinct commit snapshot (a round trip each on a remote catalog).
    const committedAt = new Map<number, number | undefined>();
    for (const f of files)
      if (!committedAt.has(f.beginSnapshot))
        committedAt.set(f.beginSnapshot, await this.catalog.snapshotTimeMs(f.beginSnapshot));
    const facts = files.map((f): FileFacts => {
      const minText = f.columnStats[t.def.timeColumn]?.min;
      return {
        id: f.dataFileId,
        bytes: f.fileSizeBytes,
        rows: f.recordCount,
        committedMs: committedAt.get(f.beginSnapshot),
        partition: t.def.partitionBy ? f.partitionValues[t.def.partitionBy] : undefined,
        minTimeUs: minText ? toNumber(parseTimestampMicros(minText)) : null,
        maxRowGroupBytes: footers.get(f.absolutePath)?.maxRowGroupBytes ?? 0,
        uncompressedBytes: footers.get(f.absolutePath)?.uncompressedBytes ?? 0,
        hasDeletes: f.hasDeletes === true,
      };
    });
    const o = this.opts;
    const plan = {
      nowMs,
      minAgeSec: o.minAgeSec,
      maxRowGroupBytes: o.maxRowGroupBytes,
      maxSortBytes: this.budget.sortBytesFor(key),
      ...cutOption(t.def, nowMs, o.retentionDays),
    };
    const filesOf = (g: FileFacts[]) => g.map((f) => byId.get(f.id)!);
    const factsById = new Map(facts.map((f) => [f.id, f]));
    let merged = 0;
    if (this.engine === "native" && nativeOk && t.def.partitionBy !== undefined) {
      const { partitions, skipped } = planNative(facts, { ...plan, targetFileSizeBytes: o.targetFileSizeBytes });
      this.countSkips(key, skipped);
      for (const p of partitions) {
        const groups = p.groups.map(filesOf);
        merged += await this.mergeAndSwap(
          t,
          key,
          "native",
          groups,
          p.partition,
          { partitionValue: p.partition, liveFileIds: p.liveFileIds },
          factsById,
        );
      }
      return merged;
    }
    const { groups, skipped } = planDefaultMerge(facts, {
      ...plan,
      maxFileSizeBytes: o.maxFileSizeBytes,
      maxOutputs: o.maxCompactedFiles,
    });
    this.countSkips(key, skipped);
    for (const g of groups)
      merged += await this.mergeAndSwap(t, key, "duckdb", [filesOf(g)], g[0]!.partition, undefined, factsById);
    return merged;
  }

  /**
   * The post-cycle check of the native engine (docs/ARCHITECTURE.md "Compaction engines"): duplicate snapshot ids or more than one
   * latest snapshot switch it off until restart. Also forgets footers of files no longer live.
   */
  async afterCycle(): Promise<void> {
    this.budget.nextCycle();
    this.footers.retain(this.seen);
    this.seen.clear();
    if (this.engine !== "native") return;
    const a = await this.catalog.snapshotAnomalies();
    if (a.duplicateRows === 0 && a.latestRows <= 1) return;
    this.nativeOff = true;
    this.m.nativeDisabled.set(1);
    this.logger.error(
      "native compaction switched itself off until restart: the catalog has duplicate snapshots (a second writer or a damaged catalog); the default merge is used",
      {
        duplicate_rows: a.duplicateRows,
        latest_rows: a.latestRows,
      },
    );
  }

  /**
   * Writes each group's merged file(s), then swaps all of them in one catalog transaction. A
   * group that ran out of memory is merged in smaller pieces (write); files no piece could take
   * stay as they are, and the pieces that were written are swapped.
   */
  private async mergeAndSwap(
    t: CompactedTable,
    key: string,
    engine: Engine,
    groups: LiveDataFile[][],
    partition: string | undefined,
    guard: PartitionSwapGuard | undefined,
    facts: Map<number, FileFacts>,
  ): Promise<number> {
    const pieces: Piece[] = [];
    // An abandoned merge's files go, and their path reservations (reservations.ts).
    const drop = async () => {
      for (const p of pieces) rmSync(join(this.opts.dataPath, p.out.path), { force: true });
      await this.forget(pieces.map((p) => p.out.path));
    };
    try {
      for (const g of groups) await this.write(t, key, g, partition, pieces, facts);
    } catch (e) {
      await drop();
      if (this.db.interrupted) {
        // The shutdown stopped it (LakeMaintenance.stop): nothing failed, the files stay as they are.
        this.logger.info("compaction merge stopped by the shutdown; the files stay as they are", {
          table: key,
          engine,
          partition,
          files: groups.flat().length,
        });
        return 0;
      }
      this.m.rollbacks.inc({ table: key, reason: "error" });
      this.logger.error("compaction merge failed; retried next cycle", {
        table: key,
        engine,
        partition,
        files: groups.flat().length,
        error: errorMessage(e),
      });
      return 0;
    }
    if (pieces.length === 0) {
      this.m.rollbacks.inc({ table: key, reason: "out_of_memory" });
      this.logger.warn("compaction merge ran out of memory even in pieces of two files; the files stay as they are", {
        table: key,
        engine,
        partition,
        files: groups.flat().length,
        next_budget: this.budget.sortBytesFor(key),
      });
      return 0;
    }
    const old = pieces.flatMap((p) => p.files.map((f) => f.dataFileId));
    const written = pieces.map((p) => p.out);
    const writtenPaths = written.map((f) => join(this.opts.dataPath, f.path));
    let committed = false;
    try {
      // Remote: the merged files are in the store before the swap names them.
      if (this.opts.remote) await this.opts.remote.upload(writtenPaths);
      await this.exclusive(async () => {
        await this.catalog.replaceDataFiles(t.info.tableId, old, written, guard);
        committed = true;
        await this.refresh(key);
      });
    } catch (e) {
      if (committed) {
        // The swap is in the catalog; only the view refresh failed (retried by the next refresh).
        this.logger.warn("compaction committed but the view refresh failed", { table: key, error: errorMessage(e) });
      } else {
        await drop();
        const reason =
          isAppError(e) && e.code === "CONFLICT" && typeof e.details?.reason === "string" ? e.details.reason : "error";
        this.m.rollbacks.inc({ table: key, reason });
        this.logger.warn("compaction swap rolled back; the partition is retried next cycle", {
          table: key,
          engine,
          partition,
          reason,
          error: errorMessage(e),
        });
        return 0;
      }
    }
    this.opts.remote?.committed(writtenPaths);
    this.m.mergedAway.inc({ table: key }, old.length);
    this.m.merges.inc({ table: key, engine }, written.length);
    this.logger.debug("compacted", {
      table: key,
      engine,
      partition,
      files: old.length,
      outputs: written.length,
      rows: written.reduce((s, f) => s + f.recordCount, 0),
    });
    return old.length;
  }

  /**
   * The group's merged file, appended to `out`: one sorted COPY (DuckDB spills the sort to
   * <temp>/compaction). After an out-of-memory error the table's budget is lowered (MergeBudget.lower)
   * and the group is merged as two halves, down to pieces of two files; a half of one file is
   * left as it is (rewriting it alone merges nothing) and counted.
   */
  private async write(
    t: CompactedTable,
    key: string,
    files: LiveDataFile[],
    partition: string | undefined,
    out: Piece[],
    facts: Map<number, FileFacts>,
  ): Promise<void> {
    if (files.length < 2) {
      this.m.skips.inc({ table: key, reason: "out_of_memory" }, files.length);
      return;
    }
    const relPath = await this.catalog.newDataFilePath(t.info.tableId, partition);
    try {
      const file = await writeDataFile(
        (sql) => this.db.run(sql),
        (sql) => this.db.read(sql),
        filesSelect(t.def, files).join(" UNION ALL "),
        {
          def: t.def,
          info: t.info,
          dataPath: this.opts.dataPath,
          relPath,
          rowGroupRows: this.opts.rowGroupRows,
          ...(this.paged ? { paged: this.paged } : {}),
          ...(partition !== undefined ? { partitionValue: partition } : {}),
        },
      );
      out.push({ files, out: file });
    } catch (e) {
      // writeDataFile removed the file; its reservation goes too.
      await this.forget([relPath]);
      if (!isOutOfMemory(e)) throw e;
      const costs = files.map((f) => (facts.get(f.dataFileId) ? sortCost(facts.get(f.dataFileId)!) : 0));
      const cost = costs.reduce((a, b) => a + b, 0);
      this.budget.lower(key, cost);
      this.m.splits.inc({ table: key });
      // Split where half of the cost is reached, so two halves of unequal files are both smaller.
      let half = 1;
      for (let acc = costs[0]!; half < files.length - 1 && acc + costs[half]! <= cost / 2; half++) acc += costs[half]!;
      this.logger.warn(
        "compaction merge ran out of memory; merging it in two pieces, and smaller merges for this table for a while",
        {
          table: key,
          files: files.length,
          sort_bytes: cost,
          next_budget: this.budget.sortBytesFor(key),
          error: errorMessage(e),
        },
      );
      await this.write(t, key, files.slice(0, half), partition, out, facts);
      await this.write(t, key, files.slice(half), partition, out, facts);
    }
  }

  private forget(paths: readonly string[]): Promise<void> {
    return forgetReservations(this.catalog, this.logger, paths);
  }

  private countSkips(key: string, s: Skipped): void {
    for (const [reason, n] of Object.entries(s)) if (n) this.m.skips.inc({ table: key, reason }, n);
  }
}

const toNumber = (v: bigint | null) => (v === null ? null : Number(v));

/** The retention cut partition applies to tables partitioned by the date of their time column. */
function cutOption(def: TableDef, nowMs: number, days: number): { cutPartition?: string } {
  const col = def.partitionBy ? def.columns.find((c) => c.name === def.partitionBy) : undefined;
  if (col?.derived !== `date_of:${def.timeColumn}`) return {};
  const cut = retentionCutPartition(nowMs, days);
  return cut === undefined ? {} : { cutPartition: cut };
}
