/**
 * Rows of a data file by their numbers, decoding only the pages that hold them
 * (docs/ARCHITECTURE.md "Row fetch by page"). Compacted files are paged (src/core/parquet/repage.ts):
 * every PLAIN chunk in pages of a few hundred rows and an offset index per chunk. A search's
 * second pass wants every column of ≈ 100 rows that sit in as many row groups; DuckDB would
 * decode each of those row groups' payload whole (≈ 11 MB for 16 384 SIP messages), this reads
 * one page per column and row: one pread and one zstd decode each (docs/BENCHMARKS.md "Rows
 * fetched by page").
 *
 * Values come back as the search's DuckDB statements give them (result-json.ts): VARCHAR as a
 * string, INTEGER and BIGINT as numbers, a TIMESTAMP as its epoch µs (the search selects
 * `epoch_us(time)`), a DATE as `YYYY-MM-DD`. A file this cannot read (no offset index, another
 * encoding, a type it does not decode) is refused as a whole with `undefined`, and the caller
 * reads it with DuckDB; a column the file lacks is NULL, as the scan SQL makes it.
 */
import {
  CODEC_NONE,
  CODEC_ZSTD,
  type ColumnType,
  decodeHybrid,
  ENC_PLAIN,
  ENC_PLAIN_DICTIONARY,
  ENC_RLE_DICTIONARY,
  PAGE_DATA,
  PAGE_DICTIONARY,
  intField,
  levelRanks,
  preadExact,
  readThriftStruct,
  structField,
  type TableDef,
  u32le,
  type ThriftStruct,
  willNeed,
} from "../core/index.ts";
import { type Chunk, type FileIndex, PagedFiles, readPage } from "./page-index.ts";

/** Parquet physical type each column type is stored as (INT32 1, INT64 2, BYTE_ARRAY 6). */
export const PHYSICAL: Partial<Record<ColumnType, number>> = { varchar: 6, int32: 1, int64: 2, timestamp: 2, date: 1 };

const utf8 = new TextDecoder();

/**
 * A file without an offset index is read row by row only when no chunk holds more than this
 * uncompressed: DuckDB takes 20-40 ms to fetch 100 rows from a few flush files of about 5 000
 * rows, whose chunks this decodes in a few ms (docs/ARCHITECTURE.md "Row fetch by page").
 */
const UNPAGED_MAX_BYTES = 4 * 1024 * 1024;

export class PageReader {
  /** Rows read page by page, and reads refused (Lake.pageStats, for tests). */
  readonly stats = { rows: 0, refused: 0 };

  /** `layouts`: the page layouts of files, shared with the lookup match (page-match.ts). */
  constructor(readonly layouts = new PagedFiles()) {}

  /**
   * Every column of `def` for rows `rows` (numbers in the file) of the file at `path`, in the
   * order asked; undefined when the file is not one this reads page by page.
   */
  read(path: string, def: Pick<TableDef, "columns">, rows: readonly number[]): Record<string, unknown>[] | undefined {
    if (def.columns.some((c) => PHYSICAL[c.type] === undefined)) return undefined;
    // Gone (compacted away, retention) or not read here: the caller asks DuckDB.
    return this.layouts.withFile(
      path,
      (fd, index) => {
        if (rows.some((r) => r < 0 || r >= index.rows)) return undefined;
        // One page per chunk (a flush file, DuckDB's own): read here only while every chunk is
        // small (a flush file's), else a row would cost the decode of a whole big chunk per column.
        const big = (g: Map<string, Chunk>) =>
          def.columns.some((c) => (g.get(c.name)?.rawBytes ?? 0) > UNPAGED_MAX_BYTES);
        if (!index.paged && index.groups.some(big)) return undefined;
        const out = rows.map(() => ({}) as Record<string, unknown>);
        const located = this.locateAll(path, fd, index, def, rows, out);
        if (!located) {
          this.stats.refused++;
          return undefined;
        }
        for (let c = 0; c < def.columns.length; c++) {
          const col = def.columns[c]!;
          if (!this.readColumn(path, fd, col.name, col.type, rows, located[c]!, out)) {
            this.stats.refused++;
            return undefined;
          }
        }
        this.stats.rows += rows.length;
        return out;
      },
      () => undefined,
    );
  }

