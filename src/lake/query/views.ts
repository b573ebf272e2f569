import type { TableDef } from "../../core/index.ts";
import type { LiveDataFile } from "../catalog-port.ts";
import { DUCKDB_TYPE, ident, literal } from "../sql.ts";

/**
 * SQL that reads a table at one catalog state: its live Parquet files (grouped by the column set
 * they were written with, so files from before an ADD COLUMN read the new column as NULL) and,
 * for the current state, the buffer (spool files not yet in committed Parquet).
 */
/**
 * Columns a read with row references adds after the table's (docs/ARCHITECTURE.md "Row fetch by
 * page"): the data file a row is in and its number there; NULL for a buffer row.
 */
export const ROW_FILE = "svc_row_file";
export const ROW_NUMBER = "svc_row_number";

export function filesSelect(def: TableDef, files: readonly LiveDataFile[], rowRefs = false): string[] {
  const groups = new Map<string, LiveDataFile[]>();
  for (const f of files) {
    const present = def.columns.filter((c) => c.name in f.columnStats).map((c) => c.name);
    const key = present.join("\u0000");
    const g = groups.get(key);
    if (g) g.push(f);
    else groups.set(key, [f]);
  }
  const parts: string[] = [];
  for (const [key, group] of groups) {
    const present = new Set(key.split("\u0000"));
    const cols = def.columns
      .map((c) => (present.has(c.name) ? ident(c.name) : `CAST(NULL AS ${DUCKDB_TYPE[c.type]}) AS ${ident(c.name)}`))
      .join(", ");
    const paths = group.map((f) => literal(f.absolutePath)).join(", ");
    parts.push(
      rowRefs
        ? `SELECT ${cols}, filename AS ${ROW_FILE}, file_row_number AS ${ROW_NUMBER} FROM read_parquet([${paths}], hive_partitioning = false, filename = true, file_row_number = true)`
        : `SELECT ${cols} FROM read_parquet([${paths}], hive_partitioning = false)`,
    );
  }
  return parts;
}

/** Body of a table read: Parquet parts plus (optionally) the buffer's SELECT parts. */
export function unionSql(
  def: TableDef,
  files: readonly LiveDataFile[],
  buffer: readonly string[] | undefined,
  bufferFirst = false,
  rowRefs = false,
): string {
  const parts = filesSelect(def, files, rowRefs);
  const refs = rowRefs ? `, CAST(NULL AS VARCHAR) AS ${ROW_FILE}, CAST(NULL AS BIGINT) AS ${ROW_NUMBER}` : "";
  if (buffer)
    parts.splice(
      bufferFirst ? 0 : parts.length,
      0,
      ...(rowRefs ? buffer.map((b) => `SELECT *${refs} FROM (${b})`) : buffer),
    );
  if (parts.length === 0) {
    const cols = def.columns.map((c) => `CAST(NULL AS ${DUCKDB_TYPE[c.type]}) AS ${ident(c.name)}`).join(", ");
    return `SELECT ${cols}${refs} WHERE false`;
  }
  return parts.join(" UNION ALL ");
}
