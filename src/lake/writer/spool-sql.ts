import { csvColumns, SPOOL_MAX_LINE_BYTES, SPOOL_QUOTE, type TableDef } from "../../core/index.ts";
import { DUCKDB_TYPE, csvType, ident, literal } from "../sql.ts";

/**
 * Spool files are the lake's buffer: CSV (quote 0x01) written by CsvBatch, read by DuckDB with
 * read_csv for queries and for the flush. Their columns: the uuid columns (filled by the writer
 * at the start of each row), then the producer's columns in table order. Timestamps travel as
 * epoch microseconds; `date_of:` columns are computed here.
 */
export { csvColumns };

/**
 * read_csv's buffer per file read: twice the longest line (DuckDB wants it above max_line_size; a
 * line may cross from one buffer into the next). DuckDB's default is 16 times max_line_size, 16 MiB
 * per spool file being read: a flush of 250 k rows (50 spool files) peaked ≈ 65 MB higher with it
 * at the same CPU (docs/BENCHMARKS.md "Ingest: CPU per message (every core)").
 */
export const SPOOL_READ_BUFFER_BYTES = 2 * SPOOL_MAX_LINE_BYTES;

/** `quote`: CsvBatch's 0x01, or `"` for spool files written before it changed (legacy names). */
const readOptions = (quote: string) =>
  `header = false, auto_detect = false, delim = ',', quote = '${quote}', escape = '${quote}', new_line = '\\n', nullstr = '\\N', ` +
  `allow_quoted_nulls = false, max_line_size = ${SPOOL_MAX_LINE_BYTES}, buffer_size = ${SPOOL_READ_BUFFER_BYTES}, strict_mode = true`;

/** One read_csv over files written with layout `layout`, projected to the columns of `def`. */
function readLayout(def: TableDef, layout: TableDef, files: readonly string[], quote: string): string {
  const csvCols = csvColumns(layout);
  const have = new Set(csvCols.map((c) => c.name));
  const columns = csvCols.map((c) => `${literal(c.name)}: ${literal(csvType(c))}`).join(", ");
  const select = def.columns
    .map((c) => {
      if (c.derived?.startsWith("date_of:")) {
        const src = c.derived.slice(8);
        return `CAST(make_timestamp(${ident(src)}) AS DATE) AS ${ident(c.name)}`;
      }
      if (!have.has(c.name)) return `CAST(NULL AS ${DUCKDB_TYPE[c.type]}) AS ${ident(c.name)}`;
      return c.type === "timestamp" ? `make_timestamp(${ident(c.name)}) AS ${ident(c.name)}` : ident(c.name);
    })
    .join(", ");
  return `SELECT ${select} FROM read_csv([${files.map(literal).join(", ")}], columns = {${columns}}, ${readOptions(quote)})`;
}

/**
 * One read_parquet over Parquet seals written with layout `layout` (every column of the table as it
 * was then, derived ones included: docs/STORAGE.md "Parquet written by svc"), projected to `def`.
 */
function readParquetLayout(def: TableDef, layout: TableDef, files: readonly string[]): string {
  const have = new Set(layout.columns.map((c) => c.name));
  const select = def.columns
    .map((c) => (have.has(c.name) ? ident(c.name) : `CAST(NULL AS ${DUCKDB_TYPE[c.type]}) AS ${ident(c.name)}`))
    .join(", ");
  return `SELECT ${select} FROM read_parquet([${files.map(literal).join(", ")}])`;
}

/** SELECT parts (to UNION ALL) reading `entries` as rows of `def`, one per file layout and format. */
export function spoolSelect(
  def: TableDef,
  entries: ReadonlyArray<{ file: string; def: TableDef; legacyQuote?: boolean; parquet?: unknown }>,
): string[] {
  const groups = new Map<string, { layout: TableDef; files: string[]; quote: string }>();
  const parquet = new Map<number, { layout: TableDef; files: string[] }>();
  for (const e of entries) {
    if (e.parquet) {
      const g = parquet.get(e.def.columns.length);
      if (g) g.files.push(e.file);
      else parquet.set(e.def.columns.length, { layout: e.def, files: [e.file] });
      continue;
    }
    const quote = e.legacyQuote ? '"' : String.fromCharCode(SPOOL_QUOTE);
    const k = `${csvColumns(e.def).length}${quote}`;
    const g = groups.get(k);
    if (g) g.files.push(e.file);
    else groups.set(k, { layout: e.def, files: [e.file], quote });
  }
  return [
    ...[...groups.values()].map((g) => readLayout(def, g.layout, g.files, g.quote)),
    ...[...parquet.values()].map((g) => readParquetLayout(def, g.layout, g.files)),
  ];
}
