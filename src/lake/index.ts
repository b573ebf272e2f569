export { Lake, type LakeConfig, type LakeDeps } from "./lake.ts";
export { beforeDuckDbLoads } from "./duckdb.ts";
export type { ScanFile, ScanOptions, ScanPlan } from "./scan-plan.ts";
export type { MatchResult } from "./page-match.ts";
export type { QueryOptions, QueryResult, SqlParams } from "./engine.ts";
export type { LakeCatalog } from "./catalog-port.ts";
export type { WriterHealth } from "./writer/writer.ts";
export { findTimeTravel, rewriteTimeTravel } from "./query/time-travel.ts";
export { lexSql, tokenize } from "./query/lexer.ts";
export { crossCheckWithDuckDb } from "./query/parse-check.ts";
export {
  checkReadOnlySql,
  ALLOWED_TABLE_FUNCTIONS,
  type CheckedSql,
  type SqlGuardOptions,
  type SqlRejectReason,
} from "./query/sql-guard.ts";
export { ident, literal, DUCKDB_TYPE } from "./sql.ts";
export { ROW_FILE, ROW_NUMBER } from "./query/views.ts";
export { resultTooLarge } from "./result-stream.ts";
export {
  backupCatalog,
  listCatalogBackups,
  listQuarantine,
  purgeQuarantine,
  rebuildCatalog,
  restoreCatalog,
  type BackupEntry,
  type CatalogPaths,
  type RebuildReport,
  type RestoreReport,
} from "./admin/index.ts";
export { cacheDirOf, isRemoteDataPath } from "./remote/open.ts";
export { checkCatalogUrl, lakeIdDir, lakeStateDir } from "./catalog-config.ts";
