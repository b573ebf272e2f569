import { expect, test } from "bun:test";
import { initialsOf } from "./avatar.ts";

test.each([
  [{ first_name: "Alice", last_name: "Example", username: "alice" }, "AE"],
  [{ first_name: "", last_name: "", username: "bob_corp.example" }, "BC"],
  [{ first_name: "", last_name: "", username: "oidc-5f1" }, "O5"],
  [{ first_name: "", last_name: "", username: "admin" }, "A"],
  [{ first_name: "", last_name: "", username: "--" }, "?"],
])("initialsOf(%p) → %p", (me, expected) => {
  expect(initialsOf(me)).toBe(expected);
});
