import { describe, expect, test } from "bun:test";
import { applyPostFilters, parsePostFilter, postFilterSummary } from "./post-filter.ts";

const rows = [
  {
    method: "INVITE",
    src_ip: "10.0.0.1",
    caller: "Alice",
    response_code: null,
    data_extra: { user_agent: "Polycom VVX" },
  },
  { method: "BYE", src_ip: "10.0.0.2", caller: "bob", response_code: null, data_extra: { user_agent: "Yealink" } },
  { method: null, src_ip: "10.0.0.2", caller: "bob", response_code: 486, data_extra: null },
];

describe("post-filters", () => {
  test.each([
    ["invite", [0]],
    ["ALICE", [0]],
    ["10.0.0.2", [1, 2]],
    ["method=bye", [1]],
    ["src_ip=10.0.0.1,response_code=486", [0, 2]],
    ["invite,bye", [0, 1]],
    ["polycom", [0]],
    ["data_extra.user_agent=yealink", [1]],
    ["DATA_EXTRA.USER_AGENT=yea", [1]],
    ["no_such_field=x", []],
    ["486", [2]],
    ["caller=", [0, 1, 2]],
  ])("--grep %p keeps rows %p", (pattern, kept) => {
    expect(applyPostFilters(rows, [parsePostFilter(pattern)], []).map((r) => rows.indexOf(r))).toEqual(kept);
  });

  test("--exclude drops matches; several --grep all apply", () => {
    expect(applyPostFilters(rows, [], [parsePostFilter("method=bye,486")]).map((r) => rows.indexOf(r))).toEqual([0]);
    expect(
      applyPostFilters(rows, [parsePostFilter("bob"), parsePostFilter("486")], []).map((r) => rows.indexOf(r)),
    ).toEqual([2]);
    expect(
      applyPostFilters(rows, [parsePostFilter("10.0.0.2")], [parsePostFilter("method=BYE")]).map((r) =>
        rows.indexOf(r),
      ),
    ).toEqual([2]);
  });

  test("a pattern that is not field=text is plain text (Call-ID values may contain =)", () => {
    expect(parsePostFilter("a b=c").terms).toEqual([{ text: "a b=c" }]);
    expect(parsePostFilter("=x").terms).toEqual([{ text: "=x" }]);
    expect(parsePostFilter(" x , ,y").terms).toEqual([{ text: "x" }, { text: "y" }]);
  });

  test("summary line", () => {
    expect(postFilterSummary([parsePostFilter("INVITE")], [parsePostFilter("src_ip=10.0.0.9")], 12, 4)).toBe(
      'Post-filter grep="INVITE" exclude="src_ip=10.0.0.9": 12 → 4 rows (filtered the 12 rows fetched)',
    );
    expect(postFilterSummary([parsePostFilter("INVITE")], [], 50, 3, { reached: true, limit: 50 })).toBe(
      'Post-filter grep="INVITE": 50 → 3 rows (filtered only the 50 rows fetched: the search stopped at --limit 50, so more rows may match; raise --limit or narrow the search)',
    );
  });
});
