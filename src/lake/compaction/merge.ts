import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { TableDef } from "../../core/index.ts";
import { parseTimestampMicros } from "../catalog/index.ts";
import type { LiveDataFile, NewDataFile, TableInfo } from "../catalog-port.ts";
import { filesSelect } from "../query/views.ts";
import { DUCKDB_TYPE, ident, literal } from "../sql.ts";
import { sortKey, writeDataFile } from "../writer/data-file.ts";
import type { CompactionDb } from "./duck.ts";

/**
 * One merge: source files → one Parquet file sorted by the table's sort key (sortKey: for HEP the
 * 5-minute bucket, session_id, timestamp), with bounded memory (docs/ARCHITECTURE.md "Maintenance").
 *
 * An ORDER BY over the whole merge makes DuckDB sort every row of it: 54 MB of HEP Parquet
 * (720 MB uncompressed) took the process to 2 GB at a 4 GB limit, and 540 MB ran out of memory at
 * 256 MB even with spilling. So a merge bigger than `windowBytes` (uncompressed) is cut into
 * windows, consecutive ranges of the sort key found from a reservoir sample of the keys: each window
 * is sorted on its own into a temporary file, and the window files are then copied, in order, into
 * the output by one streaming COPY (`preserve_insertion_order`, CompactionDb). Concatenated
 * windows are the sorted whole, because every key of window i sorts before every key of window i+1.
 * Each window reads only the files whose time range reaches it (catalog statistics).
 */
export interface MergeInput {
  def: TableDef;
  info: TableInfo;
  files: readonly LiveDataFile[];
  /** Sum of the files' uncompressed Parquet bytes (footers). */
  uncompressedBytes: number;
  dataPath: string;
  /** Output path relative to the data path (catalog.newDataFilePath). */
  relPath: string;
  rowGroupRows: number;
  partitionValue?: string;
  /** Largest uncompressed size of the rows one window sorts. */
  windowBytes: number;
}

/** Rows sampled per window to place the window boundaries. */
const SAMPLE_PER_WINDOW = 64;
const MAX_SAMPLE = 100_000;

interface KeyTerm {
  sql: string;
  type: string;
}

/** The merged file, and how many windows were sorted one by one (1: one ORDER BY over the whole merge). */
export interface MergeResult {
  file: NewDataFile;
  windows: number;
}

export async function mergeFiles(db: CompactionDb, m: MergeInput): Promise<MergeResult> {
  const run = (sql: string) => db.run(sql);
  const read = (sql: string) => db.read(sql);
  const target = {
    def: m.def,
    info: m.info,
    dataPath: m.dataPath,
    relPath: m.relPath,
    rowGroupRows: m.rowGroupRows,
    ...(m.partitionValue !== undefined ? { partitionValue: m.partitionValue } : {}),
  };
  const source = (files: readonly LiveDataFile[]) => filesSelect(m.def, files).join(" UNION ALL ");
  const windows = m.def.sortBy.length === 0 ? 1 : Math.ceil(m.uncompressedBytes / Math.max(1, m.windowBytes));
  const terms = keyTerms(m.def);
  const splits = windows > 1 ? await splitPoints(db, terms, source(m.files), m.files, windows) : [];
  if (splits.length === 0) return { file: await writeDataFile(run, read, source(m.files), target), windows: 1 };
  const cols = m.def.columns.map((c) => ident(c.name)).join(", ");
  const timed = timeBounds(m.def, m.files);
  const tmp: string[] = [];
  try {
    for (let i = 0; i <= splits.length; i++) {
      const lo = splits[i - 1];
      const hi = splits[i];
      const range = timed?.(lo, hi);
      const files = range ? m.files.filter((f) => overlaps(m.def, f, range)) : m.files;
      const path = join(db.tmpDir, `merge-${randomUUID()}.parquet`);
      tmp.push(path);
      const where = [range?.sql, windowPredicate(terms, lo, hi)].filter((x) => x !== undefined).join(" AND ");
      const body = files.length === 0 ? `SELECT ${cols} FROM (${source(m.files)}) WHERE false` : `SELECT ${cols} FROM (${source(files)}) WHERE ${where || "true"}`;
      await db.run(`COPY (${body} ORDER BY ${terms.map((t) => t.sql).join(", ")}) TO ${literal(path)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE ${m.rowGroupRows})`);
    }
    const file = await writeDataFile(run, read, `SELECT * FROM read_parquet([${tmp.map(literal).join(", ")}])`, { ...target, sorted: false });
    return { file, windows: tmp.length };
  } finally {
    for (const p of tmp) rmSync(p, { force: true });
  }
}

/** The sort key's terms with the DuckDB type of each (for the boundary literals). */
function keyTerms(def: TableDef): KeyTerm[] {
  const sqls = sortKey(def);
  const offset = sqls.length - def.sortBy.length; // 1 when the time bucket leads
  return sqls.map((sql, i) => {
    if (i < offset) return { sql, type: "BIGINT" };
    const col = def.columns.find((c) => c.name === def.sortBy[i - offset]);
    return { sql, type: col ? DUCKDB_TYPE[col.type] : "VARCHAR" };
  });
}

/** A window boundary: the key's values as text (DuckDB's CAST to VARCHAR), null for NULL. */
type Split = Array<string | null>;

