/**
 * The time column of a data file read without DuckDB (an INT64 column: a TIMESTAMP is its epoch
 * µs), row group by row group, using the footer's statistics to read as few as possible:
 *
 * - `count`: rows inside [lo, hi] (docs/ARCHITECTURE.md "Totals and paging of the search lists").
 *   A row group whose statistics lie wholly inside counts its rows (less its NULLs), one wholly
 *   outside counts none; only a row group across an edge has its time pages read and compared.
 * - `newest`: the rows with the newest times inside [lo, hi] (docs/ARCHITECTURE.md "Newest rows by
 *   page"). Row groups are read by their newest time, newest first, and once `limit` times are in
 *   hand a row group whose newest time is older than the `limit`-th is not read.
 *
 * Values are PLAIN or dictionary-encoded. A file this does not read (another encoding or type,
 * gone) is answered undefined: DuckDB reads it.
 */
import {
  CODEC_NONE,
  CODEC_ZSTD,
  decodeHybrid,
  ENC_PLAIN,
  ENC_PLAIN_DICTIONARY,
  ENC_RLE_DICTIONARY,
  intField,
  PAGE_DATA,
  PAGE_DICTIONARY,
  type ThriftStruct,
} from "../core/index.ts";
import { type Chunk, type FileIndex, levels, type PagedFiles, readPage } from "./page-index.ts";

const INT64 = 2;

/** The INT64 at `q` (little-endian): low word unsigned, high word signed; exact below 2^53, as epoch µs are. */
function int64At(b: Uint8Array, q: number): number {
  return (
    (b[q + 4]! | (b[q + 5]! << 8) | (b[q + 6]! << 16) | (b[q + 7]! << 24)) * 4294967296 +
    ((b[q]! | (b[q + 1]! << 8) | (b[q + 2]! << 16)) + b[q + 3]! * 16777216)
  );
}

/** A row of a file and its time. */
export interface TimedRow {
  t: number;
  row: number;
}

export class PageTimes {
  /** Files read, row groups answered from statistics / read, files refused (tests, bench/search/explain.ts). */
  readonly stats = { files: 0, groupsByStats: 0, groupsRead: 0, refused: 0 };

  constructor(private readonly layouts: PagedFiles) {}

  /** Rows of the file at `path` whose `column` is in [lo, hi]; undefined when the file is not counted here. */
  count(path: string, column: string, lo: number, hi: number): number | undefined {
    return this.withFile(path, (fd, index) => {
      let n = 0;
      for (let g = 0; g < index.groups.length; g++) {
        const chunk = index.groups[g]!.get(column);
        if (!chunk) continue; // a column the file lacks: NULL in every row, never in the window
        const rows = (index.groupStart[g + 1] ?? index.rows) - index.groupStart[g]!;
        if (chunk.min !== undefined && chunk.max !== undefined) {
          if (chunk.max < lo || chunk.min > hi) {
            this.stats.groupsByStats++;
            continue;
          }
          if (chunk.min >= lo && chunk.max <= hi && (chunk.nulls !== undefined || !chunk.optional)) {
            this.stats.groupsByStats++;
            n += rows - (chunk.nulls ?? 0);
            continue;
          }
        }
        if (!this.times(path, fd, chunk, (t) => (t >= lo && t <= hi ? n++ : 0))) return undefined;
      }
      return n;
    });
  }

