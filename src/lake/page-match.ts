/**
 * Point lookups inside a paged data file (docs/ARCHITECTURE.md "Lookups by page"): the numbers
 * of the rows where, for every lookup, some of its columns equals one of its values, found by
 * reading only the lookup columns of the row groups the bloom filters keep
 * (bloom-index.ts `candidateGroups`). A search then reads the time of those rows alone
 * (page-reader.ts) instead of having DuckDB decode uuid, session_id and time of every candidate row
 * group (docs/BENCHMARKS.md "Lookups by page").
 *
 * A value is found in a PLAIN page (or a chunk's dictionary page) by the bytes it is stored as
 * (4-byte little-endian length, then its UTF-8), one `indexOf` per value and page; a hit is kept
 * only where a value starts (the lengths are walked to it), so the bytes of a longer value never
 * match. In a dictionary-encoded chunk the rows are those whose index names a matching entry.
 * Equality is byte for byte, as DuckDB compares VARCHAR. A chunk this does not read (another
 * codec, type or encoding) refuses the whole file: the caller reads it with DuckDB.
 */
import {
  CODEC_NONE,
  CODEC_ZSTD,
  decodeHybrid,
  decompressPage,
  ENC_PLAIN,
  ENC_PLAIN_DICTIONARY,
  ENC_RLE_DICTIONARY,
  intField,
  PAGE_DATA,
  PAGE_DICTIONARY,
  preadExact,
  readThriftStruct,
  type ThriftStruct,
  willNeed,
} from "../core/index.ts";
import type { Lookup } from "./bloom-index.ts";
import { bloomHash, type Probe, probeOf, wordsMayHold } from "./bloom-probe.ts";
import { type Chunk, type FileIndex, levels, type PagedFiles } from "./page-index.ts";

const BYTE_ARRAY = 6;

/** What a match found: row numbers in the file, ascending; `refused` when the file is not read here; `tooMany` past the limit. */
export type MatchResult = { rows: number[] } | { refused: true } | { tooMany: true };

/** A lookup value as it is stored in a PLAIN BYTE_ARRAY page. */
function needle(value: string): Buffer {
  const bytes = Buffer.from(value, "utf8");
  const out = Buffer.alloc(4 + bytes.length);
  out.writeUInt32LE(bytes.length, 0);
  bytes.copy(out, 4);
  return out;
}

export class PageMatcher {
  /** Row groups and pages whose lookup columns were read, pages their filters ruled out (tests, bench/search/explain.ts). */
  readonly stats = { files: 0, groups: 0, pages: 0, pagesSkipped: 0, refused: 0 };

  constructor(private readonly layouts: PagedFiles) {}

  /**
   * Rows of the file at `path` matching every lookup, reading row groups `groups` only (the
   * others hold none); `tooMany` once more than `limit` rows match.
   */
  match(path: string, lookups: readonly Lookup[], groups: readonly number[], limit: number): MatchResult {
    return this.layouts.withFile(
      path,
      (fd, index): MatchResult => {
        this.stats.files++;
        const needles = lookups.map((l) => ({
          columns: l.columns,
          needles: l.values.map(needle),
          probes: l.values.map((v) => probeOf(bloomHash(v))),
        }));
        const out: number[] = [];
        for (const g of groups) {
          if (g < 0 || g >= index.groups.length) return this.refuse();
          this.stats.groups++;
          let rows: Set<number> | undefined;
          for (const l of needles) {
            const found = new Set<number>();
            for (const column of l.columns) {
              const chunk = index.groups[g]!.get(column);
              if (!chunk) continue; // a column the file lacks is NULL: equal to no value
              const filters = pageFilters(fd, index, column, g);
              if (!this.scanChunk(fd, chunk, l, filters, rows, found)) return this.refuse();
            }
            rows = found;
            if (rows.size === 0) break;
          }
          if (!rows || rows.size === 0) continue;
          if (out.length + rows.size > limit) return { tooMany: true };
          const base = index.groupStart[g]!;
          for (const r of [...rows].sort((a, b) => a - b)) out.push(base + r);
        }
        return { rows: out };
      },
      // Gone (compacted away): DuckDB's read drops it. Not read here: DuckDB reads it instead.
      (why) => (why === "gone" ? { refused: true } : this.refuse()),
    );
  }

