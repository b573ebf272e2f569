import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { errorMessage, writtenColumns, type Counter, type Gauge, type Histogram, type Logger, type MetricsRegistry, type TableDef, DURATION_BUCKETS_SECONDS } from "../../core/index.ts";
import type { Engine } from "../engine.ts";
import { DUCKDB_TYPE, csvType, ident, literal, memTableName, tableKey } from "../sql.ts";
import { CsvBatch } from "./csv-batch.ts";
import { writeDataFile } from "./data-file.ts";
import type { LakeCatalog, NewDataFile, TableInfo } from "../catalog-port.ts";

/**
 * The write path (docs/ARCHITECTURE.md "Write path"):
 *   producer → CsvBatch (JS thread, no I/O) → seal every `sealIntervalMs` → spool file
 *   → `INSERT INTO mem_<table> … FROM read_csv(spool)` (DuckDB threads) → visible to queries
 *   → flush at `batchSize` rows or `flushIntervalMs`: the buffer generation is rotated (new rows go
 *     to a fresh table), the old generation is written with COPY … TO Parquet (zstd, sorted),
 *     fsynced, committed in ONE catalog transaction (new snapshot + spool watermark), the views
 *     switch to files + new generation in one DDL, the old table is dropped (DuckDB never frees
 *     DELETEd rows of an in-memory table, so dropping whole generations keeps memory bounded),
 *     and the spool files are removed.
 * A spool file exists from seal until its rows are in a committed Parquet file, so a kill -9
 * loses only the rows still in the JS-side CsvBatch (≤ sealIntervalMs of traffic); on start the
 * spool batches above the committed watermark are loaded again.
 */
export interface WriterOptions {
  dataPath: string;
  spoolDir: string;
  batchSize: number;
  flushIntervalMs: number;
  rowGroupRows: number;
  maxBufferedRows: number;
  sealIntervalMs: number;
}

interface SpoolEntry {
  seq: number;
  file: string;
  /** -1 when recovered from a previous run (counted at load). */
  rows: number;
  /** The layout the rows were written with. */
  def: TableDef;
  /** Resolves when the file is on disk under its final name. */
  written: Promise<void>;
}

/** One buffer table; rows of a generation are flushed together. */
interface Generation {
  id: number;
  table: string;
  /** Columns the buffer table has (it grows with ALTER when the table grows). */
  columns: number;
  batches: Array<{ seq: number; rows: number; atMs: number; file: string }>;
}

interface TableState {
  def: TableDef;
  info: TableInfo;
  key: string;
  columnCount: number;
  current: CsvBatch;
  /** Rows sealed and on their way into the buffer. */
  sealing: number;
  /** Sealed spool files not yet loaded into the buffer. */
  pending: SpoolEntry[];
  /** A load job for `pending` is queued or running. */
  inserting: boolean;
  /** Oldest first; the last one receives new rows. Two exist only while a flush runs or after a failed one. */
  gens: Generation[];
  nextGen: number;
  flushing: boolean;
  /** Highest spool batch that is in committed Parquet. */
  watermark: number;
}

export interface WriterMetrics {
  rowsWritten: Counter<"table">;
  filesWritten: Counter<"table">;
  rowsLost: Counter<"reason">;
  flushFailures: Counter<"table">;
  flushSeconds: Histogram<"table">;
  buffered: Gauge<"table">;
  snapshot: Gauge;
}

export function writerMetrics(reg: MetricsRegistry): WriterMetrics {
  return {
    rowsWritten: reg.counter("svc_lake_rows_written_total", "Rows written into Parquet files, per table.", ["table"]),
    filesWritten: reg.counter("svc_lake_files_written_total", "Parquet files committed to the catalog, per table.", ["table"]),
    rowsLost: reg.counter("svc_lake_rows_lost_total", "Rows that could not be stored, per reason.", ["reason"]),
    flushFailures: reg.counter("svc_lake_flush_failures_total", "Flushes that failed and will be retried, per table.", ["table"]),
    flushSeconds: reg.histogram("svc_lake_flush_duration_seconds", "Time to write, fsync and commit one flush.", DURATION_BUCKETS_SECONDS, ["table"]),
    buffered: reg.gauge("svc_lake_buffered_rows", "Rows accepted but not yet in Parquet, per table.", ["table"]),
    snapshot: reg.gauge("svc_lake_snapshot_id", "Current catalog snapshot id."),
  };
}

