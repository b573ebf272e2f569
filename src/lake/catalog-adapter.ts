import { statSync } from "node:fs";
import { AppError, type ColumnType, type Logger } from "../core/index.ts";
import { autoRepairCatalog } from "./admin/auto-repair.ts";
import { writerFiles } from "./admin/lake-files.ts";
import {
  formatStatValue,
  newDataFilePath,
  openCatalog,
  type Catalog,
  type TableInfo as CatalogTableInfo,
} from "./catalog/index.ts";
import {
  type LakeCatalog,
  type ListDataFilesOptions,
  type LiveDataFile,
  type NewDataFile,
  type PartitionSwapGuard,
  type TableInfo,
  toLiveDataFile,
  type WriterMark,
} from "./catalog-port.ts";

export interface OpenLakeCatalogOptions {
  path: string;
  dataPath: string;
  /** Start-up repair of duplicate rows (storage.lakehouse.auto_repair_catalog, backups_kept). */
  repair?: { enabled: boolean; backupsKept: number; log: Logger };
}

/**
 * The writer/query view of the DuckLake catalog (catalog-port.ts) over src/lake/catalog. Opening
 * stays synchronous (bun:sqlite); the port's methods answer promises that are settled at once.
 */
export function openLakeCatalog(opts: OpenLakeCatalogOptions): LakeCatalog {
  refuseLostCatalog(opts.path, opts.dataPath);
  const catalog = openCatalog({
    path: opts.path,
    dataPath: opts.dataPath,
    ...(opts.repair ? { log: opts.repair.log } : {}),
  });
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

  async ensureTable(
    schema: string,
    def: { name: string; columns: Array<{ name: string; type: ColumnType }>; partitionBy?: string },
  ): Promise<TableInfo> {
    const t = this.catalog.ensureTable(schema, def);
    this.tables.set(t.tableId, t);
    return toInfo(t);
  }

  async commitDataFiles(
    tableId: number,
    files: NewDataFile[],
    writers?: ReadonlyArray<WriterMark>,
  ): Promise<{ snapshotId: number }> {
    return this.catalog.commitDataFiles(tableId, this.normaliseStats(tableId, files), writers);
  }

  async commitInserts(
    batches: ReadonlyArray<{ tableId: number; files: NewDataFile[] }>,
    writers?: ReadonlyArray<WriterMark>,
  ): Promise<{ snapshotId: number }> {
    return this.catalog.commitBatch(
      batches.map((b) => ({ tableId: b.tableId, files: this.normaliseStats(b.tableId, b.files) })),
      writers,
    );
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

  async commitMarks(writers: ReadonlyArray<WriterMark>): Promise<void> {
    this.catalog.commitMarks(writers);
  }

  async writerWatermark(writerKey: string): Promise<number> {
    return this.catalog.writerWatermark(writerKey) ?? 0;
  }

  async newDataFilePath(tableId: number, partitionValue?: string): Promise<string> {
    const path = newDataFilePath(this.table(tableId), partitionValue);
    this.catalog.reserveDataFile(path);
    return path;
  }

  async inflightPaths(): Promise<Set<string>> {
    return this.catalog.inflightPaths();
  }

  async clearInflight(): Promise<number> {
    return this.catalog.clearInflight();
  }

  async forgetInflight(paths: readonly string[]): Promise<number> {
    return this.catalog.forgetInflight(paths);
  }

  async currentSnapshotId(): Promise<number> {
    return this.catalog.currentSnapshot().snapshotId;
  }

  async snapshotAt(timestampMs: number): Promise<number | undefined> {
    return this.catalog.snapshotAt(timestampMs)?.snapshotId;
  }

  async listDataFiles(tableId: number, opts: ListDataFilesOptions = {}): Promise<LiveDataFile[]> {
    const { statsColumns, ...list } = opts;
    return this.catalog.listDataFiles(tableId, { ...list, stats: statsColumns ?? true }).map(toLiveDataFile);
  }

  async replaceDataFiles(
    tableId: number,
    oldFileIds: number[],
    newFiles: NewDataFile[],
    guard?: PartitionSwapGuard,
  ): Promise<{ snapshotId: number }> {
    return this.catalog.replaceDataFiles(tableId, oldFileIds, this.normaliseStats(tableId, newFiles), guard);
  }

  async snapshotAnomalies(): Promise<{ duplicateRows: number; latestRows: number }> {
    return this.catalog.snapshotAnomalies();
  }

  async hasInlinedRows(): Promise<boolean> {
    return this.catalog.listInlinedData().some((t) => t.liveRows > 0);
  }

  async retireFilesBefore(
    tableId: number,
    column: string,
    cutoff: string,
  ): Promise<{ snapshotId: number | null; files: number }> {
    const r = this.catalog.retireFilesBefore(tableId, column, cutoff);
    return { snapshotId: r.snapshotId, files: r.files.length };
  }

  async expireSnapshots(olderThanMs: number): Promise<{ expiredSnapshots: number; scheduledFiles: number }> {
    return this.catalog.expireSnapshots(olderThanMs);
  }

  async listScheduledDeletions(): Promise<Array<{ dataFileId: number; absolutePath: string }>> {
    return this.catalog
      .listScheduledDeletions()
      .map((d) => ({ dataFileId: d.dataFileId, absolutePath: d.absolutePath }));
  }

  async forgetFiles(dataFileIds: number[]): Promise<number> {
    return this.catalog.forgetFiles(dataFileIds);
  }

  async referencedPaths(): Promise<Set<string>> {
    return this.catalog.referencedPaths();
  }

  async snapshotTimeMs(snapshotId: number): Promise<number | undefined> {
    return this.catalog.getSnapshot(snapshotId)?.timeMs;
  }

  async listTables(): Promise<TableInfo[]> {
    return this.catalog.listTables().map(toInfo);
  }

  async getTable(schema: string, name: string): Promise<TableInfo | undefined> {
    const t = this.catalog.getTable(schema, name);
    return t ? toInfo(t) : undefined;
  }

  async schemaName(name: string): Promise<string | undefined> {
    return this.catalog.schemaName(name);
  }

  async close(): Promise<void> {
    this.catalog.close();
  }
}