  /**
   * Advises the kernel of what `match` will read first in these row groups of the file at `path`
   * (willNeed: docs/ARCHITECTURE.md "Read-ahead of pages"): the lookup columns' page filters and
   * the offset indexes not read yet. A search advises every file before matching any, so on a
   * cold page cache those small reads come off the disk side by side.
   */
  advise(path: string, lookups: readonly Lookup[], groups: readonly number[]): void {
    this.layouts.withFile(
      path,
      (fd, index) => {
        for (const column of new Set(lookups.flatMap((l) => l.columns))) {
          const where = index.pageBlooms.get(column);
          const dir = index.pageBloomDirs.get(column);
          if (where && !dir) willNeed(fd, where.offset, Math.min(where.length, 16 * 1024));
          for (const g of groups) {
            const chunk = index.groups[g]?.get(column);
            if (chunk && !chunk.pages && chunk.indexLength > 0) willNeed(fd, chunk.indexOffset, chunk.indexLength);
            if (where && dir && g + 1 < dir.length) {
              const at = (p: number) => dir[index.groups.length + 1 + p]!;
              const [first, last] = [dir[g]!, dir[g + 1]!];
              if (last > first) willNeed(fd, where.offset + at(first), at(last) - at(first));
            }
          }
        }
      },
      () => undefined,
    );
  }

  /**
   * Advises the kernel of the pages `match` will read in these row groups of the file at `path`:
   * those the page filters keep for the lookups' values (reading the filters and offset indexes
   * `advise` announced). A search calls it for every file after `advise` and before matching any.
   */
  adviseData(path: string, lookups: readonly Lookup[], groups: readonly number[]): void {
    this.layouts.withFile(
      path,
      (fd, index) => {
        for (const l of lookups) {
          const probes = l.values.map((v) => probeOf(bloomHash(v)));
          for (const column of l.columns)
            for (const g of groups) {
              const chunk = index.groups[g]?.get(column);
              if (!chunk || chunk.physical !== BYTE_ARRAY) continue;
              const pages = this.layouts.pagesOf(fd, chunk);
              const { wanted, start, end } = wantedPages(chunk, pages, probes, pageFilters(fd, index, column, g));
              if (wanted.length > 0) willNeed(fd, start, end - start);
            }
        }
      },
      () => undefined,
    );
  }

  private refuse(): MatchResult {
    this.stats.refused++;
    return { refused: true };
  }

  /**
   * Adds to `found` the rows (in the row group) of one chunk whose value is one of `needles`,
   * among `among` when given (an earlier lookup's rows: pages without one are skipped). False
   * when the chunk is not one this reads.
   */
  private scanChunk(
    fd: number,
    chunk: Chunk,
    lookup: { needles: readonly Buffer[]; probes: readonly Probe[] },
    filters: Uint32Array[] | undefined,
    among: Set<number> | undefined,
    found: Set<number>,
  ): boolean {
    const needles = lookup.needles;
    if (chunk.physical !== BYTE_ARRAY || (chunk.codec !== CODEC_NONE && chunk.codec !== CODEC_ZSTD)) return false;
    const pages = this.layouts.pagesOf(fd, chunk);
    const n = pages.length / 3;
    if (n === 0) return true;
    // Page filters rule out pages without a value: only the others are read and decompressed.
    const { wanted, start, end: stop } = wantedPages(chunk, pages, lookup.probes, filters);
    this.stats.pagesSkipped += n - wanted.length;
    if (wanted.length === 0) return true;
    const bytes = preadExact(fd, start, stop - start);
    // Dictionary-encoded: the numbers of the values in the dictionary, then rows by number.
    let codes: Set<number> | undefined;
    if (chunk.dictionaryOffset !== undefined) {
      const { struct, end } = readThriftStruct(bytes);
      if (intField(struct, 1) !== PAGE_DICTIONARY) return false;
      const body = decompressPage(chunk.codec, bytes.subarray(end, end + (intField(struct, 3) ?? 0)));
      codes = valuesAt(Buffer.from(body.buffer, body.byteOffset, body.byteLength), 0, needles);
      if (codes.size === 0) return true;
    }
    for (const p of wanted) {
      const first = pages[p * 3 + 2]!;
      const next = p + 1 < n ? pages[(p + 1) * 3 + 2]! : Number.POSITIVE_INFINITY;
      if (among && ![...among].some((r) => r >= first && r < next)) continue;
      const at = pages[p * 3]! - start;
      const raw = bytes.subarray(at, at + pages[p * 3 + 1]!);
      const { struct, end } = readThriftStruct(raw);
      if (intField(struct, 1) !== PAGE_DATA) return false;
      const dph = struct.get(5)?.value as ThriftStruct | undefined;
      const encoding = dph ? intField(dph, 2) : undefined;
      const dictionary = encoding === ENC_PLAIN_DICTIONARY || encoding === ENC_RLE_DICTIONARY;
      if (!dph || (encoding !== ENC_PLAIN && !dictionary) || dictionary !== (codes !== undefined)) return false;
      const count = intField(dph, 1) ?? 0;
      const body = decompressPage(chunk.codec, raw.subarray(end, end + (intField(struct, 3) ?? 0)));
      this.stats.pages++;
      const { defined, at: from } = levels(body, count, chunk.optional);
      const values = defined ? defined.reduce((a, v) => a + v, 0) : count;
      let hits: Iterable<number>;
      if (codes) {
        const indices = decodeHybrid(body, from + 1, body.length, body[from]!, values);
        const h: number[] = [];
        indices.forEach((code, i) => {
          if (codes.has(code)) h.push(i);
        });
        hits = h;
      } else hits = [...valuesAt(Buffer.from(body.buffer, body.byteOffset, body.byteLength), from, needles)];
      // The row of each matching value (rows without a value skipped), in order.
      let row = 0;
      let seen = 0;
      for (const value of [...hits].sort((x, y) => x - y)) {
        if (defined) {
          for (; row < count; row++) {
            if (defined[row] !== 1) continue;
            if (seen === value) break;
            seen++;
          }
        } else row = value;
        const local = first + row;
        if (!among || among.has(local)) found.add(local);
      }
    }
    return true;
  }
}