export class LakeWriter {
  private readonly tables = new Map<string, TableState>();
  private chain: Promise<void> = Promise.resolve();
  private lastSeq = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopping = false;
  private bufferedTotal = 0;
  /**
   * Called on the writer chain after a batch reached the buffer ("buffered"), when a new buffer
   * generation starts ("rotated") and after a committed flush ("committed"); the lake refreshes
   * its views on the last two.
   */
  onChange: (key: string, kind: "buffered" | "rotated" | "committed") => Promise<void> = async () => {};

  constructor(
    private readonly engine: Engine,
    private readonly catalog: LakeCatalog,
    private readonly opts: WriterOptions,
    private readonly logger: Logger,
    private readonly metrics: WriterMetrics,
  ) {
    mkdirSync(opts.spoolDir, { recursive: true });
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.opts.sealIntervalMs);
  }

  /** Rows accepted and not yet in Parquet (all tables). */
  backlog(): number {
    let open = 0;
    for (const st of this.tables.values()) open += st.current.rows;
    return this.bufferedTotal + open;
  }

  state(key: string): TableState | undefined {
    return this.tables.get(key);
  }

  /** Work queued on the writer connection runs strictly in order. */
  private enqueue(job: () => Promise<void>): Promise<void> {
    const next = this.chain.then(job, job);
    this.chain = next.catch((e) => this.logger.error("lake writer job failed", { error: errorMessage(e) }));
    return this.chain;
  }

  /** Runs `job` on the writer chain (view DDL and catalog swaps must not interleave with flushes). */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    let out: T;
    return this.enqueue(async () => {
      out = await job();
    }).then(() => out);
  }

  private nextSeq(): number {
    this.lastSeq = Math.max(this.lastSeq + 1, Date.now() * 1000);
    return this.lastSeq;
  }

  /** Creates the buffer table and loads spool batches left by a previous run. */
  async register(def: TableDef, info: TableInfo, watermark: number): Promise<void> {
    const key = tableKey(def);
    if (this.tables.has(key)) return;
    const state: TableState = {
      def,
      info,
      key,
      columnCount: writtenColumns(def).length,
      current: new CsvBatch(writtenColumns(def).length),
      sealing: 0,
      pending: [],
      inserting: false,
      gens: [],
      nextGen: 1,
      flushing: false,
      watermark,
    };
    await this.enqueue(async () => {
      await this.engine.run(`CREATE SCHEMA IF NOT EXISTS svc_lake.${ident(def.schema)}`);
      await this.newGeneration(state);
    });
    this.tables.set(key, state);
    await this.recoverSpool(state);
  }

  /** Same as register, for a table whose columns grew (line protocol): new mem table layout. */
  async alter(def: TableDef, info: TableInfo): Promise<void> {
    const st = this.tables.get(tableKey(def));
    if (!st) throw new Error(`table ${tableKey(def)} not registered`);
    const added = def.columns.slice(st.def.columns.length);
    // Synchronously: rows written from now on use the new layout. The old batch is sealed with its
    // own (old) definition, and the buffer tables grow before any new-layout batch is inserted,
    // because jobs on the chain run in order.
    this.seal(st);
    st.def = def;
    st.info = info;
    st.columnCount = writtenColumns(def).length;
    st.current = new CsvBatch(st.columnCount);
    await this.enqueue(async () => {
      for (const g of st.gens) {
        for (const c of added) await this.engine.run(`ALTER TABLE ${g.table} ADD COLUMN IF NOT EXISTS ${ident(c.name)} ${DUCKDB_TYPE[c.type]}`);
        g.columns = Math.max(g.columns, def.columns.length);
      }
    });
  }

  private async newGeneration(st: TableState): Promise<Generation> {
    const id = st.nextGen++;
    const table = memTableName({ schema: st.def.schema, name: `${st.def.name}__g${id}` });
    const cols = st.def.columns.map((c) => `${ident(c.name)} ${DUCKDB_TYPE[c.type]}`).join(", ");
    await this.engine.run(`CREATE TABLE ${table} (${cols})`);
    const g: Generation = { id, table, columns: st.def.columns.length, batches: [] };
    st.gens.push(g);
    return g;
  }

  /** Buffer tables of `key` holding rows not yet in committed Parquet (for views). */
  bufferTables(key: string): string[] {
    return this.tables.get(key)?.gens.map((g) => g.table) ?? [];
  }

  private spoolDirOf(st: TableState): string {
    return join(this.opts.spoolDir, st.key);
  }

  private async recoverSpool(st: TableState): Promise<void> {
    const dir = this.spoolDirOf(st);
    mkdirSync(dir, { recursive: true });
    // A kill during the spool write leaves `<seq>.csv.tmp`: those rows were never sealed.
    for (const f of readdirSync(dir)) if (f.endsWith(".tmp")) rmSync(join(dir, f), { force: true });
    // `<seq>.<written columns>.csv`: a batch written before the table grew keeps its layout
    // (columns are only ever appended, so the old layout is a prefix of the current one).
    const files = readdirSync(dir)
      .map((f) => /^(\d+)\.(\d+)\.csv$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ name: m[0], seq: Number(m[1]), columns: Number(m[2]) }))
      .sort((a, b) => a.seq - b.seq);
    let recovered = 0;
    for (const f of files) {
      const file = join(dir, f.name);
      if (f.seq <= st.watermark) {
        rmSync(file, { force: true });
        continue;
      }
      this.lastSeq = Math.max(this.lastSeq, f.seq);
      const def = layoutWithWritten(st.def, f.columns);
      await this.enqueue(() => this.insertSpool(st, [{ seq: f.seq, file, rows: -1, def, written: Promise.resolve() }], def));
      recovered++;
    }
    if (recovered > 0) this.logger.info("recovered unflushed rows from spool", { table: st.key, batches: recovered });
  }

  /**
   * A writer for one row of `key` (the producer calls `end()`), or undefined when the table is
   * unknown, the writer is stopping or the backlog is full; the caller counts the drop.
   */
  row(key: string): CsvBatch | undefined {
    const st = this.tables.get(key);
    if (!st || this.stopping) return undefined;
    if (this.bufferedTotal + st.current.rows >= this.opts.maxBufferedRows) return undefined;
    return st.current;
  }

  private tick(): void {
    for (const st of this.tables.values()) {
      this.seal(st);
      this.maybeFlush(st);
    }
    this.updateGauges();
  }

  private updateGauges(): void {
    for (const st of this.tables.values()) {
      const mem = this.bufferedRows(st);
      this.metrics.buffered.set(st.current.rows + st.sealing + mem, { table: st.key });
    }
  }

  /**
   * Seals the open batch into a spool file right away (so a kill loses at most one seal interval),
   * and makes sure a job will load it. While a load runs, further sealed files wait and the next
   * job loads them all with one read_csv over the list: under load fewer, bigger inserts.
   */
  private seal(st: TableState): void {
    if (st.current.rows === 0) return;
    const batch = st.current;
    st.current = new CsvBatch(st.columnCount, Math.max(1 << 16, Math.min(batch.byteLength * 2, 16 << 20)));
    const seq = this.nextSeq();
    const rows = batch.rows;
    st.sealing += rows;
    this.bufferedTotal += rows;
    const file = spoolFile(this.spoolDirOf(st), seq, st.columnCount);
    const tmp = `${file}.tmp`;
    const written = Bun.write(tmp, batch.view()).then(() => renameSync(tmp, file));
    st.pending.push({ seq, file, rows, def: st.def, written });
    if (!st.inserting) {
      st.inserting = true;
      void this.enqueue(() => this.loadPending(st));
    }
  }

  private async loadPending(st: TableState): Promise<void> {
    let reschedule = false;
    try {
      while (st.pending.length > 0) {
        // One read_csv per run of files with the same layout (a table may grow between seals).
        const def = st.pending[0]!.def;
        if (def.columns.length > st.gens[st.gens.length - 1]!.columns) {
          // The table grew and its ALTER job is queued behind this one: load these after it.
          reschedule = true;
          break;
        }
        let n = 0;
        while (n < st.pending.length && st.pending[n]!.def === def) n++;
        const group = st.pending.splice(0, n);
        await this.insertSpool(st, group, def);
      }
    } finally {
      st.inserting = reschedule;
      if (reschedule) void this.enqueue(() => this.loadPending(st));
    }
  }

  /** Loads spool files written with layout `def` into the newest buffer generation. */
  private async insertSpool(st: TableState, files: SpoolEntry[], def: TableDef): Promise<void> {
    const written = writtenColumns(def);
    const csvCols = written.map((c) => `${literal(c.name)}: ${literal(csvType(c))}`).join(", ");
    const select = def.columns
      .map((c) => {
        if (c.derived === "uuid") return `uuidv7()::VARCHAR`;
        if (c.derived?.startsWith("date_of:")) return `CAST(make_timestamp(${ident(c.derived.slice(8))}) AS DATE)`;
        return c.type === "timestamp" ? `make_timestamp(${ident(c.name)})` : ident(c.name);
      })
      .join(", ");
    const csv =
      `read_csv([${files.map((f) => literal(f.file)).join(", ")}], columns = {${csvCols}}, header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', ` +
      `new_line = '\\n', nullstr = '\\N', allow_quoted_nulls = false, max_line_size = 1048576, buffer_size = 8388608, strict_mode = true)`;
    const gen = st.gens[st.gens.length - 1]!;
    const sealedRows = files.reduce((a, f) => a + Math.max(0, f.rows), 0);
    let rows = sealedRows;
    try {
      await Promise.all(files.map((f) => f.written));
      if (files.some((f) => f.rows < 0)) {
        // Recovered from a previous run: count what the files hold.
        const r = await this.engine.readAll(`SELECT count(*) AS n FROM ${csv}`);
        rows = Number(r[0]?.n ?? 0);
        this.bufferedTotal += rows;
      }
      await this.engine.run(`INSERT INTO ${gen.table} (${def.columns.map((c) => ident(c.name)).join(", ")}) SELECT ${select} FROM ${csv}`);
      const at = Date.now();
      for (const f of files) gen.batches.push({ seq: f.seq, rows: f.rows < 0 ? rows : f.rows, atMs: at, file: f.file });
    } catch (e) {
      // The CSV is produced by our own encoder; a failure here is a broken invariant. Keep the
      // files for inspection, count the rows and carry on so one bad batch never stops ingest.
      const failed = join(this.opts.spoolDir, "failed");
      mkdirSync(failed, { recursive: true });
      for (const f of files) {
        try {
          renameSync(f.file, join(failed, `${st.key}-${f.seq}.${written.length}.csv`));
        } catch {
          /* already gone */
        }
      }
      this.bufferedTotal -= Math.max(0, rows);
      this.metrics.rowsLost.inc({ reason: "buffer_insert_failed" }, Math.max(0, rows));
      this.logger.error("buffer insert failed; batches kept in spool/failed", { table: st.key, files: files.length, error: errorMessage(e) });
    } finally {
      st.sealing -= sealedRows;
    }
    await this.onChange(st.key, "buffered");
  }

  private bufferedRows(st: TableState): number {
    let n = 0;
    for (const g of st.gens) for (const b of g.batches) n += b.rows;
    return n;
  }

  private maybeFlush(st: TableState, force = false): void {
    const oldestGen = st.gens.find((g) => g.batches.length > 0);
    if (st.flushing || !oldestGen) return;
    const rows = this.bufferedRows(st);
    const oldest = oldestGen.batches[0]!.atMs;
    if (!force && rows < this.opts.batchSize && Date.now() - oldest < this.opts.flushIntervalMs) return;
    st.flushing = true;
    void this.enqueue(() => this.flush(st)).finally(() => {
      st.flushing = false;
    });
  }

  private async flush(st: TableState): Promise<void> {
    let target = st.gens[0];
    if (!target || target.batches.length === 0) return;
    if (target === st.gens[st.gens.length - 1]) {
      // Rotate: rows arriving from now on go to a new generation while this one is written.
      await this.newGeneration(st);
      await this.onChange(st.key, "rotated");
      target = st.gens[0]!;
    }
    const upTo = target.batches[target.batches.length - 1]!.seq;
    const rows = target.batches.reduce((s, b) => s + b.rows, 0);
    const started = performance.now();
    const part = st.def.partitionBy;
    const partValues: Array<string | null> = part
      ? (await this.engine.readAll(`SELECT DISTINCT ${ident(part)}::VARCHAR AS v FROM ${target.table}`)).map((r) =>
          r.v === null || r.v === undefined ? null : String(r.v),
        )
      : [null];
    const files: NewDataFile[] = [];
    try {
      for (const pv of partValues) {
        const where = part ? (pv === null ? `${ident(part)} IS NULL` : `${ident(part)}::VARCHAR = ${literal(pv)}`) : "true";
        const partitionValue = part ? (pv ?? "__null") : undefined;
        files.push(
          await writeDataFile(
            (sql) => this.engine.run(sql),
            (sql) => this.engine.readAll(sql),
            `SELECT * FROM ${target.table} WHERE ${where}`,
            {
              def: st.def,
              info: st.info,
              dataPath: this.opts.dataPath,
              relPath: this.catalog.newDataFilePath(st.info.tableId, partitionValue),
              rowGroupRows: this.opts.rowGroupRows,
              ...(partitionValue !== undefined ? { partitionValue } : {}),
            },
          ),
        );
      }
      const { snapshotId } = this.catalog.commitDataFiles(st.info.tableId, files, { writerKey: st.key, watermark: upTo });
      this.metrics.snapshot.set(snapshotId);
    } catch (e) {
      for (const f of files) rmSync(join(this.opts.dataPath, f.path), { force: true });
      this.metrics.flushFailures.inc({ table: st.key });
      this.logger.error("flush failed; rows stay buffered and are retried", { table: st.key, rows, error: errorMessage(e) });
      return;
    }
    st.watermark = upTo;
    st.gens.shift();
    await this.onChange(st.key, "committed");
    await this.engine.run(`DROP TABLE IF EXISTS ${target.table}`);
    this.bufferedTotal -= rows;
    for (const b of target.batches) rmSync(b.file, { force: true });
    this.metrics.rowsWritten.inc({ table: st.key }, rows);
    this.metrics.filesWritten.inc({ table: st.key }, files.length);
    this.metrics.flushSeconds.observe((performance.now() - started) / 1000, { table: st.key });
    this.logger.debug("flushed", { table: st.key, rows, files: files.length, ms: Math.round(performance.now() - started) });
  }

  /** Seals every buffer and makes rows visible to queries now (tests, shutdown). */
  async sync(): Promise<void> {
    for (const st of this.tables.values()) this.seal(st);
    await this.enqueue(async () => {});
  }

  /** Writes everything buffered into Parquet and waits for it. */
  async flushAll(): Promise<void> {
    await this.sync();
    for (const st of this.tables.values()) {
      while (st.gens.some((g) => g.batches.length > 0)) {
        const before = this.bufferedRows(st);
        await this.enqueue(() => this.flush(st));
        if (this.bufferedRows(st) >= before) break; // flush failed; logged, rows stay in the buffer
      }
    }
    await this.enqueue(async () => {});
  }

  /** Stop accepting, seal, flush every row, wait. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.flushAll();
    this.updateGauges();
  }
}

const spoolFile = (dir: string, seq: number, writtenColumnCount: number) => join(dir, `${seq}.${writtenColumnCount}.csv`);

/** The table layout whose first `n` written columns are those of `def` (an older, shorter layout). */
function layoutWithWritten(def: TableDef, n: number): TableDef {
  let seen = 0;
  const columns = def.columns.filter((c) => c.derived !== undefined || seen++ < n);
  return { ...def, columns };
}
