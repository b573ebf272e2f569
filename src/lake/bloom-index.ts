/**
 * File pruning for point lookups (docs/ARCHITECTURE.md "Point lookups"): which data files may
 * hold a row whose column equals one of some values, from the Parquet bloom filters the writer's
 * COPY already stores for every dictionary-encoded column chunk (Call-ID, caller, callee, IPs) and
 * the row groups' min/max. Nothing is written at ingest and nothing is added to the catalog: the
 * stock ducklake extension reads the same files and ignores this.
 *
 * A file is kept unless every row group of it is ruled out for some lookup: its min/max exclude
 * every value, or its bloom filter excludes every value. Bloom filters have false positives, never
 * false negatives, so a kept file may hold nothing, a dropped one never holds a match. A chunk
 * without a bloom filter (plain-encoded, a column the file lacks, a file that cannot be read) is
 * kept. DuckDB prunes row groups the same way inside the files it reads; this saves it opening the
 * files (per file: footer from the metadata cache, one bloom read per row group, thread handoff),
 * which is most of a lookup's time once a lake has a hundred files (docs/BENCHMARKS.md "Point
 * lookups").
 */
import { readSync } from "node:fs";
import { FILE_BLOOM_KEY, willNeed } from "../core/index.ts";
import { bloomHash, type Probe, probeOf, wholeBlockAt, wholeMayHold, wordsMayHold } from "./bloom-probe.ts";
import { OpenFiles } from "./open-files.ts";
import { literal } from "./sql.ts";

/**
 * The VARCHAR columns point lookups name (src/api/search/filters.ts: Call-ID and correlation id,
 * caller, callee, the two addresses): merged files carry bloom filters for these whatever their
 * encoding (docs/STORAGE.md "Paged data files").
 */
export const LOOKUP_COLUMNS: ReadonlySet<string> = new Set([
  "session_id",
  "cid",
  "caller",
  "callee",
  "src_ip",
  "dst_ip",
]);

/** Rows of one lookup conjunct: some of `columns` equals one of `values` (VARCHAR columns). */
export interface Lookup {
  readonly columns: readonly string[];
  readonly values: readonly string[];
}

interface ChunkIndex {
  min: string | null;
  max: string | null;
  /** min and max are both ASCII (compared as JS strings, else as UTF-8 bytes). */
  ascii: boolean;
  /** Offset and length of the filter's header + bitset; length 0 when the chunk has none. */
  offset: number;
  length: number;
  /** Used since the cache last passed over it (BloomIndex.cached). */
  used?: boolean;
  /** The bitset once read (cached, see BloomIndex.cached). */
  words?: Uint32Array;
}

/** A column of one file: its chunks, one per row group, and the filter over the whole file when it has one. */
interface ColumnIndex {
  groups: ChunkIndex[];
  /** Header + bitset of the whole-file filter (src/core/parquet/repage.ts FILE_BLOOM_KEY); never cached. */
  whole?: { offset: number; length: number };
}

