import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Config } from "../config/index.ts";
import { AppError, errorMessage, formatTimestampUs, parseTimestampUs, type Counter, type Gauge, type Logger, type MetricsRegistry, type Module, type RowWriter, type TableDef } from "../core/index.ts";
import type { LakeCatalog, LiveDataFile, TableInfo } from "./catalog-port.ts";
import { Engine, type QueryOptions, type QueryResult, type SqlParams } from "./engine.ts";
import { rewriteTimeTravel, type TimeTravelRef } from "./query/time-travel.ts";
import { unionSql } from "./query/views.ts";
import { openLakeCatalog, type OpenLakeCatalogOptions } from "./catalog-adapter.ts";
import { ident, literal, memTableName, qualifiedName, tableKey } from "./sql.ts";
import { LakeWriter, writerMetrics, type WriterHealth } from "./writer/writer.ts";
import { LakeMaintenance } from "./maintenance.ts";
import { compactionConfigProblems } from "./compaction/config.ts";
import { reservedSchemaProblem, tableNameProblem } from "./names.ts";

export type LakeConfig = Config["storage"]["lakehouse"];
export type ChangeKind = "buffered" | "committed";

export interface LakeDeps {
  config: LakeConfig;
  logger: Logger;
  metrics: MetricsRegistry;
  /** Defaults to the DuckLake catalog in SQLite (src/lake/catalog). */
  openCatalog?: (opts: OpenLakeCatalogOptions) => LakeCatalog;
  /** Rows are sealed into the buffer table this often (visibility latency). */
  sealIntervalMs?: number;
}

export interface ScanOptions {
  /** Inclusive bounds on the table's time column, epoch microseconds. */
  fromUs?: number;
  toUs?: number;
  /** Read the table as of this snapshot (no buffer rows). */
  snapshotId?: number;
  /** Include buffer rows (default: config search_buffer). */
  buffer?: boolean;
  /** Prune files by another column's statistics (e.g. `uuid` for a lookup by id); replaces the time range. */
  prune?: { column: string; min: string; max: string };
  /**
   * Keep only files that may hold one of these values of a VARCHAR column (on top of the time
   * range): some value inside the file's [min, max], and the column not NULL in every row.
   * Files with unknown bounds are kept; the buffer is never pruned.
   */
  equals?: { column: string; values: readonly string[] };
  /**
   * Buffer first, then files by their newest row, newest first (ties: the file whose oldest row
   * is newer first): a LIMIT without ORDER BY then samples the newest end of the range
   * (`lake_topn_strategy: stream`); `newest` reads the plan's files in this order in groups.
   */
  newestFirst?: boolean;
}

/** One data file of a scan plan with the catalog's statistics of the table's time column. */
export interface ScanFile {
  readonly file: LiveDataFile;
  /** Oldest and newest time in the file, epoch µs; null when the catalog does not know. */
  readonly minUs: number | null;
  readonly maxUs: number | null;
  /** Rows whose time is not NULL. */
  readonly timedRows: number;
}

/**
 * The files and the buffer of one read, captured together (one catalog snapshot, the buffer as
 * it was then): a reader may read them in parts and in several statements without seeing a row
 * twice or missing one (a flush in between moves rows from the buffer into a file not listed here).
 */
export interface ScanPlan {
  readonly files: readonly ScanFile[];
  /** FROM-clause body reading `files` (a subset of the plan's) and, when `withBuffer`, the buffer. */
  sql(files: readonly ScanFile[], withBuffer: boolean): string;
}

/** Could a file whose statistics for a VARCHAR column are `s` hold one of `values`? */
function mayHoldValue(s: { min: string | null; max: string | null; nullCount: number } | undefined, recordCount: number, values: readonly string[]): boolean {
  if (!s) return false; // column absent from the file: NULL in every row
  if (s.nullCount >= recordCount) return false;
  if (s.min === null || s.max === null) return true;
  return values.some((v) => utf8Compare(v, s.min!) >= 0 && utf8Compare(v, s.max!) <= 0);
}

