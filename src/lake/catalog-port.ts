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

/** Native compaction's swap checks (src/lake/catalog/data-files.ts PartitionSwapGuard). */
export interface PartitionSwapGuard {
  partitionValue: string | null;
  liveFileIds: number[];
}

export interface LakeCatalog {
  ensureTable(schema: string, def: { name: string; columns: Array<{ name: string; type: ColumnType }>; partitionBy?: string }): TableInfo;
  /** One transaction: new snapshot with the files, and the writer's spool watermark for `writerKey`. */
  commitDataFiles(tableId: number, files: NewDataFile[], writer?: { writerKey: string; watermark: number }): { snapshotId: number };
  writerWatermark(writerKey: string): number;
  /**
   * Where a new data file of the table goes, relative to the data path (DuckLake layout), reserved
   * as in flight until the commit that registers it (docs/OPERATIONS.md "Orphans at start and the
   * quarantine").
   */
  newDataFilePath(tableId: number, partitionValue?: string): string;
  /** Paths reserved by newDataFilePath and not committed (relative to the data path). */
  inflightPaths(): Set<string>;
  /** Forgets every reservation (at start, after the orphan sweep). */
  clearInflight(): number;
  currentSnapshotId(): number;
  snapshotAt(timestampMs: number): number | undefined;
  /** Live files at `snapshotId` (default current), pruned to those overlapping [min, max] of `column` when given. */
  /**
   * `statsColumns`: load column statistics for these columns only (default: every column).
   * `fileIds`: only these files (those live at the snapshot; not with `column`).
   */
  listDataFiles(tableId: number, opts?: { snapshotId?: number; column?: string; min?: string; max?: string; statsColumns?: string[]; fileIds?: readonly number[] }): LiveDataFile[];
  listTables(): TableInfo[];
  /** One table by name (case-insensitive), at the current snapshot. */
  getTable(schema: string, name: string): TableInfo | undefined;
  /** How the catalog spells schema `name` (case-insensitive match), or undefined when absent. */
  schemaName(name: string): string | undefined;
  /** Compaction: retires `oldFileIds` and registers `newFiles` in one snapshot (record counts must match; CONFLICT otherwise). */
  replaceDataFiles(tableId: number, oldFileIds: number[], newFiles: NewDataFile[], guard?: PartitionSwapGuard): { snapshotId: number };
  /** Duplicate snapshot rows: rows beyond the first per id, and rows carrying the highest id. */
  snapshotAnomalies(): { duplicateRows: number; latestRows: number };
  /** Rows inlined into catalog tables by another writer exist (native compaction skips such catalogs). */
  hasInlinedRows(): boolean;
  /** Retention: ends files whose `column` maximum is below `cutoff` (stats text). */
  retireFilesBefore(tableId: number, column: string, cutoff: string): { snapshotId: number | null; files: number };
  /** Drops snapshots older than the time; files no snapshot sees any more are scheduled for deletion. */
  expireSnapshots(olderThanMs: number): { expiredSnapshots: number; scheduledFiles: number };
  listScheduledDeletions(): Array<{ dataFileId: number; absolutePath: string }>;
  forgetFiles(dataFileIds: number[]): number;
  referencedPaths(): Set<string>;
  snapshotTimeMs(snapshotId: number): number | undefined;
  close(): void;
}

/**
 * The same port with every method answering a promise: the shape every backend moves to, so a
 * PostgreSQL catalog (network round trips) and SQLite (in-process) sit behind one interface.
 */
export type AsyncLakeCatalog = {
  [K in keyof LakeCatalog]: LakeCatalog[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : LakeCatalog[K];
};
