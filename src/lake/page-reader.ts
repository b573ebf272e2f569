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
import { closeSync, fstatSync, openSync } from "node:fs";
import {
  CODEC_NONE,
  CODEC_ZSTD,
  type ColumnType,
  decodeHybrid,
  decompressPage,
  ENC_PLAIN,
  ENC_PLAIN_DICTIONARY,
  ENC_RLE_DICTIONARY,
  PAGE_DATA,
  PAGE_DICTIONARY,
  intField,
  preadExact,
  readThriftStruct,
  structField,
  ThriftScan,
  type TableDef,
  type ThriftStruct,
} from "../core/index.ts";

/** Parquet physical type each column type is stored as (INT32 1, INT64 2, BYTE_ARRAY 6). */
const PHYSICAL: Partial<Record<ColumnType, number>> = { varchar: 6, int32: 1, int64: 2, timestamp: 2, date: 1 };

interface Chunk {
  physical: number;
  codec: number;
  optional: boolean;
  dictionaryOffset: number | undefined;
  /**
   * Data pages, read from the offset index on first use: per page its offset in the file, its
   * bytes (header + body) and its first row in the row group, three numbers in a row (24 bytes a
   * page, so a big lake's indexes stay small).
   */
  pages: Float64Array | undefined;
  indexOffset: number;
  indexLength: number;
}

interface FileIndex {
  /** First row of each row group in the file. */
  groupStart: number[];
  rows: number;
  /** Row group → column name → chunk. */
  groups: Map<string, Chunk>[];
}

const utf8 = new TextDecoder();

