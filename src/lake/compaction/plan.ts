/**
 * Which files each compaction engine merges in one cycle (docs/ARCHITECTURE.md "Compaction engines",
 * "Maintenance"). Pure: the facts come
 * from the catalog and the Parquet footers, the result is groups of files, one output file each.
 */

/** What planning needs to know about one live data file. */
export interface FileFacts {
  id: number;
  bytes: number;
  rows: number;
  /** When its snapshot was committed (ms); undefined when that snapshot is gone (old enough). */
  committedMs: number | undefined;
  /** Partition value; undefined for an unpartitioned table. */
  partition: string | undefined;
  /** Oldest value of the time column (µs), null when unknown: files are merged in time order. */
  minTimeUs: number | null;
  /** Largest row group of the file, uncompressed bytes (Parquet footer). */
  maxRowGroupBytes: number;
  /** Uncompressed bytes of the whole file (Parquet footer): what a sort of it holds. */
  uncompressedBytes: number;
  /** A live row-level delete file exists for it. */
  hasDeletes: boolean;
}

export type SkipReason = "young" | "row_group_bytes" | "deletes" | "retention_cut" | "sort_bytes";

export interface PlanOptions {
  nowMs: number;
  minAgeSec: number;
  maxRowGroupBytes: number;
  /**
   * Uncompressed bytes one merge may hold: a merge is one DuckDB sort, which spills to disk within
   * compaction.memory_limit only up to a size (docs/ARCHITECTURE.md "Compaction memory").
   */
  maxSortBytes: number;
  /**
   * The retention cutoff's partition (`YYYY-MM-DD`), when retention is on and the table is
   * partitioned by the date of its time column: that partition and older ones are not merged
   * (docs/ARCHITECTURE.md "Maintenance": the partition holding the retention cutoff is never merged).
   */
  cutPartition?: string;
}

export type Skipped = Partial<Record<SkipReason, number>>;

/**
 * Rows wider than this (uncompressed bytes a row, from the footer) cost a DuckDB sort about
 * WIDE_ROW_WEIGHT times more memory per byte than narrow ones: at a 224MB limit, 480 MB of
 * 1000-byte rows sorted, while 240 MB of 1800- or 2000-byte rows ran out of memory and 120 MB went
 * through (docs/ARCHITECTURE.md "Compaction memory", docs/BENCHMARKS.md "Query and compaction memory").
 */
export const WIDE_ROW_BYTES = 1024;
export const WIDE_ROW_WEIGHT = 8;

/** What a file costs one merge's sort, in the unit of maxSortBytes. */
export function sortCost(f: Pick<FileFacts, "uncompressedBytes" | "rows">): number {
  return f.rows > 0 && f.uncompressedBytes / f.rows > WIDE_ROW_BYTES
    ? f.uncompressedBytes * WIDE_ROW_WEIGHT
    : f.uncompressedBytes;
}

/** Merges per table per cycle of the default merge (docs/ARCHITECTURE.md "Compaction engines": at most 32). */
export const MAX_MERGES_PER_TABLE = 32;

const isYoung = (f: FileFacts, o: PlanOptions) =>
  f.committedMs !== undefined && o.nowMs - f.committedMs < o.minAgeSec * 1000;
const isCut = (partition: string | undefined, o: PlanOptions) =>
  o.cutPartition !== undefined && partition !== undefined && partition <= o.cutPartition;

function byPartitionThenTime(a: FileFacts, b: FileFacts): number {
  const pa = a.partition ?? "";
  const pb = b.partition ?? "";
  if (pa !== pb) return pa < pb ? -1 : 1;
  if (a.minTimeUs !== b.minTimeUs) {
    if (a.minTimeUs === null) return 1;
    if (b.minTimeUs === null) return -1;
    return a.minTimeUs - b.minTimeUs;
  }
  return a.id - b.id;
}

/**
 * Consecutive files packed into groups of at most `limit` bytes and `sortLimit` of sort cost
 * (sortCost: uncompressed bytes, weighted for wide rows); a group of one file is no merge.
 */
export function pack(files: readonly FileFacts[], limit: number, sortLimit = Number.POSITIVE_INFINITY): FileFacts[][] {
  const groups: FileFacts[][] = [];
  let cur: FileFacts[] = [];
  let size = 0;
  let sorted = 0;
  for (const f of files) {
    const cost = sortCost(f);
    if (cur.length > 0 && (size + f.bytes > limit || sorted + cost > sortLimit)) {
      if (cur.length > 1) groups.push(cur);
      cur = [];
      size = 0;
      sorted = 0;
    }
    cur.push(f);
    size += f.bytes;
    sorted += cost;
  }
  if (cur.length > 1) groups.push(cur);
  return groups;
}