/**
 * `windows - 1` boundaries at even quantiles of a reservoir sample of the keys (only the key
 * columns are read). Equal boundaries are dropped (their window would be empty).
 */
async function splitPoints(db: CompactionDb, terms: KeyTerm[], source: string, files: readonly LiveDataFile[], windows: number): Promise<Split[]> {
  const rows = files.reduce((s, f) => s + f.recordCount, 0);
  const sample = Math.min(rows, MAX_SAMPLE, Math.max(1024, windows * SAMPLE_PER_WINDOW));
  if (sample < 2) return [];
  const ks = terms.map((_, i) => `k${i}`);
  const positions = Array.from({ length: windows - 1 }, (_, i) => Math.floor(((i + 1) * sample) / windows));
  const out = await db.read(
    `WITH s AS (SELECT ${terms.map((t, i) => `${t.sql} AS k${i}`).join(", ")} FROM (${source}) USING SAMPLE reservoir(${sample} ROWS) REPEATABLE (7)),
     o AS (SELECT *, row_number() OVER (ORDER BY ${ks.join(", ")}) - 1 AS rn FROM s)
     SELECT ${ks.map((k, i) => `CAST(${k} AS VARCHAR) AS v${i}`).join(", ")} FROM o WHERE rn IN (${positions.join(", ")}) ORDER BY rn`,
  );
  const splits: Split[] = [];
  for (const r of out) {
    const s = terms.map((_, i) => (r[`v${i}`] === null || r[`v${i}`] === undefined ? null : String(r[`v${i}`])));
    const prev = splits[splits.length - 1];
    if (!prev || prev.some((v, i) => v !== s[i])) splits.push(s);
  }
  return splits;
}

const rowOf = (terms: KeyTerm[], s: Split) => `row(${terms.map((t, i) => `CAST(${s[i] === null ? "NULL" : literal(s[i]!)} AS ${t.type})`).join(", ")})`;

/**
 * lo ≤ key < hi as DuckDB row comparisons, which order NULL last like ORDER BY. Written as a CASE:
 * DuckDB's optimizer turns `k >= lo AND k < hi` into a BETWEEN, which it refuses for STRUCT values.
 */
function windowPredicate(terms: KeyTerm[], lo: Split | undefined, hi: Split | undefined): string | undefined {
  const key = `row(${terms.map((t) => t.sql).join(", ")})`;
  const ge = lo ? `${key} >= ${rowOf(terms, lo)}` : undefined;
  const lt = hi ? `${key} < ${rowOf(terms, hi)}` : undefined;
  if (ge && lt) return `CASE WHEN ${lt} THEN ${ge} ELSE false END`;
  return ge ?? lt;
}

interface TimeRange {
  /** µs, inclusive / exclusive; undefined = open. */
  fromUs?: number;
  toUs?: number;
  /** The same as a filter DuckDB pushes into the Parquet reader (row-group statistics). */
  sql: string;
}

/**
 * When the sort key starts with the time column or its bucket and no file has a NULL time, each
 * window covers a time range: a filter on it prunes row groups and the window reads only the files
 * reaching it. Undefined otherwise (every window reads every file).
 */
function timeBounds(def: TableDef, files: readonly LiveDataFile[]): ((lo: Split | undefined, hi: Split | undefined) => TimeRange | undefined) | undefined {
  const time = def.columns.find((c) => c.name === def.timeColumn);
  if (time?.type !== "timestamp") return undefined;
  if (files.some((f) => (f.columnStats[def.timeColumn]?.nullCount ?? 1) > 0)) return undefined;
  const ts = ident(def.timeColumn);
  const bucketUs = def.clusterSec !== undefined && def.clusterSec > 0 ? Math.round(def.clusterSec * 1_000_000) : undefined;
  if (bucketUs === undefined && def.sortBy[0] !== def.timeColumn) return undefined;
  const at = (s: Split | undefined, next: boolean): number | undefined => {
    const v = s?.[0];
    if (v === null || v === undefined) return undefined;
    if (bucketUs !== undefined) return (Number(v) + (next ? 1 : 0)) * bucketUs;
    const us = parseTimestampMicros(v);
    return us === null ? undefined : Number(us) + (next ? 1 : 0);
  };
  return (lo, hi) => {
    const fromUs = at(lo, false);
    const toUs = at(hi, true);
    const parts = [fromUs !== undefined ? `${ts} >= make_timestamp(${fromUs})` : undefined, toUs !== undefined ? `${ts} < make_timestamp(${toUs})` : undefined].filter((x) => x !== undefined);
    if (parts.length === 0) return undefined;
    return { ...(fromUs !== undefined ? { fromUs } : {}), ...(toUs !== undefined ? { toUs } : {}), sql: parts.join(" AND ") };
  };
}

/** Could the file hold rows in the range (catalog statistics of the time column; unknown → yes)? */
function overlaps(def: TableDef, f: LiveDataFile, r: TimeRange): boolean {
  const s = f.columnStats[def.timeColumn];
  const min = s?.min ? parseTimestampMicros(s.min) : null;
  const max = s?.max ? parseTimestampMicros(s.max) : null;
  if (r.toUs !== undefined && min !== null && Number(min) >= r.toUs) return false;
  if (r.fromUs !== undefined && max !== null && Number(max) < r.fromUs) return false;
  return true;
}
