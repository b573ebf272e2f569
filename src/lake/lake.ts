/**
 * Over 400 lines: the lake module is the one surface the rest of svc sees (start and stop, tables,
 * rows, reads, maintenance); each method delegates to writer/, query/, compaction/ or the catalog.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config, EngineTuning } from "../config/index.ts";
import {
  AppError,
  redactUrl,
  type Counter,
  type Logger,
  type MetricsRegistry,
  type Module,
  type RowGroupMeta,
  type RowWriter,
  type TableDef,
} from "../core/index.ts";
import type { LakeCatalog, LiveDataFile, TableInfo, WriterMark } from "./catalog-port.ts";
import { Engine, engineOptions, type QueryOptions, type QueryResult, type SqlParams } from "./engine.ts";
import { rewriteTimeTravelAsync, type TimeTravelRef } from "./query/time-travel.ts";
import { openLakeCatalog, type OpenLakeCatalogOptions } from "./catalog-adapter.ts";
import { lakeStateDir, openPgCatalog, ORPHAN_MIN_AGE_MS, spoolMarkKey, writerOwner } from "./catalog-config.ts";
import { tableKey } from "./sql.ts";
import { LakeWriter, writerMetrics, type GroupBatch, type WriterHealth } from "./writer/writer.ts";
import { planScan, type ScanOptions, type ScanPlan } from "./scan-plan.ts";
import { BloomIndex } from "./bloom-index.ts";
import { warmLookups } from "./lookup-warm.ts";
import { PageReader } from "./page-reader.ts";
import { PageHelper, splitColumns } from "./page-helper.ts";
import { PagedFiles } from "./page-index.ts";
import { OpenFiles } from "./open-files.ts";
import { type MatchResult, PageMatcher } from "./page-match.ts";
import { PageTimes, type TimedRow } from "./page-time.ts";
import type { Lookup } from "./bloom-index.ts";
import { LakeMaintenance } from "./maintenance.ts";
import { FILES_SCHEMA, ViewRefresher } from "./view-refresh.ts";
import { lakeSummary, storedTable, tableStats, type TableStats } from "./lake-summary.ts";
import { QueryTracker } from "./query/tracker.ts";
import { snapshotOf } from "./query/snapshot-of.ts";
import { compactionConfigProblems } from "./compaction/config.ts";
import { reservedSchemaProblem, tableNameProblem } from "./names.ts";
import type { RemoteFiles } from "./remote/remote-files.ts";
import {
  cacheDirOf,
  groupsOfView,
  isRemoteDataPath,
  openRemoteFiles,
  publishDataPath,
  sweepRemoteOrphans,
  withFilesOf,
} from "./remote/open.ts";

/** The lakehouse keys, with the engine's tuning resolved (src/config/tuning.ts engineTuning). */
export type LakeConfig = Omit<Config["storage"]["lakehouse"], "tuning"> & { tuning: EngineTuning };
export type ChangeKind = "buffered" | "committed";

export interface LakeDeps {
  config: LakeConfig;
  logger: Logger;
  metrics: MetricsRegistry;
  /** Defaults to the DuckLake catalog in SQLite (src/lake/catalog). */
  openCatalog?: (opts: OpenLakeCatalogOptions) => LakeCatalog | Promise<LakeCatalog>;
  /** Rows are sealed into the buffer table this often (visibility latency). */
  sealIntervalMs?: number;
  /** Told each step of start() (/health's `startup` check names it; docs/ARCHITECTURE.md "Start-up"). */
  onStartStep?: (step: string) => void;
  /** start() waits for it before opening the catalog: tests hold the lake in its start deterministically. */
  holdStart?: Promise<void>;
  /**
   * Worker entry that cuts merged files into pages (src/core/parquet/repage-worker.ts), resolved
   * by src/main.ts so the executable finds its bundled copy; absent: compaction does it in-process.
   */
  repageWorker?: URL;
  /**
   * Worker entry of the row fetch's second thread (src/lake/page-worker.ts), resolved by
   * src/main.ts as repageWorker is; absent: the main thread reads every column.
   */
  pageWorker?: URL;
}

/**
 * The lake module: DuckLake catalog + Parquet writer + DuckDB query engine in one process.
 * Producers define tables and write rows; readers query `svc_lake.<schema>.<table>` views.
 * Over 400 lines on purpose: this one class is the lake's whole public face and wires its parts
 * (catalog, engine, writer, views, maintenance, the object store of docs/STORAGE.md "Parquet on an
 * object store"); each part's logic lives in the file it imports.
 */