  /**
   * The rows of the file at `path` whose `column` is in [lo, hi] and among its `limit` newest,
   * newest first, every row at the `limit`-th time included (ties are broken by the caller);
   * undefined when the file is not read here.
   */
  newest(path: string, column: string, lo: number, hi: number, limit: number): TimedRow[] | undefined {
    return this.withFile(path, (fd, index) => {
      const groups: Array<{ g: number; chunk: Chunk; max: number }> = [];
      for (let g = 0; g < index.groups.length; g++) {
        const chunk = index.groups[g]!.get(column);
        if (!chunk) continue;
        if (chunk.min !== undefined && chunk.max !== undefined && (chunk.max < lo || chunk.min > hi)) {
          this.stats.groupsByStats++;
          continue;
        }
        groups.push({ g, chunk, max: chunk.max ?? Number.POSITIVE_INFINITY });
      }
      groups.sort((a, b) => b.max - a.max);
      let found: TimedRow[] = [];
      let edge = Number.NEGATIVE_INFINITY;
      for (const { g, chunk, max } of groups) {
        if (max < edge) break; // every later group is older still
        const base = index.groupStart[g]!;
        let row = base;
        const ok = this.times(
          path,
          fd,
          chunk,
          (t) => {
            if (t >= lo && t <= hi && t >= edge) found.push({ t, row });
            row++;
          },
          () => row++,
        );
        if (!ok) return undefined;
        if (found.length >= limit) {
          found.sort((a, b) => b.t - a.t);
          edge = found[limit - 1]!.t;
          found = found.filter((r) => r.t >= edge);
        }
      }
      return found.sort((a, b) => b.t - a.t || a.row - b.row);
    });
  }

  private withFile<T>(path: string, read: (fd: number, index: FileIndex) => T | undefined): T | undefined {
    return this.layouts.withFile(
      path,
      (fd, index) => {
        const out = read(fd, index);
        if (out === undefined) this.stats.refused++;
        else this.stats.files++;
        return out;
      },
      // Gone: DuckDB's read decides. Not read here (a page this cannot decode): DuckDB reads it.
      (why) => {
        if (why === "unreadable") this.stats.refused++;
        return undefined;
      },
    );
  }

  /**
   * Every value of one INT64 chunk in row order: `value` for a row with one, `none` for a NULL row.
   * False when the chunk is not one this reads (then nothing was visited, or the caller drops all).
   */
  private times(path: string, fd: number, chunk: Chunk, value: (t: number) => void, none?: () => void): boolean {
    if (chunk.physical !== INT64 || (chunk.codec !== CODEC_NONE && chunk.codec !== CODEC_ZSTD)) return false;
    this.stats.groupsRead++;
    const pages = this.layouts.pagesOf(fd, chunk);
    if (pages.length === 0) return true;
    // A dictionary page lies between the chunk's start and its first data page.
    let dictionary: Float64Array | undefined;
    if (chunk.dictionaryOffset !== undefined) {
      const { header, body } = readPage(fd, chunk.dictionaryOffset, pages[0]! - chunk.dictionaryOffset, chunk.codec);
      if (intField(header, 1) !== PAGE_DICTIONARY) return false;
      dictionary = new Float64Array(Math.floor(body.length / 8));
      for (let i = 0; i < dictionary.length; i++) dictionary[i] = int64At(body, i * 8);
    }
    for (let p = 0; p < pages.length / 3; p++) {
      const { header, body } = this.layouts.page(path, fd, pages[p * 3]!, pages[p * 3 + 1]!, chunk.codec);
      if (intField(header, 1) !== PAGE_DATA) return false;
      const dph = header.get(5)?.value as ThriftStruct | undefined;
      const encoding = dph ? intField(dph, 2) : undefined;
      const coded = encoding === ENC_PLAIN_DICTIONARY || encoding === ENC_RLE_DICTIONARY;
      if (!dph || (encoding !== ENC_PLAIN && !coded) || (coded && !dictionary)) return false;
      const count = intField(dph, 1) ?? 0;
      const { defined, at } = levels(body, count, chunk.optional);
      const values = defined ? defined.reduce((a, v) => a + v, 0) : count;
      const codes = coded ? decodeHybrid(body, at + 1, body.length, body[at]!, values) : undefined;
      if (!codes && at + values * 8 > body.length) return false;
      for (let r = 0, k = 0; r < count; r++) {
        if (defined && defined[r] === 0) {
          none?.();
          continue;
        }
        if (codes) {
          const v = dictionary![codes[k]!];
          if (v === undefined) return false;
          value(v);
        } else value(int64At(body, at + k * 8));
        k++;
      }
    }
    return true;
  }
}
