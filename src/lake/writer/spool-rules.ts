/** The writer's spool files: recovery at start, their layout, the one date they cover, when they may go. */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { TableDef } from "../../core/index.ts";
import type { SpoolEntry } from "./types.ts";

/**
 * The buffer a previous run left in a table's spool directory: every sealed file above the
 * committed `watermark`, oldest first. Files at or below it (in committed Parquet) and `.tmp`
 * files (a kill during the spool write: never sealed) are deleted.
 */
export function recoverSpoolDir(dir: string, def: TableDef, watermark: number, nowMs: number): SpoolEntry[] {
  mkdirSync(dir, { recursive: true });
  const names = readdirSync(dir);
  for (const f of names) if (f.endsWith(".tmp")) rmSync(join(dir, f), { force: true });
  // `<seq>.<csv columns>.<rows>.q1.csv`: a file written before the table grew keeps its layout
  // (columns are only ever appended, so the old layout is a prefix of the current one). Without
  // `.q1`: written by an older version, quoted with `"`.
  // `<seq>.<columns>.<rows>.parquet`: a Parquet seal holding the table's first `columns` columns
  // (docs/STORAGE.md "Parquet written by svc").
  const files = names
    .map((f) => /^(\d+)\.(\d+)\.(\d+)(?:(\.q1)?\.csv|\.(parquet))$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({
      name: m[0],
      seq: Number(m[1]),
      columns: Number(m[2]),
      rows: Number(m[3]),
      parquet: m[5] !== undefined,
      legacyQuote: m[4] === undefined && m[5] === undefined,
    }))
    .sort((a, b) => a.seq - b.seq);
  const out: SpoolEntry[] = [];
  for (const f of files) {
    const file = join(dir, f.name);
    if (f.seq <= watermark) {
      rmSync(file, { force: true });
      continue;
    }
    if (f.parquet)
      out.push({
        seq: f.seq,
        file,
        rows: f.rows,
        def: { ...def, columns: def.columns.slice(0, f.columns) },
        atMs: nowMs,
        parquet: {},
      });
    else
      out.push({
        seq: f.seq,
        file,
        rows: f.rows,
        def: layoutWithCsvColumns(def, f.columns),
        atMs: nowMs,
        ...(f.legacyQuote ? { legacyQuote: true } : {}),
      });
  }
  return out;
}

/** The table layout a spool file with `n` CSV columns was written with (a table may have grown since). */
export function layoutWithCsvColumns(def: TableDef, n: number): TableDef {
  const uuids = def.columns.filter((c) => c.derived === "uuid").length;
  let seen = 0;
  const columns = def.columns.filter((c) => c.derived !== undefined || seen++ < n - uuids);
  return { ...def, columns };
}

/** The column a `date_of:` partition column is computed from, if the table has one. */
function partitionTimeColumn(def: TableDef): string | undefined {
  const part = def.partitionBy ? def.columns.find((c) => c.name === def.partitionBy) : undefined;
  return part?.derived?.startsWith("date_of:") ? part.derived.slice(8) : undefined;
}

const DAY_US = 86_400_000_000;
/** 'YYYY-MM-DD' (UTC) of every row of `entries` when their spans say it is one date (years 1000-9999). */
export function singleDate(def: TableDef, entries: readonly SpoolEntry[]): string | undefined {
  // The spans are of the time column: they give the dates only when the partition is its date.
  if (partitionTimeColumn(def) !== def.timeColumn || entries.length === 0) return undefined;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const e of entries) {
    if (!e.span) return undefined;
    lo = Math.min(lo, e.span.min);
    hi = Math.max(hi, e.span.max);
  }
  const day = Math.floor(lo / DAY_US);
  if (Math.floor(hi / DAY_US) !== day) return undefined;
  const iso = new Date(day * 86_400_000).toISOString();
  return /^\d{4}-/.test(iso) && !iso.startsWith("0") ? iso.slice(0, 10) : undefined;
}

/**
 * May a spool file flushed at `flushedAtMs` be deleted? Not before `minMs`; then once every query
 * that started before the flush (and so may have been planned over the old view) has ended;
 * after `maxMs` in any case.
 */
export function spoolDeletable(
  flushedAtMs: number,
  nowMs: number,
  oldestQueryStartMs: number | undefined,
  grace: { minMs: number; maxMs: number },
): boolean {
  if (flushedAtMs + grace.maxMs <= nowMs) return true;
  if (flushedAtMs + grace.minMs > nowMs) return false;
  return oldestQueryStartMs === undefined || oldestQueryStartMs > flushedAtMs;
}
