/**
 * The split-block bloom filter checks of point lookups (docs/ARCHITECTURE.md "Point lookups"):
 * a value's XXH64 as the Parquet format and DuckDB hash it, its probe, and the check of a probe
 * against a bitset in memory or a block of a filter on disk. Pure code shared by the bloom index
 * (bloom-index.ts) and the lookups by page (page-match.ts).
 */
import { readSync } from "node:fs";
import { sbbfBlock, sbbfMask } from "../core/index.ts";

/** The XXH64 (seed 0) of a value's plain encoding: a BYTE_ARRAY's UTF-8 bytes, no length prefix. */
export function bloomHash(value: string): bigint {
  return BigInt.asUintN(64, BigInt(Bun.hash.xxHash64(Buffer.from(value, "utf8"), 0n)));
}

/**
 * One hash's probe, worked out once for every bitset it is checked against: the upper 32 bits
 * pick the block, the lower 32 give one bit in each of the block's eight words.
 */
export interface Probe {
  hi: number;
  masks: Uint32Array;
}

export function probeOf(hash: bigint): Probe {
  const lo = Number(hash & 0xffffffffn);
  const masks = new Uint32Array(8);
  for (let i = 0; i < 8; i++) masks[i] = sbbfMask(lo, i);
  return { hi: Number(hash >> 32n), masks };
}

/** The eight words of a block at word `at` hold the probe's bits. */
function blockHolds(words: Uint32Array, at: number, p: Probe): boolean {
  for (let i = 0; i < 8; i++) if ((words[at + i]! & p.masks[i]!) === 0) return false;
  return true;
}

/** The check of one probe against a bitset as 32-bit words (blocks of eight). */
export function wordsMayHold(words: Uint32Array, p: Probe): boolean {
  const blocks = words.length >>> 3;
  return blocks === 0 || blockHolds(words, sbbfBlock(p.hi, blocks) << 3, p);
}

/** Where the block of a probe lies in a filter on disk ([offset, offset + length): header, then the bitset); undefined when it has none. */
export function wholeBlockAt(f: { offset: number; length: number }, p: Probe): number | undefined {
  const size = 2 ** Math.floor(Math.log2(f.length));
  const blocks = size >>> 5;
  return blocks === 0 ? undefined : f.offset + f.length - size + sbbfBlock(p.hi, blocks) * 32;
}

/** The check of one probe against a filter on disk, one block read. */
export function wholeMayHold(fd: number, f: { offset: number; length: number }, p: Probe): boolean {
  const at = wholeBlockAt(f, p);
  if (at === undefined) return true;
  const block = new Uint32Array(8);
  if (readSync(fd, block, 0, 32, at) !== 32) throw new Error("short read of a bloom filter");
  return blockHolds(block, 0, p);
}

/** Split-block bloom filter check of one hash against a bitset (32-byte blocks of 8 little-endian words). */
export function bitsetMayHold(bits: Uint8Array, hash: bigint): boolean {
  const aligned = bits.byteOffset % 4 === 0 ? bits : bits.slice();
  return wordsMayHold(new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >>> 2), probeOf(hash));
}