  /**
   * Advises the kernel of what `read` of these rows of these files will read, before any of it is
   * read (docs/ARCHITECTURE.md "Read-ahead of pages"): first the offset indexes not read yet of
   * every file (a row group's lie together), then, reading those, the pages holding the rows in
   * the columns of `def`, but those decompressed lately. A pass that reads several files one after
   * the other then waits for the disk once, not once a file. A file not read by page is skipped.
   */
  adviseMany(reqs: ReadonlyArray<{ path: string; rows: readonly number[] }>, def: Pick<TableDef, "columns">): void {
    if (def.columns.some((c) => PHYSICAL[c.type] === undefined)) return;
    const each = (visit: (path: string, fd: number, index: FileIndex, rows: readonly number[]) => void) => {
      for (const r of reqs)
        this.layouts.withFile(
          r.path,
          (fd, index) => {
            if (index.paged && r.rows.every((n) => n >= 0 && n < index.rows)) visit(r.path, fd, index, r.rows);
          },
          () => undefined,
        );
    };
    const chunksOf = (index: FileIndex, g: number) => def.columns.flatMap((c) => index.groups[g]!.get(c.name) ?? []);
    each((_path, fd, index, rows) => {
      for (const g of new Set(rows.map((n) => groupOf(index, n)))) {
        const todo = chunksOf(index, g).filter((c) => !c.pages && c.indexLength > 0);
        if (todo.length === 0) continue;
        const start = Math.min(...todo.map((c) => c.indexOffset));
        willNeed(fd, start, Math.max(...todo.map((c) => c.indexOffset + c.indexLength)) - start);
      }
    });
    each((path, fd, index, rows) =>
      this.locateAll(
        path,
        fd,
        index,
        def,
        rows,
        rows.map(() => ({})),
      ),
    );
  }

  /**
   * Where each column's wanted rows lie (the offset indexes of every wanted column of each row
   * group touched read first, one read a group), then every page not decompressed here lately
   * advised to the kernel at once: on a cold page cache they come off the disk side by side
   * (docs/ARCHITECTURE.md "Read-ahead of pages"). Undefined when a column's chunks are not ones
   * this reads.
   */
  private locateAll(
    path: string,
    fd: number,
    index: FileIndex,
    def: Pick<TableDef, "columns">,
    rows: readonly number[],
    out: Record<string, unknown>[],
  ): Array<Map<string, Located>> | undefined {
    if (index.paged)
      for (const g of new Set(rows.map((r) => groupOf(index, r)))) {
        const chunks = index.groups[g]!;
        this.layouts.loadPages(
          fd,
          def.columns.flatMap((c) => chunks.get(c.name) ?? []),
        );
      }
    const located: Array<Map<string, Located>> = [];
    for (const col of def.columns) {
      const pages = this.locate(fd, index, col.name, col.type, rows, out);
      if (!pages) return undefined;
      located.push(pages);
    }
    for (const pages of located)
      for (const e of pages.values())
        if (!this.layouts.cached(path, e.page.offset)) willNeed(fd, e.page.offset, e.page.size);
    return located;
  }

  /**
   * Column `name`'s wanted rows by row group and page (NULL set in `out` for a column the file
   * lacks); undefined when its chunks are not ones this reads.
   */
  private locate(
    fd: number,
    index: FileIndex,
    name: string,
    type: ColumnType,
    rows: readonly number[],
    out: Record<string, unknown>[],
  ): Map<string, Located> | undefined {
    const byPage = new Map<string, Located>();
    for (let j = 0; j < rows.length; j++) {
      const row = rows[j]!;
      const g = groupOf(index, row);
      const chunk = index.groups[g]!.get(name);
      if (!chunk) {
        out[j]![name] = null; // a column the file lacks: NULL, as the scan SQL makes it
        continue;
      }
      if (chunk.physical !== PHYSICAL[type] || (chunk.codec !== CODEC_NONE && chunk.codec !== CODEC_ZSTD))
        return undefined;
      const pages = this.layouts.pagesOf(fd, chunk);
      const local = row - index.groupStart[g]!;
      let lo = 0;
      for (let hi = pages.length / 3 - 1; lo < hi; ) {
        const m = (lo + hi + 1) >> 1;
        if (pages[m * 3 + 2]! <= local) lo = m;
        else hi = m - 1;
      }
      const key = `${g}:${lo}`;
      const page = { offset: pages[lo * 3]!, size: pages[lo * 3 + 1]!, first: pages[lo * 3 + 2]! };
      const e = byPage.get(key) ?? { chunk, base: index.groupStart[g]!, page, want: [] };
      byPage.set(key, e);
      e.want.push(j);
    }
    return byPage;
  }

