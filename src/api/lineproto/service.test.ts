import { describe, expect, test } from "bun:test";
import type { TableDef } from "../../core/index.ts";
import { lineProtocolFields, lineProtocolTables, lpProfile, tableItem } from "./service.ts";

const lp = (schema: string, name: string, extra: TableDef["columns"] = []): TableDef => ({
  schema,
  name,
  timeColumn: "time",
  sortBy: ["time"],
  columns: [{ name: "time", type: "timestamp" }, ...extra],
});
const hep: TableDef = {
  schema: "main",
  name: "hep_proto_1_call",
  timeColumn: "timestamp",
  sortBy: ["timestamp"],
  columns: [
    { name: "uuid", type: "varchar" },
    { name: "timestamp", type: "timestamp" },
  ],
};

describe("line-protocol discovery and mapping generation", () => {
  test("tables: line-protocol layouts only, by prefix and schema, sorted", () => {
    const all = [lp("b", "x"), hep, lp("a", "lp_cpu"), lp("a", "otlp_logs"), lp("A", "mem")];
    expect(lineProtocolTables(all, "").map(lpProfile)).toEqual(["A__mem", "a__lp_cpu", "b__x"]);
    expect(lineProtocolTables(all, "lp_").map(lpProfile)).toEqual(["a__lp_cpu"]);
    expect(lineProtocolTables(all, "", "a").map(lpProfile)).toEqual(["A__mem", "a__lp_cpu"]);
  });

  test("item: catalog, fqn, DuckDB types, 1-based positions", () => {
    expect(tableItem(lp("s", "t", [{ name: "v", type: "float64" }]), true)).toEqual({
      catalog: "svc_lake",
      schema: "s",
      name: "t",
      fqn: "svc_lake.s.t",
      columns: [
        { name: "time", data_type: "TIMESTAMP", nullable: true, position: 1 },
        { name: "v", data_type: "DOUBLE", nullable: true, position: 2 },
      ],
    });
    expect(tableItem(lp("s", "t"), false).columns).toBeUndefined();
  });

  test.each([
    ["time", "timestamp", { type: "string", form_type: "datetime", index: "primary", sid_type: true, selected: true }],
    ["host", "varchar", { type: "string", form_type: "input", index: "none" }],
    ["n", "int64", { type: "integer", form_type: "input" }],
    ["x", "float64", { type: "number", form_type: "input" }],
    ["ok", "boolean", { type: "boolean", form_type: "switch" }],
    ["raw", "varchar", { hide: true }],
    ["_seq", "int64", { hide: true, type: "integer" }],
  ] as const)("field for column %s (%s)", (name, type, want) => {
    const def = lp("s", "t", name === "time" ? [] : [{ name, type }]);
    const field = lineProtocolFields(def).find((f) => f.id === name)!;
    expect(field).toMatchObject({ id: name, name, ...want });
    if (!("hide" in want)) expect(field.hide).toBeUndefined();
  });
});
