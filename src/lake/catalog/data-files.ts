/**
 * Data files and their statistics: ducklake_data_file, ducklake_file_column_stats,
 * ducklake_file_partition_value, ducklake_table_stats, ducklake_table_column_stats (DuckLake spec
 * "Queries" → INSERT). Each public function is one snapshot in one SQLite transaction. Compaction
 * swaps and retention, which end files, are in src/lake/catalog/file-swap.ts.
 */
import { statSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import { AppError } from "../../core/index.ts";
import { type Ctx, type Draft, draft, finish, writeTxn } from "./catalog-db.ts";
import { settleDataFiles } from "./inflight.ts";
import { getTableById, partitionKeys } from "./tables.ts";
import type { NewColumnStats, NewDataFile, TableInfo } from "./types.ts";
import { compareStatValues, formatStatValue, typeHasNan } from "./values.ts";

/** Absolute directory of a table's files. */
export const tableDirAbs = (ctx: Ctx, t: TableInfo) =>
  isAbsolute(t.dataDir) ? t.dataDir : `${ctx.dataPath}${t.dataDir}`;

/** Stored form of a file path: relative to the table directory when below it (path_is_relative), else absolute. */
function storedPath(ctx: Ctx, t: TableInfo, input: string): { path: string; relative: 0 | 1; absolute: string } {
  const absolute = normalize(isAbsolute(input) ? input : `${ctx.dataPath}${input}`);
  const dir = tableDirAbs(ctx, t);
  if (absolute.startsWith(dir) && absolute.length > dir.length)
    return { path: absolute.slice(dir.length), relative: 1, absolute };
  return { path: absolute, relative: 0, absolute };
}

const isCount = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

interface ColumnAgg {
  columnId: number;
  type: string;
  min: string | null;
  max: string | null;
  containsNull: boolean;
  containsNan: boolean;
}

export interface TableAgg {
  records: number;
  bytes: number;
  rowIds: number;
  columns: Map<number, ColumnAgg>;
}

function validateFile(ctx: Ctx, t: TableInfo, f: NewDataFile, partitioned: string | undefined): void {
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
  if (partitioned === undefined ? keys.length > 0 : keys.length !== 1 || keys[0] !== partitioned) {
    throw new AppError(
      "VALIDATION",
      `data file ${f.path}: partition values ${JSON.stringify(f.partitionValues ?? {})} do not match the partitioning (${partitioned ?? "none"})`,
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

function tableStatsRow(ctx: Ctx, tableId: number) {
  return ctx.db
    .query<{ record_count: number; next_row_id: number; file_size_bytes: number }, [number]>(
      "SELECT record_count, next_row_id, file_size_bytes FROM ducklake_table_stats WHERE table_id = ? ORDER BY rowid DESC LIMIT 1",
    )
    .get(tableId);
}

/** Registers `files` of table `t` in snapshot `d`: data_file, file_column_stats and partition rows. */
export function insertFiles(ctx: Ctx, d: Draft, t: TableInfo, files: NewDataFile[], agg: TableAgg): void {
  const keys = partitionKeys(ctx, t.tableId, d.base.snapshot_id);
  if (keys.length > 1 || (keys[0] !== undefined && keys[0].transform !== "identity")) {
    throw new AppError(
      "UNSUPPORTED",
      `table ${t.schemaName}.${t.name} has a partitioning this build does not write (only one identity column)`,
    );
  }
  for (const f of files) validateFile(ctx, t, f, t.partitionBy);
  const insFile = ctx.db.prepare(
    "INSERT INTO ducklake_data_file VALUES (?, ?, ?, NULL, NULL, ?, ?, 'parquet', ?, ?, ?, ?, ?, NULL, NULL, NULL)",
  );
  const insStat = ctx.db.prepare("INSERT INTO ducklake_file_column_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)");
  const insPart = ctx.db.prepare("INSERT INTO ducklake_file_partition_value VALUES (?, ?, 0, ?)");
  for (const f of files) {
    const id = d.nextFileId++;
    const p = storedPath(ctx, t, f.path);
    insFile.run(
      id,
      t.tableId,
      d.snapshotId,
      p.path,
      p.relative,
      f.recordCount,
      f.fileSizeBytes,
      f.footerSize,
      agg.rowIds,
      keys[0]?.partitionId ?? null,
    );
    agg.rowIds += f.recordCount;
    agg.records += f.recordCount;
    agg.bytes += f.fileSizeBytes;
    for (const c of t.columns) {
      const a = agg.columns.get(c.columnId) ?? {
        columnId: c.columnId,
        type: c.type,
        min: null,
        max: null,
        containsNull: false,
        containsNan: false,
      };
      agg.columns.set(c.columnId, a);
      const s: NewColumnStats | undefined = f.columnStats[c.name];
      if (s === undefined) {
        // A column missing from the file reads as NULL.
        if (f.recordCount > 0) a.containsNull = true;
        continue;
      }
      const min = formatStatValue(c.type, s.min);
      const max = formatStatValue(c.type, s.max);
      const nan = typeHasNan(c.type) ? (s.containsNan ? 1 : 0) : null;
      insStat.run(
        id,
        t.tableId,
        c.columnId,
        s.sizeBytes ?? null,
        s.valueCount ?? f.recordCount - s.nullCount,
        s.nullCount,
        min,
        max,
        nan,
      );
      if (s.nullCount > 0) a.containsNull = true;
      if (s.containsNan) a.containsNan = true;
      if (min !== null && (a.min === null || compareStatValues(c.type, min, a.min) < 0)) a.min = min;
      if (max !== null && (a.max === null || compareStatValues(c.type, max, a.max) > 0)) a.max = max;
    }
    const pv = t.partitionBy === undefined ? undefined : f.partitionValues?.[t.partitionBy];
    if (pv !== undefined) insPart.run(id, t.tableId, pv);
  }
}

/** Folds the new files into ducklake_table_stats and ducklake_table_column_stats. */
export function updateTableStats(
  ctx: Ctx,
  tableId: number,
  agg: TableAgg,
  recordDelta: number,
  bytesDelta: number,
): void {
  const cur = tableStatsRow(ctx, tableId);
  if (cur === null) {
    ctx.db.run("INSERT INTO ducklake_table_stats VALUES (?, ?, ?, ?)", [
      tableId,
      Math.max(0, recordDelta),
      agg.rowIds,
      Math.max(0, bytesDelta),
    ]);
  } else {
    ctx.db.run(
      "UPDATE ducklake_table_stats SET record_count = max(0, record_count + ?), next_row_id = ?, file_size_bytes = max(0, file_size_bytes + ?) WHERE table_id = ?",
      [recordDelta, agg.rowIds, bytesDelta, tableId],
    );
  }
  const get = ctx.db.query<
    { contains_null: number | null; contains_nan: number | null; min_value: string | null; max_value: string | null },
    [number, number]
  >(
    "SELECT contains_null, contains_nan, min_value, max_value FROM ducklake_table_column_stats WHERE table_id = ? AND column_id = ? ORDER BY rowid DESC LIMIT 1",
  );
  for (const a of agg.columns.values()) {
    const old = get.get(tableId, a.columnId);
    const nanFlag = (prev: number | null | undefined) =>
      typeHasNan(a.type) ? (a.containsNan || prev === 1 ? 1 : 0) : null;
    if (old === null) {
      ctx.db.run("INSERT INTO ducklake_table_column_stats VALUES (?, ?, ?, ?, ?, ?, NULL)", [
        tableId,
        a.columnId,
        a.containsNull ? 1 : 0,
        nanFlag(null),
        a.min,
        a.max,
      ]);
      continue;
    }
    const min =
      old.min_value === null || (a.min !== null && compareStatValues(a.type, a.min, old.min_value) < 0)
        ? a.min
        : old.min_value;
    const max =
      old.max_value === null || (a.max !== null && compareStatValues(a.type, a.max, old.max_value) > 0)
        ? a.max
        : old.max_value;
    ctx.db.run(
      "UPDATE ducklake_table_column_stats SET contains_null = ?, contains_nan = ?, min_value = ?, max_value = ? WHERE table_id = ? AND column_id = ?",
      [
        a.containsNull || old.contains_null === 1 ? 1 : 0,
        nanFlag(old.contains_nan),
        min ?? null,
        max ?? null,
        tableId,
        a.columnId,
      ],
    );
  }
}

export function newAgg(ctx: Ctx, tableId: number): TableAgg {
  return { records: 0, bytes: 0, rowIds: tableStatsRow(ctx, tableId)?.next_row_id ?? 0, columns: new Map() };
}

/** Optional progress marker of the caller, stored in the same transaction as the files. */
export interface WriterWatermark {
  writerKey: string;
  watermark: number;
}

export function writerWatermark(ctx: Ctx, writerKey: string): number | null {
  // Created on the first writable open; a read-only open of an older file may not have it.
  const exists = ctx.db
    .query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'svc_writer_watermark'")
    .get();
  if (!exists?.n) return null;
  const r = ctx.db
    .query<{ watermark: number }, [string]>("SELECT watermark FROM svc_writer_watermark WHERE writer_key = ?")
    .get(writerKey);
  return r?.watermark ?? null;
}

/** Marks alone (no files, no new snapshot), recorded at the current snapshot: see LakeCatalog.commitMarks. */
export function commitMarks(ctx: Ctx, marks: readonly WriterWatermark[]): void {
  if (marks.length === 0) return;
  writeTxn(ctx, () => {
    const snapshotId = draft(ctx).base.snapshot_id;
    for (const m of marks)
      ctx.db.run("INSERT OR REPLACE INTO svc_writer_watermark VALUES (?, ?, ?)", [
        m.writerKey,
        m.watermark,
        snapshotId,
      ]);
  });
}

/** One snapshot inserting files into one or more tables ("inserted_into_table:<id>" per table). */
export function commitInserts(
  ctx: Ctx,
  batches: ReadonlyArray<{ tableId: number; files: NewDataFile[] }>,
  marks?: WriterWatermark | readonly WriterWatermark[],
): { snapshotId: number } {
  return writeTxn(ctx, () => {
    const work = batches.filter((b) => b.files.length > 0);
    if (work.length === 0) return { snapshotId: draft(ctx).base.snapshot_id };
    const d = draft(ctx);
    for (const b of work) {
      const t = getTableById(ctx, b.tableId, d.base.snapshot_id);
      const agg = newAgg(ctx, b.tableId);
      insertFiles(ctx, d, t, b.files, agg);
      updateTableStats(ctx, b.tableId, agg, agg.records, agg.bytes);
      d.changes.push(`inserted_into_table:${b.tableId}`);
    }
    const snapshotId = finish(ctx, d);
    settleDataFiles(
      ctx,
      work.flatMap((b) => b.files.map((f) => f.path)),
    );
    // Several marks per commit: a relay records its sender's position beside the spool's.
    for (const m of marks === undefined ? [] : "writerKey" in marks ? [marks] : marks) {
      ctx.db.run("INSERT OR REPLACE INTO svc_writer_watermark VALUES (?, ?, ?)", [
        m.writerKey,
        m.watermark,
        snapshotId,
      ]);
    }
    return { snapshotId };
  });
}
