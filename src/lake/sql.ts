import type { ColumnDef, ColumnType, TableDef } from "../core/index.ts";

/** SQL text helpers shared by writer and query: identifiers, literals, DuckDB types. */
export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;
export const literal = (value: string): string => `'${value.replaceAll("'", "''")}'`;

export const DUCKDB_TYPE: Record<ColumnType, string> = {
  varchar: "VARCHAR",
  int32: "INTEGER",
  int64: "BIGINT",
  uint64: "UBIGINT",
  float64: "DOUBLE",
  boolean: "BOOLEAN",
  timestamp: "TIMESTAMP",
  date: "DATE",
};

/** How a written column travels in the spool CSV (timestamps as epoch µs integers). */
export const csvType = (c: ColumnDef): string => (c.type === "timestamp" ? "BIGINT" : DUCKDB_TYPE[c.type]);

export const qualifiedName = (def: Pick<TableDef, "schema" | "name">): string =>
  `svc_lake.${ident(def.schema)}.${ident(def.name)}`;
export const memTableName = (def: Pick<TableDef, "schema" | "name">): string =>
  `svc_lake.${ident(def.schema)}.${ident(`mem_${def.name}`)}`;
export const tableKey = (def: Pick<TableDef, "schema" | "name">): string => `${def.schema}.${def.name}`;
