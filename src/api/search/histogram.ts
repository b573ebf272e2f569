import {
  AppError,
  bucketGrid,
  bucketLabel,
  chooseBucketWidth,
  MAX_BUCKETS,
  parseBucketWidth,
  type BucketGrid,
  type TableDef,
} from "../../core/index.ts";
import type { Lake } from "../../lake/index.ts";
import type { SearchRequest, SearchService } from "./service.ts";

/**
 * Events over time (docs/HISTOGRAM.md): the number of rows per time bucket over the WHOLE window
 * of a search, under the same table choice and filter (SearchService.target, filters.ts), counted
 * by one `GROUP BY` statement in the lake, so the counts are exact whatever the search's limit.
 */
export const GROUP_BY = ["none", "method", "status_class"] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export interface HistogramRequest extends Omit<SearchRequest, "limit"> {
  groupBy: GroupBy;
  /** `30s`, `5m`, `1h`, `1d`; absent: chosen from the range. */
  interval?: string;
  /** Minutes east of UTC the buckets are aligned in (1d buckets start at local midnight). */
  utcOffsetMin?: number;
}

export interface HistogramBucket {
  /** Bucket start, epoch ms. */
  start_ms: number;
  count: number;
  /** Count per group (groups with no row in the bucket are left out). */
  groups: Record<string, number>;
}

export interface Histogram {
  window: { from_ms: number; to_ms: number };
  interval: string;
  interval_ms: number;
  group_by: GroupBy;
  total: number;
  /** Every group seen, in display order, with its total over the window. */
  groups: Array<{ key: string; total: number }>;
  buckets: HistogramBucket[];
  table: string | null;
}

/** Groups beyond this many (the largest first) are counted together as `other`. */
export const MAX_GROUPS = 12;
const OTHER = "other";
const CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx", "6xx"];

const has = (def: TableDef, c: string) => def.columns.some((x) => x.name === c);

/**
 * The SQL expression of a row's group. A SIP request has a method, a response a response code
 * (src/ingest/hep/tables.ts): `method` puts a request under its method and a response under its
 * class (so the series add up to every row); `status_class` puts every request under `request`.
 * Other HEP tables have neither and fall under their `event` (the protocol name, e.g. RTCP).
 */
function groupExpr(def: TableDef, groupBy: GroupBy): string {
  if (groupBy === "none") return "NULL";
  if (!has(def, "method") || !has(def, "response_code")) {
    throw new AppError(
      "VALIDATION",
      `group_by ${groupBy}: table ${def.schema}.${def.name} has no SIP method or response code; use group_by none`,
      { details: { fields: ["group_by"] } },
    );
  }
  const cls = `CAST(response_code // 100 AS VARCHAR) || 'xx'`;
  const isResponse = "response_code BETWEEN 100 AND 699";
  const isRequest = "(method IS NOT NULL AND method <> '')";
  const fallback = has(def, "event") ? `COALESCE(NULLIF(event, ''), '${OTHER}')` : `'${OTHER}'`;
  return groupBy === "method"
    ? `CASE WHEN ${isRequest} THEN method WHEN ${isResponse} THEN ${cls} ELSE ${fallback} END`
    : `CASE WHEN ${isResponse} THEN ${cls} WHEN ${isRequest} THEN 'request' ELSE ${fallback} END`;
}

/** Display order: requests (largest first), then response classes in order, then the rest. */
function orderGroups(totals: Map<string, number>, groupBy: GroupBy): string[] {
  const rank = (k: string) =>
    k === "request"
      ? 0
      : CLASSES.includes(k)
        ? 1 + CLASSES.indexOf(k)
        : k === OTHER
          ? 99
          : groupBy === "method"
            ? 0
            : 50;
  return [...totals.keys()].sort((a, b) => rank(a) - rank(b) || totals.get(b)! - totals.get(a)! || a.localeCompare(b));
}

/** Keeps the MAX_GROUPS - 1 largest groups (response classes always), the rest become `other`. */
function foldGroups(totals: Map<string, number>): Map<string, string> {
  const names = [...totals.keys()];
  const keep = new Set(names.filter((k) => CLASSES.includes(k) || k === "request"));
  const rest = names.filter((k) => !keep.has(k)).sort((a, b) => totals.get(b)! - totals.get(a)!);
  const room = names.length > MAX_GROUPS ? MAX_GROUPS - 1 - keep.size : rest.length;
  rest.slice(0, Math.max(0, room)).forEach((k) => keep.add(k));
  return new Map(names.map((k) => [k, keep.has(k) ? k : OTHER]));
}

/** Rows of bucket `b` in group `g` (null: group_by none). */
export interface HistogramCell {
  b: number;
  g: string | null;
  n: number;
}

export interface HistogramCells {
  cells: HistogramCell[];
  /** The lake table counted; null when it does not exist (yet). */
  table: string | null;
}

