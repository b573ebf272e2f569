/**
 * DuckLake-format catalog in SQLite (docs/DUCKLAKE.md). The writer registers Parquet files here, the
 * query engine lists them; a stock DuckDB with the ducklake extension reads the same catalog.
 */
export { Catalog, openCatalog, type OpenCatalogOptions } from "./catalog.ts";
export { DUCKLAKE_VERSION } from "./ddl.ts";
export { catalogSchemaProblems } from "./schema-check.ts";
export { dropInflightRows } from "./inflight.ts";
export { FreshStats, statsMemoOf } from "./stats-memo.ts";
export type { WriterWatermark } from "./data-files.ts";
export type { PartitionSwapGuard } from "./file-swap.ts";
export type { SnapshotAnomalies } from "./snapshot-check.ts";
export type { CatalogLock, LockOwner } from "./lock.ts";
export type {
  ColumnDef,
  ColumnInfo,
  DataFileInfo,
  FileColumnStats,
  IntegrityReport,
  LakeType,
  ListFilesOptions,
  NewColumnStats,
  NewDataFile,
  RepairReport,
  ScheduledDeletion,
  SnapshotInfo,
  StatBound,
  TableDef,
  TableInfo,
  TableStats,
} from "./types.ts";
export { LAKE_TYPES } from "./types.ts";
export {
  compareStatValues,
  duckdbType,
  formatDateDays,
  formatDouble,
  formatStatValue,
  formatTimestampMicros,
  isLakeType,
  newDataFilePath,
  parseTimestampMicros,
  partitionDir,
  typeHasNan,
} from "./values.ts";
export { columnStatsFromParquet, parquetFooterSize, type ParquetChunkStats } from "./parquet-stats.ts";
