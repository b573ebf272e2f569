import { describe, expect, test } from "bun:test";
import { lexSql } from "./lexer.ts";
import { resolveTableRef } from "./table-resolution.ts";

const allowed = new Set([
  "svc_lake.main.hep_proto_1_call",
  "svc_lake.main.mem_hep_proto_1_call",
  "svc_lake.telegraf.cpu",
]);

/** Resolves the reference at the start of `ref` (what follows it decides about an alias). */
function resolve(ref: string, ctes: string[] = []) {
  const r = resolveTableRef(ref, lexSql(ref).tokens, 0, (n) => ctes.includes(n), allowed);
  return r.ok
    ? { last: r.value.last, table: r.value.table, edit: r.value.edit?.text }
    : { refused: r.reason, detail: r.detail };
}

describe("table resolution", () => {
  test.each<[string, number, string, string]>([
    ["hep_proto_1_call", 0, "svc_lake.main.hep_proto_1_call", 'svc_lake."main"."hep_proto_1_call"'],
    ["main.hep_proto_1_call x", 2, "svc_lake.main.hep_proto_1_call", 'svc_lake."main"."hep_proto_1_call"'],
    ["svc_lake.hep_proto_1_call", 2, "svc_lake.main.hep_proto_1_call", 'svc_lake."main"."hep_proto_1_call"'],
    ['svc_lake."main"."HEP_PROTO_1_CALL"', 4, "svc_lake.main.hep_proto_1_call", 'svc_lake."main"."hep_proto_1_call"'],
    [
      "SVC_LAKE.main.mem_hep_proto_1_call",
      4,
      "svc_lake.main.mem_hep_proto_1_call",
      'svc_lake."main"."mem_hep_proto_1_call"',
    ],
    ["telegraf.cpu", 2, "svc_lake.telegraf.cpu", 'svc_lake."telegraf"."cpu"'],
  ])("%s is the lake view %s", (ref, last, table, edit) => {
    expect(resolve(ref)).toEqual({ last, table, edit });
  });

  test("a CTE in scope keeps the user's name as alias unless one follows", () => {
    expect(resolve("hep_proto_1_call WHERE", ["hep_proto_1_call"])).toEqual({
      last: 0,
      table: undefined,
      edit: '"__svc_cte_hep_proto_1_call" AS "hep_proto_1_call"',
    });
    expect(resolve("x y", ["x"])).toEqual({ last: 0, table: undefined, edit: '"__svc_cte_x"' });
    // a qualified name is never a CTE
    expect(resolve("main.x", ["x"])).toMatchObject({ refused: "table_not_allowed" });
  });

  test("allowed generators pass without a table; other table functions are refused by name", () => {
    expect(resolve("range(10)")).toEqual({ last: 0, table: undefined, edit: undefined });
    expect(resolve("unnest([1])")).toEqual({ last: 0, table: undefined, edit: undefined });
    expect(resolve("read_csv('/etc/passwd')")).toMatchObject({
      refused: "forbidden_function",
      detail: expect.stringContaining("read_csv"),
    });
    expect(resolve("histogram(t, c)")).toMatchObject({
      refused: "forbidden_function",
      detail: expect.stringContaining("histogram"),
    });
    expect(resolve("main.range(10)")).toMatchObject({
      refused: "forbidden_function",
      detail: expect.stringContaining("main.range"),
    });
  });

  test.each<[string, string]>([
    ["pg_views", "pg_views"],
    ["information_schema.tables", "information_schema.tables"],
    ["memory.main.x", "not a svc_lake table"],
    ["a.svc_lake.main.hep_proto_1_call", "not a svc_lake table"],
    ['"svc_lake.main.hep_proto_1_call"', "svc_lake.main.hep_proto_1_call"],
    ["svc_lake.main.mem_hep_proto_1_call__g3", "buffer generation"],
    ["svc_lake.other.hep_proto_1_call", "svc_lake.other.hep_proto_1_call"],
  ])("%s is refused", (ref, named) => {
    expect(resolve(ref)).toMatchObject({ refused: "table_not_allowed", detail: expect.stringContaining(named) });
  });
});
