import { ColumnBatch } from "./column-batch.ts";
import { type CsvBatch, newCsvBatch } from "./csv-batch.ts";
import type { TableDef } from "./table.ts";

/**
 * The open batch of a table on its way into the spool: CSV rows (DuckDB parses them at the flush)
 * or Parquet columns (each seal a Parquet row group; docs/STORAGE.md "Parquet written by svc").
 */
export type SpoolBatch = CsvBatch | ColumnBatch;
export type SpoolFormat = "csv" | "parquet";

/** An empty batch of `format` for rows of `def` (`initial`: a CSV buffer size or buffer to reuse). */
export function newSpoolBatch(
  def: TableDef,
  format: SpoolFormat | undefined,
  initial?: number | Uint8Array,
): SpoolBatch {
  return format === "parquet" ? new ColumnBatch(def) : newCsvBatch(def, initial);
}