/** UTF-8 byte order, as DuckDB compares VARCHAR (JS `<` compares UTF-16 units, the same for ASCII). */
const ASCII = /^[\x00-\x7f]*$/;
function utf8Compare(a: string, b: string, ascii: boolean): number {
  if (ascii) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

type Read = (sql: string) => Promise<Record<string, unknown>[]>;

/** A lookup's values with what every chunk check needs of them. */
interface Prepared {
  columns: readonly string[];
  values: Array<{ value: string; ascii: boolean; probe: Probe }>;
}

export class BloomIndex {
  /** absolute path → column → its chunks and whole-file filter (files are immutable). */
  private readonly files = new Map<string, Map<string, ColumnIndex>>();
  /**
   * Chunks whose bitset is held, at most `maxCacheBytes` of bitsets in all, the oldest first. A
   * use only marks the chunk (a search checks thousands of them; moving each to the end cost a
   * quarter of the check); making room, a marked chunk is unmarked and moved to the end instead
   * of dropped (the "second chance" clock).
   */
  private readonly cached = new Set<ChunkIndex>();
  private cacheBytes = 0;
  /** Files whose footer could not be read (kept by every lookup). */
  private readonly unreadable = new Set<string>();
  /** Row groups and files looked at / ruled out, footers indexed, for tests and bench/search/explain.ts. */
  readonly stats = { files: 0, filesDropped: 0, rowGroups: 0, bloomReads: 0, wholeFileChecks: 0, footers: 0 };

  constructor(
    private readonly read: Read,
    private readonly maxCacheBytes = 64 * 1024 * 1024,
    /** Files indexed at most (least recently used dropped first: files compacted away stop being used). */
    private readonly maxFiles = 4096,
    /** Descriptors kept between reads (shared with the page reads, open-files.ts). */
    private readonly openFiles = new OpenFiles(),
  ) {}

  /**
   * The files that may hold a row matching every lookup (order kept). The row groups each kept
   * file may hold one in are kept too, for the `candidateGroups` of the same lookups that follows.
   */
  async prune<F extends { absolutePath: string }>(files: readonly F[], lookups: readonly Lookup[]): Promise<F[]> {
    const active = lookups.filter((l) => l.columns.length > 0 && l.values.length > 0);
    if (active.length === 0 || files.length === 0) return [...files];
    await this.load(
      files.map((f) => f.absolutePath),
      [...new Set(active.flatMap((l) => l.columns))],
    );
    const prepared = this.prepare(active);
    // The whole-file filters' blocks of every file asked for at once (a cold disk serves them side by side).
    for (const f of files) this.adviseWhole(f.absolutePath, prepared);
    const groups = new Map<string, number[] | undefined>();
    const kept = files.filter((f) => {
      const g = this.candidates(f.absolutePath, prepared);
      groups.set(f.absolutePath, g);
      return g === undefined || g.length > 0;
    });
    const sig = signature(lookups);
    this.lastGroups.delete(sig);
    this.lastGroups.set(sig, groups);
    if (this.lastGroups.size > 8) this.lastGroups.delete(this.lastGroups.keys().next().value!);
    this.stats.files += files.length;
    this.stats.filesDropped += files.length - kept.length;
    return kept;
  }

  /** The candidate row groups of the last prunes' files, by the lookups' signature (a few searches at once). */
  private readonly lastGroups = new Map<string, Map<string, number[] | undefined>>();

  private prepare(lookups: readonly Lookup[]): Prepared[] {
    return lookups
      .filter((l) => l.columns.length > 0 && l.values.length > 0)
      .map(
        (l): Prepared => ({
          columns: l.columns,
          values: l.values.map((value) => ({ value, ascii: ASCII.test(value), probe: probeOf(bloomHash(value)) })),
        }),
      );
  }

  /**
   * The row groups of an indexed file that may hold a row matching every lookup (ascending), from
   * the whole-file filter, the row groups' min/max and their bloom filters; undefined when no
   * lookup can rule a row group out (a file or column not indexed: every group may). The files of
   * a scan plan are indexed by `prune`, which has worked this out already for its files
   * (src/lake/page-match.ts reads only these groups).
   */
  candidateGroups(path: string, lookups: readonly Lookup[]): number[] | undefined {
    const known = this.lastGroups.get(signature(lookups));
    if (known?.has(path)) return known.get(path);
    return this.candidates(path, this.prepare(lookups));
  }

  private candidates(path: string, prepared: readonly Prepared[]): number[] | undefined {
    let kept: boolean[] | undefined;
    for (const l of prepared) {
      const may = this.groupsMayHold(path, l);
      if (may === "unknown") continue;
      kept = kept ? kept.map((k, g) => k && may[g] === true) : may;
      if (!kept.includes(true)) break;
    }
    return kept?.flatMap((k, g) => (k ? [g] : []));
  }

  /**
   * Per row group, whether it may hold a row where some of the lookup's columns equals one of its
   * values; "unknown" when the file or one of the columns is not indexed (nothing can be ruled
   * out).
   */
  private groupsMayHold(path: string, l: Prepared): boolean[] | "unknown" {
    const cols = this.files.get(path);
    if (!cols) return "unknown";
    this.files.delete(path);
    this.files.set(path, cols); // most recently used last
    let fd: number | undefined;
    try {
      let may: boolean[] | undefined;
      for (const c of l.columns) {
        const col = cols.get(c);
        // Not indexed, or no chunk of that name (a file written before the column existed under
        // it): cannot rule the file out here (the catalog's statistics may, scan-plan.ts).
        if (!col || col.groups.length === 0) return "unknown";
        may ??= col.groups.map(() => false);
        if (col.whole) {
          // One block read rules the column out for the whole file, before any row group's filter.
          fd ??= this.openFiles.fd(path);
          this.stats.wholeFileChecks++;
          const whole = col.whole;
          if (!l.values.some((v) => wholeMayHold(fd!, whole, v.probe))) continue;
        }
        for (let g = 0; g < col.groups.length; g++) {
          if (may[g]) continue;
          const ch = col.groups[g]!;
          this.stats.rowGroups++;
          let words: Uint32Array | undefined;
          for (const v of l.values) {
            // A bitset in memory first: it rules out most row groups, and costs less than the
            // two comparisons (time-sliced files' min/max rarely rule anything out).
            if (ch.words) {
              ch.used = true;
              if (!wordsMayHold(ch.words, v.probe)) continue;
            }
            const ascii = v.ascii && ch.ascii;
            if (ch.min !== null && utf8Compare(v.value, ch.min, ascii) < 0) continue;
            if (ch.max !== null && utf8Compare(v.value, ch.max, ascii) > 0) continue;
            if (ch.length !== 0 && !ch.words) {
              if (!words) {
                fd ??= this.openFiles.fd(path);
                words = this.bitset(fd, ch);
              }
              if (!wordsMayHold(words, v.probe)) continue;
            }
            may[g] = true;
            break;
          }
        }
      }
      return may ?? "unknown";
    } catch {
      if (fd !== undefined) this.openFiles.drop(path);
      return "unknown"; // a file gone (compacted away under us) or unreadable: keep it, DuckDB decides
    }
  }

  /** Advises the kernel of the whole-file filter blocks a lookup of this file will read (willNeed). */
  private adviseWhole(path: string, prepared: readonly Prepared[]): void {
    const cols = this.files.get(path);
    if (!cols) return;
    try {
      for (const l of prepared)
        for (const c of l.columns) {
          const whole = cols.get(c)?.whole;
          if (!whole) continue;
          for (const v of l.values) {
            const at = wholeBlockAt(whole, v.probe);
            if (at !== undefined) willNeed(this.openFiles.fd(path), at, 32);
          }
        }
    } catch {
      // gone: the check that follows keeps it, as before
    }
  }

  /** A chunk's bitset: from the cache (then marked used), else read and cached, room made as `cached` says. */
  private bitset(fd: number, ch: ChunkIndex): Uint32Array {
    if (ch.words) {
      ch.used = true;
      return ch.words;
    }
    const words = readBitset(fd, ch);
    this.stats.bloomReads++;
    if (words.byteLength > this.maxCacheBytes) return words;
    ch.words = words;
    this.cached.add(ch);
    this.cacheBytes += words.byteLength;
    for (const old of this.cached) {
      if (this.cacheBytes <= this.maxCacheBytes) break;
      this.cached.delete(old);
      if (old.used) {
        old.used = false;
        this.cached.add(old); // visited again after every other chunk: the loop ends
        continue;
      }
      this.cacheBytes -= old.words!.byteLength;
      old.words = undefined;
    }
    return words;
  }

  /** Indexes `columns` of the files at `paths` not indexed yet (the warm-up after start, lookup-warm.ts). */
  async warm(paths: readonly string[], columns: readonly string[]): Promise<void> {
    await this.load(paths, columns);
  }

  /** Reads the footers' chunk entries of files and columns not indexed yet (one statement). */
  private async load(paths: readonly string[], columns: readonly string[]): Promise<void> {
    const missing = paths.filter((p) => {
      if (this.unreadable.has(p)) return false;
      const cols = this.files.get(p);
      return !cols || columns.some((c) => !cols.has(c));
    });
    if (missing.length === 0) return;
    try {
      this.index(missing, columns, await this.metadata(missing, columns), await this.wholeFile(missing));
    } catch {
      // One bad file fails the statement: read them one by one, remember the ones that fail (kept, never pruned).
      for (const p of missing) {
        try {
          this.index([p], columns, await this.metadata([p], columns), await this.wholeFile([p]));
        } catch {
          this.unreadable.add(p);
        }
      }
    }
  }

  private metadata(paths: readonly string[], columns: readonly string[]): Promise<Record<string, unknown>[]> {
    return this.read(
      `SELECT file_name, row_group_id, path_in_schema, stats_min_value, stats_max_value, bloom_filter_offset, bloom_filter_length FROM parquet_metadata([${paths.map(literal).join(", ")}]) WHERE path_in_schema IN (${columns.map(literal).join(", ")})`,
    );
  }

  /** The whole-file filters of paged files: `svc.file_bloom.<column>` = `<offset>:<length>` in the footer. */
  private wholeFile(paths: readonly string[]): Promise<Record<string, unknown>[]> {
    return this.read(
      `SELECT file_name, decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata([${paths.map(literal).join(", ")}]) WHERE starts_with(decode(key), ${literal(FILE_BLOOM_KEY)})`,
    );
  }

  private index(
    paths: readonly string[],
    columns: readonly string[],
    rows: Record<string, unknown>[],
    whole: Record<string, unknown>[],
  ): void {
    const fresh = new Map<string, Map<string, ChunkIndex[]>>();
    for (const p of paths) fresh.set(p, new Map(columns.map((c) => [c, []])));
    this.stats.footers += paths.length;
    for (const r of rows) {
      const chunks = fresh.get(String(r.file_name))?.get(String(r.path_in_schema));
      if (!chunks) continue;
      const offset =
        r.bloom_filter_offset === null || r.bloom_filter_offset === undefined ? 0 : Number(r.bloom_filter_offset);
      const length =
        r.bloom_filter_length === null || r.bloom_filter_length === undefined ? 0 : Number(r.bloom_filter_length);
      const min = r.stats_min_value === null || r.stats_min_value === undefined ? null : String(r.stats_min_value);
      const max = r.stats_max_value === null || r.stats_max_value === undefined ? null : String(r.stats_max_value);
      chunks[Number(r.row_group_id)] = {
        min,
        max,
        ascii: ASCII.test(min ?? "") && ASCII.test(max ?? ""),
        offset,
        length: offset > 0 ? length : 0,
      };
    }
    const wholeOf = new Map<string, { offset: number; length: number }>();
    for (const r of whole) {
      const m = /^(\d+):(\d+)$/.exec(String(r.v));
      if (m)
        wholeOf.set(`${r.file_name}\0${String(r.k).slice(FILE_BLOOM_KEY.length)}`, { offset: +m[1]!, length: +m[2]! });
    }
    for (const [p, cols] of fresh) {
      const known = this.files.get(p) ?? new Map<string, ColumnIndex>();
      for (const [c, chunks] of cols) {
        // Holes (row groups missing from the answer) would be unsafe: such a column is not indexed.
        if ([...chunks.keys()].some((i) => chunks[i] === undefined)) continue;
        const w = wholeOf.get(`${p}\0${c}`);
        known.set(c, w && w.length >= 32 ? { groups: chunks, whole: w } : { groups: chunks });
      }
      this.files.delete(p);
      this.files.set(p, known);
    }
    for (const p of this.files.keys()) {
      if (this.files.size <= this.maxFiles) break;
      this.files.delete(p);
    }
    if (this.unreadable.size > this.maxFiles) this.unreadable.clear();
  }
}

/** Lookups as one string: the same columns and values give the same signature. */
function signature(lookups: readonly Lookup[]): string {
  return JSON.stringify(lookups.map((l) => [l.columns, l.values]));
}

/** The bitset of one chunk's filter: the last power-of-two bytes of [offset, offset + length) (the Thrift header comes first). */
function readBitset(fd: number, ch: ChunkIndex): Uint32Array {
  const size = 2 ** Math.floor(Math.log2(ch.length));
  const words = new Uint32Array(size >>> 2);
  const n = readSync(fd, words, 0, size, ch.offset + ch.length - size);
  if (n !== size) throw new Error("short read of a bloom filter");
  return words;
}