export class Lake implements Module {
  readonly name = "lake";
  private catalog: LakeCatalog | undefined;
  private readonly drains = new Set<() => Promise<void>>();
  private engine: Engine | undefined;
  private writer: LakeWriter | undefined;
  private maintenance: LakeMaintenance | undefined;
  private maintenanceTimer: ReturnType<typeof setInterval> | undefined;
  /** A remote data_path: the store and the local read cache (docs/STORAGE.md "Parquet on an object store"). */
  private remote: RemoteFiles | undefined;
  private readonly refused: Counter<"reason">;
  private readonly defs = new Map<string, { def: TableDef; info: TableInfo }>();
  /** Lower-case `schema.table` → key of `defs`, and lower-case schema → its spelling (names match case-insensitively). */
  private readonly keysLower = new Map<string, string>();
  private readonly schemasLower = new Map<string, string>();
  private readonly refusedKeys = new Set<string>();
  private readonly dataPath: string;
  /** This writer's owner name in a shared catalog (spool watermarks, reservations); undefined with SQLite. */
  private owner: string | undefined;
  private readonly cfg: LakeConfig;
  private readonly listeners = new Set<(key: string, kind: ChangeKind) => void>();
  private readonly views: ViewRefresher;
  /** Queries in flight: flushed spool files outlive the oldest. */
  private readonly queries = new QueryTracker();
  /** Point lookups' file pruning by the files' bloom filters (local data path only; bloom-index.ts). */
  private bloom: BloomIndex | undefined;
  /** Rows of paged data files fetched page by page (local data path only; page-reader.ts). */
  private pages: PageReader | undefined;
  /** The row fetch's second thread (page-helper.ts), started on first use: never on the way to the first HTTP 200. */
  private helper: PageHelper | undefined;
  /** Point lookups inside paged data files (local data path only; page-match.ts). */
  private matcher: PageMatcher | undefined;
  /** Window counts and newest rows of data files from their statistics and time pages (page-time.ts). */
  private times: PageTimes | undefined;
  /** Data files kept open between those reads (open-files.ts). */
  private openFiles: OpenFiles | undefined;

  constructor(private readonly deps: LakeDeps) {
    this.cfg = deps.config;
    // A remote data_path: the engine and the catalog work on the read cache in the state directory,
    // whose paths mirror the store's keys (src/lake/remote/remote-files.ts).
    this.dataPath = isRemoteDataPath(deps.config.data_path)
      ? cacheDirOf(lakeStateDir(deps.config))
      : resolve(deps.config.data_path);
    this.refused = deps.metrics.counter(
      "svc_lake_tables_refused_total",
      "Tables the lake refused to define (reserved_name: a DuckDB or lake name; such a table stored by an older version is skipped at start).",
      ["reason"],
    );
    this.refused.inc({ reason: "reserved_name" }, 0);
    this.views = new ViewRefresher(
      deps.metrics,
      deps.logger,
      () => ({
        ...this.parts,
        searchBuffer: this.cfg.search_buffer,
        ...(this.remote
          ? {
              prepareView: (def: TableDef, files: readonly LiveDataFile[]) =>
                this.remote!.prepareView(groupsOfView(def, files)),
            }
          : {}),
      }),
      (key) => this.defs.get(key),
    );
  }

  private get parts() {
    if (!this.catalog || !this.engine || !this.writer) throw new AppError("UNAVAILABLE", "the lake is not started");
    return { catalog: this.catalog, engine: this.engine, writer: this.writer };
  }