/** DuckDB orders VARCHAR by UTF-8 bytes; JS `<` by UTF-16 units (they differ above U+FFFF). */
const ASCII = /^[\x00-\x7f]*$/;
function utf8Compare(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/** Internal schema of the files views (not a lake schema: never listed as a table). */
const FILES_SCHEMA = "svc_files";
const filesViewName = (def: Pick<TableDef, "schema" | "name">) => `svc_lake.${FILES_SCHEMA}.${ident(`${def.schema}.${def.name}`)}`;

/**
 * The lake module: DuckLake catalog + Parquet writer + DuckDB query engine in one process.
 * Producers define tables and write rows; readers query `svc_lake.<schema>.<table>` views.
 */
export class Lake implements Module {
  readonly name = "lake";
  private catalog: LakeCatalog | undefined;
  private engine: Engine | undefined;
  private writer: LakeWriter | undefined;
  private maintenance: LakeMaintenance | undefined;
  private maintenanceTimer: ReturnType<typeof setInterval> | undefined;
  private fileGauge: Gauge<"table"> | undefined;
  private readonly refused: Counter<"reason">;
  private readonly viewFailures: Counter<"table">;
  private viewChain: Promise<void> = Promise.resolve();
  private readonly schemas = new Set<string>(["main"]);
  private readonly pendingRefresh = new Map<string, Promise<void>>();
  /** Tables whose queued refresh must re-create the files view too (not only the buffer's). */
  private readonly refreshAll = new Set<string>();
  /** Column count each table view was created with (the table view is re-created when it grows). */
  private readonly viewLayout = new Map<string, number>();
  /** Live files per table as of a catalog snapshot: a seal (10 times a second) changes only the buffer. */
  private readonly fileCache = new Map<string, { snapshot: number; files: LiveDataFile[] }>();
  private readonly defs = new Map<string, { def: TableDef; info: TableInfo }>();
  /** Lower-case `schema.table` → key of `defs`, and lower-case schema → its spelling (names match case-insensitively). */
  private readonly keysLower = new Map<string, string>();
  private readonly schemasLower = new Map<string, string>();
  private readonly refusedKeys = new Set<string>();
  private readonly viewErrorLoggedAt = new Map<string, number>();
  private readonly dataPath: string;
  private readonly cfg: LakeConfig;
  private readonly listeners = new Set<(key: string, kind: ChangeKind) => void>();

  constructor(private readonly deps: LakeDeps) {
    this.cfg = deps.config;
    this.dataPath = resolve(deps.config.data_path);
    this.fileGauge = deps.metrics.gauge("svc_lake_data_files", "Live Parquet data files at the current snapshot, per table.", ["table"]);
    this.refused = deps.metrics.counter("svc_lake_tables_refused_total", "Tables the lake refused to define (reserved_name: a DuckDB or lake name; such a table stored by an older version is skipped at start).", ["reason"]);
    this.refused.inc({ reason: "reserved_name" }, 0);
    this.viewFailures = deps.metrics.counter(
      "svc_lake_view_refresh_failures_total",
      "Query-view refreshes that failed, per table (rolled back; the table's rows are still written, other tables are not affected).",
      ["table"],
    );
  }

  private get parts() {
    if (!this.catalog || !this.engine || !this.writer) throw new AppError("UNAVAILABLE", "the lake is not started");
    return { catalog: this.catalog, engine: this.engine, writer: this.writer };
  }

  async start(): Promise<void> {
    const cfg = this.cfg;
    if (/^(s3|az|gs|https?):\/\//.test(cfg.data_path)) {
      throw new AppError("CONFIG_INVALID", `storage.lakehouse.data_path: object stores are not supported by this build (${cfg.data_path}); use a local directory`);
    }
    const compactionProblems = compactionConfigProblems(cfg.compaction, this.dataPath);
    if (compactionProblems.length > 0) {
      throw new AppError("CONFIG_INVALID", compactionProblems.join("; "), { details: { errors: compactionProblems } });
    }
    const catalogPath = resolve(cfg.catalog_path);
    const stateDir = dirname(catalogPath);
    const spoolDir = join(stateDir, "spool");
    const tempDir = cfg.tuning.temp_directory ? resolve(cfg.tuning.temp_directory) : join(stateDir, "tmp");
    mkdirSync(this.dataPath, { recursive: true });
    mkdirSync(stateDir, { recursive: true });
    const repair = { enabled: cfg.auto_repair_catalog, backupsKept: cfg.backups_kept, log: this.deps.logger.child({ module: "catalog" }) };
    this.catalog = (this.deps.openCatalog ?? openLakeCatalog)({ path: catalogPath, dataPath: this.dataPath, repair });
    try {
      this.engine = await Engine.open({
        threads: cfg.tuning.threads,
        memoryLimit: cfg.tuning.memory_limit,
        tempDirectory: tempDir,
        allowedDirectories: [this.dataPath, spoolDir, tempDir],
      });
    } catch (e) {
      this.catalog.close();
      this.catalog = undefined;
      throw e;
    }
    await this.engine.ddl(`CREATE SCHEMA IF NOT EXISTS svc_lake.${FILES_SCHEMA}`);
    this.writer = new LakeWriter(
      this.engine,
      this.catalog,
      {
        dataPath: this.dataPath,
        spoolDir,
        batchSize: cfg.batch_size,
        flushIntervalMs: cfg.flush_interval_sec * 1000,
        rowGroupRows: cfg.row_group_rows,
        maxBufferedRows: cfg.max_buffered_rows,
        sealIntervalMs: this.deps.sealIntervalMs ?? 100,
        // Flushed spool files stay readable for queries planned before the flush (≥ query time-out).
        spoolGraceMs: 120_000,
        oldestQueryStartMs: () => this.oldestQueryStartMs(),
        spoolReserveBytes: cfg.reserve_free_bytes,
        catalogPath,
      },
      this.deps.logger.child({ module: "lake-writer" }),
      writerMetrics(this.deps.metrics),
    );
    this.writer.onChange = async (key, kind) => {
      // A view that cannot be refreshed is this table's problem only (logged and counted in
      // refreshView): the writer's spool and flush path and every other table go on.
      try {
        await this.refreshView(key, kind === "buffered" ? "buffer" : "all");
      } catch {
        return;
      }
      for (const l of this.listeners) l(key, kind);
    };
    try {
      this.maintenance = await LakeMaintenance.open(
        this.catalog,
        this.writer,
        () => [...this.defs.values()],
        (key) => this.refreshView(key),
        {
          dataPath: this.dataPath,
          tempDirectory: tempDir,
          rowGroupRows: cfg.row_group_rows,
          compaction: cfg.compaction,
          retentionDays: cfg.retention.days,
          snapshotRetentionSec: cfg.snapshot_retention_sec,
        },
        this.deps.logger.child({ module: "lake-maintenance" }),
        this.deps.metrics,
      );
    } catch (e) {
      this.engine.close();
      this.catalog.close();
      this.writer = this.engine = this.catalog = undefined;
      throw e;
    }
    this.maintenance.removeOrphans();
    this.maintenanceTimer = setInterval(() => void this.maintenance?.runOnce(), cfg.compaction.check_interval_sec * 1000);
    this.writer.start();
    this.deps.logger.info("lake open", { catalog: catalogPath, data_path: this.dataPath, snapshot: this.catalog.currentSnapshotId() });
  }

  async stop(): Promise<void> {
    if (this.maintenanceTimer) clearInterval(this.maintenanceTimer);
    await this.maintenance?.stop();
    this.maintenance = undefined;
    if (this.writer) await this.writer.stop();
    this.engine?.close();
    this.catalog?.close();
    this.writer = undefined;
    this.engine = undefined;
    this.catalog = undefined;
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
    const info = catalog.ensureTable(def.schema, {
      name: def.name,
      columns: def.columns.map((c) => ({ name: c.name, type: c.type })),
      ...(def.partitionBy ? { partitionBy: def.partitionBy } : {}),
    });
    // Columns the table grew in earlier runs (line protocol) stay part of it, in catalog order.
    const known = new Set(def.columns.map((c) => c.name.toLowerCase()));
    const grown = info.columns.filter((c) => !known.has(c.name.toLowerCase()));
    const full: TableDef = grown.length ? { ...def, columns: [...def.columns, ...grown.map((c) => ({ name: c.name, type: c.type }))] } : def;
    this.defs.set(key, { def: full, info });
    this.keysLower.set(key.toLowerCase(), key);
    if (!this.schemasLower.has(def.schema.toLowerCase())) this.schemasLower.set(def.schema.toLowerCase(), def.schema);
    writer.register(full, info, catalog.writerWatermark(key));
    await this.refreshView(key);
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
    const info = catalog.ensureTable(def.schema, {
      name: def.name,
      columns: def.columns.map((c) => ({ name: c.name, type: c.type })),
      ...(def.partitionBy ? { partitionBy: def.partitionBy } : {}),
    });
    this.defs.set(key, { def, info });
    writer.alter(def, info);
    await this.refreshView(key);
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
  storedTables(): Array<Pick<TableDef, "schema" | "name" | "columns">> {
    return this.parts.catalog.listTables().map(storedTable);
  }

  /** One table of the catalog by name (case-insensitive), defined in this process or not: one indexed lookup. */
  storedTable(schema: string, name: string): Pick<TableDef, "schema" | "name" | "columns"> | undefined {
    const t = this.parts.catalog.getTable(schema, name);
    return t ? storedTable(t) : undefined;
  }

  /** The lake key of a table defined in this process, matched case-insensitively. */
  findTable(schema: string, name: string): string | undefined {
    return this.keysLower.get(`${schema}.${name}`.toLowerCase());
  }

  /** How this lake already spells schema `schema` (case-insensitive), or undefined for a new schema. */
  schemaSpelling(schema: string): string | undefined {
    return this.schemasLower.get(schema.toLowerCase()) ?? this.parts.catalog.schemaName(schema);
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
  acceptBatch(key: string, bytes: Uint8Array, rows: number, columns: number, span: { min: number; max: number } | undefined, written?: () => void): boolean {
    return this.writer?.acceptBatch(key, bytes, rows, columns, span, written) ?? false;
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
  files(key: string): Array<{ path: string; rows: number; bytes: number }> {
    const entry = this.defs.get(key);
    if (!entry) return [];
    return this.parts.catalog.listDataFiles(entry.info.tableId).map((f) => ({ path: f.path, rows: f.recordCount, bytes: f.fileSizeBytes }));
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
  private refreshView(key: string, what: "buffer" | "all" = "all"): Promise<void> {
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
          this.deps.logger.error("view refresh failed; the table's rows are still written, its views are stale until a refresh succeeds", { table: key, error: errorMessage(e) });
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
    const { engine, catalog, writer } = this.parts;
    const entry = this.defs.get(key);
    if (!entry) return;
    const def = entry.def;
    // Catalog files and buffer are read together, synchronously: a flush commits and drops its
    // spool files from the buffer in one synchronous step, so no row is seen twice or missed.
    const buffer = writer.bufferSelects(key);
    const mem = `CREATE OR REPLACE VIEW ${memTableName(def)} AS ${unionSql(def, [], buffer)}`;
    const layout = def.columns.length;
    if (!all && this.viewLayout.get(key) === layout) {
      // mem_<table> (spec doc 2 "mem_hep_proto_*"): the buffer alone; the table view reads it.
      await engine.ddl(mem);
      return;
    }
    const snapshot = catalog.currentSnapshotId();
    const cached = this.fileCache.get(key);
    const files = cached && cached.snapshot === snapshot ? cached.files : catalog.listDataFiles(entry.info.tableId);
    this.fileCache.set(key, { snapshot, files });
    this.fileGauge?.set(files.length, { table: key });
    if (!this.schemas.has(def.schema)) {
      await engine.ddl(`CREATE SCHEMA IF NOT EXISTS svc_lake.${ident(def.schema)}`);
      this.schemas.add(def.schema);
    }
    const filesView = filesViewName(def);
    const statements = [`CREATE OR REPLACE VIEW ${filesView} AS ${unionSql(def, files, undefined)}`, mem];
    if (this.viewLayout.get(key) !== layout) {
      const cols = def.columns.map((c) => ident(c.name)).join(", ");
      const body = this.cfg.search_buffer ? `SELECT ${cols} FROM ${filesView} UNION ALL SELECT ${cols} FROM ${memTableName(def)}` : `SELECT ${cols} FROM ${filesView}`;
      statements.push(`CREATE OR REPLACE VIEW ${qualifiedName(def)} AS ${body}`);
    }
    await engine.transaction(statements);
    this.viewLayout.set(key, layout);
  }

  /**
   * SQL reading one table, pruned by the catalog's time statistics: the FROM-clause body our own
   * search uses (`SELECT … FROM (<scanSql>) t WHERE …`).
   */
  scanSql(key: string, opts: ScanOptions = {}): string {
    const plan = this.scanPlan(key, opts);
    return plan.sql(plan.files, true);
  }

  /**
   * The files (pruned as scanSql prunes them, with their time bounds) and the buffer of one read,
   * captured in one synchronous step; `sql(subset, withBuffer)` reads part of it. The buffer is
   * included only when the options ask for it (search_buffer, no snapshot).
   */
  scanPlan(key: string, opts: ScanOptions = {}): ScanPlan {
    const { catalog, writer } = this.parts;
    const entry = this.defs.get(key);
    if (!entry) throw new AppError("NOT_FOUND", `no table ${key}`);
    const def = entry.def;
    const range = opts.prune
      ? { column: opts.prune.column, min: opts.prune.min, max: opts.prune.max }
      : opts.fromUs !== undefined || opts.toUs !== undefined
        ? {
            column: def.timeColumn,
            ...(opts.fromUs !== undefined ? { min: formatTimestampUs(opts.fromUs) } : {}),
            ...(opts.toUs !== undefined ? { max: formatTimestampUs(opts.toUs) } : {}),
          }
        : {};
    let files = catalog.listDataFiles(entry.info.tableId, { ...range, ...(opts.snapshotId !== undefined ? { snapshotId: opts.snapshotId } : {}) });
    const eq = opts.equals;
    if (eq) {
      const col = def.columns.find((c) => c.name === eq.column);
      if (!col || col.type !== "varchar") throw new AppError("VALIDATION", `equals pruning needs a VARCHAR column, ${key} has no such ${eq.column}`);
      files = files.filter((f) => mayHoldValue(f.columnStats[eq.column], f.recordCount, eq.values));
    }
    const t = def.timeColumn;
    let spans: ScanFile[] = files.map((file) => {
      const s = file.columnStats[t];
      return { file, minUs: parseTimestampUs(s?.min), maxUs: parseTimestampUs(s?.max), timedRows: s ? Math.max(0, file.recordCount - s.nullCount) : 0 };
    });
    if (opts.newestFirst) {
      // Unknown bounds sort as the newest (such a file may hold any time).
      const hi = (f: ScanFile) => f.maxUs ?? Number.MAX_SAFE_INTEGER;
      const lo = (f: ScanFile) => f.minUs ?? Number.MAX_SAFE_INTEGER;
      spans = [...spans].sort((a, b) => hi(b) - hi(a) || lo(b) - lo(a));
    }
    const useBuffer = opts.snapshotId === undefined && (opts.buffer ?? this.cfg.search_buffer);
    const buffer = useBuffer ? writer.bufferSelects(key) : undefined;
    const bufferFirst = opts.newestFirst === true;
    return {
      files: spans,
      sql: (subset, withBuffer) =>
        unionSql(
          def,
          subset.map((f) => f.file),
          withBuffer ? buffer : undefined,
          bufferFirst,
        ),
    };
  }

  /** Resolves `AT (VERSION => n)` / `AT (TIMESTAMP => '…')` / `AT SNAPSHOT n` / `AT TIMESTAMP '…'`. */
  private timeTravel(ref: TimeTravelRef): string {
    const { catalog } = this.parts;
    const key = `${ref.schema ?? "main"}.${ref.table}`;
    if (!this.defs.has(key)) throw new AppError("NOT_FOUND", `time travel: no table ${key}`);
    let snapshotId: number | undefined;
    if (ref.kind === "version") {
      snapshotId = Number(ref.value);
      if (!Number.isInteger(snapshotId) || snapshotId < 0) throw new AppError("BAD_REQUEST", `time travel: "${ref.value}" is not a snapshot id`);
      if (snapshotId > catalog.currentSnapshotId()) throw new AppError("NOT_FOUND", `time travel: snapshot ${snapshotId} does not exist`);
    } else {
      const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(ref.value) ? ref.value : `${ref.value.replace(" ", "T")}Z`);
      if (Number.isNaN(ms)) throw new AppError("BAD_REQUEST", `time travel: "${ref.value}" is not a timestamp`);
      snapshotId = catalog.snapshotAt(ms);
      if (snapshotId === undefined) throw new AppError("NOT_FOUND", `time travel: no snapshot at or before ${ref.value}`);
    }
    return this.scanSql(key, { snapshotId });
  }

  /** Runs one read statement (time travel rewritten); callers validate user SQL before. */
  async query(sql: string, params?: SqlParams, opts: QueryOptions = {}): Promise<QueryResult> {
    const rewritten = rewriteTimeTravel(sql, (ref) => this.timeTravel(ref));
    return await this.tracked(() => this.parts.engine.query(rewritten, params, opts));
  }

  /** Queries in flight by start time (epoch ms → count): flushed spool files outlive the oldest. */
  private readonly running = new Map<number, number>();

  private async tracked<T>(run: () => Promise<T>): Promise<T> {
    const at = Date.now();
    this.running.set(at, (this.running.get(at) ?? 0) + 1);
    try {
      return await run();
    } finally {
      const n = (this.running.get(at) ?? 1) - 1;
      if (n > 0) this.running.set(at, n);
      else this.running.delete(at);
    }
  }

  private oldestQueryStartMs(): number | undefined {
    let oldest: number | undefined;
    for (const at of this.running.keys()) if (oldest === undefined || at < oldest) oldest = at;
    return oldest;
  }

  snapshotId(): number {
    return this.parts.catalog.currentSnapshotId();
  }

  /** Files and rows per table at the current snapshot (node metadata, metrics). */
  stats(): Array<{ key: string; files: number; rows: number; bytes: number; minTs: string | null; maxTs: string | null }> {
    const { catalog } = this.parts;
    return [...this.defs.entries()].map(([key, { def, info }]) => {
      const files = catalog.listDataFiles(info.tableId, { statsColumns: [def.timeColumn] });
      let rows = 0;
      let bytes = 0;
      let minTs: string | null = null;
      let maxTs: string | null = null;
      for (const f of files) {
        rows += f.recordCount;
        bytes += f.fileSizeBytes;
        const s = f.columnStats[def.timeColumn];
        if (s?.min && (minTs === null || s.min < minTs)) minTs = s.min;
        if (s?.max && (maxTs === null || s.max > maxTs)) maxTs = s.max;
      }
      return { key, files: files.length, rows, bytes, minTs, maxTs };
    });
  }

  /**
   * Row count and time span over every table: committed files from catalog statistics plus the
   * buffer (node metadata endpoints, `has_data` pruning). Times are epoch microseconds.
   */
  async summary(): Promise<{ rows: number; minUs: number | null; maxUs: number | null }> {
    const { engine, writer } = this.parts;
    let rows = 0;
    let minUs: number | null = null;
    let maxUs: number | null = null;
    const widen = (lo: number | null, hi: number | null) => {
      if (lo !== null && (minUs === null || lo < minUs)) minUs = lo;
      if (hi !== null && (maxUs === null || hi > maxUs)) maxUs = hi;
    };
    // Catalog and buffer captured in one synchronous step (a flush moves rows between them
    // synchronously). The buffer's time span comes from the spans its batches kept while they
    // were written; only spool files without one (recovered at start, NULL times) are read.
    const buffers: Array<{ def: TableDef; parts: string[] }> = [];
    for (const t of this.stats()) {
      rows += t.rows;
      widen(parseTimestampUs(t.minTs), parseTimestampUs(t.maxTs));
    }
    for (const { def } of this.defs.values()) {
      const key = tableKey(def);
      const entries = writer.buffer(key);
      const unknown = entries.filter((e) => !e.span);
      for (const e of entries) {
        rows += e.rows;
        if (e.span) widen(e.span.min, e.span.max);
      }
      if (unknown.length) buffers.push({ def, parts: writer.bufferSelects(key, unknown) });
    }
    for (const b of buffers) {
      const col = ident(b.def.timeColumn);
      const r = await this.tracked(() => engine.query(`SELECT epoch_us(min(${col})) AS lo, epoch_us(max(${col})) AS hi FROM (${b.parts.join(" UNION ALL ")})`));
      const row = r.rows[0] ?? {};
      widen(row.lo === null || row.lo === undefined ? null : Number(row.lo), row.hi === null || row.hi === undefined ? null : Number(row.hi));
    }
    return { rows, minUs, maxUs };
  }

  dataPathResolved(): string {
    return this.dataPath;
  }

  /** Where the lake writes: Parquet files, and the catalog with the spool beside it (/health's free-space check). */
  storageDirs(): { data: string; state: string } {
    return { data: this.dataPath, state: dirname(resolve(this.cfg.catalog_path)) };
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

const storedTable = (t: TableInfo): Pick<TableDef, "schema" | "name" | "columns"> => ({
  schema: t.schemaName,
  name: t.name,
  columns: t.columns.map((c) => ({ name: c.name, type: c.type })),
});

export { ident, literal };