export class HistogramService {
  constructor(
    /** Undefined on a coordinator without a lake: the cells come from coordinator.nodes only. */
    readonly lake: Lake | undefined,
    private readonly search: SearchService,
    private readonly timeoutMs: number,
  ) {}

  /** The buckets of a request: the explicit `interval` checked, else a width chosen from the range. */
  static grid(req: Pick<HistogramRequest, "fromMs" | "toMs" | "interval" | "utcOffsetMin">): BucketGrid {
    let w = chooseBucketWidth(req.toMs - req.fromMs);
    if (req.interval !== undefined) {
      const p = parseBucketWidth(req.interval);
      if (!p.ok) throw new AppError("VALIDATION", `interval: ${p.detail}`, { details: { fields: ["interval"] } });
      w = p.value;
    }
    const grid = bucketGrid(req.fromMs, req.toMs, w.ms, (req.utcOffsetMin ?? 0) * 60_000);
    if (grid.count > MAX_BUCKETS) {
      throw new AppError(
        "VALIDATION",
        `interval: ${w.label} over this range gives ${grid.count} buckets, at most ${MAX_BUCKETS}: choose a wider interval or leave it out`,
        {
          details: { fields: ["interval"] },
        },
      );
    }
    return grid;
  }

  async run(req: HistogramRequest): Promise<Histogram> {
    const grid = HistogramService.grid(req);
    return HistogramService.assemble(req, grid, await this.cells(req, grid));
  }

  /**
   * This lake's counts per (bucket, group) before the groups are folded: what a node answers a
   * coordinator, whose sum over nodes is the histogram of one lake holding every row
   * (docs/ARCHITECTURE.md "Reads over several nodes").
   */
  async cells(req: HistogramRequest, grid = HistogramService.grid(req)): Promise<HistogramCells> {
    const target = this.search.target(req);
    const cells: HistogramCell[] = [];
    // target() finds a table only in a lake of this process's own.
    const lake = this.lake;
    if (target.def && lake) {
      const { key, def, where } = target;
      const time = `"${def.timeColumn}"`;
      const n = where.params.length;
      const fromUs = req.fromMs * 1000;
      const toUs = req.toMs * 1000;
      const scan = await lake.scanSql(key, {
        fromUs,
        toUs,
        ...(where.sessionIds ? { equals: { column: "session_id", values: where.sessionIds } } : {}),
        ...(req.bufferOnly ? { files: false as const, buffer: true } : {}),
      });
      // The same window test as the search (service.ts `inRange`): [from, to] inclusive, in µs.
      const sql =
        `SELECT LEAST($${n + 5}::BIGINT, (epoch_us(${time}) - $${n + 3}::BIGINT) // $${n + 4}::BIGINT) AS b, ${groupExpr(def, req.groupBy)} AS g, count(*) AS n ` +
        `FROM (${scan}) t WHERE ${time} BETWEEN make_timestamp($${n + 1}::BIGINT) AND make_timestamp($${n + 2}::BIGINT) AND (${where.sql}) GROUP BY ALL`;
      const r = await lake.query(
        sql,
        [...where.params, fromUs, toUs, grid.originMs * 1000, grid.widthMs * 1000, grid.count - 1],
        {
          timeoutMs: this.timeoutMs,
          narrowHint: "narrow the time range or the filter",
        },
      );
      for (const row of r.rows)
        cells.push({
          b: Number(row.b),
          g: row.g === null || row.g === undefined ? null : String(row.g),
          n: Number(row.n),
        });
    }
    return { cells, table: target.key };
  }

  /** The histogram of `cells` (of one lake, or summed over nodes: counts add, then groups fold). */
  static assemble(req: HistogramRequest, grid: BucketGrid, parts: HistogramCells): Histogram {
    const { cells } = parts;
    const totals = new Map<string, number>();
    for (const c of cells) if (c.g !== null) totals.set(c.g, (totals.get(c.g) ?? 0) + c.n);
    const fold = foldGroups(totals);
    const buckets: HistogramBucket[] = Array.from({ length: grid.count }, (_x, i) => ({
      start_ms: grid.originMs + i * grid.widthMs,
      count: 0,
      groups: {},
    }));
    const folded = new Map<string, number>();
    let total = 0;
    for (const c of cells) {
      const bucket = buckets[c.b];
      if (!bucket) throw new AppError("INTERNAL", `histogram bucket ${c.b} outside 0..${grid.count - 1}`);
      bucket.count += c.n;
      total += c.n;
      if (c.g === null) continue;
      const k = fold.get(c.g)!;
      bucket.groups[k] = (bucket.groups[k] ?? 0) + c.n;
      folded.set(k, (folded.get(k) ?? 0) + c.n);
    }
    return {
      window: { from_ms: req.fromMs, to_ms: req.toMs },
      interval: bucketLabel(grid.widthMs),
      interval_ms: grid.widthMs,
      group_by: req.groupBy,
      total,
      groups: orderGroups(folded, req.groupBy).map((key) => ({ key, total: folded.get(key)! })),
      buckets,
      table: parts.table,
    };
  }
}
