/**
 * Paged data files (docs/STORAGE.md "Paged data files"): a Parquet file DuckDB's COPY wrote,
 * rewritten so that every PLAIN column chunk is cut into pages of `rowsPerPage` rows (narrow columns:
 * at least MIN_PAGE_BYTES of values a page), with an
 * offset index (every data page's place and first row) for every chunk. DuckDB writes one page per
 * column chunk, so fetching one row of a 16 384-row group decodes the whole group's payload; with
 * pages and the index, a reader decodes only the pages of the rows it wants (src/lake/page-reader.ts).
 *
 * Everything else is kept as DuckDB wrote it: dictionary-encoded chunks (and their bloom filters)
 * are copied byte for byte, the schema, statistics, field ids and key-value metadata of the footer
 * are unchanged, only offsets and sizes are rewritten. DuckDB and the stock ducklake extension read
 * the result as they read the original.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { T } from "./thrift.ts";
import { bloomBitset, bloomFilter, concatHashes, pageBloomBlock, valueHashes } from "./bloom-write.ts";
import { CODEC_ZSTD, decodeHybrid, decompressPage, ENC_PLAIN, PAGE_DATA, PAGE_DICTIONARY, preadExact } from "./read.ts";
import {
  intField,
  listField,
  readThriftStruct,
  structField,
  type ThriftList,
  type ThriftStruct,
  writeThriftStruct,
} from "./thrift-tree.ts";
import { definitionLevels, PARQUET_MAGIC, pageHeader } from "./encode.ts";

/** Physical types whose PLAIN values are cut here (BOOLEAN is bit-packed: kept as written). */
const FIXED: Record<number, number> = { 1: 4, 2: 8, 4: 4, 5: 8 }; // INT32, INT64, FLOAT, DOUBLE
const BYTE_ARRAY = 6;
/** A page holds at least this many bytes of values (uncompressed) unless its chunk ends. */
export const MIN_PAGE_BYTES = 8 * 1024;
/** A page of more than one row holds at most about this many bytes of values (uncompressed). */
export const MAX_PAGE_BYTES = Number.POSITIVE_INFINITY;

export interface RepageStats {
  /** Column chunks cut into pages / copied as written. */
  split: number;
  copied: number;
  pages: number;
}

interface PageInfo {
  /** Offset of the page header from the chunk's start. */
  at: number;
  headerLength: number;
  header: ThriftStruct;
  type: number;
  compressed: number;
}

/** The pages of a chunk's bytes (headers parsed, bodies located). */
function pagesOf(chunk: Uint8Array): PageInfo[] {
  const pages: PageInfo[] = [];
  for (let at = 0; at < chunk.length; ) {
    const { struct, end } = readThriftStruct(chunk, at);
    const compressed = intField(struct, 3) ?? 0;
    pages.push({ at, headerLength: end - at, header: struct, type: intField(struct, 1) ?? -1, compressed });
    at = end + compressed;
  }
  return pages;
}

/**
 * One PLAIN data page (v1) of a flat column cut into pages of `rowsPerPage` rows, or more rows
 * while their values are under `minBytes` (a narrow column gets few pages: DuckDB pays per
 * page when it scans one, a reader of one row decodes a few KB more): the new pages (header +
 * body each) and, per page, its rows. Undefined when the page is not one this cuts.
 */
