/**
 * DuckLake-format catalog in PostgreSQL (docs/DUCKLAKE.md "PostgreSQL catalog"): the same tables and
 * rows as the SQLite catalog (src/lake/catalog), asynchronous over Bun.SQL, for several writers.
 */
export { PgCatalog, type PgTableInfo, redactUrl } from "./pg-catalog.ts";
export { CATALOG_URL_KEY, type PgCatalogOptions } from "./pg-connect.ts";
export { COMMIT_LOCK_KEY } from "./pg-db.ts";
export { PG_DUCKLAKE_TABLES, PG_DUCKLAKE_TABLES_DDL, PG_SVC_DDL } from "./ddl.ts";
export { RETRY_SQLSTATES, sqlState } from "./pg-errors.ts";
export { MAINTAINER_LOCK_KEY, MaintainerLock } from "./maintainer-lock.ts";
