/** Options, health, spool entries, per-table state and metrics of the lake writer (writer.ts). */
import {
  DURATION_BUCKETS_SECONDS,
  rowsLostCounter,
  type SpoolBatch,
  type RowGroupMeta,
  type Counter,
  type Gauge,
  type Histogram,
  type MetricsRegistry,
  type TableDef,
} from "../../core/index.ts";
import type { TableInfo } from "../catalog-port.ts";
import type { FlushFailureReason, FlushRetry } from "./flush-retry.ts";
import type { NewDataFile } from "../catalog-port.ts";
import type { WriteStatusMetrics, WriteStatusSnapshot } from "./write-status.ts";
import { writeStatusMetrics } from "./write-status.ts";

export interface WriterOptions {
  dataPath: string;
  /** svc_writer_watermark key of a table key (catalog-config.ts spoolMarkKey); default the table key. */
  markKey?: (tableKey: string) => string;
  spoolDir: string;
  batchSize: number;
  flushIntervalMs: number;
  /** Shortest time between two flushes of a table started by batchSize (flush-due.ts; default MIN_FLUSH_GAP_MS, at most flushIntervalMs). */
  minFlushGapMs?: number;
  rowGroupRows: number;
  /** How sealed rows are spooled (docs/STORAGE.md "Parquet written by svc"); csv when unset. */
  spoolFormat?: "csv" | "parquet";
  maxBufferedRows: number;
  sealIntervalMs: number;
  /**
   * Longest time a flushed spool file stays on disk for queries that may still read it; it goes as
   * soon as no query that started before the flush is running (`oldestQueryStartMs`), at least
   * `spoolMinGraceMs` after the flush. Deleted within seconds, the spool's CSV (≈20x the bytes of
   * its Parquet) never reaches the disk: written back, it made the flush's fsync wait on it.
   */
  spoolGraceMs: number;
  spoolMinGraceMs?: number;
  /** Start time (epoch ms) of the oldest query still running on the lake, if any. */
  oldestQueryStartMs?: () => number | undefined;
  /**
   * Free bytes the spool leaves on its file system for Parquet (0 = none): below it new rows are
   * refused. A spool (CSV, ≈ 20x its Parquet) that took the last bytes left no room for the flush
   * that would free it, and nothing was stored until someone freed space.
   */
  spoolReserveBytes?: number;
  /** The catalog file: named in the log when a commit fails for lack of space or an I/O error. */
  catalogPath?: string;
  /**
   * A remote data_path (docs/STORAGE.md "Parquet on an object store"): puts the written files into
   * the store before the commit that names them; a failure keeps the batch in the spool (reason
   * `store`, retried with back-off). `committed` hands the local copies to the read cache.
   */
  remote?: { upload(absPaths: readonly string[]): Promise<void>; committed(absPaths: readonly string[]): void };
}

export interface WriterHealth extends WriteStatusSnapshot {
  failing: Array<{ table: string; reason: FlushFailureReason; failures: number; sinceMs: number }>;
  backlogRows: number;
  maxBufferedRows: number;
  /** Free bytes of the spool's file system as the writer last read it (every tick; with a reserve only). */
  spoolFreeBytes?: number;
}

export interface SpoolEntry {
  seq: number;
  file: string;
  rows: number;
  /** The layout the rows were written with (a table may grow later). */
  def: TableDef;
  atMs: number;
  /** Written with `"` as the CSV quote (spool files named `<seq>.<cols>.<rows>.csv`, before 0x01). */
  legacyQuote?: boolean;
  /** Epoch-µs span of the table's time column in this file; absent when unknown (recovered, NULL times). */
  span?: { min: number; max: number };
  /**
   * A Parquet seal (`<seq>.<columns>.<rows>.parquet`, every column of `def`): its row group as
   * written, when this process wrote it (a flush then joins row groups instead of running COPY).
   */
  parquet?: { rowGroup?: RowGroupMeta };
}

export interface TableState {
  def: TableDef;
  info: TableInfo;
  key: string;
  hasUuid: boolean;
  current: SpoolBatch;
  /** Spool writes not finished yet; each resolves true once its file is in the buffer, false when its rows were lost. */
  writing: Set<Promise<boolean>>;
  /** Producers waiting for the rows of `current` to reach a spool file (`whenSpooled`). */
  openWaiters: Array<(ok: boolean) => void>;
  /** Their seqs: a flush stops below the lowest, so the watermark never passes a file still being written. */
  spooling: Set<number>;
  /**
   * The last spool file's rename into place (settled either way). Files are written in parallel
   * but renamed in seq order, so after a kill -9 the files on disk are a prefix of the batches:
   * a later batch is never kept while an earlier one is lost (docs/ARCHITECTURE.md "Write path (src/lake/writer)").
   */
  lastRename: Promise<unknown>;
  /**
   * Buffers of batches already written to their spool file, for the next batches: a fresh
   * multi-MB buffer per seal cost page faults on first touch (≈ 10 % of the JS thread at 40 k msgs/s).
   */
  spare: Uint8Array[];
  /** Sealed spool files on disk, oldest first: the buffer. */
  sealed: SpoolEntry[];
  flushing: boolean;
  /** When the writer's tick last started a flush of the table (the gap of flush-due.ts). */
  flushStartedAtMs: number;
  /** Consecutive failed flushes of unknown cause; after 3 the spool files are checked one by one. */
  /**
   * A commit that failed on the catalog's side after it was sent: it may have landed (the answer
   * lost). Its files are kept until the next attempt reads the spool watermark (writer.ts settleUnsure).
   */
  unsure?: { files: NewDataFile[]; upTo: number; entries: SpoolEntry[]; rows: number };
  failures: number;
  /** Back-off and piece size after failed flushes (flush-retry.ts). */
  retry: FlushRetry;
  /** Spool writes that failed since the last log line about them (rate-limited like flushes). */
  spoolFailLog: { atMs: number; files: number; rows: number };
  /** Highest spool batch that is in committed Parquet. */
  watermark: number;
}

export interface WriterMetrics {
  rowsWritten: Counter<"table">;
  filesWritten: Counter<"table">;
  rowsLost: Counter<"reason">;
  flushFailures: Counter<"table" | "reason">;
  flushSeconds: Histogram<"table">;
  buffered: Gauge<"table">;
  snapshot: Gauge;
  status: WriteStatusMetrics;
}

export function writerMetrics(reg: MetricsRegistry): WriterMetrics {
  return {
    rowsWritten: reg.counter("svc_lake_rows_written_total", "Rows written into Parquet files, per table.", ["table"]),
    filesWritten: reg.counter("svc_lake_files_written_total", "Parquet files committed to the catalog, per table.", [
      "table",
    ]),
    rowsLost: rowsLostCounter(reg),
    flushFailures: reg.counter(
      "svc_lake_flush_failures_total",
      "Flushes that failed and will be retried with back-off, per table and reason (no_space, io, out_of_memory, store, catalog, other).",
      ["table", "reason"],
    ),
    flushSeconds: reg.histogram(
      "svc_lake_flush_duration_seconds",
      "Time to write, fsync and commit one flush.",
      DURATION_BUCKETS_SECONDS,
      ["table"],
    ),
    buffered: reg.gauge("svc_lake_buffered_rows", "Rows accepted but not yet in Parquet, per table.", ["table"]),
    snapshot: reg.gauge("svc_lake_snapshot_id", "Current catalog snapshot id."),
    status: writeStatusMetrics(reg),
  };
}
