import { describe, expect, test } from "bun:test";
import { passwordLength, passwordProblem } from "./user-rules.ts";

describe('password rules (docs/AUTH.md "Password rules")', () => {
  test("length counts characters (code points), not UTF-16 units", () => {
    expect(passwordLength("😀😀😀😀")).toBe(4);
    expect("😀😀😀😀".length).toBe(8);
    expect(passwordProblem("😀😀😀😀")).toBe("password: at least 8 characters");
    expect(passwordProblem("😀".repeat(8))).toBeUndefined();
    expect(passwordProblem("😀".repeat(1024))).toBeUndefined();
    expect(passwordProblem("😀".repeat(1025))).toBe("password: at most 1024 characters");
    expect(passwordProblem("short")).toBe("password: at least 8 characters");
    expect(passwordProblem("long-enough")).toBeUndefined();
  });
});
