/**
 * The `newest` top-N strategy's plan (docs/ARCHITECTURE.md "Search"): which data files to read,
 * in which groups, so that the N newest rows of a window are proven from the catalog's time
 * statistics (per-file min/max of the time column) without reading every file. Pure: the search
 * service runs one ordered `LIMIT N` statement per group and feeds back the N-th newest time.
 *
 * Why it is exact: once N rows are in hand with the N-th newest at time T, a row newer than T can
 * only sit in a file whose newest row is at or after T. Compacted files are sorted by session_id,
 * so a file's rows spread over its whole [min, max]: a file cannot be skipped because its min is
 * old, only because its max is older than T.
 */
export interface FileSpan {
  /** Oldest and newest time in the file, epoch µs; null when unknown (the file is always read). */
  readonly minUs: number | null;
  readonly maxUs: number | null;
  /** Rows whose time is not NULL. */
  readonly timedRows: number;
}

/**
 * A time at or before the N-th newest row of [fromUs, toUs], proven by statistics alone: the
 * files lying wholly inside the window, taken by their oldest row newest first, until they hold N
 * rows; the oldest row of the last one taken is the floor (those N rows are all at or after it).
 * Only for unfiltered reads (a filter may match none of them). Undefined when no such N rows exist.
 */
export function provenFloor(files: readonly FileSpan[], fromUs: number, toUs: number, n: number): number | undefined {
  const inside = files
    .filter(
      (f): f is FileSpan & { minUs: number; maxUs: number } =>
        f.minUs !== null && f.maxUs !== null && f.minUs >= fromUs && f.maxUs <= toUs,
    )
    .sort((a, b) => b.minUs - a.minUs);
  let rows = 0;
  for (const f of inside) {
    rows += f.timedRows;
    if (rows >= n) return f.minUs;
  }
  return undefined;
}

/**
 * The latest time after which `files` should hold `rows` rows of [fromUs, toUs] if each file's
 * rows spread evenly over its min..max: a first guess at the N-th newest time. Only a guess —
 * the search reads [guess, toUs] first and falls back to the whole bound when that holds fewer
 * than N rows (docs/ARCHITECTURE.md "Search"). `fromUs` when a file's span is unknown or the
 * files hold too few rows.
 */
export function likelyFloor(files: readonly FileSpan[], fromUs: number, toUs: number, rows: number): number {
  if (files.some((f) => f.minUs === null || f.maxUs === null)) return fromUs;
  const after = (t: number) => {
    let n = 0;
    for (const f of files) {
      const lo = Math.max(f.minUs!, t);
      const hi = Math.min(f.maxUs!, toUs);
      if (hi >= lo) n += (f.timedRows * (hi - lo + 1)) / (f.maxUs! - f.minUs! + 1);
    }
    return n;
  };
  if (after(fromUs) < rows) return fromUs;
  let lo = fromUs;
  let hi = toUs;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (after(mid) >= rows) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Groups of files to read, newest first. `files` must be sorted by their newest row, newest
 * first (Lake.scanPlan with newestFirst). Files whose newest row is before `floor` are never read.
 */
export class NewestGroups<F extends FileSpan> {
  private unread: F[];
  private lastSize = 0;
  private groups = 0;
  private rowsRead = 0;

  constructor(
    files: readonly F[],
    private readonly n: number,
    readonly floor?: number,
  ) {
    this.unread = floor === undefined ? [...files] : files.filter((f) => f.maxUs === null || f.maxUs >= floor);
  }

  /** Files not read yet (and not ruled out by the floor). */
  get remaining(): number {
    return this.unread.length;
  }

  /**
   * The next group given the rows found so far: `nthNewestUs` is the N-th newest time when there
   * are N rows, else undefined, and `found` how many rows matched in the files read so far.
   * With N rows: every unread file that may hold a row at or after that time (then nothing more:
   * the N-th newest only moves later). Short of N rows: first the files that hold N rows by their
   * row counts; after that the files that should hold the missing rows at the rate the filter
   * matched so far (twice that, and at least twice as many files as the group before), or every
   * remaining file when nothing matched yet (a rare filter reads everything once, in one
   * statement, as `full` does). Empty: done.
   */
  next(nthNewestUs: number | undefined, found = 0): F[] {
    if (nthNewestUs !== undefined) {
      const group = this.unread.filter((f) => f.maxUs === null || f.maxUs >= nthNewestUs);
      this.unread = [];
      return group;
    }
    let take = 0;
    if (this.groups === 0) {
      let rows = 0;
      while (take < this.unread.length && rows < this.n) rows += this.unread[take++]!.timedRows;
      take = Math.max(1, take);
    } else if (found <= 0) take = this.unread.length;
    else {
      const want = ((this.n - found) * this.rowsRead * 2) / found;
      let rows = 0;
      while (take < this.unread.length && rows < want) rows += this.unread[take++]!.timedRows;
      take = Math.max(take, this.lastSize * 2);
    }
    const group = this.unread.slice(0, take);
    this.unread = this.unread.slice(group.length);
    this.lastSize = Math.max(1, group.length);
    this.groups++;
    for (const f of group) this.rowsRead += f.timedRows;
    return group;
  }
}

/**
 * The `limit` newest rows of `a` and `b` (each already newest first), ties broken by `tie`
 * descending so repeats give the same rows.
 */
export function mergeNewest<R extends Record<string, unknown>>(
  a: readonly R[],
  b: readonly R[],
  limit: number,
  time: string,
  tie: string | undefined,
): R[] {
  return [...a, ...b].sort((x, y) => compareNewest(x, y, time, tie)).slice(0, limit);
}

/** Newest first, then `tie` descending (the order of `ORDER BY time DESC, tie DESC`). */
export function compareNewest(
  x: Record<string, unknown>,
  y: Record<string, unknown>,
  time: string,
  tie: string | undefined,
): number {
  const d = Number(y[time]) - Number(x[time]);
  if (d !== 0 || tie === undefined) return d;
  const a = String(x[tie] ?? "");
  const b = String(y[tie] ?? "");
  return a < b ? 1 : a > b ? -1 : 0;
}
