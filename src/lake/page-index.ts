/**
 * The page layout of paged data files (src/core/parquet/repage.ts, docs/STORAGE.md "Paged data
 * files"), read from their footers and offset indexes and kept per file: the row groups, every
 * chunk's physical type, codec and dictionary page, and, on first use, where each of its data
 * pages lies. The row fetch (page-reader.ts) and the lookup match (page-match.ts) share it.
 */
import { fstatSync } from "node:fs";
import {
  bitLevels,
  decompressPage,
  intField,
  PAGE_BLOOM_KEY,
  PAGE_DATA,
  PAGE_DICTIONARY,
  preadExact,
  readThriftStruct,
  ThriftScan,
  type ThriftStruct,
} from "../core/index.ts";
import { OpenFiles } from "./open-files.ts";

export interface Chunk {
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
  /** The offset index; length 0 when the chunk has none (its pages are then found by their headers). */
  indexOffset: number;
  indexLength: number;
  /** Where the chunk starts (its dictionary page, else its first data page), its bytes and its bytes uncompressed. */
  start: number;
  bytes: number;
  rawBytes: number;
  /** An INT64 chunk's min and max from its statistics (undefined when absent) and its NULL count. */
  min?: number;
  max?: number;
  nulls?: number;
}

export interface FileIndex {
  /**
   * Every chunk has an offset index (a paged file, src/core/parquet/repage.ts). A file without
   * is indexed too, its pages found by walking their headers when first needed: the lookup match
   * reads such a chunk whole anyway; the row fetch reads it only while its chunks are small.
   */
  paged: boolean;
  /** First row of each row group in the file. */
  groupStart: number[];
  rows: number;
  /** Row group → column name → chunk. */
  groups: Map<string, Chunk>[];
  /** Column → where its page filters lie (src/core/parquet/repage.ts PAGE_BLOOM_KEY). */
  pageBlooms: Map<string, { offset: number; length: number }>;
  /** Column → the directory of its page filters once read (first page per group, then bitset offsets). */
  pageBloomDirs: Map<string, Uint32Array>;
}

const utf8 = new TextDecoder();

/** Definition levels of a v1 data page body: which rows hold a value, and where the values start. */
export function levels(
  body: Uint8Array,
  rows: number,
  optional: boolean,
): { defined: Uint8Array | undefined; at: number } {
  if (!optional) return { defined: undefined, at: 0 };
  const n = new DataView(body.buffer, body.byteOffset, 4).getUint32(0, true);
  return { defined: bitLevels(body, 4, 4 + n, rows), at: 4 + n };
}

/** A page's header and uncompressed body. */
export function readPage(
  fd: number,
  offset: number,
  size: number,
  codec: number,
): { header: ThriftStruct; body: Uint8Array } {
  const raw = preadExact(fd, offset, size);
  const { struct, end } = readThriftStruct(raw);
  return { header: struct, body: decompressPage(codec, raw.subarray(end, end + (intField(struct, 3) ?? 0))) };
}

/** Page layouts of files by absolute path, the least recently used dropped first (null: not one read here). */
export class PagedFiles {
  private readonly files = new Map<string, FileIndex | null>();
  /** Decompressed data pages by `path@offset`, the least recently used first, at most `maxPageBytes` in all. */
  private readonly pages = new Map<string, { header: ThriftStruct; body: Uint8Array }>();
  private pageBytes = 0;
  /** Pages answered from the cache / read, file layouts built (tests, bench/search/explain.ts). */
  readonly pageStats = { hits: 0, reads: 0, layouts: 0 };

  constructor(
    readonly maxFiles = 512,
    /**
     * A search's passes read some pages twice (a lookup's time and ids, then every column of the
     * same rows; a call view opened from a search), so the last ones are kept decompressed.
     */
    private readonly maxPageBytes = 16 * 1024 * 1024,
    /** Descriptors kept between reads (shared with the bloom index, open-files.ts). */
    readonly openFiles = new OpenFiles(),
  ) {}

