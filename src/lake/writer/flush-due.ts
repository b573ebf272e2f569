/**
 * When a table's buffer is flushed by the writer's tick (docs/ARCHITECTURE.md "Write path", "When a
 * flush starts"): at `batch_size` rows, or once its oldest row waited `flush_interval_sec`, but a
 * flush started by the row count waits until `gapMs` passed since the table's last flush started.
 *
 * Why the gap: a flush has a fixed cost (the COPY's set-up, two fsyncs, the Parquet statistics, the
 * catalog commit, the view refresh on two DuckDB instances) of tens of ms of CPU whatever its rows.
 * With batch_size 10 000, at 50 k msgs/s a flush would start every 0.2-0.3 s (idle machine); such
 * flushes cost 12.6-12.8 µs per row, against 7.8-9.8 with 25 000-50 000 rows per flush (bench/flush-size.ts, docs/BENCHMARKS.md
 * "Ingest: CPU per message (every core)"). The buffer stays queryable meanwhile (the buffer view),
 * so the gap delays no row's visibility; a buffer of a quarter of max_buffered_rows is flushed at
 * once, so the gap never fills the backlog.
 */
export interface FlushDueInput {
  /** Rows in the table's sealed spool files. */
  rows: number;
  /** How long the oldest of them has waited (ms). */
  oldestAgeMs: number;
  /** Time since the table's last flush started (ms; Infinity before the first). */
  sinceLastFlushMs: number;
  batchSize: number;
  flushIntervalMs: number;
  maxBufferedRows: number;
  gapMs: number;
}

/** The default gap: half a second, never more than flush_interval_sec (a row's longest wait). */
export const MIN_FLUSH_GAP_MS = 500;

export function flushGapMs(flushIntervalMs: number, gapMs = MIN_FLUSH_GAP_MS): number {
  return Math.min(gapMs, flushIntervalMs);
}

export function flushDue(i: FlushDueInput): boolean {
  if (i.rows <= 0) return false;
  if (i.oldestAgeMs >= i.flushIntervalMs) return true;
  if (i.rows < i.batchSize) return false;
  return i.sinceLastFlushMs >= i.gapMs || i.rows >= i.maxBufferedRows / 4;
}