function cut(
  page: PageInfo,
  body: Uint8Array,
  codec: number,
  physical: number,
  optional: boolean,
  rowsPerPage: number,
  minBytes: number,
  maxBytes: number,
  bloom: boolean,
): { parts: Uint8Array[]; rows: number[]; uncompressed: number; hashes: BigUint64Array[] | undefined } | undefined {
  const dph = page.header.get(5)?.value as ThriftStruct | undefined;
  if (!dph || intField(dph, 2) !== ENC_PLAIN) return undefined;
  const width = FIXED[physical];
  if (width === undefined && physical !== BYTE_ARRAY) return undefined;
  const rows = intField(dph, 1) ?? 0;
  const raw = decompressPage(codec, body);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  let at = 0;
  let defined: Uint8Array | undefined;
  if (optional) {
    const n = view.getUint32(0, true);
    defined = new Uint8Array(decodeHybrid(raw, 4, 4 + n, 1, rows));
    at = 4 + n;
  }
  const parts: Uint8Array[] = [];
  const counts: number[] = [];
  let uncompressed = 0;
  // Per new page, its values' hashes (the chunk's filters take them all).
  const hashes: BigUint64Array[] | undefined = bloom ? [] : undefined;
  for (let from = 0, to = 0; from < rows; from = to) {
    const start = at;
    for (to = from; to < rows && ((to - from < rowsPerPage && at - start < maxBytes) || at - start < minBytes); to++) {
      if (defined && defined[to] === 0) continue;
      at += width ?? 4 + view.getUint32(at, true);
    }
    hashes?.push(valueHashes(raw, start, to - from, defined?.subarray(from, to)));
    const values = raw.subarray(start, at);
    let pageBody: Uint8Array;
    if (defined) {
      const levels = definitionLevels(
        to - from,
        defined.subarray(from, to).includes(0) ? defined.subarray(from, to) : undefined,
      );
      pageBody = new Uint8Array(levels.length + values.length);
      pageBody.set(levels, 0);
      pageBody.set(values, levels.length);
    } else pageBody = values;
    const out = codec === CODEC_ZSTD ? new Uint8Array(Bun.zstdCompressSync(pageBody, { level: 1 })) : pageBody;
    const header = pageHeader(to - from, pageBody.length, out.length);
    parts.push(header, out);
    counts.push(to - from);
    uncompressed += header.length + pageBody.length;
  }
  if (at !== raw.length) throw new Error("parquet: PLAIN values do not end with the page");
  return { parts, rows: counts, uncompressed, hashes };
}

/** Bytes of a bloom filter at `offset`: its header (BloomFilterHeader, numBytes = field 1) and bitset. */
function bloomBytes(fd: number, offset: number, length: number | undefined): Uint8Array {
  if (length !== undefined) return preadExact(fd, offset, length);
  const head = preadExact(fd, offset, 64);
  const { struct, end } = readThriftStruct(head);
  return preadExact(fd, offset, end + (intField(struct, 1) ?? 0));
}

/**
 * Rewrites `input` (a Parquet file, flat schema) to `output` with the PLAIN chunks in pages of
 * `rowsPerPage` rows (narrow columns: MIN_PAGE_BYTES) and an offset index for every chunk.
 */
export interface RepageOptions {
  /** Rows per data page (more while a page's values are under `minPageBytes`). */
  rowsPerPage: number;
  /** Default MIN_PAGE_BYTES. */
  minPageBytes?: number;
  /** Default MAX_PAGE_BYTES. */
  maxPageBytes?: number;
  /**
   * VARCHAR columns whose cut chunks get a split-block bloom filter (xxHash64, 1 % false
   * positives), as DuckDB writes one only for dictionary-encoded chunks: point lookups keep
   * pruning files and row groups (src/lake/bloom-index.ts) when their chunks are PLAIN.
   */
  bloomColumns?: ReadonlySet<string>;
  /** Awaited after each row group, so a caller on a busy thread lets other work run between them. */
  yieldEvery?: () => Promise<void>;
}

/**
 * Footer key-value metadata naming where a column's whole-file bloom filter lies:
 * `svc.file_bloom.<column>` = `<offset>:<length>` (BloomFilterHeader and bitset, as a chunk's).
 * src/lake/bloom-index.ts checks it before the row groups' filters (docs/STORAGE.md "Paged data files").
 */
export const FILE_BLOOM_KEY = "svc.file_bloom.";
/** A whole-file filter is checked once per file and lookup: 0.1 % false positives (about 15 bits a value). */
const FILE_BLOOM_FPP = 0.001;

/**
 * Footer key-value metadata naming where a column's page filters lie: `svc.page_bloom.<column>` =
 * `<offset>:<length>` of a block (little-endian u32s): the row group count G; G + 1 numbers, the
 * first page of each group (the last one the page count P); P + 1 offsets of the pages' bitsets
 * from the block's start (a page's bitset ends where the next begins; empty for a group whose
 * chunk was not cut); then the bitsets, split-block filters of any multiple of 32 bytes over the
 * page's values, in the order of the chunk's offset index (src/lake/page-match.ts).
 */
export const PAGE_BLOOM_KEY = "svc.page_bloom.";
/** A page filter is checked for every page of a candidate row group: 1 % false positives. */
const PAGE_BLOOM_FPP = 0.01;

/** A footer KeyValue (1: key, 2: value). */
function keyValue(key: string, value: string): ThriftStruct {
  const enc = new TextEncoder();
  return new Map([
    [1, { type: T.BINARY, value: enc.encode(key) }],
    [2, { type: T.BINARY, value: enc.encode(value) }],
  ]);
}

