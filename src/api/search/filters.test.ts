import { describe, expect, test } from "bun:test";
import { buildWhere, splitValues, type FilterInput } from "./filters.ts";

const SIP_COLS = new Set([
  "session_id",
  "caller",
  "callee",
  "method",
  "response_code",
  "src_ip",
  "dst_ip",
  "src_port",
  "dst_port",
  "payload",
  "data_extra",
  "node_id",
  "cid",
  "cseq_method",
  "protocol",
]);
const REG_COLS = new Set([...SIP_COLS, "aor", "contact", "expires", "user_agent"]);

const input = (filter: Record<string, unknown>, o: Partial<FilterInput> = {}): FilterInput => ({
  protoType: 1,
  eventType: "call",
  filter,
  virtualFields: new Map([
    ["from_tag", { path: "from_tag", match: "equals" }],
    ["x_leg", { path: "custom_headers.X-Leg", match: "like" }],
    ["pai", { path: "pai_user", match: "present" }],
  ]),
  columns: SIP_COLS,
  ...o,
});

describe("structured search → WHERE", () => {
  test.each([
    [{ call_id: "abc@host" }, "(session_id = $1)", ["abc@host"]],
    [{ call_id: "abc%" }, "(session_id LIKE $1)", ["abc%"]],
    [{ call_id: "a;b" }, "(session_id = $1 OR session_id = $2)", ["a", "b"]],
    [{ from_user: "110;112" }, "(caller = $1 OR caller = $2)", ["110", "112"]],
    [{ method: "invite" }, "method = $1", ["INVITE"]],
    [{ methods: ["INVITE", "BYE"] }, "method IN ($1, $2)", ["INVITE", "BYE"]],
    [{ response_codes: ["486", 603] }, "response_code IN ($1, $2)", [486, 603]],
    [{ src_port: "5060" }, "src_port = $1", [5060]],
    [
      { response_code: "4xx;5XX" },
      "(response_code BETWEEN $1 AND $2 OR response_code BETWEEN $3 AND $4)",
      [400, 499, 500, 599],
    ],
    [{ response_code: "6xx;486" }, "(response_code BETWEEN $1 AND $2 OR response_code = $3)", [600, 699, 486]],
    [{ ip: "10.0.0.1" }, "(src_ip = $1 OR dst_ip = $2)", ["10.0.0.1", "10.0.0.1"]],
    [
      { ip: "10.0.0.1;10.0.0.2" },
      "(src_ip IN ($1, $2) OR dst_ip IN ($3, $4))",
      ["10.0.0.1", "10.0.0.2", "10.0.0.1", "10.0.0.2"],
    ],
    [{ payload: "m=audio" }, "(contains(payload, $1))", ["m=audio"]],
    [{ user_agent: "Yealink" }, `(contains(json_extract_string(data_extra, '$.user_agent'), $1))`, ["Yealink"]],
    [{ ruri_user: "+4930" }, `(contains(json_extract_string(data_extra, '$.request_uri'), $1))`, ["+4930"]],
    [{ capture_id: 2001 }, `(node_id = $1 OR json_extract_string(data_extra, '$.capture_id') = $2)`, [2001, "2001"]],
    [
      { capture_id: "7;9" },
      `(node_id = $1 OR json_extract_string(data_extra, '$.capture_id') = $2 OR node_id = $3 OR json_extract_string(data_extra, '$.capture_id') = $4)`,
      [7, "7", 9, "9"],
    ],
    [{ node: "edge-1" }, `(json_extract_string(data_extra, '$.node_name') = $1)`, ["edge-1"]],
    [{ unknown_key: "x", proto_type: 1, event_type: "call" }, "true", []],
  ])("%j", (filter, sql, params) => {
    const w = buildWhere(input(filter));
    expect(w.sql).toBe(sql);
    expect(w.params).toEqual(params);
  });

  test("call_id in the default profile also matches cid", () => {
    expect(buildWhere(input({ call_id: "x" }, { eventType: "default" })).sql).toBe("(session_id = $1 OR cid = $1)");
  });

  test("registration user_agent is a column", () => {
    expect(buildWhere(input({ user_agent: "x" }, { eventType: "registration", columns: REG_COLS })).sql).toBe(
      "(contains(user_agent, $1))",
    );
  });

  test("virtual like/equals/absent/present with quoted hyphenated keys", () => {
    const w = buildWhere(
      input({ virtual: { from_tag: "t1", x_leg: "b" }, virtual_absent: ["pai"], virtual_present: ["from_tag"] }),
    );
    expect(w.sql).toContain(`json_extract_string(data_extra, '$.from_tag') = $1`);
    expect(w.sql).toContain(`contains(json_extract_string(data_extra, '$.custom_headers."X-Leg"'), $2)`);
    expect(w.sql).toContain(`json_extract_string(data_extra, '$.pai_user') IS NULL`);
    expect(w.applied).toEqual(["virtual.from_tag", "virtual.x_leg", "virtual_absent.pai", "virtual_present.from_tag"]);
  });

  test("virtual handling is skipped for OTLP and line protocol; LP takes only a payload substring", () => {
    expect(
      buildWhere(input({ virtual: { from_tag: "x" }, virtual_present: ["from_tag"], call_id: "y" }, { protoType: 201 }))
        .sql,
    ).toBe("true");
    const lp = input(
      { payload: "cpu", call_id: "y" },
      { protoType: 300, eventType: "main__cpu", columns: new Set(["time", "host", 'odd"name']) },
    );
    expect(buildWhere(lp).sql).toBe(`(contains(CAST(ROW("time", "host", "odd""name") AS VARCHAR), $1))`);
  });

  test("bad integers are a 400 naming the field", () => {
    expect(() => buildWhere(input({ response_code: "abc" }))).toThrow(/filter.response_code/);
    expect(() => buildWhere(input({ capture_id: "edge-1" }))).toThrow(/filter.capture_id/);
    // Past 2^53 JS still calls it an integer; DuckDB refused the bound value (a 500).
    expect(() => buildWhere(input({ response_code: "37002917871141098407356714" }))).toThrow(/filter.response_code/);
  });

  test("splitValues trims and drops empties", () => {
    expect(splitValues([" a ; b", "", null, 3])).toEqual(["a", "b", "3"]);
  });
});

