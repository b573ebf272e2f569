/**
 * Schemas, tables and columns in a PostgreSQL catalog: the rows src/lake/catalog/tables.ts writes
 * into SQLite (created_schema:"s", created_table:"s"."t", altered_table:<id>, the schema_version
 * bump), with PostgreSQL's BOOLEAN and UUID columns.
 */
import type { TransactionSQL } from "bun";
import { AppError } from "../../core/index.ts";
import { type ColumnDef, type ColumnInfo, isLakeType, type TableDef, type TableInfo } from "../catalog/index.ts";
import { objectDir, quoteIdent } from "../catalog/values.ts";
import { claimSnapshot, type Db, type Draft, liveAt, num } from "./pg-db.ts";

interface TableRow {
  table_id: string;
  table_name: string;
  t_path: string | null;
  t_rel: boolean | null;
  schema_id: string;
  schema_name: string;
  s_path: string | null;
  s_rel: boolean | null;
}

const TABLE_SELECT = `SELECT t.table_id, t.table_name, t.path AS t_path, t.path_is_relative AS t_rel,
    s.schema_id, s.schema_name, s.path AS s_path, s.path_is_relative AS s_rel
  FROM ducklake_table t JOIN ducklake_schema s ON s.schema_id = t.schema_id AND ${liveAt("s")}
  WHERE ${liveAt("t")}`;

/** Table directory (DuckLake "Paths"): schema path + table path when relative, as the SQLite side. */
const tableDataDir = (r: TableRow) => (r.t_rel === false ? (r.t_path ?? "") : `${r.s_path ?? ""}${r.t_path ?? ""}`);

export interface PartitionKey {
  partitionId: number;
  keyIndex: number;
  columnId: number;
  transform: string;
}

export async function partitionKeys(db: Db, tableId: number, snap: number): Promise<PartitionKey[]> {
  const rows = await db.unsafe(
    `SELECT p.partition_id, c.partition_key_index, c.column_id, c.transform FROM ducklake_partition_info p
     JOIN ducklake_partition_column c ON c.partition_id = p.partition_id AND c.table_id = p.table_id
     WHERE p.table_id = $2 AND ${liveAt("p")} ORDER BY c.partition_key_index`,
    [snap, tableId],
  );
  return (rows as Array<Record<string, unknown>>).map((k) => ({
    partitionId: num(k.partition_id),
    keyIndex: num(k.partition_key_index),
    columnId: num(k.column_id),
    transform: String(k.transform),
  }));
}

async function loadTable(db: Db, r: TableRow, snap: number): Promise<TableInfo> {
  const tableId = num(r.table_id);
  const cols = (await db.unsafe(
    `SELECT c.column_id, c.column_name, c.column_type, c.column_order FROM ducklake_column c
     WHERE c.table_id = $2 AND c.parent_column IS NULL AND ${liveAt("c")} ORDER BY c.column_order`,
    [snap, tableId],
  )) as Array<{ column_id: string; column_name: string; column_type: string; column_order: string }>;
  const columns = cols.map(
    (c): ColumnInfo => ({
      columnId: num(c.column_id),
      name: c.column_name,
      type: c.column_type,
      order: num(c.column_order),
    }),
  );
  const info: TableInfo = {
    tableId,
    schemaId: num(r.schema_id),
    schemaName: r.schema_name,
    name: r.table_name,
    columns,
    dataDir: tableDataDir(r),
  };
  const keys = await partitionKeys(db, tableId, snap);
  const only = keys[0];
  if (only !== undefined) {
    info.partitionId = only.partitionId;
    const col = columns.find((c) => c.columnId === only.columnId);
    if (keys.length === 1 && only.transform === "identity" && col) info.partitionBy = col.name;
  }
  return info;
}

/** Names match case-insensitively, as DuckDB resolves identifiers. */
export async function getTable(db: Db, schema: string, name: string, snap: number): Promise<TableInfo | null> {
  const [r] = await db.unsafe(
    `${TABLE_SELECT} AND lower(s.schema_name) = lower($2) AND lower(t.table_name) = lower($3)`,
    [snap, schema, name],
  );
  return r === undefined ? null : loadTable(db, r as TableRow, snap);
}

/** Every live table at `snap`, ordered by schema and name. */
export async function listTables(db: Db, snap: number): Promise<TableInfo[]> {
  const rows = (await db.unsafe(`${TABLE_SELECT} ORDER BY s.schema_name, t.table_name`, [snap])) as TableRow[];
  const out: TableInfo[] = [];
  for (const r of rows) out.push(await loadTable(db, r, snap));
  return out;
}

/** How the catalog spells schema `name` (case-insensitive), or undefined. */
export async function schemaName(db: Db, name: string, snap: number): Promise<string | undefined> {
  const [r] = await db.unsafe(
    `SELECT s.schema_name FROM ducklake_schema s WHERE lower(s.schema_name) = lower($2) AND ${liveAt("s")}`,
    [snap, name],
  );
  return (r as { schema_name: string } | undefined)?.schema_name;
}

