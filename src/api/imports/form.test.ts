import { describe, expect, test } from "bun:test";
import { AppError } from "../../core/index.ts";
import { parseBoolField, parseForceTable } from "./form.ts";

describe("override_to_current_time", () => {
  test.each([
    ["true", true],
    ["TRUE", true],
    ["1", true],
    ["on", true],
    [" On ", true],
    ["false", false],
    ["0", false],
    ["off", false],
    ["", false],
    [undefined, false],
  ])("%p → %p", (v, want) => {
    expect(parseBoolField(v, "override_to_current_time")).toBe(want);
  });

  test.each(["yes", "2", "truthy", "1,0"])("%p is a 400 naming the field", (v) => {
    expect(() => parseBoolField(v, "override_to_current_time")).toThrow(AppError);
    expect(() => parseBoolField(v, "override_to_current_time")).toThrow(/override_to_current_time/);
  });
});

describe("force_sip_table / force_table", () => {
  test.each([
    ["call", "call"],
    ["CALL", "call"],
    ["hep_proto_1_call", "call"],
    ["1_call", "call"],
    ["registration", "registration"],
    ["reg", "registration"],
    ["register", "registration"],
    ["hep_proto_1_registration", "registration"],
    ["1_registration", "registration"],
    ["default", "default"],
    ["hep_proto_1_default", "default"],
    ["1_default", "default"],
  ])("%p → %p", (v, want) => {
    expect(parseForceTable(v, undefined)).toBe(want as "call");
    expect(parseForceTable(undefined, v)).toBe(want as "call");
  });

  test("absent or empty is no forcing; the same table under both names is fine", () => {
    expect(parseForceTable(undefined, undefined)).toBeUndefined();
    expect(parseForceTable("", " ")).toBeUndefined();
    expect(parseForceTable("reg", "registration")).toBe("registration");
  });

  test.each([
    ["calls", undefined, /force_sip_table/],
    ["hep_proto_5_default", undefined, /force_sip_table/],
    [undefined, "options", /force_table/],
    ["call", "default", /conflicts/],
  ])("%p / %p is a 400", (a, b, msg) => {
    expect(() => parseForceTable(a, b)).toThrow(msg);
  });
});
