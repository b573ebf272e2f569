import { describe, expect, test } from "bun:test";
import type { FetchedRows } from "./search-fetch.ts";
import { countLine, groupDigits, limitNote } from "./search-output.ts";

const fetched = (o: Partial<FetchedRows>): FetchedRows => ({
  rows: [{}, {}],
  keys: [],
  received: 2,
  limitReached: false,
  limit: 2,
  notes: [],
  ...o,
});

describe("the count line and the stderr note when the limit cut the answer", () => {
  test.each([
    [0, "0"],
    [999, "999"],
    [1000, "1 000"],
    [12345, "12 345"],
    [1234567, "1 234 567"],
  ])("groupDigits(%d) = %s", (n, text) => expect(groupDigits(n)).toBe(text));

  test("not cut: no note", () => {
    expect(limitNote(fetched({ total: 2, totalExact: true }))).toBeUndefined();
    expect(countLine(fetched({}))).toBe("2 rows");
  });

  test("cut: how many matched, exact or at least", () => {
    expect(limitNote(fetched({ limitReached: true, total: 12345, totalExact: true }))).toBe(
      "svc: showing 2 of 12 345 matches; raise --limit for more",
    );
    expect(limitNote(fetched({ limitReached: true, total: 100000, totalExact: false }))).toBe(
      "svc: showing 2 of more than 100 000 matches; raise --limit for more",
    );
    expect(limitNote(fetched({ limitReached: true }))).toBe("svc: showing the first 2 rows; raise --limit for more");
    expect(countLine(fetched({ limitReached: true }))).toBe("2 rows (limit 2 reached)");
  });
});
