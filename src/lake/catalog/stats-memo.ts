/**
 * Data files' statistics kept in memory (docs/DUCKLAKE.md "Statistics kept in memory"): a data
 * file's ducklake_file_column_stats and partition value rows are written and deleted with it and
 * never change, so a listing reads them once per file. Shared by the SQLite and the PostgreSQL
 * catalog's listings; pure code.
 */
import type { DataFileInfo, FileColumnStats } from "./types.ts";

/** One data file's statistics by column id and its partition value, as the catalog stored them. */
interface Known {
  /** The file they belong to (a different path or size under the same id is another file). */
  path: string;
  size: number;
  columns: Map<number, Readonly<FileColumnStats>>;
  partition?: string;
  /**
   * The stats by column name of the last listing that wanted them all, and the names it used
   * (`sig`): the next such listing hands out the same frozen record instead of building one.
   */
  byName?: { sig: string; record: Readonly<Record<string, Readonly<FileColumnStats>>> };
}

/** What one listing reads for a file not known here (kept once the listing has read it all). */
export class FreshStats {
  readonly known: Known;
  constructor(
    readonly id: number,
    f: DataFileInfo,
  ) {
    this.known = { path: f.absolutePath, size: f.fileSizeBytes, columns: new Map() };
  }
  /** Keeps a column's statistics; they go into the listing as returned (frozen: listings share them). */
  column(columnId: number, stats: FileColumnStats): Readonly<FileColumnStats> {
    const st = Object.freeze(stats);
    this.known.columns.set(columnId, st);
    return st;
  }
  partition(value: string): void {
    this.known.partition = value;
  }
}

/** Files whose statistics are kept per open catalog (about 25 small objects each). */
export const STATS_MEMO_FILES = 4096;

export class StatsMemo {
  private readonly known = new Map<number, Known>();

  constructor(private readonly max = STATS_MEMO_FILES) {}

  /**
   * Fills the statistics of `columns` (id → name) and the partition value (`partName`) of the
   * files of `byId` known here; returns the ids of the others, to be read.
   */
  fill(byId: ReadonlyMap<number, DataFileInfo>, columns: ReadonlyMap<number, string>, partName?: string): number[] {
    const missing: number[] = [];
    let sig = "";
    for (const [id, name] of columns) sig += `${id}\0${name}\0`;
    for (const [id, f] of byId) {
      const k = this.known.get(id);
      if (k === undefined || k.path !== f.absolutePath || k.size !== f.fileSizeBytes) {
        missing.push(id);
        continue;
      }
      this.known.delete(id);
      this.known.set(id, k); // most recently used last
      if (k.byName?.sig === sig) f.columnStats = k.byName.record;
      else {
        const record: Record<string, Readonly<FileColumnStats>> = {};
        for (const [columnId, st] of k.columns) {
          const name = columns.get(columnId);
          if (name !== undefined) record[name] = st;
        }
        // Only a listing of every column is kept: one of some columns would replace it each time.
        if (k.columns.size === columns.size) k.byName = { sig, record: Object.freeze(record) };
        f.columnStats = record;
      }
      if (partName !== undefined && k.partition !== undefined) f.partitionValues[partName] = k.partition;
    }
    return missing;
  }

  /** Keeps what a listing read for files it did not know, once it has read every column of them. */
  keep(read: Iterable<FreshStats>): void {
    for (const r of read) {
      this.known.delete(r.id);
      this.known.set(r.id, r.known);
    }
    while (this.known.size > this.max) this.known.delete(this.known.keys().next().value!);
  }
}

const memos = new WeakMap<object, StatsMemo>();

/** The memo of one open catalog (its context object). */
export function statsMemoOf(ctx: object): StatsMemo {
  let m = memos.get(ctx);
  if (!m) {
    m = new StatsMemo();
    memos.set(ctx, m);
  }
  return m;
}
