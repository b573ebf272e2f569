/**
 * The DuckLake 1.0 catalog tables exactly as the DuckDB ducklake extension 1.5.5 creates them in a
 * SQLite catalog (dumped with `sqlite3 .schema`, see docs/DUCKLAKE.md): same names, column names,
 * column types and order, so a stock DuckDB can ATTACH 'ducklake:sqlite:<file>' and read our rows.
 */

/** ducklake_metadata `version` written and accepted by this program. */
export const DUCKLAKE_VERSION = "1.0";

export const DUCKLAKE_TABLES_DDL: readonly string[] = [
  'CREATE TABLE ducklake_metadata("key" VARCHAR NOT NULL, "value" VARCHAR NOT NULL, "scope" VARCHAR, scope_id BIGINT)',
  "CREATE TABLE ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time VARCHAR, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
  "CREATE TABLE ducklake_snapshot_changes(snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR)",
  "CREATE TABLE ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BIGINT)",
  "CREATE TABLE ducklake_table(table_id BIGINT, table_uuid VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BIGINT)",
  'CREATE TABLE ducklake_view(view_id BIGINT, view_uuid VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, "sql" VARCHAR, column_aliases VARCHAR)',
  'CREATE TABLE ducklake_tag(object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, "key" VARCHAR, "value" VARCHAR)',
  'CREATE TABLE ducklake_column_tag(table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, "key" VARCHAR, "value" VARCHAR)',
  "CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BIGINT, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT)",
  "CREATE TABLE ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BIGINT, extra_stats VARCHAR)",
  "CREATE TABLE ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BIGINT, extra_stats VARCHAR)",
  "CREATE TABLE ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BIGINT, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT)",
  "CREATE TABLE ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR, nulls_allowed BIGINT, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR)",
  "CREATE TABLE ducklake_table_stats(table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT)",
  "CREATE TABLE ducklake_table_column_stats(table_id BIGINT, column_id BIGINT, contains_null BIGINT, contains_nan BIGINT, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR)",
  "CREATE TABLE ducklake_partition_info(partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT)",
  'CREATE TABLE ducklake_partition_column(partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT, column_id BIGINT, "transform" VARCHAR)',
  "CREATE TABLE ducklake_file_partition_value(data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT, partition_value VARCHAR)",
  "CREATE TABLE ducklake_files_scheduled_for_deletion(data_file_id BIGINT, path VARCHAR, path_is_relative BIGINT, schedule_start VARCHAR)",
  "CREATE TABLE ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, schema_version BIGINT)",
  'CREATE TABLE ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, "type" VARCHAR)',
  "CREATE TABLE ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BIGINT)",
  "CREATE TABLE ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT)",
  "CREATE TABLE ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT)",
  'CREATE TABLE ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, "sql" VARCHAR, "type" VARCHAR)',
  "CREATE TABLE ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT, column_id BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, default_value_type VARCHAR)",
  "CREATE TABLE ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT)",
  "CREATE TABLE ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, sort_key_index BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR)",
];

/**
 * Objects of our own (names start with svc_), created when a catalog is opened for writing. The
 * extension neither creates nor reads them; SQLite maintains the indexes when the extension writes.
 * The indexes keep listing and pruning cheap with many files; svc_writer_watermark records, in the
 * same transaction as a commit, how far the writer's spool has been committed; svc_inflight_file
 * lists the files being written and not committed yet.
 */
export const SVC_DDL: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS svc_writer_watermark(writer_key VARCHAR PRIMARY KEY, watermark BIGINT NOT NULL, snapshot_id BIGINT NOT NULL)",
  // Paths (relative to the data path) the writer and compaction reserved for a file they are about
  // to write, until the commit that registers it: what the start may delete as its own leftover
  // (docs/OPERATIONS.md "Orphans at start and the quarantine").
  "CREATE TABLE IF NOT EXISTS svc_inflight_file(path VARCHAR PRIMARY KEY, reserved_ms BIGINT NOT NULL)",
  "CREATE INDEX IF NOT EXISTS svc_data_file_table ON ducklake_data_file(table_id, end_snapshot)",
  "CREATE INDEX IF NOT EXISTS svc_file_column_stats_file ON ducklake_file_column_stats(data_file_id)",
  "CREATE INDEX IF NOT EXISTS svc_file_column_stats_max ON ducklake_file_column_stats(table_id, column_id, max_value)",
  "CREATE INDEX IF NOT EXISTS svc_file_partition_value_file ON ducklake_file_partition_value(data_file_id)",
  // Loading one table (its columns, its partitioning) without scanning those of every table:
  // without them, creating a table cost O(tables) and listing them O(tables²) (docs/BENCHMARKS.md "Line protocol: many tables").
  "CREATE INDEX IF NOT EXISTS svc_column_table ON ducklake_column(table_id, column_order)",
  "CREATE INDEX IF NOT EXISTS svc_partition_info_table ON ducklake_partition_info(table_id)",
  "CREATE INDEX IF NOT EXISTS svc_table_name ON ducklake_table(table_name COLLATE NOCASE)",
];

/** Tables whose absence means the file is not a DuckLake 1.0 catalog. */
export const REQUIRED_TABLES: readonly string[] = [
  "ducklake_metadata",
  "ducklake_snapshot",
  "ducklake_snapshot_changes",
  "ducklake_schema",
  "ducklake_table",
  "ducklake_column",
  "ducklake_data_file",
  "ducklake_delete_file",
  "ducklake_file_column_stats",
  "ducklake_file_partition_value",
  "ducklake_partition_info",
  "ducklake_partition_column",
  "ducklake_table_stats",
  "ducklake_table_column_stats",
  "ducklake_files_scheduled_for_deletion",
  "ducklake_schema_versions",
  "ducklake_inlined_data_tables",
];
