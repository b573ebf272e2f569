import type { ColumnType } from "../core/index.ts";

/**
 * What the writer and the query layer need from the catalog (src/lake/catalog implements it over
 * the DuckLake tables in SQLite). Kept narrow so the write path is easy to reason about.
 */
export interface TableInfo {
  tableId: number;
  schemaName: string;
  name: string;
  columns: Array<{ columnId: number; name: string; type: ColumnType }>;
}

export interface ColumnStat {
  min: string | null;
  max: string | null;
  nullCount: number;
}

export interface NewDataFile {
  /** Relative to the data path. */
  path: string;
  recordCount: number;
  fileSizeBytes: number;
  footerSize: number;
  columnStats: Record<string, ColumnStat>;
  partitionValues?: Record<string, string>;
}

export interface LiveDataFile {
  dataFileId: number;
  path: string;
  absolutePath: string;
  recordCount: number;
  fileSizeBytes: number;
  beginSnapshot: number;
  partitionValues: Record<string, string>;
  /** Columns present in the file (file_column_stats rows), with their stats. */
  columnStats: Record<string, ColumnStat>;
  /** A live row-level delete file exists for it (written only by other programs; never compacted). */
  hasDeletes?: boolean;
}

/** What LakeCatalog.listDataFiles takes (documented there). */
export interface ListDataFilesOptions {
  snapshotId?: number;
  column?: string;
  min?: string;
  max?: string;
  statsColumns?: string[];
  fileIds?: readonly number[];
}

/** A file as both catalogs list it (src/lake/catalog and catalog-pg), before it is a LiveDataFile. */
export interface ListedDataFile extends Omit<LiveDataFile, "columnStats" | "hasDeletes"> {
  columnStats: Record<string, { min: string | null; max: string | null; nullCount?: number | null }>;
  deleteFile?: unknown;
}

/** A listed file in the port's shape: stats without sizes (a missing NULL count is 0), a delete file as a flag. */
export function toLiveDataFile(f: ListedDataFile): LiveDataFile {
  return {
    dataFileId: f.dataFileId,
    path: f.path,
    absolutePath: f.absolutePath,
    recordCount: f.recordCount,
    fileSizeBytes: f.fileSizeBytes,
    beginSnapshot: f.beginSnapshot,
    partitionValues: f.partitionValues,
    columnStats: liveStats(f.columnStats),
    ...(f.deleteFile ? { hasDeletes: true } : {}),
  };
}

/** The port's stats of a frozen record the statistics memo hands out, made once (src/lake/catalog/stats-memo.ts). */
const liveOf = new WeakMap<object, Readonly<Record<string, ColumnStat>>>();

function liveStats(stats: ListedDataFile["columnStats"]): Record<string, ColumnStat> {
  const known = liveOf.get(stats);
  if (known) return known;
  const live: Record<string, ColumnStat> = {};
  for (const k in stats) {
    const s = stats[k]!;
    live[k] = { min: s.min, max: s.max, nullCount: s.nullCount ?? 0 };
  }
  if (!Object.isFrozen(stats)) return live;
  liveOf.set(stats, Object.freeze(live));
  return live;
}

/** Native compaction's swap checks (src/lake/catalog/file-swap.ts PartitionSwapGuard). */
export interface PartitionSwapGuard {
  partitionValue: string | null;
  liveFileIds: number[];
}

/** A writer's position committed with its files (svc_writer_watermark, docs/DUCKLAKE.md "Our own additions"). */
export interface WriterMark {
  writerKey: string;
  watermark: number;
}

/**
 * The catalog port, asynchronous (docs/DUCKLAKE.md "The catalog port"): every method answers a
 * promise, so a catalog across the network (PostgreSQL: one round trip per call) and the SQLite
 * catalog (in-process; its promises are already settled) sit behind one interface. Callers must
 * not assume two calls see the same catalog state: whatever has to be consistent across calls is
 * serialised by the caller (the writer chain, the writer's commit gate) or passes a snapshot id.
 * test/lake/catalog-contract.ts is the behaviour every backend must show.
 */
