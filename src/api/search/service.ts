import type { Config } from "../../config/index.ts";
import type { TableDef } from "../../core/index.ts";
import { type Lake, ROW_FILE, ROW_NUMBER, type ScanOptions } from "../../lake/index.ts";
import { hydrate } from "./hydrate.ts";
import { countMatches } from "./count.ts";
import { noLakeError } from "./no-lake.ts";
import { type SearchSettings, tableKeyFor, virtualFieldsOf } from "./tables.ts";
import { buildWhere, type VirtualField, type WhereClause } from "./filters.ts";
import { searchItem } from "./item.ts";
import { compareNewest, likelyFloor, mergeNewest, NewestGroups, provenFloor } from "./newest.ts";
import { lookupFirstPass, type PagePassInput } from "./lookup-pass.ts";
import { newestFirstPass } from "./newest-pass.ts";

/**
 * Search over the HEP tables (docs/API.md "Search results"; docs/ARCHITECTURE.md "Search"):
 * time-pruned scans from the catalog, newest-first top-N strategies, lazy payload hydration.
 */
export interface SearchRequest {
  /** The virtual fields of the filter (a coordinator sends its own to a node, docs/ARCHITECTURE.md "Coordinator over several nodes"); default: the settings' mappings. */
  virtualFields?: ReadonlyMap<string, VirtualField>;
  protoType: number;
  eventType: string;
  filter: Record<string, unknown>;
  fromMs: number;
  toMs: number;
  limit: number;
  /** Rows of the order to skip (a page's cursor, src/api/search/paging.ts); default 0. */
  offset?: number;
  /** Oldest first (`sort=timestamp`) instead of newest first; read with one ordered scan. */
  oldestFirst?: boolean;
  /** false: no count when the page is cut (total is then the lower bound the rows show); default true. */
  count?: boolean;
  /** Only the rows of the buffer, not yet in data files (a node whose lake another node answers for). */
  bufferOnly?: boolean;
}

export interface SearchResult {
  items: Record<string, unknown>[];
  keys: string[];
  limit: number;
  offset: number;
  /** Matches in the window: exact, or a lower bound when `totalExact` is false (src/api/search/count.ts). */
  total: number;
  totalExact: boolean;
  /** Rows after this page exist (always exact: one row more than the page is read). */
  hasMore: boolean;
  table: string | null;
  /** Per item, the order it sorts in: [time in epoch µs, uuid] (a coordinator merges nodes' pages by them). */
  sortKeys?: Array<[number, string]>;
}

export type SearchTarget =
  | { key: string; def: TableDef; where: WhereClause }
  | { key: string | null; def: undefined; where: undefined };

export type LakeSearchConfig = Config["storage"]["lakehouse"]["search"];

/** Filter keys that match session_id exactly (their rows sit together in files sorted by it). */
const CALL_ID_KEYS = new Set(["call_id", "session_id", "sid"]);
const HOUR_MS = 3_600_000;
/** An unfiltered `newest` group of more rows than this many per wanted row is read in two passes (time first). */
const TWO_PASS_ROWS_PER_ROW = 100;
/** An unfiltered `newest` group is first read from where its files should hold this many rows per wanted row. */
const GUESS_ROWS_PER_ROW = 4;

export class SearchService {
  constructor(
    /** Undefined on a coordinator without a lake: no table of its own, its reads go to the nodes. */
    private readonly lake: Lake | undefined,
    private readonly settings: SearchSettings,
    private readonly search: LakeSearchConfig,
    private readonly timeoutMs: number,
    /** coordinator.query.max_result_bytes: the JSON of one query's rows at most (413 beyond). */
    private readonly maxResultBytes = Number.POSITIVE_INFINITY,
  ) {}

  virtualFields(hepid: number, profile: string): Map<string, VirtualField> {
    return virtualFieldsOf(this.settings, hepid, profile);
  }

  /** Columns of a table as the search returns them (`timestamp` as ISO, plus `timestamp_us`). */
  private selectList(def: TableDef): string {
    return def.columns
      .map((c) =>
        c.type === "timestamp" ? `epoch_us("${c.name}") AS "${c.name}"` : `"${c.name.replaceAll('"', '""')}"`,
      )
      .join(", ");
  }

  /**
   * Proto 300: `<schema>__<table>` is ambiguous when either name holds `__` (the regex split of
   * `tableKeyFor` takes the last one), and catalog names fold case: the lake table whose
   * `<schema>__<table>` spells the event type wins, same case first.
   */
  private lineProtocolKey(eventType: string): string | undefined {
    const names = (this.lake?.tables() ?? []).map((d) => ({
      key: `${d.schema}.${d.name}`,
      profile: `${d.schema}__${d.name}`,
    }));
    const want = eventType.toLowerCase();
    return (names.find((n) => n.profile === eventType) ?? names.find((n) => n.profile.toLowerCase() === want))?.key;
  }

