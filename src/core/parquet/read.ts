/**
 * Reading Parquet files written by DuckDB or svc (docs/STORAGE.md "Paged data files"): exact
 * positional reads and the RLE / bit-packed hybrid that definition levels and dictionary indices
 * use. Shared by the page cutter (repage.ts) and the page reader (src/lake/page-reader.ts).
 */
import { readSync } from "node:fs";

/** Parquet's numbers for what svc reads and writes (parquet.thrift PageType, Encoding, CompressionCodec). */
export const PAGE_DATA = 0;
export const PAGE_DICTIONARY = 2;
export const ENC_PLAIN = 0;
export const ENC_PLAIN_DICTIONARY = 2;
export const ENC_RLE = 3;
export const ENC_RLE_DICTIONARY = 8;
export const CODEC_NONE = 0;
export const CODEC_ZSTD = 6;

/** A page body as stored → its bytes uncompressed (the codecs svc writes: none, zstd). */
export function decompressPage(codec: number, body: Uint8Array): Uint8Array {
  if (codec === CODEC_NONE) return body;
  if (codec === CODEC_ZSTD) {
    // A view of the Buffer zstd returns: `new Uint8Array(buffer)` would copy every byte again.
    const out = Bun.zstdDecompressSync(body);
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }
  throw new Error(`parquet: codec ${codec} is not read here`);
}

/**
 * The little-endian u32 at `at` (a PLAIN BYTE_ARRAY's length): plain byte arithmetic, which the
 * JIT inlines, where DataView.getUint32 was a sixth of a page fetch's time.
 */
export function u32le(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 16777216;
}

/** Exactly `length` bytes at `offset` of an open file (an error when the file ends before). */
export function preadExact(fd: number, offset: number, length: number): Uint8Array {
  const b = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, b, got, length - got, offset + got);
    if (n === 0) throw new Error("data file ends early");
    got += n;
  }
  return b;
}

/** Where the last `runHeader` ended: the run's first byte. */
let headerEnd = 0;

/**
 * The ULEB128 header of a run of the RLE / bit-packed hybrid at buf[at] (its low bit: bit-packed;
 * the rest: the run's length or its groups of eight); `headerEnd` is set past it. Shared by the
 * hybrid's decoders below, on their hot loops (one module-level cursor instead of an object a run).
 */
function runHeader(buf: Uint8Array, at: number): number {
  let head = 0;
  for (let shift = 0; ; shift += 7) {
    const b = buf[at++]!;
    head += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  headerEnd = at;
  return head;
}

/**
 * The first `count` values of the RLE / bit-packed hybrid of `width` bits (at most 32) in
 * buf[at, end): a page's definition levels or dictionary indices, decoded only as far as needed.
 */
export function decodeHybrid(buf: Uint8Array, at: number, end: number, width: number, count: number): Uint32Array {
  const out = new Uint32Array(count);
  const bytes = Math.ceil(width / 8);
  const mask = width >= 32 ? 0xffffffff : 2 ** width - 1;
  let n = 0;
  while (n < count && at < end) {
    const head = runHeader(buf, at);
    at = headerEnd;
    if (head % 2 === 1) {
      const groups = Math.floor(head / 2);
      const values = Math.min(groups * 8, count - n);
      for (let i = 0, bit = at * 8; i < values; i++, n++, bit += width) {
        // Up to 32 bits starting at `bit`, from the five bytes that can hold them.
        const byte = bit >>> 3;
        const lo = buf[byte]! | (buf[byte + 1]! << 8) | (buf[byte + 2]! << 16) | ((buf[byte + 3]! << 24) >>> 0);
        const v = (lo >>> (bit & 7)) + (bit & 7 ? (buf[byte + 4] ?? 0) * 2 ** (32 - (bit & 7)) : 0);
        out[n] = v & mask;
      }
      at += groups * width;
    } else {
      let v = 0;
      for (let k = 0; k < bytes; k++) v += buf[at + k]! * 2 ** (8 * k);
      at += bytes;
      const run = Math.min(count - n, Math.floor(head / 2));
      out.fill(v, n, n + run);
      n += run;
    }
  }
  if (n < count) throw new Error("RLE run ends early");
  return out;
}

/** Set bits of each byte value. */
const POPCOUNT = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let v = b; v; v >>= 1) n += v & 1;
  return n;
});