  async start(): Promise<void> {
    const cfg = this.cfg;
    const compactionProblems = compactionConfigProblems(cfg.compaction, this.dataPath);
    if (compactionProblems.length > 0) {
      throw new AppError("CONFIG_INVALID", compactionProblems.join("; "), { details: { errors: compactionProblems } });
    }
    const pg = cfg.catalog_type === "postgres";
    const catalogPath = resolve(cfg.catalog_path);
    const stateDir = lakeStateDir(cfg);
    this.owner = pg ? writerOwner(stateDir) : undefined;
    const spoolDir = join(stateDir, "spool");
    const tempDir = cfg.tuning.temp_directory ? resolve(cfg.tuning.temp_directory) : join(stateDir, "tmp");
    const step = this.deps.onStartStep ?? (() => {});
    mkdirSync(stateDir, { recursive: true });
    step("catalog check");
    if (this.deps.holdStart) await this.deps.holdStart;
    // Before anything is created: a wrong credential or a store that does not answer stops the start.
    this.remote = isRemoteDataPath(cfg.data_path) ? await openRemoteFiles(cfg, stateDir, this.deps.metrics) : undefined;
    mkdirSync(this.dataPath, { recursive: true });
    const repair = {
      enabled: cfg.auto_repair_catalog,
      backupsKept: cfg.backups_kept,
      log: this.deps.logger.child({ module: "catalog" }),
    };
    // A PostgreSQL catalog comes with the election of the lake's one maintainer (catalog-config.ts).
    const { catalog, lock } = pg
      ? await openPgCatalog(cfg.catalog_path, this.dataPath, stateDir, repair.log)
      : {
          catalog: await (this.deps.openCatalog ?? openLakeCatalog)({
            path: catalogPath,
            dataPath: this.dataPath,
            repair,
          }),
          lock: undefined,
        };
    this.catalog = catalog;
    if (this.remote && !pg) publishDataPath(catalogPath, this.remote.store.location);
    step("DuckDB");
    try {
      this.engine = await Engine.open(engineOptions(cfg.tuning, tempDir, [this.dataPath, spoolDir, tempDir]));
      const engine = this.engine;
      // A remote data_path's files are local only once fetched: no pruning there (DuckDB still prunes row groups).
      // One set of kept descriptors for every local read of data files (open-files.ts).
      const openFiles = this.remote ? undefined : new OpenFiles();
      this.openFiles = openFiles;
      this.bloom = openFiles
        ? new BloomIndex(
            async (sql) => (await this.queries.track(() => engine.query(sql))).rows,
            undefined,
            undefined,
            openFiles,
          )
        : undefined;
      this.pages = openFiles ? new PageReader(new PagedFiles(undefined, undefined, openFiles)) : undefined;
      this.matcher = this.pages ? new PageMatcher(this.pages.layouts) : undefined;
      this.times = this.pages ? new PageTimes(this.pages.layouts) : undefined;
    } catch (e) {
      await this.catalog.close();
      this.catalog = undefined;
      throw e;
    }
    await this.engine.ddl(`CREATE SCHEMA IF NOT EXISTS svc_lake.${FILES_SCHEMA}`);
    this.writer = new LakeWriter(
      this.engine,
      this.catalog,
      {
        dataPath: this.dataPath,
        markKey: (key) => spoolMarkKey(this.owner, key),
        spoolDir,
        batchSize: cfg.batch_size,
        flushIntervalMs: cfg.flush_interval_sec * 1000,
        rowGroupRows: cfg.row_group_rows,
        spoolFormat: cfg.spool_format,
        maxBufferedRows: cfg.max_buffered_rows,
        sealIntervalMs: this.deps.sealIntervalMs ?? 100,
        // Flushed spool files stay readable for queries planned before the flush (≥ query time-out).
        spoolGraceMs: 120_000,
        oldestQueryStartMs: () => this.queries.oldestStartMs(),
        spoolReserveBytes: cfg.reserve_free_bytes,
        catalogPath,
        ...(this.remote ? { remote: this.remote } : {}),
      },
      this.deps.logger.child({ module: "lake-writer" }),
      writerMetrics(this.deps.metrics),
    );
    this.writer.onChange = async (key, kind) => {
      // A view that cannot be refreshed is this table's problem only (logged and counted in
      // refreshView): the writer's spool and flush path and every other table go on.
      try {
        await this.views.refresh(key, kind === "buffered" ? "buffer" : "all");
      } catch {
        return;
      }
      for (const l of this.listeners) l(key, kind);
    };
    step("maintenance");
    try {
      this.maintenance = await LakeMaintenance.open(
        this.catalog,
        this.writer,
        () => [...this.defs.values()],
        (key) => this.views.refresh(key),
        {
          dataPath: this.dataPath,
          tempDirectory: tempDir,
          rowGroupRows: cfg.row_group_rows,
          compaction: cfg.compaction,
          retentionDays: cfg.retention.days,
          snapshotRetentionSec: cfg.snapshot_retention_sec,
          ...(this.remote ? { remote: this.remote } : {}),
          ...(lock ? { maintainer: lock, orphanMinAgeMs: ORPHAN_MIN_AGE_MS } : {}),
          ...(this.deps.repageWorker ? { repageWorker: this.deps.repageWorker } : {}),
        },
        this.deps.logger.child({ module: "lake-maintenance" }),
        this.deps.metrics,
      );
    } catch (e) {
      this.engine.close();
      await this.catalog.close();
      this.writer = this.engine = this.catalog = undefined;
      throw e;
    }
    step("orphan check");
    // Remote: the store is listed in the background (a big bucket must not hold up the start).
    if (this.remote)
      void sweepRemoteOrphans(
        this.remote,
        await this.catalog.referencedPaths(),
        await this.catalog.inflightPaths(),
        this.catalog,
        this.deps.logger.child({ module: "lake-maintenance" }),
      );
    else await this.maintenance.removeOrphans();
    this.maintenanceTimer = setInterval(
      () => void this.maintenance?.runOnce(),
      cfg.compaction.check_interval_sec * 1000,
    );
    this.writer.start();
    this.deps.logger.info("lake open", {
      catalog: pg ? redactUrl(cfg.catalog_path) : catalogPath,
      data_path: this.remote?.store.location ?? this.dataPath,
      snapshot: await this.catalog.currentSnapshotId(),
    });
  }

