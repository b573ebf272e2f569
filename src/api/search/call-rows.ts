/**
 * The rows of a call view's questions (src/api/search/transaction.ts): this lake's rows of some
 * tables whose session_id or cid is one of some Call-IDs, in a time window. Paged and small local
 * files answer from their pages (docs/ARCHITECTURE.md "Lookups by page": the lookup column's
 * pages find the rows, the row fetch reads the columns asked for); the other files and the buffer
 * are one DuckDB statement per table and column, as before.
 */
import { formatTimestampUs, type TableDef } from "../../core/index.ts";
import { type Lake, resultTooLarge, type ScanFile } from "../../lake/index.ts";
import { MAX_ROWS } from "./lookup-pass.ts";

/** Which columns a call view's question reads: the anchor's times, the correlation ids, or every column. */
export type CallRowsKind = "anchor" | "correlate" | "all";

const CALL_ROW_COLUMNS: Record<CallRowsKind, string> = {
  anchor: `epoch_us("timestamp") AS ts`,
  correlate: "session_id, cid",
  all: "*",
};
export type CallRow = Record<string, unknown> & { __table: string };
/** Rows of one lake, with the definitions of their tables (for `all`) so a coordinator can read them. */
export interface CallRows {
  rows: CallRow[];
  defs?: Record<string, TableDef>;
}

/** Up to this many ids, each is its own `=` statement (docs/STORAGE.md "Time-sliced row groups"). */
const EQUALS_UNION_MAX = 16;
const NARROW = "narrow the time range or select fewer Call-IDs";

/**
 * This lake's rows of `tables` in [fromUs, toUs] whose session_id or cid is in `ids` (also a
 * node's answer to a coordinator, `bufferOnly` when another node of its lake reads the files).
 * Everything read counts against one byte budget for all of it, so a call of millions of messages
 * (or thousands of Call-IDs) is a 413, never the whole window in memory.
 */
export async function localCallRows(
  lake: Lake,
  opts: { timeoutMs: number; maxResultBytes: number },
  q: {
    tables: readonly string[];
    ids: readonly string[];
    fromUs: number;
    toUs: number;
    kind: CallRowsKind;
    bufferOnly?: boolean;
  },
): Promise<CallRows> {
  const { tables, ids, fromUs, toUs, kind, bufferOnly } = q;
  const out: CallRow[] = [];
  const defs: Record<string, TableDef> = {};
  if (ids.length === 0) return { rows: out, defs };
  const columns = CALL_ROW_COLUMNS[kind];
  let left = opts.maxResultBytes;
  const ph = ids.map((_x, i) => `$${i + 3}`).join(", ");
  for (const key of tables) {
    const def = lake.table(key);
    if (!def) continue;
    if (kind === "all") defs[key] = def;
    // One read per column, not `session_id IN … OR cid IN …`: an OR across two columns stays a
    // filter above the Parquet scan, which then reads every row of the window; alone, each
    // condition prunes files and row groups (min/max, bloom filters). A row matched by both comes
    // back twice; callers key rows by uuid.
    for (const column of ["session_id", "cid"]) {
      const lookups = [{ columns: [column], values: ids }];
      const plan = await lake.scanPlan(key, {
        fromUs,
        toUs,
        equals: { column, values: ids },
        lookups,
        ...(bufferOnly ? { files: false as const, buffer: true } : {}),
      });
      const paged = bufferOnly ? undefined : byPages(lake, key, def, plan.files, lookups, fromUs, toUs, kind);
      const rest = paged?.rest ?? plan.files;
      for (const row of paged?.rows ?? []) {
        left -= Buffer.byteLength(JSON.stringify(row));
        if (left < 0) throw resultTooLarge({ maxBytes: opts.maxResultBytes, hint: NARROW }, out.length);
        out.push({ ...row, __table: key });
      }
      if (rest.length === 0 && !plan.buffered) continue;
      const scan = plan.sql(rest, true);
      const inWindow = `"timestamp" BETWEEN make_timestamp($1::BIGINT) AND make_timestamp($2::BIGINT)`;
      // DuckDB checks a row group's bloom filter for `column = value` only, not for an IN list
      // of several: a few ids are one `=` statement each (UNION ALL; a row has one value), so a
      // file written in time slices, whose every row group spans all Call-IDs, is not read whole.
      const sql =
        ids.length <= EQUALS_UNION_MAX
          ? ids
              .map((_x, i) => `SELECT ${columns} FROM (${scan}) t WHERE ${inWindow} AND ${column} = $${i + 3}`)
              .join(" UNION ALL ")
          : `SELECT ${columns} FROM (${scan}) t WHERE ${inWindow} AND ${column} IN (${ph})`;
      const r = await lake.query(sql, [fromUs, toUs, ...ids], {
        timeoutMs: opts.timeoutMs,
        maxResultBytes: Math.max(0, left),
        narrowHint: NARROW,
      });
      left -= r.bytes ?? 0;
      for (const row of r.rows) out.push({ ...row, __table: key });
    }
  }
  return { rows: out, defs };
}

/**
 * The rows of `files` matching the lookup, read from their pages, in the shape DuckDB's statement
 * gives them (`ts` as epoch µs for the anchor; `timestamp` as its text for every column), and the
 * files left to DuckDB; undefined when the lookup matches too much (DuckDB reads every file).
 */
function byPages(
  lake: Lake,
  key: string,
  def: TableDef,
  files: readonly ScanFile[],
  lookups: Array<{ columns: string[]; values: readonly string[] }>,
  fromUs: number,
  toUs: number,
  kind: CallRowsKind,
): { rows: Record<string, unknown>[]; rest: ScanFile[] } | undefined {
  if (!lake.pagedReads) return undefined;
  const wanted =
    kind === "anchor" ? ["timestamp"] : kind === "correlate" ? ["timestamp", "session_id", "cid"] : undefined;
  const rows: Record<string, unknown>[] = [];
  const rest: ScanFile[] = [];
  let matched = 0;
  for (const f of files) {
    const path = f.file.absolutePath;
    const groups = f.file.hasDeletes ? undefined : lake.lookupGroups(path, lookups);
    if (groups === undefined) {
      rest.push(f);
      continue;
    }
    if (groups.length === 0) continue;
    const m = lake.matchRows(path, lookups, groups, MAX_ROWS - matched);
    if ("tooMany" in m) return undefined;
    const got = "rows" in m && m.rows.length > 0 ? lake.rowsByPage(path, key, m.rows, wanted) : [];
    if ("refused" in m || !got) {
      rest.push(f);
      continue;
    }
    matched += m.rows.length;
    for (const r of got) {
      const t = r.timestamp;
      if (typeof t !== "number" || t < fromUs || t > toUs) continue;
      if (kind === "anchor") rows.push({ ts: t });
      else if (kind === "correlate") rows.push({ session_id: r.session_id ?? null, cid: r.cid ?? null });
      else rows.push(asStatementRow(def, r));
    }
  }
  return { rows, rest };
}

/** A row read by page (times as epoch µs) as `SELECT *` gives it: a TIMESTAMP as its text. */
function asStatementRow(def: TableDef, r: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of def.columns) {
    const v = r[c.name];
    out[c.name] = c.type === "timestamp" && typeof v === "number" ? formatTimestampUs(v) : (v ?? null);
  }
  return out;
}