export interface LakeCatalog {
  /** Creates the table (and schema) or adds the missing columns; CONFLICT on another partitioning. Idempotent. */
  ensureTable(
    schema: string,
    def: { name: string; columns: Array<{ name: string; type: ColumnType }>; partitionBy?: string },
  ): Promise<TableInfo>;
  /**
   * One transaction: a new snapshot with the files, and each of `writers`' marks recorded in
   * svc_writer_watermark (a spool position, a relay's sender position). No files: nothing is
   * written (no snapshot, no mark) and the current snapshot id is answered.
   */
  commitDataFiles(
    tableId: number,
    files: NewDataFile[],
    writers?: ReadonlyArray<WriterMark>,
  ): Promise<{ snapshotId: number }>;
  /**
   * Like commitDataFiles for several tables: ONE transaction, one snapshot with every table's
   * files, and `writers`' marks (a forward receiver's senders' positions committed with their rows,
   * docs/DEPLOY.md "Where the central keeps an edge's position"). No files: nothing is written.
   */
  commitInserts(
    batches: ReadonlyArray<{ tableId: number; files: NewDataFile[] }>,
    writers?: ReadonlyArray<WriterMark>,
  ): Promise<{ snapshotId: number }>;
  /**
   * Only `writers`' marks, in one transaction, with no snapshot (recorded at the current one): a
   * forward receiver's positions over batches that brought no row, every packet refused for good
   * (docs/DEPLOY.md "Where the central keeps an edge's position").
   */
  commitMarks(writers: ReadonlyArray<WriterMark>): Promise<void>;
  /** The watermark last committed for `writerKey`, 0 when none. */
  writerWatermark(writerKey: string): Promise<number>;
  /**
   * Where a new data file of the table goes, relative to the data path (DuckLake layout), reserved
   * as in flight until the commit that registers it (docs/OPERATIONS.md "Orphans at start and the
   * quarantine").
   */
  newDataFilePath(tableId: number, partitionValue?: string): Promise<string>;
  /** Paths reserved by newDataFilePath and not committed (relative to the data path). */
  inflightPaths(): Promise<Set<string>>;
  /** Forgets every reservation (at start, after the orphan sweep); answers how many there were. */
  clearInflight(): Promise<number>;
  /**
   * Forgets this writer's reservations of `paths` only (the object-store sweep, once their objects
   * are deleted or known never to have been uploaded); answers how many rows went.
   */
  forgetInflight(paths: readonly string[]): Promise<number>;
  /**
   * Shared catalogs only: other writers' reservations older than `graceMs` whose writer is gone
   * (docs/DUCKLAKE.md "In-flight files"), relative to the data path.
   */
  deadReservations?(graceMs: number): Promise<string[]>;
  /** Forgets such reservations once their files are deleted; a path reserved again meanwhile stays. */
  forgetReservations?(paths: string[], graceMs: number): Promise<number>;
  currentSnapshotId(): Promise<number>;
  /** The newest snapshot at or before the time, or undefined when none is that old. */
  snapshotAt(timestampMs: number): Promise<number | undefined>;
  /**
   * Live files at `snapshotId` (default current), pruned to those overlapping [min, max] of `column` when given.
   * `statsColumns`: load column statistics for these columns only (default: every column).
   * `fileIds`: only these files (those live at the snapshot; not with `column`).
   */
  listDataFiles(tableId: number, opts?: ListDataFilesOptions): Promise<LiveDataFile[]>;
  listTables(): Promise<TableInfo[]>;
  /** One table by name (case-insensitive), at the current snapshot. */
  getTable(schema: string, name: string): Promise<TableInfo | undefined>;
  /** How the catalog spells schema `name` (case-insensitive match), or undefined when absent. */
  schemaName(name: string): Promise<string | undefined>;
  /** Compaction: retires `oldFileIds` and registers `newFiles` in one snapshot (record counts must match; CONFLICT otherwise). */
  replaceDataFiles(
    tableId: number,
    oldFileIds: number[],
    newFiles: NewDataFile[],
    guard?: PartitionSwapGuard,
  ): Promise<{ snapshotId: number }>;
  /** Duplicate snapshot rows: rows beyond the first per id, and rows carrying the highest id. */
  snapshotAnomalies(): Promise<{ duplicateRows: number; latestRows: number }>;
  /** Rows inlined into catalog tables by another writer exist (native compaction skips such catalogs). */
  hasInlinedRows(): Promise<boolean>;
  /** Retention: ends files whose `column` maximum is below `cutoff` (stats text). */
  retireFilesBefore(
    tableId: number,
    column: string,
    cutoff: string,
  ): Promise<{ snapshotId: number | null; files: number }>;
  /** Drops snapshots older than the time; files no snapshot still sees are scheduled for deletion. */
  expireSnapshots(olderThanMs: number): Promise<{ expiredSnapshots: number; scheduledFiles: number }>;
  listScheduledDeletions(): Promise<Array<{ dataFileId: number; absolutePath: string }>>;
  /** Removes the catalog rows of files scheduled for deletion (after their files were deleted). */
  forgetFiles(dataFileIds: number[]): Promise<number>;
  /** Absolute paths of every file a catalog row references (in every snapshot, delete files and scheduled deletions included). */
  referencedPaths(): Promise<Set<string>>;
  snapshotTimeMs(snapshotId: number): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * The name the PostgreSQL catalog's work uses (src/lake/catalog-pg): the port itself is the
 * asynchronous shape now.
 */
export type AsyncLakeCatalog = LakeCatalog;
