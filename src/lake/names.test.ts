import { describe, expect, test } from "bun:test";
import { reservedSchemaProblem, tableNameProblem } from "./names.ts";

describe("reserved lake names", () => {
  test.each([
    "information_schema",
    "Information_Schema",
    "pg_catalog",
    "temp",
    "TEMP",
    "system",
    "memory",
    "svc_lake",
    "svc_files",
    "_quarantine",
    "_Quarantine",
    "duckdb_anything",
    "sqlite_master",
    "SQLITE_x",
  ])("schema %p is refused with the rule named", (schema) => {
    expect(reservedSchemaProblem(schema)).toMatch(/reserved/);
  });

  test.each(["main", "telegraf", "pg_metrics", "information", "svc", "tempdb", "duckdb", "quarantine"])(
    "schema %p is allowed",
    (schema) => {
      expect(reservedSchemaProblem(schema)).toBeUndefined();
    },
  );

  test("a table clashing with a buffer view is refused either way round, case-insensitively", () => {
    const tables = new Set(["main.cpu", "main.mem_disk"]);
    const has = (s: string, n: string) => tables.has(`${s}.${n}`.toLowerCase());
    expect(tableNameProblem("main", "MEM_cpu", has)).toContain('buffer view of table "cpu"');
    expect(tableNameProblem("main", "Disk", has)).toContain('would hide table "mem_Disk"');
    expect(tableNameProblem("other", "mem_cpu", has)).toBeUndefined();
    expect(tableNameProblem("main", "mem", has)).toBeUndefined();
    expect(tableNameProblem("pg_catalog", "cpu", has)).toMatch(/reserved/);
  });
});
