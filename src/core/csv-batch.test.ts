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

const tricky = ["", "plain", 'say "hi"', "back\\slash", "ctl \u0001\u0002\u001f\b\f\n\r\t", "del \u007f", "Zoë ☎ 🎧", "lone \ud800 high", "lone \udc00 low", 'mixed ü then "q" and \u0001'];

describe("CsvBatch.jsonObject", () => {
  test("writes exactly JSON.stringify's text, for every kind of member", () => {
    for (const s of tricky) {
      const kv = ["a", s, "n", 42, "f", -1.5, "big", 2 ** 53 + 2, "neg", -7, "nan", Number.NaN, "t", true, "skip", undefined, "map", { [s || "k"]: s, "x-y": "z" }];
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
