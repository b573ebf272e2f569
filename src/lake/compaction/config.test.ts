import { describe, expect, test } from "bun:test";
import { compactionConfigProblems, hivePathComponent, parseMemorySize } from "./config.ts";

const ok = {
  enable: true,
  engine: "duckdb" as const,
  target_file_size_bytes: 536870912,
  max_row_group_bytes: 268435456,
  memory_limit: "224MB",
};

describe("compaction configuration", () => {
  test.each([
    ["128MB", 128e6],
    ["1GB", 1e9],
    ["1.5 GiB", 1.5 * 1024 ** 3],
    ["512kib", 512 * 1024],
    ["64 mb", 64e6],
    ["lots", undefined],
    ["12", undefined],
  ])("parseMemorySize(%p)", (text, bytes) => {
    expect(parseMemorySize(text)).toBe(bytes);
  });

  test("a valid configuration has no problems, with either engine", () => {
    expect(compactionConfigProblems(ok, "/var/lib/svc/lake/")).toEqual([]);
    expect(
      compactionConfigProblems({ ...ok, engine: "native", target_file_size_bytes: 1e8 }, "/var/lib/svc/lake/"),
    ).toEqual([]);
  });

  test("native refuses a data_path with a key=value directory", () => {
    expect(hivePathComponent("/data/site=a/lake/")).toBe("site=a");
    expect(hivePathComponent("/data/lake/")).toBeUndefined();
    const p = compactionConfigProblems({ ...ok, engine: "native" }, "/data/site=a/lake/");
    expect(p).toEqual([
      expect.stringContaining("storage.lakehouse.compaction.engine: native refuses data_path /data/site=a/lake/"),
    ]);
    expect(compactionConfigProblems(ok, "/data/site=a/lake/")).toEqual([]);
  });

  test("target_file_size_bytes means nothing to the default merge: refused with the reason", () => {
    expect(compactionConfigProblems({ ...ok, target_file_size_bytes: 1e8 }, "/l/")).toEqual([
      expect.stringContaining("target_file_size_bytes applies to engine native only"),
    ]);
  });

  test("a max_row_group_bytes the memory limit overrides is refused; the default is capped silently", () => {
    expect(compactionConfigProblems({ ...ok, max_row_group_bytes: 100_000_000 }, "/l/")).toEqual([
      expect.stringContaining("raise memory_limit to at least 500MB"),
    ]);
    expect(compactionConfigProblems({ ...ok, max_row_group_bytes: 40_000_000 }, "/l/")).toEqual([]);
    expect(compactionConfigProblems({ ...ok, max_row_group_bytes: 100_000_000, memory_limit: "512MB" }, "/l/")).toEqual(
      [],
    );
  });

  test("memory_limit must be a size of at least 192MB", () => {
    expect(compactionConfigProblems({ ...ok, memory_limit: "huge" }, "/l/")).toEqual([
      expect.stringContaining("is not a size"),
    ]);
    expect(compactionConfigProblems({ ...ok, memory_limit: "128MB" }, "/l/")).toEqual([
      expect.stringContaining("below 192MB"),
    ]);
    expect(compactionConfigProblems({ ...ok, memory_limit: "192MB" }, "/l/")).toEqual([]);
  });
});