/**
 * The pages of a chunk its page filters cannot rule out for `probes` (all without usable filters),
 * and the bytes that hold them: the chunk's pages lie one after the other, its dictionary first,
 * so one read from the first page wanted (or the dictionary) to the last.
 */
function wantedPages(
  chunk: Chunk,
  pages: Float64Array,
  probes: readonly Probe[],
  filters: Uint32Array[] | undefined,
): { wanted: number[]; start: number; end: number } {
  const n = pages.length / 3;
  const usable = filters?.length === n ? filters : undefined;
  const wanted: number[] = [];
  for (let p = 0; p < n; p++) if (!usable || probes.some((pr) => wordsMayHold(usable[p]!, pr))) wanted.push(p);
  if (wanted.length === 0) return { wanted, start: 0, end: 0 };
  const last = wanted[wanted.length - 1]!;
  const start = chunk.dictionaryOffset ?? pages[wanted[0]! * 3]!;
  return { wanted, start, end: pages[last * 3]! + pages[last * 3 + 1]! };
}

/**
 * The numbers of the PLAIN BYTE_ARRAY values from `from` in `buf` that equal one of `needles`
 * (each as stored: length, then bytes). One indexOf per needle; a hit counts only where a value
 * starts (the lengths are walked as far as the hits), so the bytes of a longer value never match.
 */
function valuesAt(buf: Buffer, from: number, needles: readonly Buffer[]): Set<number> {
  const out = new Set<number>();
  for (const nd of needles) {
    let pos = from;
    let value = 0;
    for (let hit = buf.indexOf(nd, from); hit >= 0; hit = buf.indexOf(nd, hit + 1)) {
      while (pos < hit) {
        pos += 4 + buf.readUInt32LE(pos);
        value++;
      }
      if (pos === hit) out.add(value);
    }
  }
  return out;
}

/**
 * The page filters of `column` in row group `g` (one bitset as 32-bit words per data page, in
 * the order of the chunk's offset index), read with one pread; undefined when the file has none
 * for that chunk (not cut by svc, or written before page filters).
 */
function pageFilters(fd: number, index: FileIndex, column: string, g: number): Uint32Array[] | undefined {
  const where = index.pageBlooms.get(column);
  if (!where || where.length < 8) return undefined;
  let dir = index.pageBloomDirs.get(column);
  if (!dir) {
    const head = preadExact(fd, where.offset, 4);
    const groups = new DataView(head.buffer).getUint32(0, true);
    if (groups !== index.groups.length) return undefined;
    const firsts = preadExact(fd, where.offset + 4, 4 * (groups + 1));
    const pages = new DataView(firsts.buffer).getUint32(4 * groups, true);
    const bytes = preadExact(fd, where.offset + 4, 4 * (groups + 1 + pages + 1));
    dir = new Uint32Array(bytes.buffer, 0, groups + 1 + pages + 1);
    index.pageBloomDirs.set(column, dir);
  }
  const groups = index.groups.length;
  const first = dir[g]!;
  const last = dir[g + 1]!;
  if (last <= first) return undefined;
  // Bitset offsets follow the groups' first pages: page p's bitset is [off[p], off[p + 1]).
  const off = (p: number) => dir[groups + 1 + p]!;
  const start = off(first);
  const end = off(last);
  if (end > where.length || start % 4 !== 0) return undefined;
  const bits = preadExact(fd, where.offset + start, end - start);
  const words = new Uint32Array(bits.buffer, 0, bits.length >>> 2);
  const out: Uint32Array[] = [];
  for (let p = first; p < last; p++) out.push(words.subarray((off(p) - start) >>> 2, (off(p + 1) - start) >>> 2));
  return out;
}
