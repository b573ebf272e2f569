import { mkdirSync, renameSync, rmSync, statfsSync } from "node:fs";
import { rename, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  ColumnBatch,
  errorMessage,
  newSpoolBatch,
  testPause,
  type Logger,
  type RowGroupMeta,
  type SpoolBatch,
  type TableDef,
} from "../../core/index.ts";
import type { Engine } from "../engine.ts";
import { tableKey } from "../sql.ts";
import { csvColumns, spoolSelect } from "./spool-sql.ts";
import { writeTableFiles, type TableFilesTarget } from "./table-files.ts";
import {
  CATALOG_FAILED,
  FlushRetry,
  flushFailureReason,
  LOG_EVERY_MS,
  STORE_FAILED,
  type FlushFailureReason,
} from "./flush-retry.ts";
import { flushDue, flushGapMs } from "./flush-due.ts";
import { ADVICE, failurePath, freeBytesAt, WriteStatus, type BlockReason } from "./write-status.ts";
import type { LakeCatalog, NewDataFile, TableInfo, WriterMark } from "../catalog-port.ts";
import { recoverSpoolDir, spoolDeletable } from "./spool-rules.ts";
import { CommitGate } from "./commit-gate.ts";
import { clearGroupTmp, commitGroup, type GroupBatch } from "./group-commit.ts";
import type { SpoolEntry, TableState, WriterHealth, WriterMetrics, WriterOptions } from "./types.ts";

export { singleDate, spoolDeletable } from "./spool-rules.ts";
export type { GroupBatch } from "./group-commit.ts";
export { writerMetrics, type SpoolEntry, type WriterHealth, type WriterMetrics, type WriterOptions } from "./types.ts";

/**
 * The write path (docs/ARCHITECTURE.md "Write path"):
 *   producer → ColumnBatch (Parquet columns; CsvBatch with spool_format csv) on the JS thread, no
 *   I/O, a UUIDv7 per row → seal every `sealIntervalMs` into a spool file (a Parquet file of one
 *   row group, or CSV) → the table's view reads the sealed spool files (visible to queries)
 *   → flush at `batchSize` rows or `flushIntervalMs`: Parquet seals joined into the data file
 *     (join-seals.ts), or COPY (read of the spool files) TO Parquet (zstd, field ids); fsync, ONE
 *     catalog transaction (new snapshot + spool watermark), the view switches to files +
 *     remaining spool in one DDL, the spool files are deleted a little later (queries planned on
 *     the old view may still be reading them).
 * The buffer lives in spool files, not in DuckDB memory: memory stays bounded. A kill -9 loses only
 * the rows not yet sealed (≤ one seal interval); on start the spool files above the committed
 * watermark are the buffer again.
 *
 * Over 400 lines on purpose: LakeWriter is one state machine per table (open batch → spool file
 * → flush → commit → spool deletion) whose steps share the table state and the ordering rules
 * (seq order, watermark never past a file being written, reserve accounting); split apart, those
 * rules would be spread over files. Options, metrics and state types are in types.ts, spool
 * recovery and the pure spool rules in spool-rules.ts, retry policy in flush-retry.ts.
 */
export class LakeWriter {
  private readonly tables = new Map<string, TableState>();
  private chain: Promise<void> = Promise.resolve();
  /** A flush's commit and buffer update against readers pairing files with the buffer (commit-gate.ts). */
  private readonly gate = new CommitGate();
  private lastSeq = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopping = false;
  private bufferedTotal = 0;
  private readonly toDelete: Array<{ file: string; atMs: number }> = [];
  /** Free bytes of the spool's file system: read every tick, less what was spooled since. */
  private spoolFree = Number.POSITIVE_INFINITY;
  /** Batches refused for the reserve since the last log line about them. */
  private reserveLog = { atMs: 0, batches: 0, rows: 0 };
  /** When rows were last refused for the reserve, and spool writes last failed / succeeded (epoch ms). */
  private reserveRefusedAtMs = Number.NEGATIVE_INFINITY;
  private spoolFailedAtMs = Number.NEGATIVE_INFINITY;
  private spoolOkAtMs = Number.NEGATIVE_INFINITY;
  /** Blocked or not, last error, free bytes: /metrics, node stats, /health (write-status.ts). */
  private readonly status: WriteStatus;
  /**
   * Called when the buffer of a table changed: new spool files ("buffered") or a committed flush
   * ("committed"). The lake refreshes the table's view; it must not wait for the writer chain.
   */
  onChange: (key: string, kind: "buffered" | "committed") => Promise<void> = async () => {};

