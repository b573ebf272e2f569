/**
 * Split-block bloom filters written by svc (docs/STORAGE.md "Paged data files"): the Parquet
 * algorithm (parquet-format BloomFilter.md: XXH64 of a value's PLAIN bytes, 32-byte blocks of eight
 * 32-bit words, one salted bit per word) over a chunk's BYTE_ARRAY values, with its
 * BloomFilterHeader. src/lake/bloom-index.ts reads them the same way it reads DuckDB's.
 */
import { T } from "./thrift.ts";
import { writeThriftStruct } from "./thrift-tree.ts";

/** XXH64 of each non-NULL BYTE_ARRAY value (a run of equal values hashed once), from `at` of a PLAIN body. */
export function valueHashes(
  raw: Uint8Array,
  at: number,
  rows: number,
  defined: Uint8Array | undefined,
): BigUint64Array {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const out = new BigUint64Array(rows);
  let n = 0;
  let prev = -1;
  let prevLen = -1;
  for (let r = 0; r < rows; r++) {
    if (defined && defined[r] === 0) continue;
    const len = view.getUint32(at, true);
    const start = at + 4;
    let same = len === prevLen;
    for (let i = 0; same && i < len; i++) same = raw[prev + i] === raw[start + i];
    if (!same) out[n++] = BigInt.asUintN(64, BigInt(Bun.hash.xxHash64(raw.subarray(start, start + len), 0n)));
    prev = start;
    prevLen = len;
    at = start + len;
  }
  return out.subarray(0, n);
}

/** Parquet split-block bloom filter salts (parquet-format BloomFilter.md). */
const SALT = [0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31];

/**
 * The block a hash falls in, of `blocks` 32-byte blocks: (upper 32 bits × blocks) >> 32. Written
 * and checked the same way here and in src/lake/bloom-index.ts.
 */
export function sbbfBlock(hi: number, blocks: number): number {
  // Exact in a double while the product stays under 2^53.
  return blocks <= 1 << 20 ? Math.floor((hi * blocks) / 4294967296) : Number((BigInt(hi) * BigInt(blocks)) >> 32n);
}

/** The bit a hash's lower 32 bits give word `k` of its block. */
export function sbbfMask(lo: number, k: number): number {
  return 1 << (Math.imul(lo, SALT[k]!) >>> 27);
}

/**
 * The bitset of a split-block bloom filter of `hashes`: `fpp` false positives for the distinct
 * values. `powerOfTwo`: the Parquet rule (a power of two of at least 32 bytes, which readers of
 * chunk filters may assume); else the smallest multiple of 32 bytes.
 */
export function bloomBitset(hashes: BigUint64Array, fpp: number, powerOfTwo: boolean): Uint8Array {
  const sorted = hashes.slice().sort();
  let distinct = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) distinct++;
  // Bytes for `fpp`: 8 bits per block word, -8 n / ln(1 - fpp^(1/8)) bits.
  const want = Math.ceil((-8 * Math.max(1, distinct)) / Math.log(1 - fpp ** (1 / 8)) / 8);
  const bytes = powerOfTwo ? Math.max(32, 2 ** Math.ceil(Math.log2(want))) : 32 * Math.ceil(want / 32);
  const words = new Uint32Array(bytes / 4);
  const blocks = bytes / 32;
  const halves = new Uint32Array(sorted.buffer, sorted.byteOffset, sorted.length * 2);
  for (let i = 0; i < sorted.length; i++) {
    const lo = halves[2 * i]!;
    const hi = halves[2 * i + 1]!;
    const block = sbbfBlock(hi, blocks) * 8;
    for (let k = 0; k < 8; k++) words[block + k]! |= sbbfMask(lo, k);
  }
  return new Uint8Array(words.buffer);
}

/**
 * A split-block bloom filter of `hashes` (BloomFilterHeader + bitset): `fpp` false positives (1 %
 * by default) for the distinct values, the bitset a power of two of at least 32 bytes (readers
 * may assume it).
 */
export function bloomFilter(hashes: BigUint64Array, fpp = 0.01): Uint8Array {
  const bits = bloomBitset(hashes, fpp, true);
  // BloomFilterHeader { 1: numBytes, 2: algorithm { 1: BLOCK {} }, 3: hash { 1: XXHASH {} }, 4: compression { 1: UNCOMPRESSED {} } }
  const header = writeThriftStruct(
    new Map([
      [1, { type: T.I32, value: bits.length }],
      [2, { type: T.STRUCT, value: new Map([[1, { type: T.STRUCT, value: new Map() }]]) }],
      [3, { type: T.STRUCT, value: new Map([[1, { type: T.STRUCT, value: new Map() }]]) }],
      [4, { type: T.STRUCT, value: new Map([[1, { type: T.STRUCT, value: new Map() }]]) }],
    ]),
  );
  const out = new Uint8Array(header.length + bits.length);
  out.set(header, 0);
  out.set(bits, header.length);
  return out;
}

export function concatHashes(parts: readonly BigUint64Array[]): BigUint64Array {
  const all = new BigUint64Array(parts.reduce((a, h) => a + h.length, 0));
  parts.reduce((at, h) => (all.set(h, at), at + h.length), 0);
  return all;
}

/**
 * The page filters of one column (src/core/parquet/repage.ts PAGE_BLOOM_KEY has the layout): per
 * row group, its pages' bitsets.
 */
export function pageBloomBlock(groups: readonly (readonly Uint8Array[])[]): Uint8Array {
  const pages = groups.reduce((a, g) => a + g.length, 0);
  const head = 4 * (1 + groups.length + 1 + pages + 1);
  const bits = groups.flat().reduce((a, b) => a + b.length, 0);
  const out = new Uint8Array(head + bits);
  const view = new DataView(out.buffer);
  view.setUint32(0, groups.length, true);
  let page = 0;
  let at = head;
  let slot = 4 * (1 + groups.length + 1);
  groups.forEach((g, i) => {
    view.setUint32(4 * (1 + i), page, true);
    for (const b of g) {
      view.setUint32(slot, at, true);
      slot += 4;
      out.set(b, at);
      at += b.length;
      page++;
    }
  });
  view.setUint32(4 * (1 + groups.length), page, true);
  view.setUint32(slot, at, true);
  return out;
}
