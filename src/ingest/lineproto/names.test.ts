import { describe, expect, test } from "bun:test";
import { isLineProtocolLayout, matchesTablePrefix, sanitizeIdentifier, schemaFor, tableNameFor } from "./names.ts";

describe("line-protocol names (docs/LINE-PROTOCOL.md rules 1-2)", () => {
  test.each([
    ["telegraf", "telegraf"],
    ["Tele-graf", "Tele_graf"],
    ["c pu", "c_pu"],
    ["cpu=load", "cpu_load"],
    ["9lives", "_9lives"],
    ["température", "temp_rature"],
    ["😀x", "_x"],
    ["", ""],
  ])("sanitizeIdentifier(%j) = %j", (input, want) => {
    expect(sanitizeIdentifier(input)).toBe(want);
  });

  test.each([
    ["db", "", "db"],
    [undefined, "fallback", "fallback"],
    ["", "fall back", "fall_back"],
    [null, "", "main"],
    ["---", "", "___"],
  ])("schemaFor(%j, default %j) = %j", (requested, def, want) => {
    expect(schemaFor(requested, def)).toBe(want);
  });

  test("table name = prefix + sanitised measurement", () => {
    expect(tableNameFor("lp_", "1m load")).toBe("lp__1m_load");
    expect(tableNameFor("", "cpu")).toBe("cpu");
  });

  test.each([
    ["cpu", "", true],
    ["hep_proto_1_call", "", false],
    ["HEP_PROTO_1_CALL", "", false],
    ["otlp_logs", "", false],
    ["mem_hep_proto_1_call", "", false],
    ["mem", "", true],
    ["lp_cpu", "lp_", true],
    ["lpxcpu", "lp_", false],
    ["LP_cpu", "lp_", false],
  ])("matchesTablePrefix(%j, %j) = %j", (name, prefix, want) => {
    expect(matchesTablePrefix(name, prefix)).toBe(want);
  });

  test("a line-protocol layout starts with time TIMESTAMP", () => {
    expect(
      isLineProtocolLayout([
        { name: "time", type: "timestamp" },
        { name: "v", type: "float64" },
      ]),
    ).toBe(true);
    expect(
      isLineProtocolLayout([
        { name: "uuid", type: "varchar" },
        { name: "timestamp", type: "timestamp" },
      ]),
    ).toBe(false);
    expect(isLineProtocolLayout([{ name: "time", type: "varchar" }])).toBe(false);
    expect(isLineProtocolLayout([])).toBe(false);
  });
});
