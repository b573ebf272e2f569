/**
 * Public types of the DuckLake-format catalog (docs/DUCKLAKE.md). Ids are the DuckLake ids stored in
 * the catalog: `tableId` = ducklake_table.table_id, `columnId` = ducklake_column.column_id (also the
 * Parquet field id of the column), `dataFileId` = ducklake_data_file.data_file_id.
 */

/**
 * Column types this program creates, spelled as DuckLake type names (ducklake_column.column_type;
 * DuckLake spec "Data Types"). `timestamp` is microseconds without time zone, `timestamptz` is
 * microseconds in UTC, `date` is days. Tables created by other programs may hold other type names:
 * `ColumnInfo.type` is therefore a plain string.
 */
export const LAKE_TYPES = [
  "boolean",
  "int16",
  "int32",
  "int64",
  "uint64",
  "float32",
  "float64",
  "varchar",
  "json",
  "uuid",
  "date",
  "timestamp",
  "timestamptz",
] as const;
export type LakeType = (typeof LAKE_TYPES)[number];

export interface ColumnDef {
  name: string;
  type: LakeType;
}

export interface TableDef {
  name: string;
  columns: ColumnDef[];
  /** Identity partition on one column (DuckLake partition transform `identity`), e.g. "date". */
  partitionBy?: string;
}

export interface ColumnInfo {
  /** ducklake_column.column_id: unique within the table, and the Parquet field id of the column. */
  columnId: number;
  name: string;
  /** DuckLake type name (a LakeType for tables this program created). */
  type: string;
  /** ducklake_column.column_order */
  order: number;
}

export interface TableInfo {
  tableId: number;
  schemaId: number;
  schemaName: string;
  name: string;
  columns: ColumnInfo[];
  partitionBy?: string;
  /** ducklake_partition_info.partition_id of the current partitioning, when partitioned. */
  partitionId?: number;
  /**
   * Directory of the table's files relative to the data path, with a trailing slash, e.g.
   * "main/hep_proto_1/" (ducklake_schema.path + ducklake_table.path). New data files go below it.
   */
  dataDir: string;
}

/** Statistics of one column in one Parquet file (ducklake_file_column_stats). */
export interface NewColumnStats {
  /** Lower bound in the text format of `formatStatValue` for the column type; null when all NULL. */
  min: string | null;
  max: string | null;
  nullCount: number;
  /** Non-NULL values (what the DuckDB extension stores); default recordCount - nullCount. */
  valueCount?: number;
  /** Compressed bytes of the column chunks (Parquet total_compressed_size summed). */
  sizeBytes?: number;
  /** Floating-point columns: whether any value is NaN. */
  containsNan?: boolean;
}

export interface NewDataFile {
  /** File path relative to the data path, e.g. "main/hep_proto_1/date=2026-11-22/ducklake-<uuid>.parquet". */
  path: string;
  recordCount: number;
  fileSizeBytes: number;
  /** Length of the Parquet footer (the Thrift FileMetaData), the 4-byte little-endian value before "PAR1". */
  footerSize: number;
  /** Keyed by column name; columns missing from the file are left out. */
  columnStats: Record<string, NewColumnStats>;
  /** Keyed by the partition column name; required when the table is partitioned. */
  partitionValues?: Record<string, string>;
}

export interface FileColumnStats {
  min: string | null;
  max: string | null;
  nullCount: number | null;
  valueCount: number | null;
  sizeBytes: number | null;
  containsNan: boolean | null;
}

export interface DataFileInfo {
  dataFileId: number;
  tableId: number;
  /** Relative to the data path when the catalog stores a relative path, else absolute. */
  path: string;
  absolutePath: string;
  recordCount: number;
  fileSizeBytes: number;
  footerSize: number | null;
  rowIdStart: number | null;
  beginSnapshot: number;
  endSnapshot: number | null;
  partitionValues: Record<string, string>;
  /** Keyed by column name (columns of the table at the listed snapshot). */
  columnStats: Record<string, FileColumnStats>;
  /** A live positional delete file for this data file, if any (written only by other programs). */
  deleteFile?: { path: string; absolutePath: string; deleteCount: number | null };
  /** Set when the file has no field ids and needs ducklake_name_mapping (not written by us). */
  mappingId: number | null;
}

export interface SnapshotInfo {
  snapshotId: number;
  /** Milliseconds since the epoch (microseconds are kept in `time`). */
  timeMs: number;
  /** ducklake_snapshot.snapshot_time as stored, e.g. "2026-11-22 02:31:37.324175+00". */
  time: string;
  schemaVersion: number;
  nextCatalogId: number;
  nextFileId: number;
  changes: string | null;
}

export interface TableStats {
  tableId: number;
  /** ducklake_table_stats (record_count and file_size_bytes may be approximate per the spec). */
  recordCount: number;
  nextRowId: number;
  fileSizeBytes: number;
  /** Live data files at the current snapshot. */
  fileCount: number;
  /** ducklake_table_column_stats keyed by column name. */
  columns: Record<
    string,
    { min: string | null; max: string | null; containsNull: boolean | null; containsNan: boolean | null }
  >;
}

export interface ListFilesOptions {
  /** Snapshot to read (time travel); default the current one. */
  snapshotId?: number;
  /** Keep only files whose [min, max] of this column overlaps [min, max] (inclusive). */
  column?: string;
  min?: StatBound;
  max?: StatBound;
  /** Only these files (those of them live at the snapshot): the view refresh reads the statistics of new files only. */
  fileIds?: readonly number[];
}

/**
 * A bound for pruning and retention: a string in the stats text format, or a typed value as accepted
 * by `formatStatValue` (numbers for numeric columns; for timestamps a bigint/number of microseconds
 * since the epoch or a Date; for dates a Date or a number of days since the epoch).
 */
export type StatBound = string | number | bigint | Date;

export interface ScheduledDeletion {
  dataFileId: number;
  path: string;
  absolutePath: string;
  scheduledAt: string;
}

export interface IntegrityReport {
  ok: boolean;
  problems: string[];
}

export interface RepairReport {
  /** Rows removed per DuckLake table name. */
  removed: Record<string, number>;
}
