/**
 * The DuckDB views a lake table is read through, and their refresh after every seal and commit
 * (docs/ARCHITECTURE.md): queued one at a time, coalesced per table, a failure contained to its table.
 */
import {
  errorMessage,
  type Counter,
  type Gauge,
  type Logger,
  type MetricsRegistry,
  type TableDef,
} from "../core/index.ts";
import type { LakeCatalog, LiveDataFile, TableInfo } from "./catalog-port.ts";
import type { Engine } from "./engine.ts";
import { unionSql } from "./query/views.ts";
import { ident, memTableName, qualifiedName } from "./sql.ts";
import type { LakeWriter } from "./writer/writer.ts";

/** Internal schema of the files views (not a lake schema: never listed as a table). */
export const FILES_SCHEMA = "svc_files";
const filesViewName = (def: Pick<TableDef, "schema" | "name">) =>
  `svc_lake.${FILES_SCHEMA}.${ident(`${def.schema}.${def.name}`)}`;

export interface ViewParts {
  engine: Engine;
  catalog: LakeCatalog;
  writer: LakeWriter;
  /** storage.lakehouse.search_buffer: the table view includes the buffer. */
  searchBuffer: boolean;
  /** A remote data_path: makes the files a view binds local (src/lake/remote/remote-files.ts). */
  prepareView?: (def: TableDef, files: readonly LiveDataFile[]) => Promise<() => void>;
}

export class ViewRefresher {
  private readonly fileGauge: Gauge<"table">;
  private readonly viewFailures: Counter<"table">;
  private viewChain: Promise<void> = Promise.resolve();
  private readonly schemas = new Set<string>(["main"]);
  private readonly pendingRefresh = new Map<string, Promise<void>>();
  /** Tables whose queued refresh must re-create the files view too (not only the buffer's). */
  private readonly refreshAll = new Set<string>();
  /** Column count each table view was created with (the table view is re-created when it grows). */
  private readonly viewLayout = new Map<string, number>();
  /**
   * Live files per table as of a catalog snapshot: a seal (10 times a second) changes only the
   * buffer. `columns`: the table's column names then; a file's columns are read once (files never
   * change), again only when the table's columns do.
   */
  private readonly fileCache = new Map<string, { snapshot: number; columns: string; files: LiveDataFile[] }>();
  private readonly viewErrorLoggedAt = new Map<string, number>();

  constructor(
    metrics: MetricsRegistry,
    private readonly logger: Logger,
    private readonly parts: () => ViewParts,
    private readonly entry: (key: string) => { def: TableDef; info: TableInfo } | undefined,
  ) {
    this.fileGauge = metrics.gauge(
      "svc_lake_data_files",
      "Live Parquet data files at the current snapshot, per table.",
      ["table"],
    );
    this.viewFailures = metrics.counter(
      "svc_lake_view_refresh_failures_total",
      "Query-view refreshes that failed, per table (rolled back; the table's rows are still written, other tables are not affected).",
      ["table"],
    );
  }

  /**
   * Re-creates the table's views. Refreshes run one at a time on their own connection (never
   * behind a flush's COPY) and coalesce: a refresh requested while one is queued rides along
   * (`all` wins over `buffer`).
   *
   * Three views per table: `mem_<table>` (the buffer: spool files), a files view in the internal
   * schema (the catalog's Parquet files), and the table view = files UNION ALL buffer, which names
   * the other two and so is only created once. A seal (10 a second under load) re-creates only
   * the buffer view, the cheap one; a commit re-creates both in one transaction, so no query sees
   * flushed rows twice or not at all (DuckDB's catalog is transactional).
   */
  refresh(key: string, what: "buffer" | "all" = "all"): Promise<void> {
    if (what === "all") this.refreshAll.add(key);
    const queued = this.pendingRefresh.get(key);
    if (queued) return queued;
    const job = this.viewChain.then(async () => {
      this.pendingRefresh.delete(key);
      const all = this.refreshAll.delete(key);
      try {
        await this.rebuildViews(key, all);
      } catch (e) {
        // Rolled back (Engine.transaction): the next refresh of this table tries again; a commit's
        // refresh must then rebuild the files view too.
        if (all) this.refreshAll.add(key);
        this.viewFailures.inc({ table: key });
        // Retried at every seal of the table (up to 10 a second): one log line a minute per table.
        const now = Date.now();
        if (now - (this.viewErrorLoggedAt.get(key) ?? 0) >= 60_000) {
          this.viewErrorLoggedAt.set(key, now);
          this.logger.error(
            "view refresh failed; the table's rows are still written, its views are stale until a refresh succeeds",
            { table: key, error: errorMessage(e) },
          );
        }
        throw e;
      }
    });
    this.pendingRefresh.set(key, job);
    // One table's failure never holds up the refreshes queued behind it.
    this.viewChain = job.catch(() => undefined);
    return job;
  }

