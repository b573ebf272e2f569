import { describe, expect, test } from "bun:test";
import { countText, formatCount, partialText } from "./result-limit.ts";

const page = (o: { total: number; total_exact?: boolean; has_more: boolean }) => ({
  limit: 200,
  offset: 0,
  next_cursor: o.has_more ? "200:-timestamp" : null,
  total_exact: true,
  ...o,
});

describe("the results count line", () => {
  test.each([
    [7, "7"],
    [1000, "1\u00a0000"],
    [12345, "12\u00a0345"],
    [1234567, "1\u00a0234\u00a0567"],
  ])("formatCount(%d)", (n, text) => expect(formatCount(n)).toBe(text));

  test("every match shown, cut by the limit, or more than a capped count", () => {
    expect(countText(1, undefined)).toBe("1 message");
    expect(countText(14, page({ total: 14, has_more: false }))).toBe("14 messages");
    expect(countText(200, page({ total: 12345, has_more: true }))).toBe("first 200 of 12\u00a0345 messages");
    expect(countText(200, page({ total: 100000, total_exact: false, has_more: true }))).toBe(
      "first 200 of more than 100\u00a0000 messages",
    );
  });
});

describe("the partial-answer line of a coordinator over several nodes", () => {
  const nodes = [
    { name: "local", status: "ok" as const, rows: 5, ms: 3 },
    { name: "pop-2", status: "failed" as const, rows: 0, ms: 1, error: "connection refused" },
    { name: "pop-3", status: "timeout" as const, rows: 0, ms: 300 },
    { name: "pop-4", status: "skipped" as const, rows: 0, ms: 0, error: "no data in the window" },
  ];
  test("names each node that failed or timed out, and nothing for a whole answer", () => {
    expect(partialText({ partial: true, nodes })).toBe(
      "Partial answer: node pop-2 failed (connection refused); node pop-3 timed out. Its rows are missing.",
    );
    expect(partialText({ partial: false, nodes })).toBeUndefined();
    expect(partialText({})).toBeUndefined();
  });
});
