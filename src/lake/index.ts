export { Lake, type LakeConfig, type LakeDeps, type ScanFile, type ScanOptions, type ScanPlan } from "./lake.ts";
export type { QueryOptions, QueryResult, SqlParams } from "./engine.ts";
export type { LakeCatalog } from "./catalog-port.ts";
export type { WriterHealth } from "./writer/writer.ts";
export { findTimeTravel, rewriteTimeTravel, tokenize } from "./query/time-travel.ts";
export { checkReadOnlySql, ALLOWED_TABLE_FUNCTIONS, type CheckedSql, type SqlGuardOptions, type SqlRejectReason } from "./query/sql-guard.ts";
export { ident, literal, DUCKDB_TYPE } from "./sql.ts";
export { backupCatalog, listCatalogBackups, rebuildCatalog, restoreCatalog, type BackupEntry, type CatalogPaths, type RebuildReport, type RestoreReport } from "./admin/index.ts";
