import { open } from "node:fs/promises";
import { closeSync, mkdirSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TableDef } from "../../core/index.ts";
import type { NewDataFile, TableInfo } from "../catalog-port.ts";
import type { SqlParams } from "../engine.ts";
import { ident, literal } from "../sql.ts";

/**
 * Writes one Parquet data file from a SQL relation, durably, and describes it for the catalog:
 * sorted by the table's sort key, zstd, fixed row groups, Parquet field ids = DuckLake column ids
 * (readers map columns by field id, docs/DUCKLAKE.md), fsynced with its directory, then statistics
 * read back from the file itself. Used by the flush and by compaction.
 */
export interface DataFileTarget {
  def: TableDef;
  info: TableInfo;
  dataPath: string;
  /** Relative to the data path (catalog.newDataFilePath). */
  relPath: string;
  rowGroupRows: number;
  partitionValue?: string;
}

type Run = (sql: string, params?: SqlParams) => Promise<void>;
type Read = (sql: string) => Promise<Record<string, unknown>[]>;

export async function writeDataFile(run: Run, read: Read, source: string, t: DataFileTarget): Promise<NewDataFile> {
  const abs = join(t.dataPath, t.relPath);
  mkdirSync(dirname(abs), { recursive: true });
  const cols = t.def.columns.map((c) => ident(c.name)).join(", ");
  const fieldIds = t.info.columns.map((c) => `${literal(c.name)}: ${c.columnId}`).join(", ");
  const order = t.def.sortBy.map(ident).join(", ");
  try {
    await run(
      `COPY (SELECT ${cols} FROM (${source}) ORDER BY ${order}) TO ${literal(abs)} ` +
        `(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE ${t.rowGroupRows}, FIELD_IDS {${fieldIds}})`,
    );
    // fsync off the JS thread (libuv pool): a multi-MB fsync blocks for 100s of ms on slow disks.
    await fsyncAsync(abs);
    await fsyncAsync(dirname(abs));
    const statSql = t.def.columns
      .map((c, i) => `min(${ident(c.name)})::VARCHAR AS "min${i}", max(${ident(c.name)})::VARCHAR AS "max${i}", count(*) - count(${ident(c.name)}) AS "nulls${i}"`)
      .join(", ");
    const s = (await read(`SELECT count(*) AS n, ${statSql} FROM read_parquet(${literal(abs)})`))[0] ?? {};
    const columnStats: NewDataFile["columnStats"] = {};
    t.def.columns.forEach((c, i) => {
      columnStats[c.name] = { min: (s[`min${i}`] as string | null) ?? null, max: (s[`max${i}`] as string | null) ?? null, nullCount: Number(s[`nulls${i}`] ?? 0) };
    });
    return {
      path: t.relPath,
      recordCount: Number(s.n ?? 0),
      fileSizeBytes: statSync(abs).size,
      footerSize: parquetFooterSize(abs),
      columnStats,
      ...(t.def.partitionBy && t.partitionValue !== undefined ? { partitionValues: { [t.def.partitionBy]: t.partitionValue } } : {}),
    };
  } catch (e) {
    rmSync(abs, { force: true });
    throw e;
  }
}

async function fsyncAsync(path: string): Promise<void> {
  const fh = await open(path, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Parquet ends with a 4-byte little-endian footer length and "PAR1". */
function parquetFooterSize(path: string): number {
  const fd = openSync(path, "r");
  try {
    const size = statSync(path).size;
    const tail = Buffer.alloc(8);
    readSync(fd, tail, 0, 8, size - 8);
    return tail.readUInt32LE(0);
  } finally {
    closeSync(fd);
  }
}
