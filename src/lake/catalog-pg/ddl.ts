/**
 * The DuckLake 1.0 catalog tables exactly as the DuckDB ducklake extension 1.5.5 creates them in a
 * PostgreSQL catalog (read back from information_schema and pg_constraint after an ATTACH
 * 'ducklake:postgres:…' of an empty database; docs/DUCKLAKE.md "PostgreSQL catalog"). Same tables,
 * columns and order as the SQLite DDL (src/lake/catalog/ddl.ts), with PostgreSQL types: flags are
 * BOOLEAN (SQLite: BIGINT 0/1), uuids are UUID, snapshot_time and schedule_start are TIMESTAMPTZ
 * (SQLite: VARCHAR text), and the same five primary keys.
 */

export const PG_DUCKLAKE_TABLES_DDL: readonly string[] = [
  "CREATE TABLE ducklake_metadata(key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT)",
  "CREATE TABLE ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
  "CREATE TABLE ducklake_snapshot_changes(snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR)",
  "CREATE TABLE ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN)",
  "CREATE TABLE ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN)",
  "CREATE TABLE ducklake_view(view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, sql VARCHAR, column_aliases VARCHAR)",
  "CREATE TABLE ducklake_tag(object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR)",
  "CREATE TABLE ducklake_column_tag(table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, key VARCHAR, value VARCHAR)",
  "CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT)",
  "CREATE TABLE ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR)",
  "CREATE TABLE ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR)",
  "CREATE TABLE ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT)",
  "CREATE TABLE ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR, nulls_allowed BOOLEAN, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR)",
  "CREATE TABLE ducklake_table_stats(table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT)",
  "CREATE TABLE ducklake_table_column_stats(table_id BIGINT, column_id BIGINT, contains_null BOOLEAN, contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR)",
  "CREATE TABLE ducklake_partition_info(partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT)",
  "CREATE TABLE ducklake_partition_column(partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT, column_id BIGINT, transform VARCHAR)",
  "CREATE TABLE ducklake_file_partition_value(data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT, partition_value VARCHAR)",
  "CREATE TABLE ducklake_files_scheduled_for_deletion(data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, schedule_start TIMESTAMPTZ)",
  "CREATE TABLE ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, schema_version BIGINT)",
  "CREATE TABLE ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, type VARCHAR)",
  "CREATE TABLE ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN)",
  "CREATE TABLE ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT)",
  "CREATE TABLE ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT)",
  "CREATE TABLE ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, sql VARCHAR, type VARCHAR)",
  "CREATE TABLE ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT, column_id BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, default_value_type VARCHAR)",
  "CREATE TABLE ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT)",
  "CREATE TABLE ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, sort_key_index BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR)",
];

/**
 * Objects of our own (names start with svc_), made when a catalog is opened for writing; the
 * extension neither creates nor reads them. Indexes keep table lookups and file listing cheap; the
 * name index is on lower(...) because names match case-insensitively (as DuckDB resolves them).
 */
export const PG_SVC_DDL: readonly string[] = [
  "CREATE TABLE IF NOT EXISTS svc_writer_watermark(writer_key VARCHAR PRIMARY KEY, watermark BIGINT NOT NULL, snapshot_id BIGINT NOT NULL)",
  // Data files being written by any writer (pg-inflight.ts; docs/DUCKLAKE.md "PostgreSQL catalog").
  "CREATE TABLE IF NOT EXISTS svc_inflight_file(path VARCHAR PRIMARY KEY, owner VARCHAR NOT NULL, reserved_at TIMESTAMPTZ NOT NULL)",
  "CREATE INDEX IF NOT EXISTS svc_inflight_file_owner ON svc_inflight_file(owner)",
  "CREATE INDEX IF NOT EXISTS svc_file_column_stats_max ON ducklake_file_column_stats(table_id, column_id, max_value)",
  "CREATE INDEX IF NOT EXISTS svc_data_file_table ON ducklake_data_file(table_id, end_snapshot)",
  "CREATE INDEX IF NOT EXISTS svc_file_column_stats_file ON ducklake_file_column_stats(data_file_id)",
  "CREATE INDEX IF NOT EXISTS svc_file_partition_value_file ON ducklake_file_partition_value(data_file_id)",
  "CREATE INDEX IF NOT EXISTS svc_column_table ON ducklake_column(table_id, column_order)",
  "CREATE INDEX IF NOT EXISTS svc_partition_info_table ON ducklake_partition_info(table_id)",
  "CREATE INDEX IF NOT EXISTS svc_table_name ON ducklake_table(lower(table_name))",
];

/** Table names of PG_DUCKLAKE_TABLES_DDL, in order (what a complete catalog has). */
export const PG_DUCKLAKE_TABLES: readonly string[] = PG_DUCKLAKE_TABLES_DDL.map(
  (d) => /^CREATE TABLE (\w+)\(/.exec(d)?.[1] ?? "",
);