  /** Whether the page at `offset` of the file at `path` is in the cache of decompressed pages. */
  cached(path: string, offset: number): boolean {
    return this.pages.has(`${path}@${offset}`);
  }

  /** A data page of the file at `path` (open as `fd`): its header and body uncompressed, from the cache when it was read lately. */
  page(
    path: string,
    fd: number,
    offset: number,
    size: number,
    codec: number,
  ): { header: ThriftStruct; body: Uint8Array } {
    const key = `${path}@${offset}`;
    const known = this.pages.get(key);
    if (known) {
      this.pages.delete(key);
      this.pages.set(key, known);
      this.pageStats.hits++;
      return known;
    }
    const page = readPage(fd, offset, size, codec);
    this.pageStats.reads++;
    if (page.body.byteLength <= this.maxPageBytes / 8) {
      this.pages.set(key, page);
      this.pageBytes += page.body.byteLength;
      for (const [k, v] of this.pages) {
        if (this.pageBytes <= this.maxPageBytes) break;
        this.pages.delete(k);
        this.pageBytes -= v.body.byteLength;
      }
    }
    return page;
  }

  /**
   * `read` on the file at `path`, open (open-files.ts) and with its layout; `fallback` instead
   * when the file is gone (compacted away, retention) or is not one read here: not a flat Parquet
   * file, or a page `read` cannot decode (it throws). The callers then leave the file to DuckDB.
   */
  withFile<T>(path: string, read: (fd: number, index: FileIndex) => T, fallback: (why: "gone" | "unreadable") => T): T {
    let fd: number;
    try {
      fd = this.openFiles.fd(path);
    } catch {
      return fallback("gone");
    }
    try {
      const index = this.index(path, fd);
      return index ? read(fd, index) : fallback("unreadable");
    } catch {
      this.openFiles.drop(path); // an I/O error: the next read opens the file again
      return fallback("unreadable");
    }
  }

  /** The layout of the file open as `fd` at `path`; undefined when it is not a flat Parquet file. */
  index(path: string, fd: number): FileIndex | undefined {
    const known = this.files.get(path);
    if (known !== undefined) {
      this.files.delete(path);
      this.files.set(path, known);
      return known ?? undefined;
    }
    let built: FileIndex | null = null;
    this.pageStats.layouts++;
    try {
      built = build(fd);
    } catch {
      built = null;
    }
    this.files.set(path, built);
    if (this.files.size > this.maxFiles) this.files.delete(this.files.keys().next().value!);
    return built ?? undefined;
  }

  /**
   * Reads the offset indexes of `chunks` (those of one row group) that are not read yet with one
   * pread when they lie together, as the page cutter writes them (row group by row group, column
   * by column): a search's second pass wants every column of a row group, one small read each.
   */
  loadPages(fd: number, chunks: readonly Chunk[]): void {
    const todo = chunks.filter((c) => !c.pages && c.indexLength > 0).sort((a, b) => a.indexOffset - b.indexOffset);
    if (todo.length < 2) return;
    const start = todo[0]!.indexOffset;
    const last = todo[todo.length - 1]!;
    const end = last.indexOffset + last.indexLength;
    // Apart (another writer's order, or columns far from each other): each chunk on first use.
    if (end - start > 2 * todo.reduce((a, c) => a + c.indexLength, 0)) return;
    const bytes = preadExact(fd, start, end - start);
    for (const c of todo)
      c.pages = parseOffsetIndex(bytes.subarray(c.indexOffset - start, c.indexOffset - start + c.indexLength));
  }

  /** A chunk's data pages from its offset index, or from its page headers when it has none (read once). */
  pagesOf(fd: number, c: Chunk): Float64Array {
    if (!c.pages) c.pages = c.indexLength > 0 ? fromOffsetIndex(fd, c) : fromHeaders(fd, c);
    return c.pages;
  }
}

function fromOffsetIndex(fd: number, c: Chunk): Float64Array {
  return parseOffsetIndex(preadExact(fd, c.indexOffset, c.indexLength));
}

