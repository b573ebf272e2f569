import { expect, test } from "bun:test";
import { partialNote } from "./search-fetch.ts";

test("partialNote names each node that failed or timed out, and says nothing for a whole answer", () => {
  const nodes = [
    { name: "a", status: "ok", rows: 3, ms: 4 },
    { name: "b", status: "failed", rows: 0, ms: 1, error: "connection refused" },
    { name: "c", status: "timeout", rows: 0, ms: 2000 },
    { name: "d", status: "skipped", rows: 0, ms: 1 },
  ];
  expect(partialNote({ partial: true, nodes })).toBe(
    "warning: partial result, rows of some nodes are missing: b failed (connection refused); c timed out",
  );
  expect(partialNote({ partial: false, nodes })).toBeUndefined();
  expect(partialNote({})).toBeUndefined();
});
