/**
 * The first pass of a search whose every condition is a point lookup (Call-ID, caller, callee,
 * an address; WhereClause.lookupsOnly), answered from the pages of the data files
 * (docs/ARCHITECTURE.md "Lookups by page"):
 *
 * 1. The scan plan (time and bloom pruning) lists the files; per paged file, the row groups its
 *    bloom filters keep.
 * 2. In each, the lookup columns of those groups give the matching rows' numbers
 *    (src/lake/page-match.ts), then the time of those rows alone gives the window's matches. A
 *    file wholly inside the window whose rows all come after the order's `want`-th so far is
 *    counted without reading their times. The last files in the order (mostly only counted) are
 *    matched on the row fetch's worker while this thread matches the first ones.
 * 3. The rows of the order's first `want` (ties included) get uuid and session_id too.
 * 4. Files not paged (a flush's, one with deletes) and the buffer are one DuckDB statement, as
 *    before, and its rows merge in.
 *
 * Every match in the window is found, so the total is exact without a second statement. A lookup
 * that matches too much (a busy proxy's address) is left to DuckDB: more than MAX_GROUPS row groups
 * to read or more than MAX_ROWS rows matched, and this answers undefined before anything is lost.
 */
import {
  ROW_FILE,
  ROW_NUMBER,
  type Lake,
  type MatchResult,
  type ScanFile,
  type ScanOptions,
} from "../../lake/index.ts";
import { countMatches } from "./count.ts";
import type { WhereClause } from "./filters.ts";

/** Row groups the pages are read for at most, over the whole window (each costs about 0.2 ms). */
export const MAX_GROUPS = 1024;
/** Matched rows at most (their times are read one by one). */
export const MAX_ROWS = 20_000;

/** What a first pass read from the data files' pages needs of the search (this file and newest-pass.ts). */
export interface PagePassInput {
  lake: Lake;
  key: string;
  timeColumn: string;
  where: WhereClause;
  fromUs: number;
  toUs: number;
  /** Rows of the order wanted (offset + page + one). */
  want: number;
  /** Newest first (else oldest first). */
  newestFirst: boolean;
  /** The search's order of rows (newest or oldest first, ties by uuid) and its SQL. */
  order: (a: Record<string, unknown>, b: Record<string, unknown>) => number;
  orderBy: string;
  /** WHERE of the search (window and filter), with `params`. */
  inRange: string;
  params: Array<string | number>;
  /** The first pass's select list (uuid, session_id, time, row file and number). */
  columns: string;
  scanOptions: (fromUs: number, toUs: number, newestFirst: boolean) => ScanOptions;
  countCap: number;
  query: (sql: string, params: Array<string | number>, late: boolean) => Promise<Record<string, unknown>[]>;
}

export interface LookupPass {
  rows: Record<string, unknown>[];
  total: number;
  exact: boolean;
}