  constructor(
    private readonly engine: Engine,
    private readonly catalog: LakeCatalog,
    private readonly opts: WriterOptions,
    private readonly logger: Logger,
    private readonly metrics: WriterMetrics,
  ) {
    mkdirSync(opts.spoolDir, { recursive: true });
    clearGroupTmp(this.groupTmpDir());
    this.status = new WriteStatus({ data: opts.dataPath, state: dirname(opts.spoolDir) }, metrics.status, logger);
  }

  private groupTmpDir(): string {
    // Inside the spool directory: DuckDB reads only its allowed directories (engine.ts); no table's
    // spool is there (table directories are named schema.table).
    return join(this.opts.spoolDir, "group-commit");
  }

  private filesTarget(): TableFilesTarget {
    return {
      engine: this.engine,
      catalog: this.catalog,
      dataPath: this.opts.dataPath,
      rowGroupRows: this.opts.rowGroupRows,
      fromCatalog: (what, call) => this.fromCatalog(what, call),
    };
  }

  /**
   * Rows of several tables and `marks` in one catalog transaction, on the writer chain
   * (group-commit.ts): a forward receiver's senders' positions committed with their rows. Settles
   * as the commit did; on failure nothing is committed and the caller keeps the rows.
   */
  commitGroup(batches: readonly GroupBatch[], marks: readonly WriterMark[]): Promise<void> {
    if (this.stopping) return Promise.reject(new Error("the lake writer is stopping"));
    return this.exclusive(() =>
      commitGroup(
        {
          files: this.filesTarget(),
          tmpDir: this.groupTmpDir(),
          table: (key) => this.tables.get(key),
          gate: (step) => this.gate.commit(step),
          remote: this.opts.remote,
          metrics: this.metrics,
          changed: (key) => this.onChange(key, "committed"),
        },
        batches,
        marks,
      ),
    );
  }

  start(): void {
    this.readSpoolFree();
    this.timer = setInterval(() => this.tick(), this.opts.sealIntervalMs);
  }

  /** Rows accepted and not yet in Parquet (all tables). */
  backlog(): number {
    let open = 0;
    for (const st of this.tables.values()) open += st.current.rows;
    return this.bufferedTotal + open;
  }

  state(key: string): Pick<TableState, "watermark"> | undefined {
    return this.tables.get(key);
  }

  /** Spool files of `key` that are the table's buffer (for views and scans). */
  buffer(key: string): readonly SpoolEntry[] {
    return this.tables.get(key)?.sealed ?? [];
  }

  /** SELECT parts reading the buffer of `key` with the table's current columns. */
  bufferSelects(key: string, entries?: readonly SpoolEntry[]): string[] {
    const st = this.tables.get(key);
    return st ? spoolSelect(st.def, entries ?? st.sealed) : [];
  }

  /** Work queued on the writer chain runs strictly in order (flushes, compaction swaps). */
  private enqueue(job: () => Promise<void>): Promise<void> {
    const next = this.chain.then(job, job);
    this.chain = next.catch((e) => this.logger.error("lake writer job failed", { error: errorMessage(e) }));
    return this.chain;
  }

