import { describe, expect, test } from "bun:test";
import { AppError } from "../core/index.ts";
import { validateSavedSearches } from "./saved-searches.ts";

const one = (over: Record<string, unknown> = {}) => ({
  id: "s1",
  name: "Failed INVITEs",
  hepid: 1,
  profile: "call",
  filters: { method: "INVITE" },
  range: null,
  ...over,
});

describe("search.saved (docs/DASHBOARD.md)", () => {
  test("keeps the filters, trims the name, drops empty values, defaults range to null", () => {
    expect(
      validateSavedSearches({
        items: [
          {
            id: "a-1",
            name: "  From 1001  ",
            hepid: 1,
            profile: "call",
            filters: { caller: "1001", callee: "", methods: ["INVITE", "BYE"], empty: [], flag: false },
          },
          { id: "b_2", name: "RTCP", hepid: 5, profile: "default", filters: {}, range: { minutes: 1440 } },
        ],
      }),
    ).toEqual({
      items: [
        {
          id: "a-1",
          name: "From 1001",
          hepid: 1,
          profile: "call",
          filters: { caller: "1001", methods: ["INVITE", "BYE"], flag: false },
          range: null,
        },
        { id: "b_2", name: "RTCP", hepid: 5, profile: "default", filters: {}, range: { minutes: 1440 } },
      ],
    });
    expect(validateSavedSearches({})).toEqual({ items: [] });
  });

  test("the same name may be used for another protocol", () => {
    expect(validateSavedSearches({ items: [one(), one({ id: "s2", profile: "registration" })] }).items).toHaveLength(2);
  });

  test.each([
    [[], "data"],
    [{ items: {} }, "data.items"],
    [{ items: ["x"] }, "data.items[0]"],
    [{ items: [one({ id: "has space" })] }, "data.items[0].id"],
    [{ items: [one({ name: "   " })] }, "data.items[0].name"],
    [{ items: [one({ name: "x".repeat(81) })] }, "data.items[0].name"],
    [{ items: [one({ hepid: 70000 })] }, "data.items[0].hepid"],
    [{ items: [one({ profile: "" })] }, "data.items[0].profile"],
    [{ items: [one({ filters: "method=INVITE" })] }, "data.items[0].filters"],
    [{ items: [one({ filters: { "bad key!": "x" } })] }, "data.items[0].filters"],
    [{ items: [one({ filters: { method: 5 } })] }, "data.items[0].filters.method"],
    [{ items: [one({ filters: { methods: ["INVITE", 1] } })] }, "data.items[0].filters.methods[1]"],
    [{ items: [one({ range: { minutes: 0 } })] }, "data.items[0].range.minutes"],
    [{ items: [one({ range: { from: 1, to: 2 } })] }, "data.items[0].range.minutes"],
    [{ items: [one(), one()] }, "data.items[1].id"],
    [{ items: [one(), one({ id: "s2", name: "failed invites" })] }, "data.items[1].name"],
  ])("%j is rejected naming %s", (input, field) => expectRejected(input, field));

  test("more than 100 saved searches are rejected", () => {
    expectRejected(
      { items: Array.from({ length: 101 }, (_x, i) => one({ id: `s${i}`, name: `n${i}` })) },
      "data.items",
    );
    expect(
      validateSavedSearches({ items: Array.from({ length: 100 }, (_x, i) => one({ id: `s${i}`, name: `n${i}` })) })
        .items,
    ).toHaveLength(100);
  });
});

function expectRejected(input: unknown, field: string): void {
  try {
    validateSavedSearches(input);
    throw new Error("accepted");
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("VALIDATION");
    expect((e as AppError).details?.fields).toEqual([field]);
  }
}