/**
 * Lookups name the exact values a matching row must hold (docs/ARCHITECTURE.md "Point lookups"):
 * the scan drops files whose bloom filters rule them out, so a pattern or a column the table lacks
 * must never become one.
 */
describe("structured search → point lookups", () => {
  const lookups = (filter: Record<string, unknown>, o: Partial<FilterInput> = {}) =>
    buildWhere(input(filter, o)).lookups;
  test("exact Call-ID, caller, callee and addresses are lookups, AND-ed", () => {
    expect(lookups({ call_id: "a@h;b@h" })).toEqual([{ columns: ["session_id"], values: ["a@h", "b@h"] }]);
    expect(lookups({ from_user: "110", to_user: "220", src_ip: "10.0.0.1" })).toEqual([
      { columns: ["caller"], values: ["110"] },
      { columns: ["callee"], values: ["220"] },
      { columns: ["src_ip"], values: ["10.0.0.1"] },
    ]);
    expect(lookups({ ip: "10.0.0.1;10.0.0.2" })).toEqual([
      { columns: ["src_ip", "dst_ip"], values: ["10.0.0.1", "10.0.0.2"] },
    ]);
    expect(lookups({ call_id: "x@h" }, { eventType: "default" })).toEqual([
      { columns: ["session_id", "cid"], values: ["x@h"] },
    ]);
  });
  test("patterns, substring filters, empty values and missing columns are not", () => {
    expect(lookups({ call_id: "abc%" })).toBeUndefined();
    expect(lookups({ from_user: "11%;120" })).toBeUndefined();
    expect(lookups({ payload: "m=audio", user_agent: "Yealink", method: "INVITE" })).toBeUndefined();
    expect(lookups({ from_user: "" })).toBeUndefined();
    expect(lookups({ from_user: "110" }, { columns: new Set(["session_id"]) })).toBeUndefined();
  });
});
