import {
  ColumnBatch,
  csvColumns,
  newSpoolBatch,
  type Counter,
  type RowGroupMeta,
  type SpoolBatch,
  type SpoolFormat,
  type TableDef,
} from "../core/index.ts";
import type { Sink } from "./pipeline.ts";

/**
 * Rows of one table encoded by a BatchSink, handed to the lake on another thread. `buffer` holds
 * the CSV bytes in [0, length) (CsvBatch format, uuid columns first) and is transferred, not
 * copied; the lake gives it back for a later batch once the bytes are in a spool file.
 */
export interface SealedBatch {
  key: string;
  buffer: ArrayBuffer;
  length: number;
  rows: number;
  /** CSV columns per row (the layout the rows were written with). */
  columns: number;
  /** Epoch-µs span of the table's time column; absent when a row had none. */
  span?: { min: number; max: number };
  /**
   * Set for a Parquet seal (format "parquet"): `buffer` holds a Parquet file of this one row group
   * with every column of the table (`columns` = the table's column count).
   */
  rowGroup?: RowGroupMeta;
}

export interface BatchSinkOptions {
  /** Defines the table in the lake (on the thread that owns it); resolves to its full definition. */
  define(def: TableDef): Promise<TableDef>;
  /** Rows accepted and not yet in Parquet that this sink does not hold itself (lake + batches in flight). */
  backlog(): number;
  maxBufferedRows: number;
  /** How batches are sealed: CSV (default) or Parquet (docs/STORAGE.md "Parquet written by svc"). */
  format?: SpoolFormat;
  /** Rows dropped because a producer left a row half-written (svc_lake_rows_lost_total). */
  rowsLost: Counter<"reason">;
  /**
   * Called from `row()` (between rows) once `dueMs` passed since the last `seal()`: under full load
   * a socket that never runs dry can keep the event loop from running timers, so the hand-over
   * cannot rely on a timer alone. Checked every 256 rows.
   */
  due?: { ms: number; run: () => void };
}

interface OpenTable {
  def: TableDef;
  columns: number;
  hasUuid: boolean;
  batch: SpoolBatch;
  /** Buffers given back by the lake, for the next batches (a fresh one per seal costs page faults). */
  spare: ArrayBuffer[];
}

const MIN_BUFFER = 1 << 16;
const MAX_SPARE = 3;

/**
 * The ingest thread's Sink: rows go into one CsvBatch per table, the same bytes the lake writer
 * would produce, with a UUIDv7 per row. `seal()` hands the batches over (the lake appends them to
 * its spool as they are). The backlog bound is the lake's: rows here + in flight + in the lake.
 */
export class BatchSink implements Sink {
  private readonly tables = new Map<string, OpenTable>();
  /** Rows in the open batches. */
  private open = 0;
  private closed = false;
  private sinceCheck = 0;
  private sealedAt = performance.now();

  constructor(private readonly opts: BatchSinkOptions) {}

  async defineTable(def: TableDef): Promise<void> {
    const full = await this.opts.define(def);
    const key = `${full.schema}.${full.name}`;
    if (this.tables.has(key)) return;
    this.tables.set(key, {
      def: full,
      columns: csvColumns(full).length,
      hasUuid: full.columns.some((c) => c.derived === "uuid"),
      batch: newSpoolBatch(full, this.opts.format, 1 << 20),
      spare: [],
    });
  }

  row(key: string, receivedAtMs?: number): SpoolBatch | undefined {
    const t = this.tables.get(key);
    if (!t || this.closed) return undefined;
    const due = this.opts.due;
    if (due && ++this.sinceCheck >= 256) {
      this.sinceCheck = 0;
      if (performance.now() - this.sealedAt >= due.ms) due.run();
    }
    if (this.open + this.opts.backlog() >= this.opts.maxBufferedRows) return undefined;
    if (t.batch.discardPartialRow()) this.opts.rowsLost.inc({ reason: "partial_row" });
    else this.open++;
    if (t.hasUuid) t.batch.uuidv7(receivedAtMs ?? performance.timeOrigin + performance.now());
    return t.batch;
  }

  /** Rows in the open batches (not yet sealed). */
  pending(): number {
    return this.open;
  }

  /** No rows from now on (stop): `row()` answers undefined, `seal()` still hands over what is open. */
  close(): void {
    this.closed = true;
  }

  /** The open batches with rows, each replaced by an empty one (on a spare buffer when there is one). */
  seal(): SealedBatch[] {
    this.sealedAt = performance.now();
    const out: SealedBatch[] = [];
    for (const [key, t] of this.tables) {
      const b = t.batch;
      if (b.discardPartialRow()) {
        this.opts.rowsLost.inc({ reason: "partial_row" });
        this.open--;
      }
      if (b.rows === 0) continue;
      const span = !b.timeNulls && b.minTime <= b.maxTime ? { span: { min: b.minTime, max: b.maxTime } } : {};
      if (b instanceof ColumnBatch) {
        // The file is a copy: the batch is emptied and keeps its column buffers.
        const f = b.encode();
        const rows = b.rows;
        b.reset();
        const file = Buffer.concat(f.parts, f.length);
        const buffer =
          file.byteOffset === 0 && file.byteLength === file.buffer.byteLength
            ? (file.buffer as ArrayBuffer)
            : file.slice().buffer;
        out.push({ key, buffer, length: f.length, rows, columns: t.def.columns.length, ...span, rowGroup: f.rowGroup });
        continue;
      }
      // The next batch likely needs what this one did: a buffer that fits it plus a quarter.
      const want = Math.max(MIN_BUFFER, Math.min(Math.ceil(b.byteLength * 1.25), 32 << 20));
      const i = t.spare.findIndex((s) => s.byteLength >= want);
      t.batch = newSpoolBatch(
        t.def,
        "csv",
        i >= 0 ? new Uint8Array(t.spare.splice(i, 1)[0]!) : Math.max(b.storage.byteLength, want),
      );
      const storage = b.storage;
      // The batch's bytes start at 0 of its own buffer (CsvBatch allocates whole buffers).
      const buffer =
        storage.byteOffset === 0 && storage.byteLength === storage.buffer.byteLength
          ? (storage.buffer as ArrayBuffer)
          : storage.slice().buffer;
      out.push({
        key,
        buffer,
        length: b.byteLength,
        rows: b.rows,
        columns: t.columns,
        ...span,
      });
    }
    this.open = 0;
    return out;
  }

  /** A buffer of a batch of `key` that the lake has written (kept for reuse, a few per table). */
  giveBack(key: string, buffer: ArrayBuffer): void {
    const t = this.tables.get(key);
    if (t && t.spare.length < MAX_SPARE && buffer.byteLength >= MIN_BUFFER) t.spare.push(buffer);
  }
}