  /** The table a search reads and its WHERE clause (filters.ts); no `def` while the table does not exist. */
  target(req: Pick<SearchRequest, "protoType" | "eventType" | "filter" | "virtualFields">): SearchTarget {
    let key = tableKeyFor(req.protoType, req.eventType);
    if (req.protoType === 300 && key !== undefined && !this.lake?.table(key))
      key = this.lineProtocolKey(req.eventType) ?? key;
    const def = key ? this.lake?.table(key) : undefined;
    if (!key || !def) return { key: key ?? null, def: undefined, where: undefined };
    const where = buildWhere({
      protoType: req.protoType,
      eventType: req.eventType || "call",
      filter: req.filter,
      virtualFields:
        req.protoType >= 200
          ? new Map()
          : new Map(req.virtualFields ?? this.virtualFields(req.protoType, req.eventType || "call")),
      columns: new Set(def.columns.map((c) => c.name)),
    });
    return { key, def, where };
  }

  async run(req: SearchRequest): Promise<SearchResult> {
    const target = this.target(req);
    const offset = req.offset ?? 0;
    if (!target.def)
      return {
        items: [],
        keys: [],
        limit: req.limit,
        offset,
        total: 0,
        totalExact: true,
        hasMore: false,
        table: target.key,
      };
    const { key, def, where } = target;
    const lake = this.own();
    const hep = def.columns.some((c) => c.name === "payload") && req.protoType < 200;
    const lazy = this.search.lazy_payload && hep;
    const time = `"${def.timeColumn}"`;
    const filtered = where.applied.length > 0;
    const wide = req.toMs - req.fromMs > HOUR_MS;
    const configured = this.search.lake_topn_strategy;
    // An exact Call-ID leaves few files after pruning by session_id: one statement over them.
    // `newest` serves filtered searches too (extending group by group); `stream` and `chunked`
    // never did (a sample or hour windows of a sparse filter cost more than one ordered scan).
    const callIdOnly = where.sessionIds !== undefined;
    const strategy =
      !wide || callIdOnly || req.oldestFirst || (filtered && configured !== "newest") ? "full" : configured;
    // Late materialisation (sort row ids, then fetch the winners) pays when the winners sit
    // together — the newest rows of a range, the rows of one Call-ID — and costs a second pass
    // over every file when a filter on another column spreads them over the range. A lazy first
    // pass selects narrow columns only: nothing for it to save, and the second scan still costs.
    const clustered =
      !lazy && (!filtered || (where.sessionIds !== undefined && where.applied.every((k) => CALL_ID_KEYS.has(k))));
    // Ties on the time column are broken by uuid, so a repeat returns the same rows.
    const tie = def.columns.some((c) => c.name === "uuid") ? "uuid" : undefined;
    const dir = req.oldestFirst ? "ASC" : "DESC";
    const orderBy = ` ORDER BY ${time} ${dir}${tie ? `, "${tie}" ${dir}` : ""}`;
    const order = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      (req.oldestFirst ? -1 : 1) * compareNewest(a, b, def.timeColumn, tie);
    // The rows before the page, the page and one more: `hasMore` without a count.
    const want = offset + req.limit + 1;
    const n = where.params.length;
    // The first pass also returns each row's file and number there, so the second reads it page
    // by page (docs/ARCHITECTURE.md "Row fetch by page").
    const refs = lazy && lake.pagedReads;
    const scanOptions = (fromUs: number, toUs: number, newestFirst: boolean) => ({
      fromUs,
      toUs,
      ...(refs ? { rowRefs: true } : {}),
      ...(where.sessionIds ? { equals: { column: "session_id", values: where.sessionIds } } : {}),
      ...(where.lookups ? { lookups: where.lookups } : {}),
      ...(req.bufferOnly ? { files: false as const, buffer: true } : {}),
      newestFirst,
    });
    const scanFor = (fromUs: number, toUs: number, newestFirst: boolean) =>
      lake.scanSql(key, scanOptions(fromUs, toUs, newestFirst));
    const inRange = `${time} BETWEEN make_timestamp($${n + 1}::BIGINT) AND make_timestamp($${n + 2}::BIGINT) AND (${where.sql})`;
    /** Rows of `from` (a FROM body) in [fromUs, toUs] under the filter: the newest `limit` (`ordered`), or the first `limit` the scan meets. */
    const selectRows = async (
      from: string,
      fromUs: number,
      toUs: number,
      limit: number,
      ordered: boolean,
      columns: string,
      late = clustered,
    ) => {
      const sql = `SELECT ${columns} FROM (${from}) t WHERE ${inRange}${ordered ? orderBy : ""} LIMIT ${limit}`;
      return (
        await lake.query(sql, [...where.params, fromUs, toUs], {
          timeoutMs: this.timeoutMs,
          lateMaterialization: late,
          ...this.budget(),
        })
      ).rows;
    };
    /**
     * Unfiltered `newest` group: the N-th newest time from the time column alone, then the rows at
     * or after it. In a compacted file (sorted by session_id) the newest rows of a window lie in
     * every row group; ordering by (time, uuid) in one pass decodes uuid and session_id of every
     * row in range (late materialisation: a second scan of them), the time-only pass does not, and
     * the second pass keeps only the few rows at or after that time (docs/ARCHITECTURE.md "Search").
     * Exact: every row of the N newest is at or after the N-th newest time, ties included.
     */
    const newestOfGroup = async (from: string, fromUs: number, limit: number, groupRows: number) => {
      // A group of a few flush files (the newest rows, time-ordered): one statement is cheaper.
      if (filtered || groupRows <= TWO_PASS_ROWS_PER_ROW * limit)
        return selectRows(from, fromUs, req.toMs * 1000, limit, true, columns);
      const sql = `SELECT epoch_us(${time}) AS t FROM (${from}) t WHERE ${inRange} ORDER BY ${time} DESC LIMIT ${limit}`;
      const times = (
        await lake.query(sql, [...where.params, fromUs, req.toMs * 1000], {
          timeoutMs: this.timeoutMs,
          lateMaterialization: false,
        })
      ).rows;
      const nth = times.length >= limit ? Number(times[limit - 1]!.t) : fromUs;
      return selectRows(from, Math.max(fromUs, nth), req.toMs * 1000, limit, true, columns, false);
    };
    /** Newest `limit` rows of a window (`ordered` false: the first `limit` rows the scan meets, newest files first). */
    const windowQuery = async (fromMs: number, toMs: number, limit: number, ordered: boolean, columns: string) =>
      selectRows(
        await scanFor(fromMs * 1000, toMs * 1000, !ordered),
        fromMs * 1000,
        toMs * 1000,
        limit,
        ordered,
        columns,
      );
    // lazy_payload: the first pass reads only what picks the rows (uuid, session_id, time), the
    // second reads every column of exactly those rows — within their time span, their sessions
    // and under the same filter, so the scan decodes payloads of matching rows only.
    const columns = lazy
      ? `"uuid", "session_id", epoch_us(${time}) AS ${time}${refs ? `, ${ROW_FILE}, ${ROW_NUMBER}` : ""}`
      : this.selectList(def);
    let rows: Record<string, unknown>[] = [];
    // Read from the data files' pages (src/api/search/lookup-pass.ts, newest-pass.ts): only point
    // lookups (totals included), or the newest rows of a window without a filter when the
    // strategy is an exact one; undefined when the files cannot be read so.
    const pass: PagePassInput = {
      lake,
      key,
      timeColumn: def.timeColumn,
      where,
      fromUs: req.fromMs * 1000,
      toUs: req.toMs * 1000,
      want,
      newestFirst: !req.oldestFirst,
      order,
      orderBy,
      inRange,
      params: [...where.params, req.fromMs * 1000, req.toMs * 1000],
      columns,
      scanOptions,
      countCap: this.search.count_cap,
      query: async (sql, params, late) =>
        (await lake.query(sql, params, { timeoutMs: this.timeoutMs, lateMaterialization: late })).rows,
    };
    const byPages = refs && !req.bufferOnly ? await lookupFirstPass(pass) : undefined;
    const exact = strategy === "newest" || strategy === "full";
    const newestByPages =
      refs && !req.bufferOnly && !filtered && exact && !req.oldestFirst ? await newestFirstPass(pass) : undefined;
    if (byPages) {
      rows = byPages.rows;
    } else if (newestByPages) {
      rows = newestByPages;
    } else if (strategy === "newest") {
      rows = await this.newestRows(key, { ...req, limit: want }, filtered, scanOptions, newestOfGroup, tie);
    } else if (strategy === "chunked") {
      const step = this.search.lake_chunk_sec * 1000;
      for (let hi = req.toMs; hi >= req.fromMs && rows.length < want; hi -= step) {
        rows.push(...(await windowQuery(Math.max(req.fromMs, hi - step + 1), hi, want - rows.length, true, columns)));
      }
    } else {
      rows = await windowQuery(req.fromMs, req.toMs, want, strategy === "full", columns);
    }
    rows.sort(order);
    const hasMore = rows.length > offset + req.limit;
    let page = rows.slice(offset, offset + req.limit);
    // Fewer rows than asked for: they are every match. Else count (src/api/search/count.ts),
    // beside the second pass: the count is DuckDB's work, a paged file's rows are this thread's.
    const seen = rows.length;
    const counting = !hasMore
      ? Promise.resolve({ total: rows.length, exact: true })
      : byPages
        ? Promise.resolve({ total: byPages.total, exact: byPages.exact })
        : req.count === false
          ? Promise.resolve(undefined)
          : (async () =>
              countMatches({
                plan: await lake.scanPlan(key, scanOptions(req.fromMs * 1000, req.toMs * 1000, false)),
                fromUs: req.fromMs * 1000,
                toUs: req.toMs * 1000,
                filtered,
                inRange,
                params: [...where.params, req.fromMs * 1000, req.toMs * 1000],
                cap: this.search.count_cap,
                query: async (sql, params) =>
                  (await lake.query(sql, params, { timeoutMs: this.timeoutMs, lateMaterialization: false })).rows,
                countFile: (f) => lake.countInWindow(f.file.absolutePath, key, req.fromMs * 1000, req.toMs * 1000),
              }))();
    // A failed second pass must not leave the count's rejection unhandled.
    counting.catch(() => {});
    if (lazy && page.length > 0)
      page = await hydrate({
        lake,
        key,
        def,
        picked: page,
        where,
        scanFor,
        selectList: this.selectList(def),
        timeoutMs: this.timeoutMs,
        budget: this.budget(),
      });
    page.sort(order);
    const items = page.map((r, i) => this.toItem(r, offset + i, def, key));
    const sortKeys = page.map((r): [number, string] => [Number(r[def.timeColumn]), tie ? String(r[tie] ?? "") : ""]);
    const keys = items[0] ? Object.keys(items[0]) : [];
    const counted = await counting;
    const total = Math.max(counted?.total ?? 0, seen);
    return {
      items,
      keys,
      limit: req.limit,
      offset,
      total,
      totalExact: counted?.exact === true && counted.total >= seen,
      hasMore,
      table: key,
      sortKeys,
    };
  }

