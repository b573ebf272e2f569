/**
 * A lake table as the producers (HEP ingest, line protocol) declare it. The lake maps these types
 * to DuckDB and DuckLake types; producers write rows column by column in this order. `uint64`
 * (DuckDB UBIGINT) holds line-protocol unsigned values above BIGINT's range.
 */
export type ColumnType = "varchar" | "int32" | "int64" | "uint64" | "float64" | "boolean" | "timestamp" | "date";

export interface ColumnDef {
  name: string;
  type: ColumnType;
  /**
   * Filled by the lake, not written by the producer: `uuid` = a time-ordered UUID (v7) per row;
   * `date_of:<column>` = the UTC calendar day of a timestamp column (the partition key).
   */
  derived?: "uuid" | `date_of:${string}`;
}

export interface TableDef {
  /** Schema (DuckLake schema); HEP tables live in `main`. */
  schema: string;
  name: string;
  columns: ColumnDef[];
  /** The event-time column used for pruning, retention and newest-first reads. */
  timeColumn: string;
  /** Identity partition column (DuckLake partition), e.g. `date`. */
  partitionBy?: string;
  /** Sort order within a Parquet file: groups a call's rows for compression and row-group pruning. */
  sortBy: string[];
  /**
   * A column whose rows belong together for a short while (a call's Call-ID): a sorted file keeps
   * each value's rows in the time slice where it first appears (docs/STORAGE.md "Time-sliced row
   * groups"). Without it a sorted file is ordered by `sortBy` alone.
   */
  groupedBy?: string;
}

/** Columns the producer writes (every column that is not derived), in order. */
export const writtenColumns = (def: TableDef): ColumnDef[] => def.columns.filter((c) => c.derived === undefined);

/**
 * Columns of a table's spool CSV (CsvBatch rows): the uuid columns (filled by the writer at the
 * start of each row), then the producer's columns in table order. `date_of:` columns are computed
 * when the spool is read.
 */
export function csvColumns(def: TableDef): ColumnDef[] {
  return [...def.columns.filter((c) => c.derived === "uuid"), ...writtenColumns(def)];
}

/**
 * Typed column-by-column writer for one row, in `writtenColumns(def)` order. `end()` commits the
 * row; a wrong field count is a programming error and throws.
 */
export interface RowWriter {
  str(v: string | null | undefined): RowWriter;
  /** UTF-8 text as bytes, valid UTF-8 without NUL (checked by the producer). */
  bytes(v: Uint8Array): RowWriter;
  /**
   * A JSON object as one string value, written straight into the batch from keys and values in
   * turn (row-bytes.ts jsonObjectInto); writers without it get JSON.stringify's text of the same
   * members through str().
   */
  jsonObject?(kv: readonly unknown[]): RowWriter;
  int(v: number | bigint | null | undefined): RowWriter;
  float(v: number | null | undefined): RowWriter;
  bool(v: boolean | null | undefined): RowWriter;
  /** Epoch microseconds. */
  time(us: number | null | undefined): RowWriter;
  /** false: the row was not kept (its spool line would pass SPOOL_MAX_LINE_BYTES); the producer counts or reports it. */
  // biome-ignore lint/suspicious/noConfusingVoidType: producers ignore the answer of most writers; `void` lets a writer that always keeps the row return nothing
  end(): boolean | void;
}
