import { describe, expect, test } from "bun:test";
import { decodeHybrid, levelRanks } from "../core/index.ts";
import { levels } from "./page-index.ts";

/** ULEB128, as the hybrid's run headers are written. */
function varint(v: number): number[] {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/**
 * A page body's definition levels (u32 length, then the RLE / bit-packed hybrid of width 1) for
 * `bits`, as a mix of runs and bit-packed groups: what DuckDB and other writers produce.
 */
function hybrid(bits: number[], random: () => number): Uint8Array {
  const enc: number[] = [];
  let i = 0;
  while (i < bits.length) {
    let run = 1;
    while (i + run < bits.length && bits[i + run] === bits[i]) run++;
    if (run >= 8 && random() < 0.8) {
      enc.push(...varint(run * 2), bits[i]!);
      i += run;
      continue;
    }
    // Bit-packed: whole groups of 8 (the last one padded with zeros past the end).
    const groups = 1 + Math.floor(random() * 4);
    enc.push(...varint(groups * 2 + 1));
    for (let g = 0; g < groups; g++) {
      let byte = 0;
      for (let b = 0; b < 8; b++) if ((bits[i + g * 8 + b] ?? 0) === 1) byte |= 1 << b;
      enc.push(byte);
    }
    i += groups * 8;
  }
  const body = new Uint8Array(4 + enc.length + 16);
  new DataView(body.buffer).setUint32(0, enc.length, true);
  body.set(enc, 4);
  return body;
}

/** A small deterministic generator (xorshift32). */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

describe("levels", () => {
  test("decodes mixed runs and bit-packed groups of width 1 as the general hybrid decoder does", () => {
    const random = rng(12345);
    for (let round = 0; round < 300; round++) {
      const rows = 1 + Math.floor(random() * 3000);
      const density = [0, 0.02, 0.5, 0.98, 1][round % 5]!;
      // Long stretches of one level (runs) and noisy ones (groups).
      const bits: number[] = [];
      while (bits.length < rows) {
        const stretch = 1 + Math.floor(random() * 40);
        const noisy = random() < 0.5;
        const level = random() < density ? 1 : 0;
        for (let k = 0; k < stretch && bits.length < rows; k++) bits.push(noisy ? (random() < density ? 1 : 0) : level);
      }
      const body = hybrid(bits, random);
      const n = new DataView(body.buffer).getUint32(0, true);
      for (const upto of [rows, Math.floor(rows / 2), Math.min(rows, 9)]) {
        const { defined, at } = levels(body, upto, true);
        expect(at).toBe(4 + n);
        const want = bits.slice(0, upto);
        if (defined === undefined) expect(want.every((b) => b === 1)).toBe(true);
        else {
          expect([...defined]).toEqual(want);
          expect([...defined]).toEqual([...decodeHybrid(body, 4, 4 + n, 1, upto)]);
        }
      }
    }
  });

  test("a page with fewer levels than asked for is an error, not a short answer", () => {
    const body = hybrid([1, 0, 1, 1, 0, 0, 1, 0], rng(7));
    expect(() => levels(body, 40, true)).toThrow("RLE run ends early");
  });

  test("a required column has no levels: the values start at the body", () => {
    expect(levels(new Uint8Array(8), 5, false)).toEqual({ defined: undefined, at: 0 });
  });
});

describe("levelRanks", () => {
  test("each asked row's level and the count of values before it, as the decoded levels give them", () => {
    const random = rng(4242);
    for (let round = 0; round < 300; round++) {
      const rows = 1 + Math.floor(random() * 20_000);
      const density = [0, 0.01, 0.5, 0.99, 1][round % 5]!;
      const bits: number[] = [];
      while (bits.length < rows) {
        const stretch = 1 + Math.floor(random() * 400);
        const noisy = random() < 0.5;
        const level = random() < density ? 1 : 0;
        for (let k = 0; k < stretch && bits.length < rows; k++) bits.push(noisy ? (random() < density ? 1 : 0) : level);
      }
      const body = hybrid(bits, random);
      const n = new DataView(body.buffer).getUint32(0, true);
      // Rows asked: a few, sorted, the first and last included now and then, two in one byte too.
      const ks = [...new Set(Array.from({ length: 1 + Math.floor(random() * 12) }, () => Math.floor(random() * rows)))];
      if (random() < 0.3) ks.push(0, rows - 1);
      if (ks[0]! + 1 < rows) ks.push(ks[0]! + 1);
      const sorted = [...new Set(ks)].sort((a, b) => a - b);
      const got = levelRanks(body, 4, 4 + n, sorted);
      const prefix = (k: number) => bits.slice(0, k).reduce((a, b) => a + b, 0);
      if (got === undefined) expect(bits.slice(0, sorted[sorted.length - 1]! + 1).every((b) => b === 1)).toBe(true);
      else {
        expect([...got.defined]).toEqual(sorted.map((k) => bits[k]!));
        expect([...got.rank]).toEqual(sorted.map(prefix));
      }
    }
  });

  test("rows past the levels are an error", () => {
    const body = hybrid([1, 0, 1, 1, 0, 0, 1, 0], rng(7));
    expect(() => levelRanks(body, 4, 4 + new DataView(body.buffer).getUint32(0, true), [3, 40])).toThrow(
      "RLE run ends early",
    );
  });
});