/**
 * For each row `ks[i]` (ascending) of the RLE / bit-packed hybrid of bit width 1 in buf[at, end)
 * (a flat OPTIONAL column's definition levels): whether it holds a value (`defined[i]`) and how
 * many rows before it do (`rank[i]`, the index of its value among the page's values); undefined
 * when one run of 1 covers every row asked (no NULL). Runs are skipped whole and bit-packed bytes
 * counted by a table, so a page of thousands of mostly NULL rows costs a few hundred steps, not
 * one per row.
 */
export function levelRanks(
  buf: Uint8Array,
  at: number,
  end: number,
  ks: readonly number[],
): { defined: Uint8Array; rank: Uint32Array } | undefined {
  const need = ks.length > 0 ? ks[ks.length - 1]! + 1 : 0;
  const defined = new Uint8Array(ks.length);
  const rank = new Uint32Array(ks.length);
  let n = 0; // rows before this run
  let r = 0; // rows holding a value before this run
  let i = 0;
  while (i < ks.length && at < end) {
    const head = runHeader(buf, at);
    at = headerEnd;
    const length = Math.floor(head / 2);
    if (head % 2 === 1) {
      // `length` bytes of eight rows each.
      const stop = n + length * 8;
      let byte = at;
      for (; i < ks.length && ks[i]! < stop; i++) {
        const k = ks[i]! - n;
        for (const kb = at + (k >>> 3); byte < kb; byte++) r += POPCOUNT[buf[byte]!]!;
        const b = buf[at + (k >>> 3)]!;
        rank[i] = r + POPCOUNT[b & ((1 << (k & 7)) - 1)]!;
        defined[i] = (b >> (k & 7)) & 1;
      }
      for (; byte < at + length; byte++) r += POPCOUNT[buf[byte]!]!;
      n = stop;
      at += length;
    } else {
      if (n === 0 && length >= need && buf[at] === 1) return undefined;
      const v = buf[at++]! & 1;
      const stop = n + length;
      for (; i < ks.length && ks[i]! < stop; i++) {
        rank[i] = r + v * (ks[i]! - n);
        defined[i] = v;
      }
      r += v * length;
      n = stop;
    }
  }
  if (i < ks.length) throw new Error("RLE run ends early");
  return { defined, rank };
}

/**
 * The first `count` values of an RLE / bit-packed hybrid of bit width 1 in buf[at, end) (a flat
 * OPTIONAL column's definition levels): 1 where the row holds a value; undefined when one run of
 * 1 covers them (no NULL, as writers encode it: nothing to decode). decodeHybrid's general loop,
 * specialised: a bit-packed byte is eight rows, a run's value one byte.
 */
export function bitLevels(buf: Uint8Array, at: number, end: number, count: number): Uint8Array | undefined {
  const out = new Uint8Array(count);
  let n = 0;
  while (n < count && at < end) {
    const head = runHeader(buf, at);
    at = headerEnd;
    const length = Math.floor(head / 2);
    if (head % 2 === 1) {
      const stop = Math.min(count, n + length * 8);
      let i = at;
      for (; n + 8 <= stop; i++, n += 8) {
        const b = buf[i]!;
        out[n] = b & 1;
        out[n + 1] = (b >> 1) & 1;
        out[n + 2] = (b >> 2) & 1;
        out[n + 3] = (b >> 3) & 1;
        out[n + 4] = (b >> 4) & 1;
        out[n + 5] = (b >> 5) & 1;
        out[n + 6] = (b >> 6) & 1;
        out[n + 7] = b >> 7;
      }
      for (let bit = 0; n < stop; bit++, n++) out[n] = (buf[i]! >> bit) & 1;
      at += length;
    } else {
      if (n === 0 && length >= count && buf[at] === 1) return undefined;
      const run = Math.min(count - n, length);
      if (buf[at++]! & 1) out.fill(1, n, n + run);
      n += run;
    }
  }
  if (n < count) throw new Error("RLE run ends early");
  return out;
}