  async stop(): Promise<void> {
    for (const fn of this.drains) await fn().catch(() => {});
    this.drains.clear();
    if (this.maintenanceTimer) clearInterval(this.maintenanceTimer);
    await this.maintenance?.stop();
    this.maintenance = undefined;
    if (this.writer) await this.writer.stop();
    this.engine?.close();
    await this.catalog?.close();
    this.writer = undefined;
    this.engine = undefined;
    this.catalog = undefined;
    this.remote = undefined;
    this.openFiles?.closeAll();
    this.openFiles = undefined;
    this.bloom = undefined;
    this.pages = undefined;
    this.matcher = undefined;
    this.times = undefined;
    await this.helper?.stop();
    this.helper = undefined;
  }

  /** What the point-lookup pruning looked at and dropped so far (tests, bench/search/explain.ts). */
  lookupStats():
    | { files: number; filesDropped: number; rowGroups: number; bloomReads: number; footers: number }
    | undefined {
    return this.bloom ? { ...this.bloom.stats } : undefined;
  }

  /** The object store of a remote data_path and its read cache (tests, admin); undefined for a local one. */
  remoteFiles(): RemoteFiles | undefined {
    return this.remote;
  }

  /**
   * Why `schema.name` cannot be a table of this lake (a reserved DuckDB or lake name, or a name
   * colliding with another table's buffer view), or undefined. Producers check it to answer their
   * client; defineTable enforces it.
   */
  nameProblem(schema: string, name?: string): string | undefined {
    if (name === undefined) return reservedSchemaProblem(schema);
    return tableNameProblem(schema, name, (s, n) => this.keysLower.has(`${s}.${n}`.toLowerCase()));
  }

  /** Creates the table in the catalog (first time), its buffer table and its query view. */
  async defineTable(def: TableDef): Promise<void> {
    const { catalog, writer } = this.parts;
    const key = tableKey(def);
    if (this.defs.has(key)) return;
    const problem = this.nameProblem(def.schema, def.name);
    if (problem) {
      // Also what keeps a table stored by an older version under such a name from breaking the
      // views at every start: it is skipped (counted and logged once), everything else starts.
      if (!this.refusedKeys.has(key)) {
        this.refusedKeys.add(key);
        this.refused.inc({ reason: "reserved_name" });
        this.deps.logger.error("table refused", { table: key, reason: problem });
      }
      throw new AppError("VALIDATION", problem, { details: { table: key, rule: "reserved_name" } });
    }
    const info = await catalog.ensureTable(def.schema, {
      name: def.name,
      columns: def.columns.map((c) => ({ name: c.name, type: c.type })),
      ...(def.partitionBy ? { partitionBy: def.partitionBy } : {}),
    });
    // A shared catalog: this writer's own mark; one written before marks were per writer (an upgrade
    // after a crash) is the table's plain key (docs/DUCKLAKE.md "Spool watermarks").
    const own = spoolMarkKey(this.owner, key);
    const watermark = (await catalog.writerWatermark(own)) || (own !== key ? await catalog.writerWatermark(key) : 0);
    // Two defineTable calls of one table may both have awaited the catalog: the first registers.
    if (this.defs.has(key)) return;
    // Columns the table grew in earlier runs (line protocol) stay part of it, in catalog order.
    const known = new Set(def.columns.map((c) => c.name.toLowerCase()));
    const grown = info.columns.filter((c) => !known.has(c.name.toLowerCase()));
    const full: TableDef = grown.length
      ? { ...def, columns: [...def.columns, ...grown.map((c) => ({ name: c.name, type: c.type }))] }
      : def;
    this.defs.set(key, { def: full, info });
    this.keysLower.set(key.toLowerCase(), key);
    if (!this.schemasLower.has(def.schema.toLowerCase())) this.schemasLower.set(def.schema.toLowerCase(), def.schema);
    writer.register(full, info, watermark);
    await this.views.refresh(key);
  }

  /**
   * Adds columns to a table (line protocol: a field or tag seen for the first time). Existing
   * columns are never changed; one catalog snapshot records the schema change, files written
   * before it read the new columns as NULL. Serialised per table by the caller.
   */
  async extendTable(key: string, columns: TableDef["columns"]): Promise<TableDef> {
    const { catalog, writer } = this.parts;
    const entry = this.defs.get(key);
    if (!entry) throw new AppError("NOT_FOUND", `no table ${key}`);
    const have = new Set(entry.def.columns.map((c) => c.name.toLowerCase()));
    const fresh = columns.filter((c) => !have.has(c.name.toLowerCase()));
    if (fresh.length === 0) return entry.def;
    const def: TableDef = { ...entry.def, columns: [...entry.def.columns, ...fresh] };
    const info = await catalog.ensureTable(def.schema, {
      name: def.name,
      columns: def.columns.map((c) => ({ name: c.name, type: c.type })),
      ...(def.partitionBy ? { partitionBy: def.partitionBy } : {}),
    });
    this.defs.set(key, { def, info });
    writer.alter(def, info);
    await this.views.refresh(key);
    return def;
  }

