/**
 * Scan planning: which Parquet files of a table one read needs, from the catalog's column
 * statistics (docs/ARCHITECTURE.md), and the SQL that reads them with the buffer.
 */
import { AppError, formatTimestampUs, parseTimestampUs, type TableDef } from "../core/index.ts";
import type { LakeCatalog, LiveDataFile, TableInfo } from "./catalog-port.ts";
import { unionSql } from "./query/views.ts";
import { tableKey } from "./sql.ts";
import type { LakeWriter } from "./writer/writer.ts";
import type { Lookup } from "./bloom-index.ts";

export interface ScanOptions {
  /** Inclusive bounds on the table's time column, epoch microseconds. */
  fromUs?: number;
  toUs?: number;
  /** Read the table as of this snapshot (no buffer rows). */
  snapshotId?: number;
  /** Include buffer rows (default: config search_buffer). */
  buffer?: boolean;
  /** false: no data files, the buffer only (a node sharing its lake with another, docs/ARCHITECTURE.md "Coordinator over several nodes"). */
  files?: false;
  /** Prune files by another column's statistics (e.g. `uuid` for a lookup by id); replaces the time range. */
  prune?: { column: string; min: string; max: string };
  /**
   * Keep only files that may hold one of these values of a VARCHAR column (on top of the time
   * range): some value inside the file's [min, max], and the column not NULL in every row.
   * Files with unknown bounds are kept; the buffer is never pruned.
   */
  equals?: { column: string; values: readonly string[] };
  /**
   * Point lookups every matching row satisfies (some of `columns` equals one of `values`, VARCHAR
   * columns): files whose Parquet bloom filters and row-group min/max rule one out are not read
   * (src/lake/bloom-index.ts, docs/ARCHITECTURE.md "Point lookups"). The buffer is never pruned.
   */
  lookups?: readonly Lookup[];
  /**
   * Add each row's data file and its number there (src/lake/query/views.ts ROW_FILE, ROW_NUMBER;
   * NULL for buffer rows), so a second pass can fetch the row by page (docs/ARCHITECTURE.md "Row
   * fetch by page").
   */
  rowRefs?: boolean;
  /**
   * Buffer first, then files by their newest row, newest first (ties: the file whose oldest row
   * is newer first): a LIMIT without ORDER BY then samples the newest end of the range
   * (`lake_topn_strategy: stream`); `newest` reads the plan's files in this order in groups.
   */
  newestFirst?: boolean;
}

/** One data file of a scan plan with the catalog's statistics of the table's time column. */
export interface ScanFile {
  readonly file: LiveDataFile;
  /** Oldest and newest time in the file, epoch µs; null when the catalog does not know. */
  readonly minUs: number | null;
  readonly maxUs: number | null;
  /** Rows whose time is not NULL. */
  readonly timedRows: number;
}

/**
 * The files and the buffer of one read, captured together (one catalog snapshot, the buffer as
 * it was then): a reader may read them in parts and in several statements without seeing a row
 * twice or missing one (a flush in between moves rows from the buffer into a file not listed here).
 */
export interface ScanPlan {
  readonly files: readonly ScanFile[];
  /** The buffer holds rows for this read (`sql(…, true)` reads them). */
  readonly buffered: boolean;
  /** FROM-clause body reading `files` (a subset of the plan's) and, when `withBuffer`, the buffer. */
  sql(files: readonly ScanFile[], withBuffer: boolean): string;
}

/** Could a file whose statistics for a VARCHAR column are `s` hold one of `values`? */
function mayHoldValue(
  s: { min: string | null; max: string | null; nullCount: number } | undefined,
  recordCount: number,
  values: readonly string[],
): boolean {
  if (!s) return false; // column absent from the file: NULL in every row
  if (s.nullCount >= recordCount) return false;
  if (s.min === null || s.max === null) return true;
  return values.some((v) => utf8Compare(v, s.min!) >= 0 && utf8Compare(v, s.max!) <= 0);
}

