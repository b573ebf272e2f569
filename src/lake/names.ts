/**
 * Which schema and table names the lake refuses (docs/ARCHITECTURE.md "Reserved names"). Every
 * table is a set of DuckDB views in the in-memory catalog `svc_lake` (src/lake/lake.ts): a name that
 * DuckDB keeps for itself cannot hold a view (`information_schema`, `pg_catalog`: "Schema … does
 * not exist"), and a name of the lake's own would shadow or be shadowed by one of its views.
 * Pure.
 */

/** Schemas of DuckDB itself or of the lake; compared case-insensitively, as DuckDB resolves them. */
const RESERVED_SCHEMAS: Record<string, string> = {
  information_schema: "DuckDB's system schema",
  pg_catalog: "DuckDB's system schema",
  temp: "DuckDB's catalog of temporary objects",
  system: "DuckDB's system catalog",
  memory: "DuckDB's default in-memory database",
  svc_lake: "the lake's own database",
  svc_files: "the lake's internal schema of files views",
  // Its directory would be <data_path>/_quarantine, where the start sets files aside (docs/OPERATIONS.md).
  _quarantine: "the lake's folder of set-aside files",
};
/** Prefixes DuckDB uses for its own catalogs, functions and views. */
const RESERVED_SCHEMA_PREFIXES = ["duckdb_", "sqlite_"];

/** Why `schema` cannot be a lake schema, or undefined when it can. */
export function reservedSchemaProblem(schema: string): string | undefined {
  const lower = schema.toLowerCase();
  const exact = RESERVED_SCHEMAS[lower];
  if (exact) return `schema name "${schema}" is reserved (${exact}); use another database name`;
  const prefix = RESERVED_SCHEMA_PREFIXES.find((p) => lower.startsWith(p));
  if (prefix) return `schema names starting with "${prefix}" are reserved for DuckDB; use another database name`;
  return undefined;
}

/** `mem_<table>` names the buffer view of `<table>` (docs/ARCHITECTURE.md "Reserved names"). */
export const BUFFER_VIEW_PREFIX = "mem_";

/**
 * Why `schema.name` cannot be a table next to the tables `has` knows (case-insensitive lookup of
 * a table in the same schema), or undefined. O(1): two lookups.
 */
export function tableNameProblem(
  schema: string,
  name: string,
  has: (schema: string, name: string) => boolean,
): string | undefined {
  const bad = reservedSchemaProblem(schema);
  if (bad) return bad;
  const lower = name.toLowerCase();
  if (lower.startsWith(BUFFER_VIEW_PREFIX) && has(schema, name.slice(BUFFER_VIEW_PREFIX.length))) {
    return `table "${name}" would hide the buffer view of table "${name.slice(BUFFER_VIEW_PREFIX.length)}" (mem_<table> names it); use another name or a table_prefix`;
  }
  if (has(schema, `${BUFFER_VIEW_PREFIX}${name}`)) {
    return `table "${name}" would hide table "${BUFFER_VIEW_PREFIX}${name}" (mem_<table> names the buffer view of <table>); use another name or a table_prefix`;
  }
  return undefined;
}