/** Definition levels of a v1 data page body: which rows hold a value, and where the values start. */
function levels(body: Uint8Array, rows: number, optional: boolean): { defined: Uint32Array | undefined; at: number } {
  if (!optional) return { defined: undefined, at: 0 };
  const n = new DataView(body.buffer, body.byteOffset, 4).getUint32(0, true);
  // One RLE run of 1 covering the page (no NULL, as writers encode it): nothing to decode.
  let head = 0;
  let i = 4;
  for (let shift = 0; i < 4 + n; shift += 7) {
    const b = body[i++]!;
    head += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  if (head % 2 === 0 && Math.floor(head / 2) >= rows && body[i] === 1) return { defined: undefined, at: 4 + n };
  return { defined: decodeHybrid(body, 4, 4 + n, 1, rows), at: 4 + n };
}

export class PageReader {
  private readonly files = new Map<string, FileIndex | null>();
  /** Rows read page by page, and reads refused (Lake.pageStats, for tests). */
  readonly stats = { rows: 0, refused: 0 };

  /** Files indexed at most, least recently used dropped first (each holds its row groups' chunk entries). */
  constructor(private readonly maxFiles = 512) {}

  /**
   * Every column of `def` for rows `rows` (numbers in the file) of the file at `path`, in the
   * order asked; undefined when the file is not one this reads page by page.
   */
  read(path: string, def: TableDef, rows: readonly number[]): Record<string, unknown>[] | undefined {
    if (def.columns.some((c) => PHYSICAL[c.type] === undefined)) return undefined;
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return undefined; // gone (compacted away, retention): the caller asks DuckDB, which drops it
    }
    try {
      const index = this.index(path, fd);
      if (!index || rows.some((r) => r < 0 || r >= index.rows)) return undefined;
      const out = rows.map(() => ({}) as Record<string, unknown>);
      for (const col of def.columns) {
        if (!this.readColumn(path, fd, index, col.name, col.type, rows, out)) {
          this.stats.refused++;
          return undefined;
        }
      }
      this.stats.rows += rows.length;
      return out;
    } catch {
      return undefined; // a page this cannot decode: DuckDB reads the file instead
    } finally {
      closeSync(fd);
    }
  }

  private index(path: string, fd: number): FileIndex | undefined {
    const known = this.files.get(path);
    if (known !== undefined) {
      this.files.delete(path);
      this.files.set(path, known);
      return known ?? undefined;
    }
    let built: FileIndex | null = null;
    try {
      built = this.build(fd);
    } catch {
      built = null;
    }
    this.files.set(path, built);
    if (this.files.size > this.maxFiles) this.files.delete(this.files.keys().next().value!);
    return built ?? undefined;
  }

  private build(fd: number): FileIndex | null {
    const size = fstatSync(fd).size;
    if (size < 12) return null;
    const tail = preadExact(fd, size - 8, 8);
    if (String.fromCharCode(...tail.subarray(4)) !== "PAR1") return null;
    const len = new DataView(tail.buffer).getUint32(0, true);
    // FileMetaData: 2 schema, 4 row_groups; SchemaElement: 3 repetition_type, 4 name, 5 num_children;
    // RowGroup: 1 columns, 3 num_rows; ColumnChunk: 3 meta_data, 4/5 offset index offset/length;
    // ColumnMetaData: 1 type, 4 codec, 9 data_page_offset, 11 dictionary_page_offset.
    const scan = new ThriftScan(preadExact(fd, size - 8 - len, len));
    const names: string[] = [];
    const optional: boolean[] = [];
    let nested = false;
    const groupStart: number[] = [];
    const groups: Map<string, Chunk>[] = [];
    let rows = 0;
    let noIndex = false;
    scan.struct((id) => {
      if (id === 2) {
        scan.list((i) => {
          let name = "";
          let repetition: number | undefined;
          scan.struct((f) => {
            if (f === 3) repetition = scan.int();
            else if (f === 4) name = utf8.decode(scan.binary());
            else if (f === 5) {
              scan.int();
              if (i > 0) nested = true;
            } else return false;
            return true;
          });
          if (i > 0) {
            names.push(name);
            optional.push(repetition === 1);
          }
        });
        return true;
      }
      if (id !== 4) return false;
      scan.list(() => {
        const chunks = new Map<string, Chunk>();
        let groupRows = 0;
        scan.struct((f) => {
          if (f === 3) groupRows = scan.int();
          else if (f === 1)
            scan.list((i) => {
              let physical = -1;
              let codec = -1;
              let dataOffset = 0;
              let dict: number | undefined;
              let indexOffset: number | undefined;
              let indexLength: number | undefined;
              scan.struct((cf) => {
                if (cf === 4) indexOffset = scan.int();
                else if (cf === 5) indexLength = scan.int();
                else if (cf === 3)
                  scan.struct((mf) => {
                    if (mf === 1) physical = scan.int();
                    else if (mf === 4) codec = scan.int();
                    else if (mf === 9) dataOffset = scan.int();
                    else if (mf === 11) dict = scan.int();
                    else return false;
                    return true;
                  });
                else return false;
                return true;
              });
              if (indexOffset === undefined || indexLength === undefined) noIndex = true;
              chunks.set(names[i]!, {
                physical,
                codec,
                optional: optional[i] ?? true,
                dictionaryOffset: dict !== undefined && dict > 0 && dict < dataOffset ? dict : undefined,
                pages: undefined,
                indexOffset: indexOffset ?? 0,
                indexLength: indexLength ?? 0,
              });
            });
          else return false;
          return true;
        });
        groupStart.push(rows);
        rows += groupRows;
        groups.push(chunks);
      });
      return true;
    });
    if (nested || noIndex) return null; // not flat, or a chunk without an offset index
    return { groupStart, rows, groups };
  }

  private pagesOf(fd: number, c: Chunk): Float64Array {
    if (!c.pages) {
      // OffsetIndex: 1 page_locations; PageLocation: 1 offset, 2 compressed_page_size, 3 first_row_index.
      const scan = new ThriftScan(preadExact(fd, c.indexOffset, c.indexLength));
      const found: number[] = [];
      scan.struct((id) => {
        if (id !== 1) return false;
        scan.list(() => {
          const at = found.length;
          found.push(0, 0, 0);
          scan.struct((f) => {
            if (f < 1 || f > 3) return false;
            found[at + f - 1] = scan.int();
            return true;
          });
        });
        return true;
      });
      c.pages = Float64Array.from(found);
    }
    return c.pages;
  }

  /** A page's header and uncompressed body. */
  private page(fd: number, offset: number, size: number, codec: number): { header: ThriftStruct; body: Uint8Array } {
    const raw = preadExact(fd, offset, size);
    const { struct, end } = readThriftStruct(raw);
    return { header: struct, body: decompressPage(codec, raw.subarray(end, end + (intField(struct, 3) ?? 0))) };
  }

  private readColumn(
    path: string,
    fd: number,
    index: FileIndex,
    name: string,
    type: ColumnType,
    rows: readonly number[],
    out: Record<string, unknown>[],
  ): boolean {
    // Wanted rows by row group and page.
    const byPage = new Map<
      string,
      { chunk: Chunk; base: number; page: { offset: number; size: number; first: number }; want: number[] }
    >();
    for (let j = 0; j < rows.length; j++) {
      const row = rows[j]!;
      let g = index.groupStart.length - 1;
      while (index.groupStart[g]! > row) g--;
      const chunk = index.groups[g]!.get(name);
      if (!chunk) {
        out[j]![name] = null; // a column the file lacks: NULL, as the scan SQL makes it
        continue;
      }
      if (chunk.physical !== PHYSICAL[type] || (chunk.codec !== CODEC_NONE && chunk.codec !== CODEC_ZSTD)) return false;
      const pages = this.pagesOf(fd, chunk);
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
    for (const e of byPage.values()) {
      const base = e.base;
      const { header, body } = this.page(fd, e.page.offset, e.page.size, e.chunk.codec);
      if (intField(header, 1) !== PAGE_DATA) return false;
      const dph = header.get(5)?.value as ThriftStruct | undefined;
      if (!dph) return false;
      const count = intField(dph, 1) ?? 0;
      const encoding = intField(dph, 2);
      // Position of each wanted row among the page's values (NULL rows hold none); the levels
      // and indices are decoded up to the last wanted row only.
      const wanted = e.want.map((j) => ({ j, k: rows[j]! - base - e.page.first })).sort((a, b) => a.k - b.k);
      const upto = wanted.length ? Math.min(count, wanted[wanted.length - 1]!.k + 1) : 0;
      const { defined, at } = levels(body, upto, e.chunk.optional);
      let dictionary: Dictionary | undefined;
      let indices: Uint32Array | undefined;
      if (encoding === ENC_PLAIN_DICTIONARY || encoding === ENC_RLE_DICTIONARY) {
        if (e.chunk.dictionaryOffset === undefined) return false;
        dictionary = this.dictionary(path, fd, e.chunk, type);
        if (!dictionary) return false;
        const nonNull = defined ? defined.reduce((a, v) => a + v, 0) : upto;
        indices = decodeHybrid(body, at + 1, body.length, body[at]!, nonNull);
      } else if (encoding !== ENC_PLAIN) return false;
      const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
      let pos = at;
      let value = 0; // index of the next value among the non-NULL ones
      let row = 0;
      const width = type === "varchar" ? 0 : PHYSICAL[type] === 1 ? 4 : 8;
      for (const w of wanted) {
        if (!defined && (indices || width > 0)) {
          // No NULL in the page: the k-th row is the k-th value, a fixed width away.
          value = w.k;
          pos = at + w.k * width;
          row = w.k;
        }
        for (; row < w.k; row++) {
          if (defined && defined[row] === 0) continue;
          if (!indices) pos += type === "varchar" ? 4 + view.getUint32(pos, true) : PHYSICAL[type] === 1 ? 4 : 8;
          value++;
        }
        if (defined && defined[row] === 0) {
          out[w.j]![name] = null;
          continue;
        }
        out[w.j]![name] = indices ? dictionary!.value(indices[value]!) : plainValue(view, body, pos, type);
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
    const { body } = this.page(fd, chunk.dictionaryOffset!, end + (intField(struct, 3) ?? 0), chunk.codec);
    const n = intField(structField(struct, 7), 1) ?? 0;
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    const offsets = new Uint32Array(n);
    for (let i = 0, pos = 0; i < n; i++) {
      offsets[i] = pos;
      pos += type === "varchar" ? 4 + view.getUint32(pos, true) : PHYSICAL[type] === 1 ? 4 : 8;
    }
    const dict: Dictionary = {
      value: (i) => (i < n ? plainValue(view, body, offsets[i]!, type) : null),
    };
    this.dictionaries.set(key, dict);
    if (this.dictionaries.size > 256) this.dictionaries.delete(this.dictionaries.keys().next().value!);
    return dict;
  }
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