/** DuckDB orders VARCHAR by UTF-8 bytes; JS `<` by UTF-16 units (they differ above U+FFFF). */
const ASCII = /^[\x00-\x7f]*$/;
function utf8Compare(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * A time column's statistics as epoch µs, parsed once per statistics object: a listing hands out
 * the same frozen objects for files it has listed before (src/lake/catalog/stats-memo.ts).
 */
const parsedBounds = new WeakMap<object, { minUs: number | null; maxUs: number | null }>();
function timeBounds(s: { min: string | null; max: string | null }): { minUs: number | null; maxUs: number | null } {
  let b = parsedBounds.get(s);
  if (!b) {
    b = { minUs: parseTimestampUs(s.min), maxUs: parseTimestampUs(s.max) };
    parsedBounds.set(s, b);
  }
  return b;
}

/**
 * The files of one read of table `entry`, pruned by the catalog's statistics (time range, another
 * column's range, VARCHAR values), with their time bounds, and the buffer, captured as one cut:
 * the listing and the buffer read run inside the writer's commit gate, so no flush moves rows from
 * the buffer into a file between them (src/lake/writer/commit-gate.ts); `sql(subset, withBuffer)`
 * reads part of it. The buffer is included only when the options ask for it (`searchBuffer` by
 * default, never with a snapshot).
 */
export async function planScan(
  entry: { def: TableDef; info: TableInfo },
  catalog: LakeCatalog,
  writer: Pick<LakeWriter, "consistent" | "bufferSelects">,
  opts: ScanOptions,
  searchBuffer: boolean,
  /** Bloom-filter pruning of `opts.lookups` (absent: lookups prune nothing). */
  pruneLookups?: <F extends LiveDataFile>(files: readonly F[], lookups: readonly Lookup[]) => Promise<F[]>,
): Promise<ScanPlan> {
  const key = tableKey(entry.def);
  const def = entry.def;
  const range = opts.prune
    ? { column: opts.prune.column, min: opts.prune.min, max: opts.prune.max }
    : opts.fromUs !== undefined || opts.toUs !== undefined
      ? {
          column: def.timeColumn,
          ...(opts.fromUs !== undefined ? { min: formatTimestampUs(opts.fromUs) } : {}),
          ...(opts.toUs !== undefined ? { max: formatTimestampUs(opts.toUs) } : {}),
        }
      : {};
  const useBuffer = opts.snapshotId === undefined && (opts.buffer ?? searchBuffer);
  const list = () =>
    opts.files === false
      ? Promise.resolve([])
      : catalog.listDataFiles(entry.info.tableId, {
          ...range,
          ...(opts.snapshotId !== undefined ? { snapshotId: opts.snapshotId } : {}),
        });
  // Without the buffer (or without files) there is nothing to pair: no need to hold the gate.
  const cut =
    useBuffer && opts.files !== false
      ? await writer.consistent(async () => ({ files: await list(), buffer: writer.bufferSelects(key) }))
      : { files: await list(), buffer: useBuffer ? writer.bufferSelects(key) : undefined };
  let files = cut.files;
  const buffer = cut.buffer;
  const eq = opts.equals;
  if (eq) {
    const col = def.columns.find((c) => c.name === eq.column);
    if (col?.type !== "varchar")
      throw new AppError("VALIDATION", `equals pruning needs a VARCHAR column, ${key} has no such ${eq.column}`);
    files = files.filter((f) => mayHoldValue(f.columnStats[eq.column], f.recordCount, eq.values));
  }
  if (opts.lookups?.length && pruneLookups) files = await pruneLookups(files, opts.lookups);
  const t = def.timeColumn;
  let spans: ScanFile[] = files.map((file) => {
    const s = file.columnStats[t];
    const { minUs, maxUs } = s ? timeBounds(s) : { minUs: null, maxUs: null };
    return { file, minUs, maxUs, timedRows: s ? Math.max(0, file.recordCount - s.nullCount) : 0 };
  });
  if (opts.newestFirst) {
    // Unknown bounds sort as the newest (such a file may hold any time).
    const hi = (f: ScanFile) => f.maxUs ?? Number.MAX_SAFE_INTEGER;
    const lo = (f: ScanFile) => f.minUs ?? Number.MAX_SAFE_INTEGER;
    spans = [...spans].sort((a, b) => hi(b) - hi(a) || lo(b) - lo(a));
  }
  const bufferFirst = opts.newestFirst === true;
  return {
    files: spans,
    buffered: (buffer?.length ?? 0) > 0,
    sql: (subset, withBuffer) =>
      unionSql(
        def,
        subset.map((f) => f.file),
        withBuffer ? buffer : undefined,
        bufferFirst,
        opts.rowRefs === true,
      ),
  };
}
