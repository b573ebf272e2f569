import { open } from "node:fs/promises";
import { closeSync, mkdirSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { repageInWorker, repageParquet, type TableDef } from "../../core/index.ts";
import type { NewDataFile, TableInfo } from "../catalog-port.ts";
import type { SqlParams } from "../engine.ts";
import { ident, literal } from "../sql.ts";
import { columnStatsFromParquet } from "../catalog/index.ts";

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
  /**
   * Sort the rows: by the table's sort key, in time slices of its groups where it has
   * `groupedBy` (default, `slicedOrder`). The flush passes false: its rows arrive in
   * time order already, the sort was a third of its DuckDB CPU (bench/lake-flush.ts), and
   * compaction sorts them when it merges the flush files.
   */
  sorted?: boolean;
  /**
   * Cut the file's PLAIN chunks into pages of `rowsPerPage` rows (narrow columns: 8 KiB) with an offset index
   * (docs/STORAGE.md "Paged data files"): COPY writes to `scratchDir` first (a directory DuckDB
   * may write to, emptied at start), the paged file goes to the data path, with bloom filters for
   * `bloomColumns` (the point-lookup columns). Compaction only.
   */
  paged?: {
    rowsPerPage: number;
    scratchDir: string;
    bloomColumns: ReadonlySet<string>;
    /** The worker entry that cuts the pages off this thread (src/core/parquet/repage-worker.ts); absent: here. */
    worker?: URL;
    /** Told when the worker gave no answer and the pages were cut on this thread. */
    onFallback?: (reason: string) => void;
  };
}

type Run = (sql: string, params?: SqlParams) => Promise<void>;

/** The ORDER BY terms of a sorted data file (the table's sortBy). */
export function sortKey(def: TableDef): string[] {
  return def.sortBy.map(ident);
}
type Read = (sql: string) => Promise<Record<string, unknown>[]>;

/**
 * What a sorted file's COPY selects from and its ORDER BY (docs/STORAGE.md "Time-sliced row
 * groups"). A table with `groupedBy` (a call's Call-ID) is written in time slices of about
 * `sliceRows` rows: each row belongs to the slice of its group's first row in the file (its
 * own when the group is NULL), and the rows of a slice are sorted by the sort key. The slices'
 * first times come from that one time column alone (every `sliceRows`-th row in its order), so
 * the sort still holds the rows once. Other tables are ordered by the sort key alone.
 */
export async function slicedOrder(
  read: Read,
  source: string,
  def: TableDef,
  sliceRows: number,
): Promise<{ from: string; order: string }> {
  const key = sortKey(def);
  const plain = { from: source, order: key.length === 0 ? "" : ` ORDER BY ${key.join(", ")}` };
  const time = def.columns.find((c) => c.name === def.timeColumn && c.type === "timestamp");
  const group = def.columns.find((c) => c.name === def.groupedBy);
  if (key.length === 0 || !time || !group || sliceRows <= 0) return plain;
  const t = ident(time.name);
  const g = ident(group.name);
  const from =
    `SELECT s.*, coalesce(f.svc_first, s.${t}) AS svc_first FROM (${source}) s LEFT JOIN ` +
    `(SELECT ${g}, min(${t}) AS svc_first FROM (${source}) WHERE ${g} IS NOT NULL GROUP BY ${g}) f ON s.${g} = f.${g}`;
  const starts = (
    await read(
      `SELECT t FROM (SELECT epoch_us(svc_first) AS t, row_number() OVER (ORDER BY svc_first) AS rn FROM (${from}) WHERE svc_first IS NOT NULL) ` +
        `WHERE rn > 1 AND rn % ${sliceRows} = 1 ORDER BY t`,
    )
  ).map((r) => Number(r.t));
  const bounds = [...new Set(starts)];
  if (bounds.length === 0) return plain;
  return { from, order: ` ORDER BY ${sliceOf("epoch_us(svc_first)", bounds, 0, bounds.length)}, ${key.join(", ")}` };
}

/**
 * The slice of `x` among slices starting at bounds[lo..hi) (slice i + 1 starts at bounds[i]), as
 * nested CASEs halving the range: about log2(slices) comparisons a row (an 800 k-row file has
 * 390 slices of 2 048 rows). A NULL compares false everywhere and lands in the last slice.
 */
function sliceOf(x: string, bounds: readonly number[], lo: number, hi: number): string {
  if (lo === hi) return String(lo);
  const mid = (lo + hi) >> 1;
  return `CASE WHEN ${x} < ${bounds[mid]} THEN ${sliceOf(x, bounds, lo, mid)} ELSE ${sliceOf(x, bounds, mid + 1, hi)} END`;
}

/**
 * Rows per time slice: a row group's in DuckDB's layout (it decodes a chunk whole), a few pages'
 * in a paged file, whose rows are read page by page: the newest calls of a window then share a
 * few pages of each column.
 */
export function sliceRows(rowGroupRows: number, rowsPerPage: number | undefined): number {
  return rowsPerPage ? Math.min(rowGroupRows, SLICE_PAGES * rowsPerPage) : rowGroupRows;
}
const SLICE_PAGES = 4;

