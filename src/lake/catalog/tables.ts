/**
 * Schemas, tables and columns (ducklake_schema, ducklake_table, ducklake_column, ducklake_partition_info,
 * ducklake_partition_column). Every change is one snapshot with the snapshot_changes text and the
 * schema_version bump the extension writes: created_schema:"s", created_table:"s"."t", altered_table:<id>.
 */
import { AppError } from "../../core/index.ts";
import { type Ctx, type Draft, draft, finish, liveAt, writeTxn } from "./catalog-db.ts";
import type { ColumnDef, ColumnInfo, TableDef, TableInfo } from "./types.ts";
import { isLakeType, objectDir, quoteIdent } from "./values.ts";

interface TableRow {
  table_id: number;
  table_name: string;
  t_path: string | null;
  t_rel: number | null;
  schema_id: number;
  schema_name: string;
  s_path: string | null;
  s_rel: number | null;
}

const TABLE_SELECT = `SELECT t.table_id, t.table_name, t.path AS t_path, t.path_is_relative AS t_rel,
    s.schema_id, s.schema_name, s.path AS s_path, s.path_is_relative AS s_rel
  FROM ducklake_table t JOIN ducklake_schema s ON s.schema_id = t.schema_id AND ${liveAt("s")}
  WHERE ${liveAt("t")}`;

/**
 * Table directory (DuckLake "Paths": file path ← table path ← schema path ← data path): relative to
 * the data path when both paths are relative (always so for tables we create), else absolute.
 */
function tableDataDir(r: TableRow): string {
  const tablePath = r.t_path ?? "";
  if (r.t_rel === 0) return tablePath;
  const schemaPath = r.s_path ?? "";
  return `${schemaPath}${tablePath}`;
}

function loadTable(ctx: Ctx, r: TableRow, snap: number): TableInfo {
  const columns = ctx.db
    .query<
      { column_id: number; column_name: string; column_type: string; column_order: number },
      { $snap: number; $t: number }
    >(
      `SELECT c.column_id, c.column_name, c.column_type, c.column_order FROM ducklake_column c
       WHERE c.table_id = $t AND c.parent_column IS NULL AND ${liveAt("c")} ORDER BY c.column_order`,
    )
    .all({ $snap: snap, $t: r.table_id })
    .map(
      (c): ColumnInfo => ({ columnId: c.column_id, name: c.column_name, type: c.column_type, order: c.column_order }),
    );
  const info: TableInfo = {
    tableId: r.table_id,
    schemaId: r.schema_id,
    schemaName: r.schema_name,
    name: r.table_name,
    columns,
    dataDir: tableDataDir(r),
  };
  const keys = partitionKeys(ctx, r.table_id, snap);
  if (keys.length > 0) {
    info.partitionId = keys[0]!.partitionId;
    const only = keys[0]!;
    const col = columns.find((c) => c.columnId === only.columnId);
    if (keys.length === 1 && only.transform === "identity" && col) info.partitionBy = col.name;
  }
  return info;
}

export interface PartitionKey {
  partitionId: number;
  keyIndex: number;
  columnId: number;
  transform: string;
}

export function partitionKeys(ctx: Ctx, tableId: number, snap: number): PartitionKey[] {
  return ctx.db
    .query<
      { partition_id: number; partition_key_index: number; column_id: number; transform: string },
      { $snap: number; $t: number }
    >(
      `SELECT p.partition_id, c.partition_key_index, c.column_id, c."transform" FROM ducklake_partition_info p
       JOIN ducklake_partition_column c ON c.partition_id = p.partition_id AND c.table_id = p.table_id
       WHERE p.table_id = $t AND ${liveAt("p")} ORDER BY c.partition_key_index`,
    )
    .all({ $snap: snap, $t: tableId })
    .map((k) => ({
      partitionId: k.partition_id,
      keyIndex: k.partition_key_index,
      columnId: k.column_id,
      transform: k.transform,
    }));
}

/** Every live table: one query per table for its columns, each an index lookup (svc_column_table). */
export function listTables(ctx: Ctx, snap: number): TableInfo[] {
  return ctx.db
    .query<TableRow, { $snap: number }>(`${TABLE_SELECT} ORDER BY s.schema_name, t.table_name`)
    .all({ $snap: snap })
    .map((r) => loadTable(ctx, r, snap));
}