export async function lookupFirstPass(p: PagePassInput): Promise<LookupPass | undefined> {
  const { lake, key, where } = p;
  const lookups = where.lookups;
  if (!where.lookupsOnly || !lookups || !lake.pagedReads) return undefined;
  const plan = await lake.scanPlan(key, p.scanOptions(p.fromUs, p.toUs, true));
  const paged: Array<{ file: ScanFile; groups: number[] }> = [];
  const rest: ScanFile[] = [];
  let groups = 0;
  for (const f of plan.files) {
    const g = f.file.hasDeletes ? undefined : lake.lookupGroups(f.file.absolutePath, lookups);
    if (g === undefined) rest.push(f);
    else if (g.length > 0) paged.push({ file: f, groups: g });
    groups += g?.length ?? 0;
  }
  if (groups > MAX_GROUPS) return undefined;
  const time = p.timeColumn;
  // Files in the order's direction: once `want` rows are in hand, a file whose every row comes
  // after the edge row's time cannot hold one of the first `want`, and a file wholly inside the
  // window counts its matches without their times.
  const newestFirst = p.newestFirst;
  if (!newestFirst) paged.sort((a, b) => (a.file.minUs ?? -Infinity) - (b.file.minUs ?? -Infinity));
  // The older files (the last in the order) are matched on the row fetch's worker meanwhile; most
  // of them are only counted. Their matches are taken in the same order as this thread's. Every
  // file's first reads are advised before any is matched, each thread its own: on a cold page
  // cache they come off the disk together.
  const mine = lake.matchesAside ? ownShare(paged) : paged.length;
  const share = (from: number, to: number) =>
    paged.slice(from, to).map((p) => ({ path: p.file.file.absolutePath, groups: p.groups }));
  const asideFiles = share(mine, paged.length);
  if (asideFiles.length > 0) lake.adviseMatch(asideFiles, lookups, true);
  const aside = asideFiles.length > 0 ? lake.matchRowsAside(asideFiles, lookups, MAX_ROWS) : undefined;
  let theirs: MatchResult[] = [];
  lake.adviseMatch(share(0, mine), lookups);
  // This thread's files matched first; then the times the loop below will read advised at once:
  // those of files partly outside the window, and of the first files until `want` rows.
  const results: MatchResult[] = [];
  let mineMatched = 0;
  for (let i = 0; i < mine; i++) {
    const m = lake.matchRows(paged[i]!.file.file.absolutePath, lookups, paged[i]!.groups, MAX_ROWS - mineMatched);
    if ("tooMany" in m) return undefined;
    if ("rows" in m) mineMatched += m.rows.length;
    results.push(m);
  }
  let ahead = 0;
  const timesAhead: Array<{ path: string; rows: number[] }> = [];
  results.forEach((m, i) => {
    const f = paged[i]!.file;
    const partly = f.minUs === null || f.maxUs === null || f.minUs < p.fromUs || f.maxUs > p.toUs;
    if (!("rows" in m) || m.rows.length === 0 || (ahead >= p.want && !partly)) return;
    timesAhead.push({ path: f.file.absolutePath, rows: m.rows });
    ahead += m.rows.length;
  });
  lake.adviseRows(key, timesAhead, [time]);
  const found: Record<string, unknown>[] = [];
  let counted = 0;
  let matched = 0;
  let edge: number | undefined;
  for (let i = 0; i < paged.length; i++) {
    if (i === mine && aside) theirs = await aside;
    const { file } = paged[i]!;
    const path = file.file.absolutePath;
    const m = i < mine ? results[i]! : theirs[i - mine]!;
    if ("tooMany" in m || ("rows" in m && matched + m.rows.length > MAX_ROWS)) return undefined;
    if ("refused" in m) {
      rest.push(file);
      continue;
    }
    if (m.rows.length === 0) continue;
    matched += m.rows.length;
    const inside = file.minUs !== null && file.maxUs !== null && file.minUs >= p.fromUs && file.maxUs <= p.toUs;
    const beyond =
      edge !== undefined &&
      (newestFirst ? file.maxUs !== null && file.maxUs < edge : file.minUs !== null && file.minUs > edge);
    if (inside && beyond) {
      counted += m.rows.length;
      continue;
    }
    const times = lake.rowsByPage(path, key, m.rows, [time]);
    if (!times) {
      rest.push(file);
      continue;
    }
    m.rows.forEach((n, i) => {
      const t = times[i]![time];
      if (typeof t === "number" && t >= p.fromUs && t <= p.toUs)
        found.push({ [time]: t, [ROW_FILE]: path, [ROW_NUMBER]: n });
    });
    edge = edgeTime(found, time, p.want, newestFirst);
  }
  // Files and buffer DuckDB reads: the order's first `want` rows, and their count when cut there.
  const others =
    rest.length > 0 || plan.buffered
      ? await p.query(
          `SELECT ${p.columns} FROM (${plan.sql(rest, true)}) t WHERE ${p.inRange}${p.orderBy} LIMIT ${p.want}`,
          p.params,
          false,
        )
      : [];
  const otherCount =
    others.length < p.want
      ? { total: others.length, exact: true }
      : await countMatches({
          plan: { files: rest, buffered: plan.buffered, sql: plan.sql },
          fromUs: p.fromUs,
          toUs: p.toUs,
          filtered: true,
          inRange: p.inRange,
          params: p.params,
          cap: p.countCap,
          query: (sql, params) => p.query(sql, params, false),
        });
  const picked = withIds(lake, key, time, found, p.want, p.order);
  // A file gone since its rows were matched (compacted away): DuckDB answers the whole search.
  if (!picked) return undefined;
  const rows = [...picked, ...others].sort(p.order).slice(0, p.want);
  const total = counted + found.length + (otherCount?.total ?? others.length);
  const exact = otherCount?.exact === true;
  return total > p.countCap ? { rows, total: p.countCap, exact: false } : { rows, total, exact };
}

/**
 * How many of the files, in the order, this thread matches: the rest, the last ones, hold at most
 * half of the row groups to read (each costs about the same), and go to the worker.
 */
export function ownShare(files: ReadonlyArray<{ groups: readonly number[] }>): number {
  const total = files.reduce((a, f) => a + f.groups.length, 0);
  let theirs = 0;
  let i = files.length;
  while (i > 1 && 2 * (theirs + files[i - 1]!.groups.length) <= total) theirs += files[--i]!.groups.length;
  return i;
}

/** The time of the `want`-th row of `found` in the order; undefined while there are fewer. */
export function edgeTime(
  found: Record<string, unknown>[],
  time: string,
  want: number,
  newestFirst: boolean,
): number | undefined {
  if (found.length < want) return undefined;
  const ts = found.map((r) => Number(r[time])).sort((a, b) => (newestFirst ? b - a : a - b));
  return ts[want - 1];
}

/**
 * uuid and session_id of the rows that may be among the order's first `want`: every row whose
 * time is at or before (in the order) the `want`-th row's, ties at that time included.
 */
export function withIds(
  lake: Lake,
  key: string,
  time: string,
  found: Record<string, unknown>[],
  want: number,
  order: PagePassInput["order"],
): Record<string, unknown>[] | undefined {
  // Order by time alone first (uuid unknown yet: compare as equal).
  const byTime = [...found].sort((a, b) => order({ [time]: a[time] }, { [time]: b[time] }));
  const last = byTime[Math.min(want, byTime.length) - 1];
  if (!last) return [];
  const edge = last[time];
  const keep = byTime.filter((r, i) => i < want || r[time] === edge);
  const byFile = new Map<string, Record<string, unknown>[]>();
  for (const r of keep) {
    const f = String(r[ROW_FILE]);
    const list = byFile.get(f);
    if (list) list.push(r);
    else byFile.set(f, [r]);
  }
  // uuid and session_id of every file's rows advised before any is read.
  lake.adviseRows(
    key,
    [...byFile].map(([path, rows]) => ({ path, rows: rows.map((r) => Number(r[ROW_NUMBER])) })),
    ["uuid", "session_id"],
  );
  const out: Record<string, unknown>[] = [];
  for (const [file, rows] of byFile) {
    const ids = lake.rowsByPage(
      file,
      key,
      rows.map((r) => Number(r[ROW_NUMBER])),
      ["uuid", "session_id"],
    );
    if (!ids) return undefined;
    rows.forEach((r, i) => out.push({ uuid: ids[i]!.uuid ?? null, session_id: ids[i]!.session_id ?? null, ...r }));
  }
  return out;
}
