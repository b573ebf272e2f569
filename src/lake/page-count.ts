/**
 * How many rows of a data file have an INT64 column (the time column: a TIMESTAMP is its epoch µs)
 * inside [lo, hi], without DuckDB (docs/ARCHITECTURE.md "Totals and paging of the search lists"):
 * a row group whose statistics lie wholly inside counts its rows (less its NULLs), one wholly
 * outside counts none, and only a row group across an edge of the window has its pages of that
 * column read and its values compared. The total of a window then reads the few row groups at
 * its two ends instead of the time column of every file crossing them.
 */
import { closeSync, openSync } from "node:fs";
import { CODEC_NONE, CODEC_ZSTD, ENC_PLAIN, intField, PAGE_DATA, type ThriftStruct } from "../core/index.ts";
import { levels, type PagedFiles, readPage } from "./page-index.ts";

const INT64 = 2;

export class PageCounter {
  /** Row groups counted from their statistics / from their values (tests, bench/search/explain.ts). */
  readonly stats = { files: 0, groupsByStats: 0, groupsRead: 0, refused: 0 };

  constructor(private readonly layouts: PagedFiles) {}

  /** Rows of the file at `path` whose `column` is in [lo, hi]; undefined when the file is not counted here. */
  count(path: string, column: string, lo: number, hi: number): number | undefined {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return undefined; // gone: DuckDB's read decides
    }
    try {
      const index = this.layouts.index(path, fd);
      if (!index) return this.refuse();
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
        if (chunk.physical !== INT64 || (chunk.codec !== CODEC_NONE && chunk.codec !== CODEC_ZSTD))
          return this.refuse();
        this.stats.groupsRead++;
        const pages = this.layouts.pagesOf(fd, chunk);
        for (let p = 0; p < pages.length / 3; p++) {
          const { header, body } = readPage(fd, pages[p * 3]!, pages[p * 3 + 1]!, chunk.codec);
          if (intField(header, 1) !== PAGE_DATA) return this.refuse();
          const dph = header.get(5)?.value as ThriftStruct | undefined;
          if (!dph || intField(dph, 2) !== ENC_PLAIN) return this.refuse();
          const count = intField(dph, 1) ?? 0;
          const { defined, at } = levels(body, count, chunk.optional);
          const values = defined ? defined.reduce((a, v) => a + v, 0) : count;
          if (at + values * 8 > body.length) return this.refuse();
          for (let i = 0, q = at; i < values; i++, q += 8) {
            // Low word unsigned, high word signed: exact below 2^53, as epoch µs are.
            const v =
              (body[q + 4]! | (body[q + 5]! << 8) | (body[q + 6]! << 16) | (body[q + 7]! << 24)) * 4294967296 +
              ((body[q]! | (body[q + 1]! << 8) | (body[q + 2]! << 16)) + body[q + 3]! * 16777216);
            if (v >= lo && v <= hi) n++;
          }
        }
      }
      this.stats.files++;
      return n;
    } catch {
      return this.refuse(); // a page this cannot decode: DuckDB counts the file
    } finally {
      closeSync(fd);
    }
  }

  private refuse(): undefined {
    this.stats.refused++;
    return undefined;
  }
}
