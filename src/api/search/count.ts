import { AppError } from "../../core/index.ts";
import type { ScanFile, ScanPlan } from "../../lake/index.ts";

/**
 * `meta.pagination.total` of a search: how many rows of the window match (docs/ARCHITECTURE.md
 * "Totals and paging of the search lists"). Run only when the page did not hold every match.
 *
 * - No filter: exact, mostly from the catalog's statistics. Every row with a time of a file lying
 *   wholly inside the window matches, so those files are counted by their row counts. A local
 *   file crossing an edge of the window is counted from its row groups' statistics and the time
 *   pages of the row groups across the edge (src/lake/page-time.ts); one `COUNT(*)` reads the
 *   time column of the other files crossing an edge and the buffer.
 * - A filter: `COUNT(*)` over the same filtered scan the search reads, stopped after `cap + 1`
 *   matches: more than `cap` is answered as a lower bound (`exact: false`).
 * - A count past the query time-out is a lower bound too (undefined here): the rows the search
 *   found are answered rather than a TIMEOUT for a number.
 */
export interface CountInput {
  /** Files and buffer of the window (Lake.scanPlan with the search's own pruning). */
  plan: ScanPlan;
  fromUs: number;
  toUs: number;
  /** True when the search has conditions besides the window. */
  filtered: boolean;
  /** WHERE of the search: the window and the filter, with `params` bound. */
  inRange: string;
  params: Array<string | number>;
  cap: number;
  query: (sql: string, params: Array<string | number>) => Promise<Record<string, unknown>[]>;
  /** A file's rows in the window counted without DuckDB (Lake.countInWindow); undefined: not that way. */
  countFile?: (f: ScanFile) => number | undefined;
}

export interface Count {
  total: number;
  exact: boolean;
}

/** Files whose every timed row is inside [fromUs, toUs] (counted from statistics) and the rest. */
export function splitByWindow<F extends Pick<ScanFile, "minUs" | "maxUs" | "timedRows">>(
  files: readonly F[],
  fromUs: number,
  toUs: number,
): { insideRows: number; edge: F[] } {
  let insideRows = 0;
  const edge: F[] = [];
  for (const f of files) {
    if (f.minUs !== null && f.maxUs !== null && f.minUs >= fromUs && f.maxUs <= toUs) insideRows += f.timedRows;
    else edge.push(f);
  }
  return { insideRows, edge };
}

export async function countMatches(c: CountInput): Promise<Count | undefined> {
  try {
    if (!c.filtered) {
      const { insideRows, edge } = splitByWindow(c.plan.files, c.fromUs, c.toUs);
      // Files across an edge: from their row groups' statistics and edge pages where they can be.
      let counted = 0;
      const rest: ScanFile[] = [];
      for (const f of edge) {
        const n = f.file.hasDeletes ? undefined : c.countFile?.(f);
        if (n === undefined) rest.push(f);
        else counted += n;
      }
      const rows =
        rest.length > 0 || c.plan.buffered
          ? await c.query(`SELECT count(*) AS n FROM (${c.plan.sql(rest, true)}) t WHERE ${c.inRange}`, c.params)
          : [];
      return { total: insideRows + counted + Number(rows[0]?.n ?? 0), exact: true };
    }
    const sql = `SELECT count(*) AS n FROM (SELECT 1 FROM (${c.plan.sql(c.plan.files, true)}) t WHERE ${c.inRange} LIMIT ${c.cap + 1}) c`;
    const n = Number((await c.query(sql, c.params))[0]?.n ?? 0);
    return n > c.cap ? { total: c.cap, exact: false } : { total: n, exact: true };
  } catch (e) {
    if (e instanceof AppError && e.code === "TIMEOUT") return undefined;
    throw e;
  }
}
