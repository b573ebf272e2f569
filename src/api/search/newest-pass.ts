/**
 * The first pass of an unfiltered, newest-first search read from the data files' time pages
 * (docs/ARCHITECTURE.md "Newest rows by page"): per local file, newest file first, the rows among
 * its newest `want` in the window (src/lake/page-time.ts reads the row groups by their newest
 * time and stops at the first one older than the `want`-th time in hand); a file whose newest row
 * is older than that time is not opened. uuid and session_id are read for the rows that can be in
 * the first `want` (ties included). Files not read this way and the buffer are one DuckDB
 * statement from the `want`-th time on, merged by the search's order. Exact: every row newer than
 * the `want`-th time found lies in a file and a row group whose statistics reach it, and each of
 * those was read.
 */
import { ROW_FILE, ROW_NUMBER, type ScanFile } from "../../lake/index.ts";
import { edgeTime, type PagePassInput, withIds } from "./lookup-pass.ts";

export async function newestFirstPass(p: PagePassInput): Promise<Record<string, unknown>[] | undefined> {
  const { lake, key } = p;
  if (!lake.pagedReads || !p.newestFirst) return undefined;
  const time = p.timeColumn;
  // Files by their newest row, newest first (unknown bounds first): scanPlan with newestFirst.
  const plan = await lake.scanPlan(key, p.scanOptions(p.fromUs, p.toUs, true));
  let found: Record<string, unknown>[] = [];
  let edge = Number.NEGATIVE_INFINITY;
  const rest: ScanFile[] = [];
  for (const f of plan.files) {
    if (f.maxUs !== null && f.maxUs < edge) continue;
    const path = f.file.absolutePath;
    const rows = f.file.hasDeletes ? undefined : lake.newestInWindow(path, key, p.fromUs, p.toUs, p.want);
    if (!rows) {
      rest.push(f);
      continue;
    }
    for (const r of rows) found.push({ [time]: r.t, [ROW_FILE]: path, [ROW_NUMBER]: r.row });
    const nth = edgeTime(found, time, p.want, true);
    if (nth !== undefined) {
      edge = nth;
      found = found.filter((r) => Number(r[time]) >= edge);
    }
  }
  // Other files and the buffer, from the edge on (rows older than it cannot be among the first).
  const from = Math.max(p.fromUs, edge);
  const n = p.params.length;
  const others =
    rest.length > 0 || plan.buffered
      ? await p.query(
          `SELECT ${p.columns} FROM (${plan.sql(rest, true)}) t WHERE ${p.inRange}${p.orderBy} LIMIT ${p.want}`,
          [...p.params.slice(0, n - 2), from, p.toUs],
          false,
        )
      : [];
  const picked = withIds(lake, key, time, found, p.want, p.order);
  if (!picked) return undefined; // a file gone since (compacted away): DuckDB answers the search
  return [...picked, ...others].sort(p.order).slice(0, p.want);
}