function parseOffsetIndex(bytes: Uint8Array): Float64Array {
  // OffsetIndex: 1 page_locations; PageLocation: 1 offset, 2 compressed_page_size, 3 first_row_index.
  const scan = new ThriftScan(bytes);
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
  return Float64Array.from(found);
}

/** The data pages of a chunk without an offset index, from its page headers (PageHeader: 1 type, 3 compressed size, 5 DataPageHeader with 1 num_values). */
function fromHeaders(fd: number, c: Chunk): Float64Array {
  const bytes = preadExact(fd, c.start, c.bytes);
  const found: number[] = [];
  let first = 0;
  for (let at = 0; at < bytes.length; ) {
    const { struct, end } = readThriftStruct(bytes, at);
    const size = end - at + (intField(struct, 3) ?? 0);
    if (intField(struct, 1) === PAGE_DATA) {
      found.push(c.start + at, size, first);
      // v1 pages of a flat column: one value slot (NULLs included) per row.
      first += intField(struct.get(5)?.value as ThriftStruct, 1) ?? 0;
    } else if (intField(struct, 1) !== PAGE_DICTIONARY) throw new Error("parquet: a page this does not read");
    at += size;
  }
  return Float64Array.from(found);
}

const INT64 = 2;

/** An INT64 statistic (8 bytes little-endian) as a number; undefined past 2^53 or of another width. */
function int64Stat(b: Uint8Array): number | undefined {
  if (b.length !== 8) return undefined;
  const v = new DataView(b.buffer, b.byteOffset, 8).getBigInt64(0, true);
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
}

function build(fd: number): FileIndex | null {
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
  let paged = true;
  const pageBlooms = new Map<string, { offset: number; length: number }>();
  scan.struct((id) => {
    if (id === 5) {
      // key_value_metadata: KeyValue 1 key, 2 value.
      scan.list(() => {
        let k = "";
        let v = "";
        scan.struct((f) => {
          if (f === 1) k = utf8.decode(scan.binary());
          else if (f === 2) v = utf8.decode(scan.binary());
          else return false;
          return true;
        });
        const m = /^(\d+):(\d+)$/.exec(v);
        if (k.startsWith(PAGE_BLOOM_KEY) && m)
          pageBlooms.set(k.slice(PAGE_BLOOM_KEY.length), { offset: Number(m[1]), length: Number(m[2]) });
      });
      return true;
    }
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
            let bytes = 0;
            let rawBytes = 0;
            let min: number | undefined;
            let max: number | undefined;
            let nulls: number | undefined;
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
                  else if (mf === 7) bytes = scan.int();
                  else if (mf === 6) rawBytes = scan.int();
                  else if (mf === 11) dict = scan.int();
                  else if (mf === 12)
                    // Statistics: 1 max, 2 min (legacy), 3 null_count, 5 max_value, 6 min_value.
                    scan.struct((sf) => {
                      if (sf === 3) nulls = scan.int();
                      else if (sf === 1 || sf === 5) max = int64Stat(scan.binary()) ?? max;
                      else if (sf === 2 || sf === 6) min = int64Stat(scan.binary()) ?? min;
                      else return false;
                      return true;
                    });
                  else return false;
                  return true;
                });
              else return false;
              return true;
            });
            if (indexOffset === undefined || indexLength === undefined) paged = false;
            const dictionaryOffset = dict !== undefined && dict > 0 && dict < dataOffset ? dict : undefined;
            chunks.set(names[i]!, {
              physical,
              codec,
              optional: optional[i] ?? true,
              dictionaryOffset,
              pages: undefined,
              indexOffset: indexOffset ?? 0,
              indexLength: indexLength ?? 0,
              start: dictionaryOffset ?? dataOffset,
              bytes,
              rawBytes,
              ...(physical === INT64 && min !== undefined && max !== undefined ? { min, max } : {}),
              ...(nulls !== undefined ? { nulls } : {}),
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
  if (nested) return null; // not flat
  return { paged, groupStart, rows, groups, pageBlooms, pageBloomDirs: new Map() };
}