/**
 * `source`: a SQL relation DuckDB's COPY writes, or a function that writes the Parquet file at the
 * path it is given itself (joined Parquet seals, join-seals.ts); either way the file is then
 * fsynced and described the same way.
 */
export async function writeDataFile(
  run: Run,
  read: Read,
  source: string | ((abs: string) => Promise<void>),
  t: DataFileTarget,
): Promise<NewDataFile> {
  const abs = join(t.dataPath, t.relPath);
  mkdirSync(dirname(abs), { recursive: true });
  const cols = t.def.columns.map((c) => ident(c.name)).join(", ");
  const fieldIds = t.info.columns.map((c) => `${literal(c.name)}: ${c.columnId}`).join(", ");
  try {
    const sorted =
      t.sorted === false || typeof source === "function"
        ? { from: typeof source === "function" ? "" : source, order: "" }
        : await slicedOrder(read, source, t.def, sliceRows(t.rowGroupRows, t.paged?.rowsPerPage));
    // A paged file wants PLAIN chunks (they are what is cut into pages): no dictionaries, which
    // zstd makes up for (the 20 M-row benchmark's 800 k-row file: 61.3 MB against 62.4 MB).
    const copy = (to: string, plain = false) =>
      run(
        `COPY (SELECT ${cols} FROM (${sorted.from})${sorted.order}) TO ${literal(to)} ` +
          `(FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE ${t.rowGroupRows}, FIELD_IDS {${fieldIds}}${plain ? ", DICTIONARY_SIZE_LIMIT 1" : ""})`,
      );
    if (typeof source === "function") await source(abs);
    else if (t.paged) {
      const scratch = join(t.paged.scratchDir, `repage-${crypto.randomUUID()}.parquet`);
      try {
        await copy(scratch, true);
        const opts = { rowsPerPage: t.paged.rowsPerPage, bloomColumns: t.paged.bloomColumns };
        if (t.paged.worker) await repageInWorker(t.paged.worker, scratch, abs, opts, t.paged.onFallback);
        // One row group at a time, other work runs in between (a merged file is up to 64 MB).
        else await repageParquet(scratch, abs, { ...opts, yieldEvery: () => new Promise((r) => setImmediate(r)) });
      } finally {
        rmSync(scratch, { force: true });
      }
    } else await copy(abs);
    // fsync off the JS thread (libuv pool): a multi-MB fsync blocks for 100s of ms on slow disks.
    await fsyncAsync(abs);
    await fsyncAsync(dirname(abs));
    // Statistics from the footer (parquet_metadata reads no data pages): per-chunk min/max, null
    // and value counts, compressed sizes, folded per column the way the ducklake extension does.
    const chunks = (await read(
      `SELECT row_group_id, row_group_num_rows, path_in_schema, stats_min_value, stats_max_value, stats_null_count, num_values, total_compressed_size FROM parquet_metadata(${literal(abs)})`,
    )) as Array<Record<string, unknown>>;
    const rowGroups = new Map<number, number>();
    for (const ch of chunks) rowGroups.set(Number(ch.row_group_id), Number(ch.row_group_num_rows));
    const floats = t.def.columns.filter((c) => c.type === "float64");
    const nan = new Set<string>();
    if (floats.length > 0) {
      // Parquet min/max leave NaN out; the catalog records whether a float column holds any.
      const r =
        (
          await read(
            `SELECT ${floats.map((c, i) => `bool_or(isnan(${ident(c.name)})) AS "n${i}"`).join(", ")} FROM read_parquet(${literal(abs)})`,
          )
        )[0] ?? {};
      floats.forEach((c, i) => r[`n${i}`] === true && nan.add(c.name));
    }
    const columnStats = columnStatsFromParquet(
      { columns: t.info.columns.map((c, order) => ({ ...c, order })) },
      chunks.map((ch) => ({
        path_in_schema: String(ch.path_in_schema),
        stats_min_value:
          ch.stats_min_value === null || ch.stats_min_value === undefined ? null : String(ch.stats_min_value),
        stats_max_value:
          ch.stats_max_value === null || ch.stats_max_value === undefined ? null : String(ch.stats_max_value),
        stats_null_count:
          ch.stats_null_count === null || ch.stats_null_count === undefined ? null : Number(ch.stats_null_count),
        num_values: ch.num_values === null || ch.num_values === undefined ? null : Number(ch.num_values),
        total_compressed_size:
          ch.total_compressed_size === null || ch.total_compressed_size === undefined
            ? null
            : Number(ch.total_compressed_size),
      })),
      nan,
    );
    const s = { n: [...rowGroups.values()].reduce((a, b) => a + b, 0) };
    return {
      path: t.relPath,
      recordCount: Number(s.n ?? 0),
      fileSizeBytes: statSync(abs).size,
      footerSize: parquetFooterSize(abs),
      columnStats,
      ...(t.def.partitionBy && t.partitionValue !== undefined
        ? { partitionValues: { [t.def.partitionBy]: t.partitionValue } }
        : {}),
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