  /**
   * Runs `job` on the writer chain (catalog swaps must not interleave with flushes) and settles as
   * the job did: its error reaches the caller (a rolled-back swap must not look committed), while
   * the chain goes on with the next job.
   */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job, job);
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Runs `read` with the buffer and the catalog as one consistent cut: no flush commits meanwhile
   * (commit-gate.ts). For readers that pair the catalog's files with `buffer`/`bufferSelects`.
   */
  consistent<T>(read: () => Promise<T>): Promise<T> {
    return this.gate.read(read);
  }

  private nextSeq(): number {
    this.lastSeq = Math.max(this.lastSeq + 1, Date.now() * 1000);
    return this.lastSeq;
  }

  /** Registers a table and takes over the spool files a previous run left above the watermark. */
  register(def: TableDef, info: TableInfo, watermark: number): void {
    const key = tableKey(def);
    if (this.tables.has(key)) return;
    const hasUuid = def.columns.some((c) => c.derived === "uuid");
    const st: TableState = {
      def,
      info,
      key,
      hasUuid,
      current: newSpoolBatch(def, this.opts.spoolFormat),
      writing: new Set(),
      openWaiters: [],
      spooling: new Set(),
      lastRename: Promise.resolve(),
      spare: [],
      sealed: [],
      flushing: false,
      flushStartedAtMs: Number.NEGATIVE_INFINITY,
      failures: 0,
      retry: new FlushRetry(),
      spoolFailLog: { atMs: 0, files: 0, rows: 0 },
      watermark,
    };
    this.tables.set(key, st);
    this.recoverSpool(st);
  }

  /** The table grew (line protocol): rows from now on use the new layout; sealed files keep theirs. */
  alter(def: TableDef, info: TableInfo): void {
    const st = this.tables.get(tableKey(def));
    if (!st) throw new Error(`table ${tableKey(def)} not registered`);
    this.seal(st);
    st.def = def;
    st.info = info;
    st.current = newSpoolBatch(def, this.opts.spoolFormat);
  }

  private spoolDirOf(st: TableState): string {
    return join(this.opts.spoolDir, st.key);
  }

  private recoverSpool(st: TableState): void {
    st.sealed = recoverSpoolDir(this.spoolDirOf(st), st.def, st.watermark, Date.now());
    for (const e of st.sealed) {
      this.lastSeq = Math.max(this.lastSeq, e.seq);
      this.bufferedTotal += e.rows;
    }
    if (st.sealed.length > 0)
      this.logger.info("recovered unflushed rows from spool", {
        table: st.key,
        files: st.sealed.length,
        rows: st.sealed.reduce((a, e) => a + e.rows, 0),
      });
  }

  /**
   * A writer for one row of `key` (the producer calls `end()`), or undefined when the table is
   * unknown, the writer is stopping or the backlog is full; the caller counts the drop.
   */
  row(key: string): SpoolBatch | undefined {
    const st = this.tables.get(key);
    if (!st || this.stopping) return undefined;
    // The bound counts every table's open batch too; summing them costs a pass over the tables,
    // so only near the bound (the other tables' open rows once overshot it by a batch).
    const mine = this.bufferedTotal + st.current.rows;
    if (
      mine >= this.opts.maxBufferedRows ||
      (mine >= this.opts.maxBufferedRows * 0.9 && this.backlog() >= this.opts.maxBufferedRows)
    )
      return undefined;
    // The reserve: rows this thread accepts are spooled whatever the free space (a producer that
    // got a row was told it is stored), so refuse before the batch would reach the reserve.
    if (this.spoolFree - st.current.byteLength < (this.opts.spoolReserveBytes ?? 0)) {
      this.reserveRefusedAtMs = Date.now();
      return undefined;
    }
    if (st.current.discardPartialRow()) this.metrics.rowsLost.inc({ reason: "partial_row" });
    if (st.hasUuid) st.current.uuidv7(performance.timeOrigin + performance.now());
    return st.current;
  }

  private tick(): void {
    this.readSpoolFree();
    for (const st of this.tables.values()) {
      this.seal(st);
      this.maybeFlush(st);
    }
    this.updateGauges();
    const now = Date.now();
    this.status.update(this.blockReason(now), now);
    this.deleteExpiredSpool(now);
  }

  /** Why rows do not reach Parquet now (a failing flush first), or undefined when they flow. */
  private blockReason(nowMs: number): BlockReason | undefined {
    for (const st of this.tables.values())
      if (st.retry.failingSinceMs !== undefined) return st.retry.lastReason ?? "other";
    if (this.spoolFailedAtMs > this.spoolOkAtMs) return "spool_write_failed";
    const reserve = this.opts.spoolReserveBytes ?? 0;
    // Refused within the last second (rows are refused before the batch would reach the reserve).
    if (reserve > 0 && (this.spoolFree < reserve || nowMs - this.reserveRefusedAtMs < 1000)) return "reserve";
    return undefined;
  }

  private updateGauges(): void {
    for (const st of this.tables.values()) {
      this.metrics.buffered.set(st.current.rows + st.sealed.reduce((a, e) => a + e.rows, 0), { table: st.key });
    }
  }

  /** Seals the open batch into a spool file; it joins the buffer once it is on disk. */
  private seal(st: TableState): Promise<boolean> {
    if (st.current.discardPartialRow()) this.metrics.rowsLost.inc({ reason: "partial_row" });
    const waiters = st.openWaiters;
    st.openWaiters = [];
    if (st.current.rows === 0) {
      for (const w of waiters) w(true);
      return Promise.resolve(true);
    }
    const batch = st.current;
    if (batch instanceof ColumnBatch) {
      // A Parquet seal: the file's bytes are a copy, so the batch is emptied and goes on.
      const span =
        !batch.timeNulls && batch.minTime <= batch.maxTime ? { min: batch.minTime, max: batch.maxTime } : undefined;
      const rows = batch.rows;
      const f = batch.encode();
      batch.reset();
      const done = this.spool(st, Buffer.concat(f.parts, f.length), rows, st.def, span, undefined, f.rowGroup);
      if (waiters.length > 0) void done.then((ok) => waiters.forEach((w) => w(ok)));
      return done;
    }
    const want = Math.max(1 << 16, Math.min(batch.byteLength * 2, 16 << 20));
    const reuse = st.spare.findIndex((b) => b.length >= want);
    st.current = newSpoolBatch(st.def, "csv", reuse >= 0 ? st.spare.splice(reuse, 1)[0]! : want);
    const span =
      !batch.timeNulls && batch.minTime <= batch.maxTime ? { min: batch.minTime, max: batch.maxTime } : undefined;
    const done = this.spool(st, batch.view(), batch.rows, st.def, span, () => {
      // Its bytes are in the file now: the buffer can take a later batch.
      if (st.spare.length < 2) st.spare.push(batch.storage);
    });
    if (waiters.length > 0) void done.then((ok) => waiters.forEach((w) => w(ok)));
    return done;
  }

  /**
   * Resolves once every row of `key` accepted so far is in a spool file (true: a kill -9 no longer
   * loses it, the process restarts from the spool) or was lost on the way (false, counted as
   * spool_write_failed). It waits for the next seal (≤ sealIntervalMs): the line-protocol receiver
   * answers 204 only then, as InfluxDB answers after its WAL write (docs/ARCHITECTURE.md "Write path").
   */
  whenSpooled(key: string): Promise<boolean> {
    const st = this.tables.get(key);
    if (!st) return Promise.resolve(false);
    const inFlight = [...st.writing];
    const open =
      st.current.rows > 0 ? new Promise<boolean>((resolve) => st.openWaiters.push(resolve)) : Promise.resolve(true);
    return Promise.all([open, ...inFlight]).then((oks) => oks.every(Boolean));
  }

  /**
   * A batch sealed elsewhere (the HEP ingest thread): CSV rows of `key` in the layout of the
   * table's current definition with `columns` CSV columns (uuid first), `span` the epoch-µs span
   * of its time column. It joins the buffer once its spool file is written; `written` runs then
   * (the bytes may be reused). False when the table is unknown, its layout differs or the writer
   * is stopping: the caller counts the rows as lost.
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
    const st = this.tables.get(key);
    if (!st || rows <= 0 || (rowGroup ? st.def.columns.length : csvColumns(st.def).length) !== columns) return false;
    if (this.belowReserve(st, bytes.length, rows)) {
      written?.(); // the bytes are not needed any more: the buffer goes back to the thread
      return true;
    }
    void this.spool(st, bytes, rows, st.def, span, written, rowGroup);
    return true;
  }

  private readSpoolFree(): void {
    if (!this.opts.spoolReserveBytes) return;
    try {
      const s = statfsSync(this.opts.spoolDir);
      this.spoolFree = Number(s.bavail) * Number(s.bsize);
    } catch {
      this.spoolFree = Number.POSITIVE_INFINITY; // unknown: the write itself will tell
    }
  }

  /** Bytes that can still be spooled before the reserve (open batches counted); Infinity without one. */
  spoolRoom(): number {
    const reserve = this.opts.spoolReserveBytes ?? 0;
    if (reserve <= 0) return Number.POSITIVE_INFINITY;
    let open = 0;
    for (const st of this.tables.values()) open += st.current.byteLength;
    return Math.max(0, this.spoolFree - reserve - open);
  }

  /**
   * A batch from the ingest thread (no producer waiting for an answer) that would take the spool's
   * disk below the reserve is dropped and counted (reason disk_full): the last free bytes are for
   * Parquet (docs/ARCHITECTURE.md "When a flush fails").
   */
  private belowReserve(st: TableState, bytes: number, rows: number): boolean {
    const reserve = this.opts.spoolReserveBytes ?? 0;
    if (reserve <= 0 || this.spoolFree - bytes >= reserve) return false;
    this.metrics.rowsLost.inc({ reason: "disk_full" }, rows);
    const log = this.reserveLog;
    log.batches++;
    log.rows += rows;
    const now = Date.now();
    this.reserveRefusedAtMs = now;
    this.status.error("reserve", now);
    if (now - log.atMs >= LOG_EVERY_MS) {
      this.logger.error("spool disk below storage.lakehouse.reserve_free_bytes; rows dropped", {
        table: st.key,
        batches: log.batches,
        rows: log.rows,
        path: this.opts.spoolDir,
        free_bytes: this.spoolFree,
        reserve_bytes: reserve,
        advice: ADVICE.reserve,
      });
      this.reserveLog = { atMs: now, batches: 0, rows: 0 };
    }
    return true;
  }

  /** Writes a sealed batch into a spool file: CSV, or a Parquet file of one row group when `rowGroup` is given. */
  private spool(
    st: TableState,
    bytes: Uint8Array,
    rows: number,
    def: TableDef,
    span: { min: number; max: number } | undefined,
    written?: () => void,
    rowGroup?: RowGroupMeta,
  ): Promise<boolean> {
    this.spoolFree -= bytes.length;
    const seq = this.nextSeq();
    this.bufferedTotal += rows;
    const file = join(
      this.spoolDirOf(st),
      rowGroup ? `${seq}.${def.columns.length}.${rows}.parquet` : `${seq}.${csvColumns(def).length}.${rows}.q1.csv`,
    );
    const tmp = `${file}.tmp`;
    st.spooling.add(seq);
    // node:fs/promises runs on the thread pool; Bun.write wrote these megabytes on the JS thread
    // (5 % of it at 40 k msgs/s).
    const prev = st.lastRename;
    const renamed = writeFile(tmp, bytes)
      .then(() => prev)
      .then(() => rename(tmp, file));
    st.lastRename = Promise.allSettled([prev, renamed]);
    const done: Promise<boolean> = renamed
      .then(() => {
        this.spoolOkAtMs = Date.now();
        written?.();
        // Files join in seq order: a later file may finish first, so insert in place.
        const entry: SpoolEntry = {
          seq,
          file,
          rows,
          def,
          atMs: Date.now(),
          ...(span ? { span } : {}),
          ...(rowGroup ? { parquet: { rowGroup } } : {}),
        };
        let i = st.sealed.length;
        while (i > 0 && st.sealed[i - 1]!.seq > seq) i--;
        st.sealed.splice(i, 0, entry);
        return this.onChange(st.key, "buffered").then(() => true);
      })
      .catch(async (e) => {
        this.bufferedTotal -= rows;
        // A full disk leaves a partial .tmp behind: it would only take the space a flush needs.
        await unlink(tmp).catch(() => {});
        this.metrics.rowsLost.inc({ reason: "spool_write_failed" }, rows);
        this.spoolFailedAtMs = Date.now();
        this.status.error("spool_write_failed", this.spoolFailedAtMs);
        this.logSpoolFailure(st, rows, e);
        return false;
      })
      .finally(() => {
        st.writing.delete(done);
        st.spooling.delete(seq);
      });
    st.writing.add(done);
    return done;
  }

  /** Spool writes fail 10 times a second per table on a full disk: the first is logged, then a summary every minute. */
  private logSpoolFailure(st: TableState, rows: number, e: unknown): void {
    const log = st.spoolFailLog;
    const now = Date.now();
    log.files++;
    log.rows += rows;
    if (now - log.atMs < LOG_EVERY_MS) return;
    const path = failurePath(e, this.spoolDirOf(st));
    this.logger.error("spool write failed; rows lost", {
      table: st.key,
      files: log.files,
      rows: log.rows,
      reason: flushFailureReason(e),
      path,
      free_bytes: freeBytesAt(path),
      error: errorMessage(e),
      advice: ADVICE.spool_write_failed,
    });
    st.spoolFailLog = { atMs: now, files: 0, rows: 0 };
  }

  private maybeFlush(st: TableState, force = false): void {
    if (st.flushing || st.sealed.length === 0) return;
    const now = Date.now();
    if (!force && !st.retry.mayAttempt(now)) return;
    const rows = st.sealed.reduce((a, e) => a + e.rows, 0);
    if (
      !force &&
      !flushDue({
        rows,
        oldestAgeMs: now - st.sealed[0]!.atMs,
        sinceLastFlushMs: now - st.flushStartedAtMs,
        batchSize: this.opts.batchSize,
        flushIntervalMs: this.opts.flushIntervalMs,
        maxBufferedRows: this.opts.maxBufferedRows,
        gapMs: flushGapMs(this.opts.flushIntervalMs, this.opts.minFlushGapMs),
      })
    )
      return;
    st.flushStartedAtMs = now;
    st.flushing = true;
    void this.enqueue(() => this.flush(st)).finally(() => {
      st.flushing = false;
    });
  }

  private async flush(st: TableState): Promise<void> {
    if (st.unsure && (await this.settleUnsure(st))) return;
    // The oldest spool files first: a piece after a failure for lack of space (flush-retry.ts).
    // The watermark committed below is the piece's last seq, so it must not pass a file still
    // being written (a later one can finish first): after a crash that file would be taken for
    // committed and dropped, and a smaller watermark committed after it would re-read flushed files.
    let inFlight = Number.POSITIVE_INFINITY;
    for (const seq of st.spooling) inFlight = Math.min(inFlight, seq);
    let n = 0;
    while (n < st.sealed.length && n < st.retry.pieceFiles && st.sealed[n]!.seq < inFlight) n++;
    const entries = st.sealed.slice(0, n);
    if (entries.length === 0) return;
    const upTo = entries[entries.length - 1]!.seq;
    const rows = entries.reduce((a, e) => a + e.rows, 0);
    const started = performance.now();
    const files: NewDataFile[] = [];
    let written = started;
    let committed = started;
    let commitSent = false;
    try {
      await writeTableFiles(this.filesTarget(), st.def, st.info, entries, files);
      written = performance.now();
      if (this.opts.remote) {
        await this.upload(files);
        await testPause("flush:uploaded");
      }
      // The commit and the buffer update below are one step for readers of files + buffer: the
      // gate keeps them out between the two (commit-gate.ts). A failed commit leaves the buffer.
      await this.gate.commit(async () => {
        commitSent = true;
        const { snapshotId } = await this.fromCatalog("the commit", () =>
          this.catalog.commitDataFiles(st.info.tableId, files, [
            { writerKey: this.opts.markKey?.(st.key) ?? st.key, watermark: upTo },
          ]),
        );
        committed = performance.now();
        await testPause("flush:committed");
        this.metrics.snapshot.set(snapshotId);
        st.watermark = upTo;
        const flushed = new Set(entries.map((e) => e.file));
        st.sealed = st.sealed.filter((e) => !flushed.has(e.file));
      });
    } catch (e) {
      const reason = flushFailureReason(e);
      // A commit the catalog did not answer may have landed: its files stay until the next attempt
      // knows (settleUnsure); deleting them would leave the catalog naming missing files.
      if (commitSent && reason === "catalog") st.unsure = { files, upTo, entries, rows };
      else for (const f of files) rmSync(join(this.opts.dataPath, f.path), { force: true });
      this.metrics.flushFailures.inc({ table: st.key, reason });
      this.status.error(reason, Date.now());
      this.logFlushFailure(st, reason, entries.length, rows, e);
      // Only an unexplained failure may be a spool file DuckDB cannot read; lack of space is not.
      if (reason === "other" && ++st.failures >= 3) await this.quarantineUnreadable(st);
      return;
    }
    await this.afterCommit(st, files, entries, rows);
    this.metrics.flushSeconds.observe((performance.now() - started) / 1000, { table: st.key });
    const end = performance.now();
    this.logger.debug("flushed", {
      table: st.key,
      rows,
      files: files.length,
      ms: Math.round(end - started),
      write_ms: Math.round(written - started),
      commit_ms: Math.round(committed - written),
      refresh_ms: Math.round(end - committed),
    });
  }

  /**
   * The last commit of `st` failed on the catalog's side after it was sent (docs/DUCKLAKE.md "When
   * the catalog is down"): the spool watermark, committed in the same transaction, tells whether it
   * landed. Landed: the flush is finished now (true). Not landed: its files are removed and the
   * flush goes on (false). The catalog still down: this attempt fails like the flush would (true).
   */
  private async settleUnsure(st: TableState): Promise<boolean> {
    const u = st.unsure!;
    let mark: number;
    try {
      mark = await this.fromCatalog("reading the spool watermark", () =>
        this.catalog.writerWatermark(this.opts.markKey?.(st.key) ?? st.key),
      );
    } catch (e) {
      const reason = flushFailureReason(e);
      this.metrics.flushFailures.inc({ table: st.key, reason });
      this.status.error(reason, Date.now());
      this.logFlushFailure(st, reason, u.entries.length, u.rows, e);
      return true;
    }
    st.unsure = undefined;
    if (mark < u.upTo) {
      for (const f of u.files) rmSync(join(this.opts.dataPath, f.path), { force: true });
      return false;
    }
    this.logger.info("a commit whose answer was lost had landed; its batch is not committed again", {
      table: st.key,
      rows: u.rows,
      files: u.files.length,
    });
    await this.gate.commit(async () => {
      st.watermark = u.upTo;
      const flushed = new Set(u.entries.map((e) => e.file));
      st.sealed = st.sealed.filter((e) => !flushed.has(e.file));
    });
    await this.afterCommit(st, u.files, u.entries, u.rows);
    return true;
  }

  /** What follows a commit that landed: the cache, the back-off, the views, the counts, the spool's deletion. */
  private async afterCommit(
    st: TableState,
    files: readonly NewDataFile[],
    entries: readonly SpoolEntry[],
    rows: number,
  ): Promise<void> {
    this.opts.remote?.committed(files.map((f) => join(this.opts.dataPath, f.path)));
    st.failures = 0;
    const streak = st.retry.succeeded(st.sealed.length); // the flushed entries left the buffer in the commit step
    if (streak > 0) this.logger.info("flushes work again", { table: st.key, failed_before: streak, rows });
    await this.onChange(st.key, "committed");
    this.bufferedTotal -= rows;
    const now = Date.now();
    for (const e of entries) this.toDelete.push({ file: e.file, atMs: now });
    this.metrics.rowsWritten.inc({ table: st.key }, rows);
    this.metrics.filesWritten.inc({ table: st.key }, files.length);
  }

  /**
   * A catalog call of the flush; its failure is reason `catalog` (a PostgreSQL catalog that is down:
   * rows stay in the spool, docs/DUCKLAKE.md "When the catalog is down"), unless the cause says
   * otherwise first (a full disk under a SQLite catalog stays `no_space`: flushFailureReason).
   */
  private async fromCatalog<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw Object.assign(new Error(`catalog: ${what} failed: ${errorMessage(e)}`), { code: CATALOG_FAILED, cause: e });
    }
  }

  /** Remote data_path: the files go into the store before the commit; a failure is reason `store`. */
  private async upload(files: readonly NewDataFile[]): Promise<void> {
    try {
      await this.opts.remote!.upload(files.map((f) => join(this.opts.dataPath, f.path)));
    } catch (e) {
      throw Object.assign(new Error(`upload of ${files.length} Parquet file(s) failed: ${errorMessage(e)}`), {
        code: STORE_FAILED,
        cause: e,
      });
    }
  }

  /**
   * One line when a condition starts, then one a minute (write-status.ts): a full disk, an I/O error
   * or DuckDB's memory cap fails every table's flush at once, so those are one condition each; an
   * unexplained failure is its table's own. The line names the file (or the directory) and the free
   * bytes of its file system.
   */
  private logFlushFailure(
    st: TableState,
    reason: FlushFailureReason,
    filesTried: number,
    rows: number,
    e: unknown,
  ): void {
    const now = Date.now();
    st.retry.failed(now, reason, filesTried);
    const log = this.status.log.hit(reason === "other" ? `flush:other:${st.key}` : `flush:${reason}`, now);
    if (!log) return;
    const sqlite = /sqlite|database or disk/i.test(`${(e as { code?: unknown })?.code ?? ""} ${errorMessage(e)}`);
    const path = failurePath(e, sqlite && this.opts.catalogPath ? this.opts.catalogPath : this.opts.dataPath);
    const ctx = {
      table: st.key,
      reason,
      rows,
      spool_files: filesTried,
      ...(Number.isFinite(st.retry.pieceFiles) ? { next_files: st.retry.pieceFiles } : {}),
      retry_in_ms: st.retry.retryAtMs - now,
      path,
      free_bytes: freeBytesAt(path),
      backlog_rows: this.backlog(),
      max_buffered_rows: this.opts.maxBufferedRows,
      error: errorMessage(e),
      advice: ADVICE[reason],
    };
    if (log.kind === "first") this.logger.error("flush failed; rows stay buffered and are retried with back-off", ctx);
    else this.logger.error("flushes still failing; rows stay buffered", { ...ctx, failures: log.failures });
  }

  /** Tables whose flushes fail now, and the buffer against its limit (for /health: no I/O). */
  health(): WriterHealth {
    const failing: WriterHealth["failing"] = [];
    for (const st of this.tables.values()) {
      const r = st.retry;
      if (r.failingSinceMs !== undefined)
        failing.push({ table: st.key, reason: r.lastReason ?? "other", failures: r.streak, sinceMs: r.failingSinceMs });
    }
    return {
      failing,
      backlogRows: this.backlog(),
      maxBufferedRows: this.opts.maxBufferedRows,
      ...(Number.isFinite(this.spoolFree) ? { spoolFreeBytes: this.spoolFree } : {}),
      ...this.status.snapshot(),
    };
  }

  /**
   * A flush that keeps failing may be stuck on a spool file DuckDB cannot read (a broken
   * invariant: our encoder wrote it). Such files move to spool/failed, their rows are counted as
   * lost, and the rest of the buffer can be written again.
   */
  private async quarantineUnreadable(st: TableState): Promise<void> {
    st.failures = 0;
    const bad: SpoolEntry[] = [];
    for (const e of st.sealed) {
      try {
        await this.engine.readAll(`SELECT count(*) AS n FROM (${spoolSelect(st.def, [e]).join("")})`);
      } catch {
        bad.push(e);
      }
    }
    if (bad.length === 0) return;
    const failed = join(this.opts.spoolDir, "failed");
    mkdirSync(failed, { recursive: true });
    for (const e of bad) {
      try {
        renameSync(e.file, join(failed, `${st.key}-${e.file.split("/").pop()}`));
      } catch {
        /* already gone */
      }
      this.bufferedTotal -= e.rows;
      this.metrics.rowsLost.inc({ reason: "unreadable_spool" }, e.rows);
    }
    const gone = new Set(bad.map((e) => e.file));
    st.sealed = st.sealed.filter((e) => !gone.has(e.file));
    this.logger.error("spool files DuckDB cannot read were moved to spool/failed", {
      table: st.key,
      files: bad.length,
      rows: bad.reduce((a, e) => a + e.rows, 0),
    });
    await this.onChange(st.key, "buffered");
  }

  /** Flushed spool files are deleted once no query planned before the flush can still read them. */
  private deleteExpiredSpool(nowMs: number, all = false): void {
    const oldest = this.opts.oldestQueryStartMs?.();
    const grace = { minMs: this.opts.spoolMinGraceMs ?? 2000, maxMs: this.opts.spoolGraceMs };
    while (this.toDelete.length > 0 && (all || spoolDeletable(this.toDelete[0]!.atMs, nowMs, oldest, grace))) {
      const file = this.toDelete.shift()!.file;
      // At shutdown synchronously; otherwise on the thread pool (unlinking megabytes of cached
      // pages took 7 % of the JS thread at 40 k msgs/s). A file left behind by a crash is below
      // the watermark and removed at the next start.
      if (all) rmSync(file, { force: true });
      else void unlink(file).catch(() => {});
    }
  }

  /** Seals every open batch and waits until the files are part of the buffer (tests, shutdown). */
  async sync(): Promise<void> {
    for (const st of this.tables.values()) this.seal(st);
    await Promise.all([...this.tables.values()].flatMap((st) => [...st.writing]));
  }

  /** Writes everything buffered into Parquet and waits for it. */
  async flushAll(): Promise<void> {
    await this.sync();
    for (const st of this.tables.values()) {
      while (st.sealed.length > 0) {
        const before = st.sealed.length;
        const piece = st.retry.pieceFiles;
        await this.enqueue(() => this.flush(st));
        // A failed flush stops here (logged, rows stay in the spool) unless it halved the piece:
        // at shutdown on a nearly full disk, as much as fits is committed.
        if (st.sealed.length >= before && st.retry.pieceFiles >= piece) break;
      }
    }
    await this.enqueue(async () => {});
  }

  /** Stop accepting, seal, flush every row, wait. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.flushAll();
    this.deleteExpiredSpool(Date.now(), true);
    this.updateGauges();
  }
}

/** The layout whose CSV had `n` columns: uuid columns first, then a prefix of the written ones. */