  tables(): TableDef[] {
    return [...this.defs.values()].map((d) => d.def);
  }

  table(key: string): TableDef | undefined {
    return this.defs.get(key)?.def;
  }

  /**
   * Every table of the catalog with its columns in catalog order, also those no producer has
   * defined in this process yet (line protocol adopts its tables from here after a restart).
   */
  async storedTables(): Promise<Array<Pick<TableDef, "schema" | "name" | "columns">>> {
    return (await this.parts.catalog.listTables()).map(storedTable);
  }

  /** One table of the catalog by name (case-insensitive), defined in this process or not: one indexed lookup. */
  async storedTable(schema: string, name: string): Promise<Pick<TableDef, "schema" | "name" | "columns"> | undefined> {
    const t = await this.parts.catalog.getTable(schema, name);
    return t ? storedTable(t) : undefined;
  }

  /** The lake key of a table defined in this process, matched case-insensitively. */
  findTable(schema: string, name: string): string | undefined {
    return this.keysLower.get(`${schema}.${name}`.toLowerCase());
  }

  /** How this lake already spells schema `schema` (case-insensitive), or undefined for a new schema. */
  async schemaSpelling(schema: string): Promise<string | undefined> {
    return this.schemasLower.get(schema.toLowerCase()) ?? (await this.parts.catalog.schemaName(schema));
  }

  /** Row writer for `schema.table`; undefined when the lake is full or stopping (count a drop). */
  row(key: string): RowWriter | undefined {
    return this.writer?.row(key);
  }

  backlog(): number {
    return this.writer?.backlog() ?? 0;
  }

