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

/** One buffer table; rows of a generation are flushed together. */
interface Generation {
  id: number;
  table: string;
  batches: Array<{ seq: number; rows: number; atMs: number }>;
}

interface TableState {
  def: TableDef;
  info: TableInfo;
  key: string;
  columnCount: number;
  current: CsvBatch;
  /** Rows sealed and on their way into the buffer. */
  sealing: number;
  /** A spool insert for this table is queued or running: the next seal waits (bigger, cheaper batches). */
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
    this.seal(st);
    await this.enqueue(async () => {
      for (const g of st.gens) {
        for (const c of def.columns.slice(st.def.columns.length)) {
          await this.engine.run(`ALTER TABLE ${g.table} ADD COLUMN IF NOT EXISTS ${ident(c.name)} ${DUCKDB_TYPE[c.type]}`);
        }
      }
      st.def = def;
      st.info = info;
      st.columnCount = writtenColumns(def).length;
      st.current = new CsvBatch(st.columnCount);
    });
  }

  private async newGeneration(st: TableState): Promise<Generation> {
    const id = st.nextGen++;
    const table = memTableName({ schema: st.def.schema, name: `${st.def.name}__g${id}` });
    const cols = st.def.columns.map((c) => `${ident(c.name)} ${DUCKDB_TYPE[c.type]}`).join(", ");
    await this.engine.run(`CREATE TABLE ${table} (${cols})`);
    const g: Generation = { id, table, batches: [] };
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
    const seqs = readdirSync(dir)
      .filter((f) => /^\d+\.csv$/.test(f))
      .map((f) => Number(f.slice(0, -4)))
      .sort((a, b) => a - b);
    let recovered = 0;
    for (const seq of seqs) {
      const file = join(dir, `${seq}.csv`);
      if (seq <= st.watermark) {
        rmSync(file, { force: true });
        continue;
      }
      this.lastSeq = Math.max(this.lastSeq, seq);
      await this.enqueue(() => this.insertSpool(st, seq, file, -1));
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

  private seal(st: TableState, force = false): void {
    if (st.current.rows === 0 || (st.inserting && !force)) return;
    st.inserting = true;
    const batch = st.current;
    st.current = new CsvBatch(st.columnCount, Math.max(1 << 16, Math.min(batch.byteLength * 2, 16 << 20)));
    const seq = this.nextSeq();
    const rows = batch.rows;
    st.sealing += rows;
    this.bufferedTotal += rows;
    const file = join(this.spoolDirOf(st), `${seq}.csv`);
    void this.enqueue(async () => {
      const tmp = `${file}.tmp`;
      try {
        await Bun.write(tmp, batch.view());
        renameSync(tmp, file);
        await this.insertSpool(st, seq, file, rows);
      } finally {
        st.inserting = false;
      }
    });
  }

  private async insertSpool(st: TableState, seq: number, file: string, sealedRows: number): Promise<void> {
    const written = writtenColumns(st.def);
    const csvCols = written.map((c) => `${literal(c.name)}: ${literal(csvType(c))}`).join(", ");
    const select = st.def.columns
      .map((c) => {
        if (c.derived === "uuid") return `uuidv7()::VARCHAR`;
        if (c.derived?.startsWith("date_of:")) return `CAST(make_timestamp(${ident(c.derived.slice(8))}) AS DATE)`;
        return c.type === "timestamp" ? `make_timestamp(${ident(c.name)})` : ident(c.name);
      })
      .join(", ");
    const csv =
      `read_csv(${literal(file)}, columns = {${csvCols}}, header = false, auto_detect = false, delim = ',', quote = '"', escape = '"', ` +
      `new_line = '\\n', nullstr = '\\N', allow_quoted_nulls = false, max_line_size = 1048576, buffer_size = 8388608, strict_mode = true)`;
    const gen = st.gens[st.gens.length - 1]!;
    let rows = sealedRows;
    try {
      if (rows < 0) {
        const r = await this.engine.readAll(`SELECT count(*) AS n FROM ${csv}`);
        rows = Number(r[0]?.n ?? 0);
        this.bufferedTotal += rows;
      }
      await this.engine.run(`INSERT INTO ${gen.table} SELECT ${select} FROM ${csv}`);
      gen.batches.push({ seq, rows, atMs: Date.now() });
    } catch (e) {
      // The CSV is produced by our own encoder; a failure here is a broken invariant. Keep the
      // file for inspection, count the rows and carry on so one bad batch never stops ingest.
      const failed = join(this.opts.spoolDir, "failed");
      mkdirSync(failed, { recursive: true });
      try {
        renameSync(file, join(failed, `${st.key}-${seq}.csv`));
      } catch {
        /* already gone */
      }
      this.bufferedTotal -= Math.max(0, rows);
      this.metrics.rowsLost.inc({ reason: "buffer_insert_failed" }, Math.max(0, rows));
      this.logger.error("buffer insert failed; batch kept in spool/failed", { table: st.key, seq, error: errorMessage(e) });
    } finally {
      if (sealedRows > 0) st.sealing -= sealedRows;
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
    for (const b of target.batches) rmSync(join(this.spoolDirOf(st), `${b.seq}.csv`), { force: true });
    this.metrics.rowsWritten.inc({ table: st.key }, rows);
    this.metrics.filesWritten.inc({ table: st.key }, files.length);
    this.metrics.flushSeconds.observe((performance.now() - started) / 1000, { table: st.key });
    this.logger.debug("flushed", { table: st.key, rows, files: files.length, ms: Math.round(performance.now() - started) });
  }

  /** Seals every buffer and makes rows visible to queries now (tests, shutdown). */
  async sync(): Promise<void> {
    for (const st of this.tables.values()) this.seal(st, true);
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