export async function repageParquet(input: string, output: string, opts: RepageOptions): Promise<RepageStats> {
  const { rowsPerPage } = opts;
  const minBytes = opts.minPageBytes ?? MIN_PAGE_BYTES;
  const maxBytes = opts.maxPageBytes ?? MAX_PAGE_BYTES;
  const yieldEvery = opts.yieldEvery ?? (async () => {});
  const stats: RepageStats = { split: 0, copied: 0, pages: 0 };
  const fin = openSync(input, "r");
  const fout = openSync(output, "w");
  try {
    const size = Bun.file(input).size;
    const tail = preadExact(fin, size - 8, 8);
    const footerLength = new DataView(tail.buffer).getUint32(0, true);
    const meta = readThriftStruct(preadExact(fin, size - 8 - footerLength, footerLength)).struct;
    // Flat schema: the root, then one element per column; repetition_type (3) 1 = OPTIONAL.
    const schema = listField(meta, 2).items as ThriftStruct[];
    const optional = schema.slice(1).map((e) => intField(e, 3) === 1);
    const names = schema.slice(1).map((e) => new TextDecoder().decode(e.get(4)!.value as Uint8Array));
    let out = 0;
    const write = (b: Uint8Array) => {
      writeSync(fout, b);
      out += b.length;
    };
    write(PARQUET_MAGIC);
    // Per row group and column: data pages (offset from the file start, bytes, first row).
    const index: { offset: number; size: number; first: number }[][][] = [];
    const blooms: { chunk: ThriftStruct; offset: number; length: number | undefined }[] = [];
    const newBlooms: { chunk: ThriftStruct; bytes: Uint8Array }[] = [];
    // Per bloom column, its values' hashes over the whole file (FILE_BLOOM_KEY), and per row
    // group the filters of its pages (PAGE_BLOOM_KEY; none for a chunk not cut here).
    const fileHashes = new Map<string, BigUint64Array[]>();
    const pageBlooms = new Map<string, Uint8Array[][]>();
    const rowGroups = listField(meta, 4).items.length;
    for (const rg of listField(meta, 4).items as ThriftStruct[]) {
      const pagesOfGroup: { offset: number; size: number; first: number }[][] = [];
      const chunks = listField(rg, 1).items as ThriftStruct[];
      chunks.forEach((cc, col) => {
        const md = structField(cc, 3);
        const dict = intField(md, 11);
        const data = intField(md, 9)!;
        const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
        const length = intField(md, 7)!;
        const bytes = preadExact(fin, start, length);
        const pages = pagesOf(bytes);
        const codec = intField(md, 4)!;
        const physical = intField(md, 1)!;
        const newStart = out;
        const dataPages = pages.filter((p) => p.type === PAGE_DATA);
        const only = dataPages.length === 1 && pages.every((p) => p.type === PAGE_DATA) ? dataPages[0]! : undefined;
        const body = only
          ? bytes.subarray(only.at + only.headerLength, only.at + only.headerLength + only.compressed)
          : undefined;
        const wantBloom = physical === BYTE_ARRAY && opts.bloomColumns?.has(names[col] ?? "") === true;
        const split =
          only && body
            ? cut(only, body, codec, physical, optional[col] ?? true, rowsPerPage, minBytes, maxBytes, wantBloom)
            : undefined;
        const locations: { offset: number; size: number; first: number }[] = [];
        if (split) {
          let first = 0;
          for (let i = 0; i < split.parts.length; i += 2) {
            const at = out;
            write(split.parts[i]!);
            write(split.parts[i + 1]!);
            locations.push({ offset: at, size: out - at, first });
            first += split.rows[i / 2]!;
          }
          md.set(6, { type: T.I64, value: BigInt(split.uncompressed) });
          md.set(7, { type: T.I64, value: BigInt(out - newStart) });
          md.set(9, { type: T.I64, value: BigInt(newStart) });
          // encoding_stats: the data pages are now this many.
          const es = md.get(13)?.value as { items: ThriftStruct[] } | undefined;
          for (const s of es?.items ?? [])
            if (intField(s, 1) === PAGE_DATA) s.set(3, { type: T.I32, value: split.rows.length });
          if (split.hashes) {
            const all = concatHashes(split.hashes);
            newBlooms.push({ chunk: md, bytes: bloomFilter(all) });
            const name = names[col]!;
            if (!fileHashes.has(name)) fileHashes.set(name, []);
            fileHashes.get(name)!.push(all);
            if (!pageBlooms.has(name))
              pageBlooms.set(
                name,
                Array.from({ length: rowGroups }, () => []),
              );
            pageBlooms.get(name)![index.length] = split.hashes.map((h) => bloomBitset(h, PAGE_BLOOM_FPP, false));
          }
          stats.split++;
          stats.pages += split.rows.length;
        } else {
          write(bytes);
          let first = 0;
          for (const p of pages) {
            if (p.type !== PAGE_DATA) continue;
            locations.push({ offset: newStart + p.at, size: p.headerLength + p.compressed, first });
            first += intField(p.header.get(5)?.value as ThriftStruct, 1) ?? 0;
          }
          md.set(9, { type: T.I64, value: BigInt(newStart + (pages.find((p) => p.type === PAGE_DATA)?.at ?? 0)) });
          if (dict !== undefined && pages.some((p) => p.type === PAGE_DICTIONARY))
            md.set(11, { type: T.I64, value: BigInt(newStart + pages.find((p) => p.type === PAGE_DICTIONARY)!.at) });
          stats.copied++;
          stats.pages += locations.length;
        }
        // ColumnChunk.file_offset (2): where the chunk starts.
        if (cc.has(2)) cc.set(2, { type: T.I64, value: BigInt(newStart) });
        const bloom = intField(md, 14);
        if (bloom !== undefined) blooms.push({ chunk: md, offset: bloom, length: intField(md, 15) });
        // Page indexes DuckDB may have written point into the old layout.
        for (const id of [4, 5, 6, 7]) cc.delete(id);
        pagesOfGroup.push(locations);
      });
      const first = chunks[0]
        ? (intField(structField(chunks[0], 3), 11) ?? intField(structField(chunks[0], 3), 9))
        : undefined;
      if (rg.has(5) && first !== undefined) rg.set(5, { type: T.I64, value: BigInt(first) });
      if (rg.has(6))
        rg.set(6, {
          type: T.I64,
          value: BigInt(chunks.reduce((a, cc) => a + (intField(structField(cc, 3), 7) ?? 0), 0)),
        });
      index.push(pagesOfGroup);
      await yieldEvery();
    }
    for (const b of blooms) {
      const bytes = bloomBytes(fin, b.offset, b.length);
      b.chunk.set(14, { type: T.I64, value: BigInt(out) });
      if (b.length !== undefined) b.chunk.set(15, { type: T.I32, value: bytes.length });
      write(bytes);
    }
    for (const b of newBlooms) {
      b.chunk.set(14, { type: T.I64, value: BigInt(out) });
      b.chunk.set(15, { type: T.I32, value: b.bytes.length });
      write(b.bytes);
    }
    // One filter per bloom column for the whole file, found through the footer's key-value
    // metadata (readers that do not know the key ignore it and the bytes).
    const fileBlooms: ThriftStruct[] = [];
    for (const [name, parts] of fileHashes) {
      const bytes = bloomFilter(concatHashes(parts), FILE_BLOOM_FPP);
      fileBlooms.push(keyValue(`${FILE_BLOOM_KEY}${name}`, `${out}:${bytes.length}`));
      write(bytes);
    }
    for (const [name, groups] of pageBlooms) {
      const bytes = pageBloomBlock(groups);
      fileBlooms.push(keyValue(`${PAGE_BLOOM_KEY}${name}`, `${out}:${bytes.length}`));
      write(bytes);
    }
    if (fileBlooms.length > 0) {
      const kv = meta.get(5)?.value as ThriftList | undefined;
      meta.set(5, { type: T.LIST, value: { elementType: T.STRUCT, items: [...(kv?.items ?? []), ...fileBlooms] } });
    }
    (listField(meta, 4).items as ThriftStruct[]).forEach((rg, g) => {
      (listField(rg, 1).items as ThriftStruct[]).forEach((cc, c) => {
        const oi: ThriftStruct = new Map([
          [
            1,
            {
              type: T.LIST,
              value: {
                elementType: T.STRUCT,
                items: index[g]![c]!.map(
                  (p): ThriftStruct =>
                    new Map([
                      [1, { type: T.I64, value: BigInt(p.offset) }],
                      [2, { type: T.I32, value: p.size }],
                      [3, { type: T.I64, value: BigInt(p.first) }],
                    ]),
                ),
              },
            },
          ],
        ]);
        const bytes = writeThriftStruct(oi);
        cc.set(4, { type: T.I64, value: BigInt(out) });
        cc.set(5, { type: T.I32, value: bytes.length });
        write(bytes);
      });
    });
    const footer = writeThriftStruct(meta);
    write(footer);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, footer.length, true);
    write(len);
    write(PARQUET_MAGIC);
    return stats;
  } finally {
    closeSync(fin);
    closeSync(fout);
  }
}