  /** Bytes that can still be spooled before `reserve_free_bytes` (line protocol refuses a bigger body whole). */
  spoolRoom(): number {
    return this.writer?.spoolRoom() ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Rows encoded by another thread (CsvBatch bytes of `key` with `columns` CSV columns): they join
   * the buffer like a sealed batch of this thread. False when the table is unknown or its layout
   * differs (the caller counts the rows as lost). `written` runs once the bytes are on disk.
   */
  acceptBatch(
    key: string,
    bytes: Uint8Array,
    rows: number,
    columns: number,
    span: { min: number; max: number } | undefined,
    written?: () => void,
    rowGroup?: RowGroupMeta,
  ): boolean {
    return this.writer?.acceptBatch(key, bytes, rows, columns, span, written, rowGroup) ?? false;
  }

  /**
   * Rows of several tables (CsvBatch bytes, as acceptBatch takes them) committed with `marks` in
   * one catalog transaction, outside the spool (src/lake/writer/group-commit.ts): the forward
   * receiver's exactly-once positions (docs/DEPLOY.md "Where the central keeps an edge's position").
   */
  commitRows(batches: readonly GroupBatch[], marks: readonly WriterMark[]): Promise<void> {
    return this.parts.writer.commitGroup(batches, marks);
  }

  /** The watermark last committed under `writerKey` (0 when none). */
  writerMark(writerKey: string): Promise<number> {
    return this.parts.catalog.writerWatermark(writerKey);
  }

  /** Runs `fn` at stop before the writer's last flush (a holder of rows commits them then). */
  beforeStop(fn: () => Promise<void>): void {
    this.drains.add(fn);
  }

  /** Notified when rows become queryable (buffered) or land in Parquet (committed). */
  onChange(fn: (key: string, kind: ChangeKind) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Every row of `key` accepted so far is in a spool file (true) or was lost (false); waits for the next seal. */
  whenSpooled(key: string): Promise<boolean> {
    return this.writer?.whenSpooled(key) ?? Promise.resolve(false);
  }

  /** Makes every accepted row queryable now (seal + buffer insert). */
  async sync(): Promise<void> {
    await this.parts.writer.sync();
  }

  async flush(): Promise<void> {
    await this.parts.writer.flushAll();
  }

  /** One compaction / retention / expiry pass now (tests, admin). */
  async maintain(nowMs?: number): Promise<{ merged: number; retired: number; deleted: number }> {
    if (!this.maintenance) throw new AppError("UNAVAILABLE", "the lake is not started");
    return await this.maintenance.runOnce(nowMs);
  }

  /** Live data files of a table (tests, stats). */
  async files(key: string): Promise<Array<{ path: string; rows: number; bytes: number }>> {
    const entry = this.defs.get(key);
    if (!entry) return [];
    return (await this.parts.catalog.listDataFiles(entry.info.tableId)).map((f) => ({
      path: f.path,
      rows: f.recordCount,
      bytes: f.fileSizeBytes,
    }));
  }

  /**
   * SQL reading one table, pruned by the catalog's time statistics: the FROM-clause body our own
   * search uses (`SELECT … FROM (<scanSql>) t WHERE …`).
   */
  async scanSql(key: string, opts: ScanOptions = {}): Promise<string> {
    const plan = await this.scanPlan(key, opts);
    return plan.sql(plan.files, true);
  }

  /**
   * The files (pruned as scanSql prunes them, with their time bounds) and the buffer of one read,
   * captured as one consistent cut (scan-plan.ts).
   */
  async scanPlan(key: string, opts: ScanOptions = {}): Promise<ScanPlan> {
    const { catalog, writer } = this.parts;
    const entry = this.defs.get(key);
    if (!entry) throw new AppError("NOT_FOUND", `no table ${key}`);
    const bloom = this.bloom;
    return await planScan(
      entry,
      catalog,
      writer,
      opts,
      this.cfg.search_buffer,
      bloom ? (files, lookups) => bloom.prune(files, lookups) : undefined,
    );
  }

  /** Resolves `AT (VERSION => n)` / `AT (TIMESTAMP => '…')` / `AT SNAPSHOT n` / `AT TIMESTAMP '…'` to a snapshot's files. */
  private async timeTravel(ref: TimeTravelRef): Promise<string> {
    const key = `${ref.schema ?? "main"}.${ref.table}`;
    if (!this.defs.has(key)) throw new AppError("NOT_FOUND", `time travel: no table ${key}`);
    return await this.scanSql(key, { snapshotId: await snapshotOf(ref, this.parts.catalog) });
  }

  /** Rows read page by page so far, reads refused and file layouts built (page-reader.ts); undefined on a remote data path. */
  pageStats(): { rows: number; refused: number; layouts: number } | undefined {
    return this.pages ? { ...this.pages.stats, layouts: this.pages.layouts.pageStats.layouts } : undefined;
  }

  /** Whether rowsByPage can read this lake's files (a local data path). */
  get pagedReads(): boolean {
    return this.pages !== undefined;
  }

  /**
   * Every column of table `key` for rows `rows` (numbers in the file) of the data file at
   * `path`, decoded page by page (page-reader.ts, docs/ARCHITECTURE.md "Row fetch by page");
   * undefined when the file is not paged, is gone, or the data path is remote: read those with
   * DuckDB.
   */
  rowsByPage(
    path: string,
    key: string,
    rows: readonly number[],
    /** Only these columns of the table (default: every one). */
    columns?: readonly string[],
  ): Record<string, unknown>[] | undefined {
    const def = this.defs.get(key)?.def;
    if (!def || !this.pages || !path.startsWith(this.dataPath)) return undefined;
    const want = columns ? { ...def, columns: def.columns.filter((c) => columns.includes(c.name)) } : def;
    return this.pages.read(path, want, rows);
  }

  /**
   * Advises the kernel of `columns` of these rows of local data files of table `key`
   * (page-reader.ts `adviseMany`): a pass that reads a few columns of rows in several files calls
   * it before reading any of them, so a cold page cache serves the files side by side.
   */
  adviseRows(
    key: string,
    reqs: ReadonlyArray<{ path: string; rows: readonly number[] }>,
    columns: readonly string[],
  ): void {
    const def = this.defs.get(key)?.def;
    if (!def || !this.pages) return;
    this.pages.adviseMany(
      reqs.filter((r) => r.path.startsWith(this.dataPath)),
      { columns: def.columns.filter((c) => columns.includes(c.name)) },
    );
  }

  /** The row fetch's worker, started now if the lake has its entry and reads pages; undefined otherwise. */
  private pageHelper(): PageHelper | undefined {
    const entry = this.deps.pageWorker;
    if (this.helper || !entry || !this.pages) return this.helper;
    this.helper = new PageHelper(entry, (reason) =>
      this.deps.logger.warn("row fetch worker gone: every column is read on the main thread", { reason }),
    );
    return this.helper;
  }

  /**
   * rowsByPage for several files at once, every column: with the row fetch's worker
   * (page-helper.ts) the costliest columns of each file (splitColumns) are read there while this
   * thread reads the others, and each row is put together in the table's column order. A file
   * the worker fails on is read here whole.
   */
  async rowsByPageMany(
    key: string,
    reqs: ReadonlyArray<{ path: string; rows: readonly number[] }>,
  ): Promise<Array<Record<string, unknown>[] | undefined>> {
    const def = this.defs.get(key)?.def;
    const pages = this.pages;
    const helper = this.pageHelper();
    if (!def || !pages || !helper?.alive) return reqs.map((r) => this.rowsByPage(r.path, key, r.rows));
    const local = (path: string) => path.startsWith(this.dataPath);
    const first = reqs.find((r) => local(r.path));
    const theirs = first
      ? pages.layouts.withFile(
          first.path,
          (fd, index) => splitColumns(def.columns, index, (chunk) => pages.layouts.pagesOf(fd, chunk).length / 3),
          () => new Set<string>(),
        )
      : new Set<string>();
    if (theirs.size === 0) return reqs.map((r) => this.rowsByPage(r.path, key, r.rows));
    const off = def.columns.filter((c) => theirs.has(c.name));
    const mine = { columns: def.columns.filter((c) => !theirs.has(c.name)) };
    // Every file's share posted first, so the worker never waits for this thread.
    const asked = reqs.map((r) => (local(r.path) ? helper.read(r.path, off, r.rows) : undefined));
    const here = reqs.map((r) => (local(r.path) ? pages.read(r.path, mine, r.rows) : undefined));
    const out: Array<Record<string, unknown>[] | undefined> = [];
    for (let i = 0; i < reqs.length; i++) {
      const a = here[i];
      let b = await asked[i];
      if (b === "failed") b = pages.read(reqs[i]!.path, { columns: off }, reqs[i]!.rows);
      if (!a || !b) {
        out.push(undefined);
        continue;
      }
      out.push(
        a.map((row, j) => {
          const joined: Record<string, unknown> = {};
          for (const c of def.columns) joined[c.name] = theirs.has(c.name) ? b[j]![c.name] : row[c.name];
          return joined;
        }),
      );
    }
    return out;
  }

  /**
   * Rows of the local data file at `path` (one a scan plan with these lookups just listed) where,
   * for every lookup, some column equals one of its values, by number, reading only the lookup
   * columns of row groups `groups` (lookupGroups; page-match.ts, docs/ARCHITECTURE.md "Lookups
   * by page"); `refused` when the file is not read that way, `tooMany` past `limit` rows.
   */
  matchRows(path: string, lookups: readonly Lookup[], groups: readonly number[], limit: number): MatchResult {
    if (!this.matcher || !path.startsWith(this.dataPath)) return { refused: true };
    return this.matcher.match(path, lookups, groups, limit);
  }

  /** Whether `matchRowsAside` runs on the row fetch's worker (started now if it was not): else it is `matchRows`. */
  get matchesAside(): boolean {
    return this.matcher !== undefined && this.pageHelper()?.alive === true;
  }

  /**
   * `matchRows` of several files on the row fetch's worker (page-helper.ts), while this thread
   * goes on: a lookup's older files there, its newer ones here (docs/ARCHITECTURE.md "Lookups by
   * page"). Without the worker, or when it fails, the files are matched here; an error refuses a
   * file (DuckDB reads it).
   */
  async matchRowsAside(
    files: ReadonlyArray<{ path: string; groups: readonly number[] }>,
    lookups: readonly Lookup[],
    limit: number,
  ): Promise<MatchResult[]> {
    const helper = this.pageHelper();
    const local = files.every((f) => f.path.startsWith(this.dataPath));
    const theirs = helper?.alive && local ? await helper.matchMany(files, lookups, limit) : "failed";
    if (theirs !== "failed") return theirs;
    return files.map((f) => {
      try {
        return this.matchRows(f.path, lookups, f.groups, limit);
      } catch {
        return { refused: true };
      }
    });
  }

  /**
   * Advises the kernel of the reads `matchRows` will make in these files and row groups
   * (page-match.ts `advise`, `adviseData`), so a search's files come off a cold disk side by side;
   * `aside`: those `matchRowsAside` will make, on the row fetch's worker before it matches them.
   */
  adviseMatch(
    files: ReadonlyArray<{ path: string; groups: readonly number[] }>,
    lookups: readonly Lookup[],
    aside = false,
  ): void {
    const matcher = this.matcher;
    if (!matcher) return;
    const local = files.filter((f) => f.path.startsWith(this.dataPath));
    const helper = aside ? this.pageHelper() : undefined;
    if (helper?.alive) return helper.adviseMatch(local, lookups);
    // The filters and offset indexes of every file first; then, as they arrive, the pages they keep.
    for (const f of local) matcher.advise(f.path, lookups, f.groups);
    for (const f of local) matcher.adviseData(f.path, lookups, f.groups);
  }

  /**
   * Reads the footers of the newest local data files of tables with point-lookup columns into the
   * lookup indexes (lookup-warm.ts), in the background after start; resolves with the files read.
   */
  async warmLookups(): Promise<number> {
    if (!this.catalog || !this.bloom || !this.pages) return 0;
    const layouts = this.pages.layouts;
    const stopped = () => this.engine === undefined;
    try {
      return await warmLookups({
        catalog: this.catalog,
        tables: () => this.defs.values(),
        bloom: this.bloom,
        layouts,
        maxFiles: layouts.maxFiles,
        alsoWarm: (paths) => this.pageHelper()?.warm(paths),
        stopped,
      });
    } catch (e) {
      if (stopped()) return 0; // the lake stopped under it (its catalog closed)
      throw e;
    }
  }

  /**
   * The row groups of a data file a scan plan with these lookups just listed that may hold a
   * match (bloom-index.ts `candidateGroups`); undefined when its filters cannot tell.
   */
  lookupGroups(path: string, lookups: readonly Lookup[]): number[] | undefined {
    return this.bloom?.candidateGroups(path, lookups);
  }

  /**
   * Rows of the local data file at `path` (of table `key`) whose time is in [fromUs, toUs], from
   * its row groups' statistics and the time pages of the row groups across an edge
   * (page-time.ts); undefined when the file is not counted that way (DuckDB counts it).
   */
  countInWindow(path: string, key: string, fromUs: number, toUs: number): number | undefined {
    const time = this.timeColumnOf(path, key);
    return time === undefined ? undefined : this.times?.count(path, time, fromUs, toUs);
  }

  /**
   * The rows of the local data file at `path` (of table `key`) among its `limit` newest in
   * [fromUs, toUs], ties at the last time included, by number and time (page-time.ts,
   * docs/ARCHITECTURE.md "Newest rows by page"); undefined when the file is not read that way.
   */
  newestInWindow(path: string, key: string, fromUs: number, toUs: number, limit: number): TimedRow[] | undefined {
    const time = this.timeColumnOf(path, key);
    return time === undefined ? undefined : this.times?.newest(path, time, fromUs, toUs, limit);
  }

  /** The time column of table `key` when `path` is a local data file whose times page-time.ts reads. */
  private timeColumnOf(path: string, key: string): string | undefined {
    const def = this.defs.get(key)?.def;
    if (!def || !this.times || !path.startsWith(this.dataPath)) return undefined;
    const type = def.columns.find((c) => c.name === def.timeColumn)?.type;
    return type === "timestamp" || type === "int64" ? def.timeColumn : undefined;
  }

  /** What the window counts and newest reads read so far (page-time.ts); undefined on a remote data path. */
  timeStats(): PageTimes["stats"] | undefined {
    return this.times ? { ...this.times.stats } : undefined;
  }

  /** What the lookups by page read so far (page-match.ts); undefined on a remote data path. */
  matchStats(): PageMatcher["stats"] | undefined {
    return this.matcher ? { ...this.matcher.stats } : undefined;
  }

  /** Runs one read statement (time travel rewritten); callers validate user SQL before. */
  async query(sql: string, params?: SqlParams, opts: QueryOptions = {}): Promise<QueryResult> {
    const rewritten = await rewriteTimeTravelAsync(sql, (ref) => this.timeTravel(ref));
    const run = () => this.queries.track(() => this.parts.engine.query(rewritten, params, opts));
    // Remote: the files the statement reads are fetched into the read cache and pinned first.
    return this.remote
      ? await withFilesOf(this.remote, rewritten, [...this.defs.values()], this.parts.catalog, run)
      : await run();
  }

  snapshotId(): Promise<number> {
    return this.parts.catalog.currentSnapshotId();
  }

  /** Files and rows per table at the current snapshot (node metadata, metrics). */
  async stats(): Promise<TableStats[]> {
    return await tableStats(this.parts.catalog, this.defs);
  }

  /** Row count and time span over every table, files and buffer (lake-summary.ts). */
  async summary(): Promise<{ rows: number; minUs: number | null; maxUs: number | null }> {
    const { engine, writer, catalog } = this.parts;
    return await lakeSummary(catalog, writer, this.defs, (sql) => this.queries.track(() => engine.query(sql)));
  }

  dataPathResolved(): string {
    return this.dataPath;
  }

  /** Where the Parquet files are: the store's location (`s3://bucket/prefix/`) or the local directory. */
  dataLocation(): string {
    return this.remote?.store.location ?? this.dataPath;
  }

  /** Where the lake writes: Parquet files, and the catalog with the spool beside it (/health's free-space check). */
  storageDirs(): { data: string; state: string } {
    return { data: this.dataPath, state: lakeStateDir(this.cfg) };
  }

  /** With a PostgreSQL catalog, whether this process is the lake's maintainer (/health); undefined with SQLite. */
  maintainerState(): { isMaintainer: boolean } | undefined {
    return this.maintenance?.maintainerState();
  }

  /** Flush failures and backlog now, without I/O (/health); undefined when the lake is not started. */
  writerHealth(): WriterHealth | undefined {
    return this.writer?.health();
  }

  /** For the SQL validator: which views exist. */
  viewNames(): string[] {
    return [...this.defs.values()].map((d) => `svc_lake.${d.def.schema}.${d.def.name}`);
  }
}
