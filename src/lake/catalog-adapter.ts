import { statSync } from "node:fs";
import { AppError, type ColumnType, type Logger } from "../core/index.ts";
import { autoRepairCatalog } from "./admin/auto-repair.ts";
import { writerFiles } from "./admin/lake-files.ts";
import { formatStatValue, newDataFilePath, openCatalog, type Catalog, type TableInfo as CatalogTableInfo } from "./catalog/index.ts";
import type { LakeCatalog, NewDataFile, PartitionSwapGuard, TableInfo } from "./catalog-port.ts";

export interface OpenLakeCatalogOptions {
  path: string;
  dataPath: string;
  /** Start-up repair of duplicate rows (storage.lakehouse.auto_repair_catalog, backups_kept). */
  repair?: { enabled: boolean; backupsKept: number; log: Logger };
}

/** The writer/query view of the DuckLake catalog (catalog-port.ts) over src/lake/catalog. */
export function openLakeCatalog(opts: OpenLakeCatalogOptions): LakeCatalog {
  refuseLostCatalog(opts.path, opts.dataPath);
  const catalog = openCatalog({ path: opts.path, dataPath: opts.dataPath, ...(opts.repair ? { log: opts.repair.log } : {}) });
  try {
    if (opts.repair) autoRepairCatalog(catalog, opts.repair);
  } catch (e) {
    catalog.close();
    throw e;
  }
  return new CatalogAdapter(catalog);
}

/**
 * A missing (or empty) catalog over a data path that holds the writer's Parquet files is a lost
 * catalog, not a first start: a new empty catalog would make every file an orphan, and the start
 * moves orphans into the quarantine (src/lake/maintenance.ts), out of the lake. Refused, naming the
 * ways back (docs/OPERATIONS.md "A missing catalog").
 */
function refuseLostCatalog(path: string, dataPath: string): void {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st && st.size > 0) return;
  const files = writerFiles(dataPath).length;
  if (files === 0) return;
  throw new AppError(
    "CATALOG_CORRUPT",
    `catalog ${path} is missing but ${dataPath} holds ${files} Parquet data file(s); a new catalog would make them all orphans, set aside at start. Rebuild it from them (svc system --rebuild-catalog), restore a backup (svc catalog restore), or move the files away to start empty`,
    { details: { path, files } },
  );
}

const toInfo = (t: CatalogTableInfo): TableInfo => ({
  tableId: t.tableId,
  schemaName: t.schemaName,
  name: t.name,
  columns: t.columns.map((c) => ({ columnId: c.columnId, name: c.name, type: c.type as ColumnType })),
});

class CatalogAdapter implements LakeCatalog {
  private readonly tables = new Map<number, CatalogTableInfo>();

  constructor(readonly catalog: Catalog) {}

  private table(tableId: number): CatalogTableInfo {
    let t = this.tables.get(tableId);
    if (!t) {
      t = this.catalog.getTableById(tableId);
      this.tables.set(tableId, t);
    }
    return t;
  }

  ensureTable(schema: string, def: { name: string; columns: Array<{ name: string; type: ColumnType }>; partitionBy?: string }): TableInfo {
    const t = this.catalog.ensureTable(schema, def);
    this.tables.set(t.tableId, t);
    return toInfo(t);
  }

  commitDataFiles(tableId: number, files: NewDataFile[], writer?: { writerKey: string; watermark: number }) {
    return this.catalog.commitDataFiles(tableId, this.normaliseStats(tableId, files), writer);
  }

  /** DuckDB prints min/max with ::VARCHAR; the catalog stores its own canonical text per type. */
  private normaliseStats(tableId: number, files: NewDataFile[]): NewDataFile[] {
    const t = this.table(tableId);
    const typeOf = new Map(t.columns.map((c) => [c.name, c.type]));
    return files.map((f) => ({
      ...f,
      columnStats: Object.fromEntries(
        Object.entries(f.columnStats).map(([name, s]) => {
          const type = typeOf.get(name) ?? "varchar";
          return [name, { ...s, min: formatStatValue(type, s.min), max: formatStatValue(type, s.max) }];
        }),
      ),
    }));
  }

  writerWatermark(writerKey: string): number {
    return this.catalog.writerWatermark(writerKey) ?? 0;
  }

  newDataFilePath(tableId: number, partitionValue?: string): string {
    const path = newDataFilePath(this.table(tableId), partitionValue);
    this.catalog.reserveDataFile(path);
    return path;
  }

  inflightPaths(): Set<string> {
    return this.catalog.inflightPaths();
  }

  clearInflight(): number {
    return this.catalog.clearInflight();
  }

  currentSnapshotId(): number {
    return this.catalog.currentSnapshot().snapshotId;
  }

  snapshotAt(timestampMs: number): number | undefined {
    return this.catalog.snapshotAt(timestampMs)?.snapshotId;
  }

  listDataFiles(tableId: number, opts: { snapshotId?: number; column?: string; min?: string; max?: string; statsColumns?: string[]; fileIds?: readonly number[] } = {}) {
    const { statsColumns, ...list } = opts;
    return this.catalog.listDataFiles(tableId, { ...list, stats: statsColumns ?? true }).map((f) => ({
      dataFileId: f.dataFileId,
      path: f.path,
      absolutePath: f.absolutePath,
      recordCount: f.recordCount,
      fileSizeBytes: f.fileSizeBytes,
      beginSnapshot: f.beginSnapshot,
      partitionValues: f.partitionValues,
      columnStats: Object.fromEntries(Object.entries(f.columnStats).map(([k, s]) => [k, { min: s.min, max: s.max, nullCount: s.nullCount ?? 0 }])),
      ...(f.deleteFile ? { hasDeletes: true } : {}),
    }));
  }

  replaceDataFiles(tableId: number, oldFileIds: number[], newFiles: NewDataFile[], guard?: PartitionSwapGuard) {
    return this.catalog.replaceDataFiles(tableId, oldFileIds, this.normaliseStats(tableId, newFiles), guard);
  }

  snapshotAnomalies() {
    return this.catalog.snapshotAnomalies();
  }

  hasInlinedRows(): boolean {
    return this.catalog.listInlinedData().some((t) => t.liveRows > 0);
  }

  retireFilesBefore(tableId: number, column: string, cutoff: string) {
    const r = this.catalog.retireFilesBefore(tableId, column, cutoff);
    return { snapshotId: r.snapshotId, files: r.files.length };
  }

  expireSnapshots(olderThanMs: number) {
    return this.catalog.expireSnapshots(olderThanMs);
  }

  listScheduledDeletions() {
    return this.catalog.listScheduledDeletions().map((d) => ({ dataFileId: d.dataFileId, absolutePath: d.absolutePath }));
  }

  forgetFiles(dataFileIds: number[]): number {
    return this.catalog.forgetFiles(dataFileIds);
  }

  referencedPaths(): Set<string> {
    return this.catalog.referencedPaths();
  }

  snapshotTimeMs(snapshotId: number): number | undefined {
    return this.catalog.getSnapshot(snapshotId)?.timeMs;
  }

  listTables(): TableInfo[] {
    return this.catalog.listTables().map(toInfo);
  }

  getTable(schema: string, name: string): TableInfo | undefined {
    const t = this.catalog.getTable(schema, name);
    return t ? toInfo(t) : undefined;
  }

  schemaName(name: string): string | undefined {
    return this.catalog.schemaName(name);
  }

  close(): void {
    this.catalog.close();
  }
}
