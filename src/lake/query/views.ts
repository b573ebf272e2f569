import type { TableDef } from "../../core/index.ts";
import type { LiveDataFile } from "../catalog-port.ts";
import { DUCKDB_TYPE, ident, literal } from "../sql.ts";

/**
 * SQL that reads a table at one catalog state: its live Parquet files (grouped by the column set
 * they were written with, so files from before an ADD COLUMN read the new column as NULL) and,
 * for the current state, the buffer (spool files not yet in committed Parquet).
 */
export function filesSelect(def: TableDef, files: readonly LiveDataFile[]): string[] {
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
    parts.push(`SELECT ${cols} FROM read_parquet([${paths}], hive_partitioning = false)`);
  }
  return parts;
}

/** Body of a table read: Parquet parts plus (optionally) the buffer's SELECT parts. */
export function unionSql(
  def: TableDef,
  files: readonly LiveDataFile[],
  buffer: readonly string[] | undefined,
  bufferFirst = false,
): string {
  const parts = filesSelect(def, files);
  if (buffer) parts.splice(bufferFirst ? 0 : parts.length, 0, ...buffer);
  if (parts.length === 0) {
    const cols = def.columns.map((c) => `CAST(NULL AS ${DUCKDB_TYPE[c.type]}) AS ${ident(c.name)}`).join(", ");
    return `SELECT ${cols} WHERE false`;
  }
  return parts.join(" UNION ALL ");
}
