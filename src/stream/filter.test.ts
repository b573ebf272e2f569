import { describe, expect, test } from "bun:test";
import { AppError } from "../core/index.ts";
import { filterQuery, parseStreamFilter } from "./filter.ts";

const parse = (q: string, historyLimit = 200) => parseStreamFilter(new URLSearchParams(q), { historyLimit });

describe("stream filter query", () => {
  test.each([
    ["", { onlyRequests: false, includePayload: false, history: 0 }],
    ["proto=1&proto=5&proto=1", { protos: new Set([1, 5]), onlyRequests: false, includePayload: false, history: 0 }],
    [
      "method=invite&method=Bye",
      { methods: new Set(["INVITE", "BYE"]), onlyRequests: false, includePayload: false, history: 0 },
    ],
    ["only_requests=true&include_payload=1&history=50", { onlyRequests: true, includePayload: true, history: 50 }],
    ["only_requests=0&include_payload=false", { onlyRequests: false, includePayload: false, history: 0 }],
    ["history=5000", { onlyRequests: false, includePayload: false, history: 200 }],
    ["access_token=abc&proto=100", { protos: new Set([100]), onlyRequests: false, includePayload: false, history: 0 }],
    [
      "callid=a84b4c76e66710%40pbx&callid=%20Leg-2%20&callid=a84b4c76e66710%40pbx",
      { callIds: new Set(["a84b4c76e66710@pbx", "Leg-2"]), onlyRequests: false, includePayload: false, history: 0 },
    ],
  ])("%p", (q, want) => {
    expect(parse(q)).toEqual(want);
  });

  test.each([
    ["proto=x", "proto"],
    ["proto=256", "proto"],
    ["proto=-1", "proto"],
    ["proto=", "proto"],
    ["method=FOO", "method"],
    ["only_requests=yes", "only_requests"],
    ["only_requests=1&only_requests=0", "only_requests"],
    ["include_payload=2", "include_payload"],
    ["history=1.5", "history"],
    ["history=1&history=1", "history"],
    ["history=9999999999", "history"],
    ["node=1", "node"],
    ["callid=", "callid"],
    ["callid=%20", "callid"],
    [`callid=${"x".repeat(257)}`, "callid"],
    [Array.from({ length: 33 }, (_, i) => `callid=c${i}`).join("&"), "callid"],
  ])("%p is refused naming %p", (q, field) => {
    let err: unknown;
    try {
      parse(q);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("VALIDATION");
    expect((err as AppError).details).toEqual({ fields: [field] });
  });

  test("filterQuery gives the same filter back (what the coordinator asks a node)", () => {
    const f = parse(
      "proto=1&proto=5&method=invite&callid=a%40b&callid=c%26d&only_requests=1&include_payload=1&history=7",
    );
    expect(parse(filterQuery(f))).toEqual(f);
    expect(filterQuery(parse(""))).toBe("");
  });
});
