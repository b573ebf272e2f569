import { describe, expect, test } from "bun:test";
import { CsvBatch, SPOOL_QUOTE } from "./csv-batch.ts";

/** The one field of a one-column row, without its quotes and the newline. */
function field(b: CsvBatch): string {
  const v = b.view();
  expect(v[0]).toBe(SPOOL_QUOTE);
  expect(v[v.length - 2]).toBe(SPOOL_QUOTE);
  expect(v[v.length - 1]).toBe(10);
  return new TextDecoder().decode(v.subarray(1, v.length - 2));
}

const tricky = [
  "",
  "plain",
  'say "hi"',
  "back\\slash",
  "ctl \u0001\u0002\u001f\b\f\n\r\t",
  "del \u007f",
  "Zoë ☎ 🎧",
  "lone \ud800 high",
  "lone \udc00 low",
  'mixed ü then "q" and \u0001',
];

describe("CsvBatch.jsonObject", () => {
  test("writes exactly JSON.stringify's text, for every kind of member", () => {
    for (const s of tricky) {
      const kv = [
        "a",
        s,
        "n",
        42,
        "f",
        -1.5,
        "big",
        2 ** 53 + 2,
        "neg",
        -7,
        "nan",
        Number.NaN,
        "t",
        true,
        "skip",
        undefined,
        "map",
        { [s || "k"]: s, "x-y": "z" },
      ];
      const obj: Record<string, unknown> = {};
      for (let i = 0; i < kv.length; i += 2) if (kv[i + 1] !== undefined) obj[kv[i] as string] = kv[i + 1];
      const b = new CsvBatch(1, 64);
      b.jsonObject(kv).end();
      const text = field(b);
      expect(text).toBe(JSON.stringify(obj));
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(obj)));
    }
  });

  test("an empty object, and the spool quote never appears raw inside", () => {
    const b = new CsvBatch(1, 8);
    b.jsonObject(["only", undefined]).end();
    expect(field(b)).toBe("{}");
    const c = new CsvBatch(1, 8);
    c.jsonObject(["q", "\u0001\u0001"]).end();
    const inner = c.view().subarray(1, c.view().length - 2);
    expect(inner.includes(SPOOL_QUOTE)).toBe(false);
    expect(JSON.parse(field(c))).toEqual({ q: "\u0001\u0001" });
  });
});

describe("CsvBatch.uuidv7", () => {
  /** The ids of `times` (ms, fractions allowed), each written as its own row. */
  const ids = (times: number[]): string[] =>
    times.map((t) => {
      const b = new CsvBatch(1, 64);
      b.uuidv7(t);
      b.end();
      return field(b);
    });

  test("a UUIDv7 of that millisecond, its fraction in the 12 bits after the version", () => {
    const [id] = ids([1_764_000_000_123.5]);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const hex = id!.replaceAll("-", "");
    expect(Number.parseInt(hex.slice(0, 12), 16)).toBe(1_764_000_000_123);
    // 0.5 ms = 2048/4096 (or one step more when this thread already wrote a later id).
    expect(Number.parseInt(hex.slice(13, 16), 16)).toBeGreaterThanOrEqual(2048);
  });

  test("ids never go backwards on one thread: same time, earlier time, sub-millisecond steps", () => {
    const base = 1_900_000_000_000;
    const list = ids([base + 0.25, base + 0.25, base + 0.1, base + 0.75, base + 0.75001, base - 5, base + 1]);
    expect([...list].sort()).toEqual(list);
    expect(new Set(list).size).toBe(list.length);
  });
});