/** Names match case-insensitively, as DuckDB resolves identifiers: "CPU" and "cpu" are one table. */
export function getTable(ctx: Ctx, schema: string, name: string, snap: number): TableInfo | null {
  const r = ctx.db
    .query<TableRow, { $snap: number; $s: string; $n: string }>(
      `${TABLE_SELECT} AND s.schema_name = $s COLLATE NOCASE AND t.table_name = $n COLLATE NOCASE`,
    )
    .get({ $snap: snap, $s: schema, $n: name });
  return r === null ? null : loadTable(ctx, r, snap);
}

export function getTableById(ctx: Ctx, tableId: number, snap: number): TableInfo {
  const r = ctx.db
    .query<TableRow, { $snap: number; $t: number }>(`${TABLE_SELECT} AND t.table_id = $t`)
    .get({ $snap: snap, $t: tableId });
  if (r === null)
    throw new AppError("NOT_FOUND", `no table with id ${tableId} at snapshot ${snap}`, {
      details: { tableId, snapshotId: snap },
    });
  return loadTable(ctx, r, snap);
}

function schemaId(ctx: Ctx, name: string, snap: number): number | null {
  const r = ctx.db
    .query<{ schema_id: number }, { $snap: number; $n: string }>(
      `SELECT s.schema_id FROM ducklake_schema s WHERE s.schema_name = $n COLLATE NOCASE AND ${liveAt("s")}`,
    )
    .get({ $snap: snap, $n: name });
  return r?.schema_id ?? null;
}

export function schemaName(ctx: Ctx, name: string, snap: number): string | undefined {
  const r = ctx.db
    .query<{ schema_name: string }, { $snap: number; $n: string }>(
      `SELECT s.schema_name FROM ducklake_schema s WHERE s.schema_name = $n COLLATE NOCASE AND ${liveAt("s")}`,
    )
    .get({ $snap: snap, $n: name });
  return r?.schema_name;
}

function validName(kind: string, name: string): void {
  if (name.length === 0 || name.length > 255 || /[\u0000-\u001f]/.test(name)) {
    throw new AppError("VALIDATION", `invalid ${kind} name ${JSON.stringify(name)}`, { details: { [kind]: name } });
  }
}

function addSchemaRows(ctx: Ctx, d: Draft, name: string): number {
  const id = d.nextCatalogId++;
  const uuid = Bun.randomUUIDv7();
  ctx.db.run("INSERT INTO ducklake_schema VALUES (?, ?, ?, NULL, ?, ?, 1)", [
    id,
    uuid,
    d.snapshotId,
    name,
    objectDir(name, uuid),
  ]);
  d.changes.push(`created_schema:${quoteIdent(name)}`);
  d.schemaChanged = true;
  return id;
}

/** Returns the id of schema `name`, creating it in a new snapshot when missing. */
export function ensureSchema(ctx: Ctx, name: string, snap: () => number): number {
  validName("schema", name);
  return writeTxn(ctx, () => {
    const existing = schemaId(ctx, name, snap());
    if (existing !== null) return existing;
    const d = draft(ctx);
    const id = addSchemaRows(ctx, d, name);
    finish(ctx, d);
    return id;
  });
}

function insertColumns(
  ctx: Ctx,
  d: Draft,
  tableId: number,
  firstId: number,
  firstOrder: number,
  cols: ColumnDef[],
): void {
  const stmt = ctx.db.prepare(
    "INSERT INTO ducklake_column VALUES (?, ?, NULL, ?, ?, ?, ?, NULL, 'NULL', 1, NULL, 'literal', 'duckdb')",
  );
  cols.forEach((c, i) => stmt.run(firstId + i, d.snapshotId, tableId, firstOrder + i, c.name, c.type));
}

function checkColumns(cols: ColumnDef[], existing: string[] = []): void {
  const seen = new Set(existing);
  for (const c of cols) {
    validName("column", c.name);
    if (!isLakeType(c.type))
      throw new AppError("VALIDATION", `column ${c.name}: unknown type ${String(c.type)}`, {
        details: { column: c.name },
      });
    if (seen.has(c.name))
      throw new AppError("CONFLICT", `column ${c.name} is defined twice`, { details: { column: c.name } });
    seen.add(c.name);
  }
}