export async function getTableById(db: Db, tableId: number, snap: number): Promise<TableInfo> {
  const [r] = await db.unsafe(`${TABLE_SELECT} AND t.table_id = $2`, [snap, tableId]);
  if (r === undefined)
    throw new AppError("NOT_FOUND", `no table with id ${tableId} at snapshot ${snap}`, {
      details: { tableId, snapshotId: snap },
    });
  return loadTable(db, r as TableRow, snap);
}

async function schemaId(db: Db, name: string, snap: number): Promise<number | null> {
  const [r] = await db.unsafe(
    `SELECT s.schema_id FROM ducklake_schema s WHERE lower(s.schema_name) = lower($2) AND ${liveAt("s")}`,
    [snap, name],
  );
  return r === undefined ? null : num((r as { schema_id: string }).schema_id);
}

function validName(kind: string, name: string): void {
  if (name.length === 0 || name.length > 255 || /[\u0000-\u001f]/.test(name)) {
    throw new AppError("VALIDATION", `invalid ${kind} name ${JSON.stringify(name)}`, { details: { [kind]: name } });
  }
}

/** Checks `def` before any transaction (a client's mistake never reaches the database). */
export function checkTableDef(schema: string, def: TableDef): void {
  validName("schema", schema);
  validName("table", def.name);
  const seen = new Set<string>();
  for (const c of def.columns) {
    validName("column", c.name);
    if (!isLakeType(c.type))
      throw new AppError("VALIDATION", `column ${c.name}: unknown type ${String(c.type)}`, {
        details: { column: c.name },
      });
    if (seen.has(c.name))
      throw new AppError("CONFLICT", `column ${c.name} is defined twice`, { details: { column: c.name } });
    seen.add(c.name);
  }
  if (def.partitionBy !== undefined && !seen.has(def.partitionBy)) {
    throw new AppError("VALIDATION", `table ${def.name}: partition column ${def.partitionBy} is not a column`);
  }
}

async function insertColumns(
  tx: TransactionSQL,
  d: Draft,
  tableId: number,
  firstId: number,
  firstOrder: number,
  cols: ColumnDef[],
): Promise<void> {
  for (const [i, c] of cols.entries()) {
    await tx`INSERT INTO ducklake_column VALUES (${firstId + i}, ${d.snapshotId}, NULL, ${tableId}, ${firstOrder + i}, ${c.name}, ${c.type}, NULL, 'NULL', true, NULL, 'literal', 'duckdb')`;
  }
}

/**
 * Inside a commit transaction (lock held, `d` drafted): the table as it is when `def` matches it,
 * with the columns of `def` it lacks added, or created (schema too) when missing. `changed` false:
 * nothing was written (the caller then writes no snapshot).
 */
export async function ensureTableInTxn(
  tx: TransactionSQL,
  d: Draft,
  schema: string,
  def: TableDef,
): Promise<{ tableId: number; changed: boolean }> {
  const snap = d.base.snapshotId;
  const existing = await getTable(tx, schema, def.name, snap);
  if (existing) {
    if (existing.partitionBy !== def.partitionBy) {
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
    if (missing.length === 0) return { tableId: existing.tableId, changed: false };
    await claimSnapshot(tx, d);
    // column ids are unique within the table over its whole life, dropped columns included (spec "CREATE TABLE").
    const [max] =
      await tx`SELECT max(column_id) AS id, max(column_order) AS ord FROM ducklake_column WHERE table_id = ${existing.tableId}`;
    await insertColumns(tx, d, existing.tableId, num(max?.id ?? 0) + 1, num(max?.ord ?? 0) + 1, missing);
    d.changes.push(`altered_table:${existing.tableId}`);
    d.schemaChanged = true;
    d.schemaChangedTables.add(existing.tableId);
    return { tableId: existing.tableId, changed: true };
  }
  await claimSnapshot(tx, d);
  let sid = await schemaId(tx, schema, snap);
  if (sid === null) {
    sid = d.nextCatalogId++;
    const uuid = Bun.randomUUIDv7();
    await tx`INSERT INTO ducklake_schema VALUES (${sid}, ${uuid}::uuid, ${d.snapshotId}, NULL, ${schema}, ${objectDir(schema, uuid)}, true)`;
    d.changes.push(`created_schema:${quoteIdent(schema)}`);
  }
  const tableId = d.nextCatalogId++;
  const uuid = Bun.randomUUIDv7();
  await tx`INSERT INTO ducklake_table VALUES (${tableId}, ${uuid}::uuid, ${d.snapshotId}, NULL, ${sid}, ${def.name}, ${objectDir(def.name, uuid)}, true)`;
  await insertColumns(tx, d, tableId, 1, 1, def.columns);
  d.changes.push(`created_table:${quoteIdent(schema)}.${quoteIdent(def.name)}`);
  if (def.partitionBy !== undefined) {
    const partitionId = d.nextCatalogId++;
    const columnId = def.columns.findIndex((c) => c.name === def.partitionBy) + 1;
    await tx`INSERT INTO ducklake_partition_info VALUES (${partitionId}, ${tableId}, ${d.snapshotId}, NULL)`;
    await tx`INSERT INTO ducklake_partition_column VALUES (${partitionId}, ${tableId}, 0, ${columnId}, 'identity')`;
    d.changes.push(`altered_table:${tableId}`);
  }
  d.schemaChanged = true;
  d.schemaChangedTables.add(tableId);
  return { tableId, changed: true };
}