const count = (s: Skipped, r: SkipReason, n = 1) => {
  s[r] = (s[r] ?? 0) + n;
};

/**
 * The default merge ("duckdb" engine): per partition, files below `maxFileSizeBytes` committed at
 * least `minAgeSec` ago, in time order, packed into groups up to that size; at most
 * MAX_MERGES_PER_TABLE merges and `maxOutputs` output files (`max_compacted_files`) per cycle; a
 * group also stays within `maxSortBytes` uncompressed.
 * Skipped files are counted per reason (`young` files are not counted: every fresh file is one).
 */
export function planDefaultMerge(
  files: readonly FileFacts[],
  o: PlanOptions & { maxFileSizeBytes: number; maxOutputs: number },
): { groups: FileFacts[][]; skipped: Skipped } {
  const skipped: Skipped = {};
  const byPart = new Map<string, FileFacts[]>();
  for (const f of [...files].sort(byPartitionThenTime)) {
    if (f.bytes >= o.maxFileSizeBytes || isYoung(f, o)) continue;
    if (f.hasDeletes) count(skipped, "deletes");
    else if (isCut(f.partition, o)) count(skipped, "retention_cut");
    else if (f.maxRowGroupBytes > o.maxRowGroupBytes) count(skipped, "row_group_bytes");
    // Alone above what one merge may hold (after an out-of-memory error lowered it): left as is.
    else if (sortCost(f) > o.maxSortBytes) count(skipped, "sort_bytes");
    else {
      const k = f.partition ?? "";
      const list = byPart.get(k);
      if (list) list.push(f);
      else byPart.set(k, [f]);
    }
  }
  const groups = [...byPart.values()].flatMap((list) => pack(list, o.maxFileSizeBytes, o.maxSortBytes));
  return { groups: groups.slice(0, Math.min(MAX_MERGES_PER_TABLE, o.maxOutputs)), skipped };
}

export interface PartitionPlan {
  partition: string;
  /** Every live file of the partition at planning time (the swap checks it is still exactly these). */
  liveFileIds: number[];
  groups: FileFacts[][];
}

/**
 * The native engine: per partition, and only once no file was added to it for `minAgeSec`. Files
 * below half the target are packed, in time order, into groups up to `targetFileSizeBytes` (and
 * `maxSortBytes` uncompressed, so with a small compaction.memory_limit merged files stay below the
 * target); files from half of either limit on stay as they are (a merged file a little under the
 * target would otherwise be rewritten whenever a late row arrives). A partition is skipped whole when a file has a
 * row-level delete file, when it is cut by the retention cutoff, or when one of the files to merge
 * has a row group above `maxRowGroupBytes` (uncompressed). Unpartitioned files are not planned
 * here (the caller gives such tables the default merge).
 */
export function planNative(
  files: readonly FileFacts[],
  o: PlanOptions & { targetFileSizeBytes: number },
): { partitions: PartitionPlan[]; skipped: Skipped } {
  const skipped: Skipped = {};
  const byPart = new Map<string, FileFacts[]>();
  for (const f of [...files].sort(byPartitionThenTime)) {
    if (f.partition === undefined) continue;
    const list = byPart.get(f.partition);
    if (list) list.push(f);
    else byPart.set(f.partition, [f]);
  }
  const partitions: PartitionPlan[] = [];
  for (const [partition, list] of byPart) {
    const small = list.filter((f) => f.bytes < o.targetFileSizeBytes / 2 && sortCost(f) < o.maxSortBytes / 2);
    if (small.length < 2) continue;
    if (list.some((f) => f.hasDeletes)) count(skipped, "deletes");
    else if (isCut(partition, o)) count(skipped, "retention_cut");
    else if (list.some((f) => isYoung(f, o))) count(skipped, "young");
    else if (small.some((f) => f.maxRowGroupBytes > o.maxRowGroupBytes)) count(skipped, "row_group_bytes");
    else {
      const groups = pack(small, o.targetFileSizeBytes, o.maxSortBytes);
      if (groups.length > 0) partitions.push({ partition, liveFileIds: list.map((f) => f.id), groups });
    }
  }
  return { partitions, skipped };
}

/** The partition (`YYYY-MM-DD`) holding the retention cutoff `days` before `nowMs`. */
export function retentionCutPartition(nowMs: number, days: number): string | undefined {
  if (days <= 0) return undefined;
  return new Date(nowMs - days * 86_400_000).toISOString().slice(0, 10);
}