/**
 * Returns the table, creating schema and table (and its partitioning) in ONE snapshot when missing.
 * An existing table gets the columns of `def` it lacks (one snapshot, like ALTER TABLE ADD COLUMN);
 * a column with another type or a different partitioning is a CONFLICT.
 */
export function ensureTable(ctx: Ctx, schema: string, def: TableDef, snap: () => number): TableInfo {
  validName("schema", schema);
  validName("table", def.name);
  checkColumns(def.columns);
  if (def.partitionBy !== undefined && !def.columns.some((c) => c.name === def.partitionBy)) {
    throw new AppError("VALIDATION", `table ${def.name}: partition column ${def.partitionBy} is not a column`);
  }
  return writeTxn(ctx, () => {
    const existing = getTable(ctx, schema, def.name, snap());
    if (existing) {
      if ((existing.partitionBy ?? undefined) !== def.partitionBy) {
        throw new AppError(
          "CONFLICT",
          `table ${schema}.${def.name} is partitioned by ${existing.partitionBy ?? "nothing"}, not ${def.partitionBy ?? "nothing"}`,
        );
      }
      const have = new Map(existing.columns.map((c) => [c.name, c.type]));
      for (const c of def.columns) {
        const t = have.get(c.name);
        if (t !== undefined && t !== c.type)
          throw new AppError("CONFLICT", `column ${schema}.${def.name}.${c.name} is ${t}, not ${c.type}`);
      }
      const missing = def.columns.filter((c) => !have.has(c.name));
      return missing.length === 0 ? existing : addColumnsInTxn(ctx, existing.tableId, missing, snap);
    }
    const d = draft(ctx);
    const sid = schemaId(ctx, schema, d.base.snapshot_id) ?? addSchemaRows(ctx, d, schema);
    const tableId = d.nextCatalogId++;
    const uuid = Bun.randomUUIDv7();
    ctx.db.run("INSERT INTO ducklake_table VALUES (?, ?, ?, NULL, ?, ?, ?, 1)", [
      tableId,
      uuid,
      d.snapshotId,
      sid,
      def.name,
      objectDir(def.name, uuid),
    ]);
    insertColumns(ctx, d, tableId, 1, 1, def.columns);
    d.changes.push(`created_table:${quoteIdent(schema)}.${quoteIdent(def.name)}`);
    if (def.partitionBy !== undefined) {
      const partitionId = d.nextCatalogId++;
      const columnId = def.columns.findIndex((c) => c.name === def.partitionBy) + 1;
      ctx.db.run("INSERT INTO ducklake_partition_info VALUES (?, ?, ?, NULL)", [partitionId, tableId, d.snapshotId]);
      ctx.db.run("INSERT INTO ducklake_partition_column VALUES (?, ?, 0, ?, 'identity')", [
        partitionId,
        tableId,
        columnId,
      ]);
      d.changes.push(`altered_table:${tableId}`);
    }
    d.schemaChanged = true;
    d.schemaChangedTables.add(tableId);
    finish(ctx, d);
    return getTableById(ctx, tableId, d.snapshotId);
  });
}

function addColumnsInTxn(ctx: Ctx, tableId: number, cols: ColumnDef[], snap: () => number): TableInfo {
  const table = getTableById(ctx, tableId, snap());
  checkColumns(
    cols,
    table.columns.map((c) => c.name),
  );
  // column ids are unique within the table over its whole life, dropped columns included (spec "CREATE TABLE").
  const max = ctx.db
    .query<{ id: number | null; ord: number | null }, [number]>(
      "SELECT max(column_id) AS id, max(column_order) AS ord FROM ducklake_column WHERE table_id = ?",
    )
    .get(tableId);
  const d = draft(ctx);
  insertColumns(ctx, d, tableId, (max?.id ?? 0) + 1, (max?.ord ?? 0) + 1, cols);
  d.changes.push(`altered_table:${tableId}`);
  d.schemaChanged = true;
  d.schemaChangedTables.add(tableId);
  finish(ctx, d);
  return getTableById(ctx, tableId, d.snapshotId);
}

/** ALTER TABLE ADD COLUMN for each of `cols` in one snapshot (line-protocol schema evolution). */
export function addColumns(ctx: Ctx, tableId: number, cols: ColumnDef[], snap: () => number): TableInfo {
  if (cols.length === 0) return getTableById(ctx, tableId, snap());
  return writeTxn(ctx, () => addColumnsInTxn(ctx, tableId, cols, snap));
}