  private readColumn(
    path: string,
    fd: number,
    name: string,
    type: ColumnType,
    rows: readonly number[],
    byPage: Map<string, Located>,
    out: Record<string, unknown>[],
  ): boolean {
    for (const e of byPage.values()) {
      const base = e.base;
      const { header, body } = this.layouts.page(path, fd, e.page.offset, e.page.size, e.chunk.codec);
      if (intField(header, 1) !== PAGE_DATA) return false;
      const dph = header.get(5)?.value as ThriftStruct | undefined;
      if (!dph) return false;
      const count = intField(dph, 1) ?? 0;
      const encoding = intField(dph, 2);
      // Each wanted row's place among the page's values (NULL rows hold none), from the levels'
      // runs without a step per row (a mostly NULL column's page spans thousands of rows).
      const wanted = e.want.map((j) => ({ j, k: rows[j]! - base - e.page.first })).sort((a, b) => a.k - b.k);
      if (wanted.length === 0) continue;
      if (wanted[wanted.length - 1]!.k >= count) return false;
      const at = e.chunk.optional ? 4 + u32le(body, 0) : 0;
      const ranks = e.chunk.optional
        ? levelRanks(
            body,
            4,
            at,
            wanted.map((w) => w.k),
          )
        : undefined;
      const last = wanted.length - 1;
      let dictionary: Dictionary | undefined;
      let indices: Uint32Array | undefined;
      if (encoding === ENC_PLAIN_DICTIONARY || encoding === ENC_RLE_DICTIONARY) {
        if (e.chunk.dictionaryOffset === undefined) return false;
        dictionary = this.dictionary(path, fd, e.chunk, type);
        if (!dictionary) return false;
        const values = ranks ? ranks.rank[last]! + ranks.defined[last]! : wanted[last]!.k + 1;
        indices = decodeHybrid(body, at + 1, body.length, body[at]!, values);
      } else if (encoding !== ENC_PLAIN) return false;
      const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
      const width = type === "varchar" ? 0 : PHYSICAL[type] === 1 ? 4 : 8;
      let pos = at;
      let value = 0; // the value `pos` is at, among the non-NULL ones (varchar: walked in order)
      for (let i = 0; i < wanted.length; i++) {
        const w = wanted[i]!;
        if (ranks && ranks.defined[i] === 0) {
          out[w.j]![name] = null;
          continue;
        }
        const target = ranks ? ranks.rank[i]! : w.k;
        if (indices) out[w.j]![name] = dictionary!.value(indices[target]!);
        else if (width > 0) out[w.j]![name] = plainValue(view, body, at + target * width, type);
        else {
          for (; value < target; value++) pos += 4 + u32le(body, pos);
          out[w.j]![name] = plainValue(view, body, pos, type);
        }
      }
    }
    return true;
  }

  /** Dictionary pages (uncompressed, values located, none decoded), by `path@offset`, the most recently used last. */
  private readonly dictionaries = new Map<string, Dictionary>();

  private dictionary(path: string, fd: number, chunk: Chunk, type: ColumnType): Dictionary | undefined {
    const key = `${path}@${chunk.dictionaryOffset}`;
    const known = this.dictionaries.get(key);
    if (known) {
      this.dictionaries.delete(key);
      this.dictionaries.set(key, known);
      return known;
    }
    const head = preadExact(fd, chunk.dictionaryOffset!, 64);
    const { struct, end } = readThriftStruct(head);
    if (intField(struct, 1) !== PAGE_DICTIONARY) return undefined;
    const { body } = readPage(fd, chunk.dictionaryOffset!, end + (intField(struct, 3) ?? 0), chunk.codec);
    const n = intField(structField(struct, 7), 1) ?? 0;
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    const offsets = new Uint32Array(n);
    for (let i = 0, pos = 0; i < n; i++) {
      offsets[i] = pos;
      pos += type === "varchar" ? 4 + u32le(body, pos) : PHYSICAL[type] === 1 ? 4 : 8;
    }
    const dict: Dictionary = {
      value: (i) => (i < n ? plainValue(view, body, offsets[i]!, type) : null),
    };
    this.dictionaries.set(key, dict);
    if (this.dictionaries.size > 256) this.dictionaries.delete(this.dictionaries.keys().next().value!);
    return dict;
  }
}

/** The row group holding row `row` of the file. */
function groupOf(index: FileIndex, row: number): number {
  let g = index.groupStart.length - 1;
  while (index.groupStart[g]! > row) g--;
  return g;
}

/** A page of a column holding wanted rows: its chunk, the row group's first row, where it lies, and the wanted rows (indexes into the rows asked). */
interface Located {
  chunk: Chunk;
  base: number;
  page: { offset: number; size: number; first: number };
  want: number[];
}

interface Dictionary {
  value(index: number): unknown;
}

/** One PLAIN value as the search's DuckDB statements return it. */
function plainValue(view: DataView, body: Uint8Array, pos: number, type: ColumnType): unknown {
  switch (type) {
    case "varchar":
      return utf8.decode(body.subarray(pos + 4, pos + 4 + view.getUint32(pos, true)));
    case "int32":
      return view.getInt32(pos, true);
    case "date":
      return new Date(view.getInt32(pos, true) * 86_400_000).toISOString().slice(0, 10);
    default: {
      const v = view.getBigInt64(pos, true);
      return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : String(v);
    }
  }
}
