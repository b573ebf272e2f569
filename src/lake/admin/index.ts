/**
 * Operator tools on the lake's catalog (docs/OPERATIONS.md): backups, restore, rebuild from the
 * Parquet files, and the start-up repair of duplicate catalog rows.
 */
export {
  backupCatalog,
  listCatalogBackups,
  restoreCatalog,
  resolveBackup,
  type BackupEntry,
  type CatalogPaths,
  type RestoreReport,
} from "./backup.ts";
export { rebuildCatalog, type Orphan, type RebuildOptions, type RebuildReport, type RebuiltTable } from "./rebuild.ts";
export { listQuarantine, purgeQuarantine, type QuarantineEntry } from "./quarantine.ts";
