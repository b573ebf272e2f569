/**
 * Data files in a PostgreSQL catalog: the rows src/lake/catalog/data-files.ts writes into SQLite for
 * an insert (ducklake_data_file, ducklake_file_column_stats, ducklake_file_partition_value,
 * ducklake_table_stats, ducklake_table_column_stats, "inserted_into_table:<id>"), and listing the
 * live files of a table at a snapshot (DuckLake spec "Queries" → SELECT).
 */
import type { TransactionSQL } from "bun";
import { statSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { AppError } from "../../core/index.ts";
import {
  compareStatValues,
  formatStatValue,
  type NewColumnStats,
  type NewDataFile,
  type TableInfo,
  typeHasNan,
} from "../catalog/index.ts";
import { type Draft, numOrNull, type PgCtx } from "./pg-db.ts";
import { partitionKeys } from "./pg-tables.ts";

const tableDirAbs = (ctx: PgCtx, t: TableInfo) => (isAbsolute(t.dataDir) ? t.dataDir : `${ctx.dataPath}${t.dataDir}`);

/** Stored form of a path: relative to the table directory when below it (path_is_relative), else absolute. */
function storedPath(ctx: PgCtx, t: TableInfo, input: string): { path: string; relative: boolean; absolute: string } {
  const absolute = normalize(isAbsolute(input) ? input : `${ctx.dataPath}${input}`);
  const dir = tableDirAbs(ctx, t);
  if (absolute.startsWith(dir) && absolute.length > dir.length)
    return { path: absolute.slice(dir.length), relative: true, absolute };
  return { path: absolute, relative: false, absolute };
}

const isCount = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

/** The checks of the SQLite catalog: counts, known columns, partition values, the file's real size. */
export function validateFile(ctx: PgCtx, t: TableInfo, f: NewDataFile): void {
  const where = { table: `${t.schemaName}.${t.name}`, path: f.path };
  if (!isCount(f.recordCount) || !isCount(f.fileSizeBytes) || !isCount(f.footerSize)) {
    throw new AppError(
      "VALIDATION",
      `data file ${f.path}: recordCount, fileSizeBytes and footerSize must be non-negative integers`,
      { details: where },
    );
  }
  const names = new Set(t.columns.map((c) => c.name));
  for (const [name, s] of Object.entries(f.columnStats)) {
    if (!names.has(name))
      throw new AppError("VALIDATION", `data file ${f.path}: stats for unknown column ${name}`, { details: where });
    if (!isCount(s.nullCount) || s.nullCount > f.recordCount) {
      throw new AppError(
        "VALIDATION",
        `data file ${f.path}: column ${name} nullCount ${s.nullCount} is not within 0..${f.recordCount}`,
        { details: where },
      );
    }
  }
  const keys = Object.keys(f.partitionValues ?? {});
  if (t.partitionBy === undefined ? keys.length > 0 : keys.length !== 1 || keys[0] !== t.partitionBy) {
    throw new AppError(
      "VALIDATION",
      `data file ${f.path}: partition values ${JSON.stringify(f.partitionValues ?? {})} do not match the partitioning (${t.partitionBy ?? "none"})`,
      {
        details: where,
      },
    );
  }
  const size = statSync(storedPath(ctx, t, f.path).absolute, { throwIfNoEntry: false })?.size;
  if (size !== f.fileSizeBytes) {
    throw new AppError(
      "VALIDATION",
      `data file ${f.path}: ${size === undefined ? "does not exist" : `is ${size} bytes, not ${f.fileSizeBytes}`}`,
      { details: where },
    );
  }
}

interface ColumnAgg {
  columnId: number;
  type: string;
  min: string | null;
  max: string | null;
  containsNull: boolean;
  containsNan: boolean;
}

/**
 * Registers `files` of table `t` in draft `d` and folds them into the table statistics. Row ids
 * continue from ducklake_table_stats.next_row_id, file ids from the snapshot's next_file_id.
 */
export async function insertFiles(
  ctx: PgCtx,
  tx: TransactionSQL,
  d: Draft,
  t: TableInfo,
  files: NewDataFile[],
  removed = { records: 0, bytes: 0 },
): Promise<void> {
  const keys = await partitionKeys(tx, t.tableId, d.base.snapshotId);
  if (keys.length > 1 || (keys[0] !== undefined && keys[0].transform !== "identity")) {
    throw new AppError(
      "UNSUPPORTED",
      `table ${t.schemaName}.${t.name} has a partitioning this build does not write (only one identity column)`,
    );
  }
  const [stats] =
    await tx`SELECT record_count, next_row_id, file_size_bytes FROM ducklake_table_stats WHERE table_id = ${t.tableId} LIMIT 1`;
  let rowId = numOrNull(stats?.next_row_id) ?? 0;
  let records = 0;
  let bytes = 0;
  const agg = new Map<number, ColumnAgg>();
  // Column statistics of every file go in as one statement (unnest of arrays): the commit lock is
  // held meanwhile, and a round trip per column would be most of a commit's time.
  const st: StatRows = { file: [], column: [], size: [], values: [], nulls: [], min: [], max: [], nan: [] };
  for (const f of files) {
    const id = d.nextFileId++;
    const p = storedPath(ctx, t, f.path);
    await tx`INSERT INTO ducklake_data_file VALUES (${id}, ${t.tableId}, ${d.snapshotId}, NULL, NULL, ${p.path}, ${p.relative}, 'parquet', ${f.recordCount},
      ${f.fileSizeBytes}, ${f.footerSize}, ${rowId}, ${keys[0]?.partitionId ?? null}, NULL, NULL, NULL)`;
    rowId += f.recordCount;
    records += f.recordCount;
    bytes += f.fileSizeBytes;
    for (const c of t.columns) {
      const a = agg.get(c.columnId) ?? {
        columnId: c.columnId,
        type: c.type,
        min: null,
        max: null,
        containsNull: false,
        containsNan: false,
      };
      agg.set(c.columnId, a);
      const s: NewColumnStats | undefined = f.columnStats[c.name];
      if (s === undefined) {
        // A column missing from the file reads as NULL.
        if (f.recordCount > 0) a.containsNull = true;
        continue;
      }
      const min = formatStatValue(c.type, s.min);
      const max = formatStatValue(c.type, s.max);
      st.file.push(id);
      st.column.push(c.columnId);
      st.size.push(s.sizeBytes ?? null);
      st.values.push(s.valueCount ?? f.recordCount - s.nullCount);
      st.nulls.push(s.nullCount);
      st.min.push(min);
      st.max.push(max);
      st.nan.push(typeHasNan(c.type) ? s.containsNan === true : null);
      if (s.nullCount > 0) a.containsNull = true;
      if (s.containsNan) a.containsNan = true;
      if (min !== null && (a.min === null || compareStatValues(c.type, min, a.min) < 0)) a.min = min;
      if (max !== null && (a.max === null || compareStatValues(c.type, max, a.max) > 0)) a.max = max;
    }
    const pv = t.partitionBy === undefined ? undefined : f.partitionValues?.[t.partitionBy];
    if (pv !== undefined) await tx`INSERT INTO ducklake_file_partition_value VALUES (${id}, ${t.tableId}, 0, ${pv})`;
  }
  if (st.file.length > 0) {
    await tx.unsafe(
      `INSERT INTO ducklake_file_column_stats SELECT f, $1::bigint, c, sz, vc, nc, mn, mx, nan, NULL
       FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::varchar[], $8::varchar[], $9::boolean[]) AS u(f, c, sz, vc, nc, mn, mx, nan)`,
      [t.tableId, st.file, st.column, st.size, st.values, st.nulls, st.min, st.max, st.nan],
    );
  }
  // `removed`: what a compaction swap ends in the same snapshot (its records come back merged).
  const dr = records - removed.records;
  const db = bytes - removed.bytes;
  if (stats === undefined) {
    await tx`INSERT INTO ducklake_table_stats VALUES (${t.tableId}, ${Math.max(0, dr)}, ${rowId}, ${Math.max(0, db)})`;
  } else {
    await tx`UPDATE ducklake_table_stats SET record_count = GREATEST(0, record_count + ${dr}), next_row_id = ${rowId}, file_size_bytes = GREATEST(0, file_size_bytes + ${db})
      WHERE table_id = ${t.tableId}`;
  }
  // The files are registered: no longer in flight (pg-inflight.ts), in the same transaction.
  const paths = files.map((f) => f.path);
  if (paths.length > 0) await tx`DELETE FROM svc_inflight_file WHERE path = ANY(${paths}::varchar[])`;
  await foldColumnStats(tx, t.tableId, [...agg.values()]);
}

interface StatRows {
  file: number[];
  column: number[];
  size: Array<number | null>;
  values: number[];
  nulls: number[];
  min: Array<string | null>;
  max: Array<string | null>;
  nan: Array<boolean | null>;
}

/** Folds the new files' bounds into ducklake_table_column_stats: one read, one insert, one update. */
async function foldColumnStats(tx: TransactionSQL, tableId: number, aggs: ColumnAgg[]): Promise<void> {
  if (aggs.length === 0) return;
  const rows: Array<{
    column_id: string;
    contains_null: boolean | null;
    contains_nan: boolean | null;
    min_value: string | null;
    max_value: string | null;
  }> =
    await tx`SELECT column_id, contains_null, contains_nan, min_value, max_value FROM ducklake_table_column_stats WHERE table_id = ${tableId}`;
  const old = new Map(rows.map((r) => [Number(r.column_id), r]));
  const ins: StatFold = { column: [], nulls: [], nan: [], min: [], max: [] };
  const upd: StatFold = { column: [], nulls: [], nan: [], min: [], max: [] };
  for (const a of aggs) {
    const o = old.get(a.columnId);
    const to = o === undefined ? ins : upd;
    const oldMin = o?.min_value ?? null;
    const oldMax = o?.max_value ?? null;
    to.column.push(a.columnId);
    to.nulls.push(a.containsNull || o?.contains_null === true);
    to.nan.push(typeHasNan(a.type) ? a.containsNan || o?.contains_nan === true : null);
    to.min.push(
      o === undefined || oldMin === null || (a.min !== null && compareStatValues(a.type, a.min, oldMin) < 0)
        ? a.min
        : oldMin,
    );
    to.max.push(
      o === undefined || oldMax === null || (a.max !== null && compareStatValues(a.type, a.max, oldMax) > 0)
        ? a.max
        : oldMax,
    );
  }
  const args = (f: StatFold) => [tableId, f.column, f.nulls, f.nan, f.min, f.max];
  const UNNEST =
    "unnest($2::bigint[], $3::boolean[], $4::boolean[], $5::varchar[], $6::varchar[]) AS u(c, nl, nan, mn, mx)";
  if (ins.column.length > 0)
    await tx.unsafe(
      `INSERT INTO ducklake_table_column_stats SELECT $1::bigint, c, nl, nan, mn, mx, NULL FROM ${UNNEST}`,
      args(ins),
    );
  if (upd.column.length > 0) {
    await tx.unsafe(
      `UPDATE ducklake_table_column_stats s SET contains_null = u.nl, contains_nan = u.nan, min_value = u.mn, max_value = u.mx FROM ${UNNEST}
       WHERE s.table_id = $1::bigint AND s.column_id = u.c`,
      args(upd),
    );
  }
}

interface StatFold {
  column: number[];
  nulls: boolean[];
  nan: Array<boolean | null>;
  min: Array<string | null>;
  max: Array<string | null>;
}