  private async rebuildViews(key: string, all: boolean): Promise<void> {
    const { engine, catalog, writer, searchBuffer, prepareView } = this.parts();
    const entry = this.entry(key);
    if (!entry) return;
    const def = entry.def;
    const layout = def.columns.length;
    if (!all && this.viewLayout.get(key) === layout) {
      // mem_<table> (docs/ARCHITECTURE.md "Write path"): the buffer alone; the table view reads it.
      await engine.ddl(
        `CREATE OR REPLACE VIEW ${memTableName(def)} AS ${unionSql(def, [], writer.bufferSelects(key))}`,
      );
      return;
    }
    const columns = def.columns.map((c) => c.name).join("\u0000");
    // Catalog files and buffer are read as one cut: a flush commits and drops its spool files from
    // the buffer inside the writer's commit gate, and this read holds the gate, so no row is seen
    // twice or missed (src/lake/writer/commit-gate.ts). The DDL runs after, outside the gate.
    const { buffer, files, snapshot } = await writer.consistent(async () => {
      const snapshot = await catalog.currentSnapshotId();
      const cached = this.fileCache.get(key);
      const files =
        cached && cached.snapshot === snapshot && cached.columns === columns
          ? cached.files
          : await liveFiles(catalog, entry.info.tableId, snapshot, cached?.columns === columns ? cached.files : []);
      return { buffer: writer.bufferSelects(key), files, snapshot };
    });
    this.fileCache.set(key, { snapshot, columns, files });
    const mem = `CREATE OR REPLACE VIEW ${memTableName(def)} AS ${unionSql(def, [], buffer)}`;
    this.fileGauge?.set(files.length, { table: key });
    if (!this.schemas.has(def.schema)) {
      await engine.ddl(`CREATE SCHEMA IF NOT EXISTS svc_lake.${ident(def.schema)}`);
      this.schemas.add(def.schema);
    }
    const filesView = filesViewName(def);
    const statements = [`CREATE OR REPLACE VIEW ${filesView} AS ${unionSql(def, files, undefined)}`, mem];
    if (this.viewLayout.get(key) !== layout) {
      const cols = def.columns.map((c) => ident(c.name)).join(", ");
      const body = searchBuffer
        ? `SELECT ${cols} FROM ${filesView} UNION ALL SELECT ${cols} FROM ${memTableName(def)}`
        : `SELECT ${cols} FROM ${filesView}`;
      statements.push(`CREATE OR REPLACE VIEW ${qualifiedName(def)} AS ${body}`);
    }
    const release = prepareView ? await prepareView(def, files) : undefined;
    try {
      await engine.transaction(statements);
    } finally {
      release?.();
    }
    this.viewLayout.set(key, layout);
  }
}

/**
 * The table's live files with the columns each holds (the files view reads them by column set).
 * After a flush only one file is new: the list itself is read without statistics, and only files
 * not in `known` (the previous list) have their statistics read. A full listing read every column's
 * statistics of every file, and files pile up between compactions (one per flush, several a
 * second under load): its cost grew with the table (docs/BENCHMARKS.md "Ingest: CPU per message
 * (every core)").
 */
export async function liveFiles(
  catalog: LakeCatalog,
  tableId: number,
  snapshotId: number,
  known: readonly LiveDataFile[],
): Promise<LiveDataFile[]> {
  // Both reads name the snapshot: a compaction swap between them must not change what they list.
  const bare = await catalog.listDataFiles(tableId, { snapshotId, statsColumns: [] });
  const byId = new Map(known.map((f) => [f.dataFileId, f]));
  const fresh = bare.filter((f) => !byId.has(f.dataFileId)).map((f) => f.dataFileId);
  if (fresh.length > 0)
    for (const f of await catalog.listDataFiles(tableId, { snapshotId, fileIds: fresh })) byId.set(f.dataFileId, f);
  return bare.map((f) => {
    const k = byId.get(f.dataFileId);
    return k ? { ...f, columnStats: k.columnStats } : f;
  });
}