  /**
   * `newest`: the exact newest `limit` rows of the window without reading every file
   * (src/api/search/newest.ts): the buffer and the files newest first in growing groups, each one
   * ordered `LIMIT` statement, until the N-th newest row so far is proven (no unread file reaches
   * its time). Files and buffer come from one plan, so a flush between statements neither hides
   * nor doubles a row.
   */
  private async newestRows(
    key: string,
    req: SearchRequest,
    filtered: boolean,
    scanOptions: (fromUs: number, toUs: number, newestFirst: boolean) => ScanOptions,
    select: (from: string, fromUs: number, limit: number, groupRows: number) => Promise<Record<string, unknown>[]>,
    tie: string | undefined,
  ): Promise<Record<string, unknown>[]> {
    const lake = this.own();
    const def = lake.table(key)!;
    const fromUs = req.fromMs * 1000;
    const toUs = req.toMs * 1000;
    const plan = await lake.scanPlan(key, scanOptions(fromUs, toUs, true));
    const floor = filtered ? undefined : provenFloor(plan.files, fromUs, toUs, req.limit);
    const groups = new NewestGroups(plan.files, req.limit, floor);
    let best: Record<string, unknown>[] = [];
    for (let first = true; ; first = false) {
      const nth = best.length >= req.limit ? Number(best[req.limit - 1]![def.timeColumn]) : undefined;
      const group = groups.next(nth, best.length);
      if (group.length === 0 && !first) break;
      // Rows older than the proven bound cannot be among the newest N: the scan drops them early.
      const lower = Math.max(fromUs, floor ?? fromUs, nth ?? fromUs);
      const groupRows = group.reduce((a, f) => a + f.timedRows, 0);
      const sql = plan.sql(group, first);
      // Unfiltered: first only the latest stretch that should hold a few times N rows (row groups
      // are time slices, so DuckDB reads one or two of them); N rows there are the newest N.
      const guess = filtered ? lower : likelyFloor(group, lower, toUs, GUESS_ROWS_PER_ROW * req.limit);
      let rows = guess > lower ? await select(sql, guess, req.limit, groupRows) : [];
      if (rows.length < req.limit) rows = await select(sql, lower, req.limit, groupRows);
      best = mergeNewest(best, rows, req.limit, def.timeColumn, tie);
      if (group.length === 0) break;
    }
    return best;
  }

  /** This process's lake; a search reaches a table only when it has one (`target`). */
  private own(): Lake {
    if (!this.lake) throw noLakeError("this search");
    return this.lake;
  }

  /** The byte budget of a search query (docs/ARCHITECTURE.md "Query path"). */
  private budget() {
    return {
      maxResultBytes: this.maxResultBytes,
      narrowHint: "send a lower param.limit, a narrower time range or a more selective filter",
    };
  }

  /** A row as a search answer item (item.ts). */
  toItem(r: Record<string, unknown>, i: number, def: TableDef, key: string): Record<string, unknown> {
    return searchItem(this.settings, r, i, def, key);
  }
}
