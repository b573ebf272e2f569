import { expect, test } from "bun:test";
import { OnceStore } from "./pending.ts";
import { groupsOf, inAdminGroup, namesOf, usernameOf } from "./profile.ts";

test.each([
  [{ preferred_username: "alice", email: "a@x.org", sub: "1" }, "alice"],
  [{ email: "bob@corp.example", sub: "2" }, "bob_corp.example"],
  [{ preferred_username: "  ", email: "", sub: "abc-3" }, "oidc-abc-3"],
  [{ sub: 42 }, "oidc-42"],
  [{}, undefined],
])("usernameOf(%p) → %p", (profile, expected) => {
  expect(usernameOf(profile)).toBe(expected);
});

test.each([
  [{ groups: ["ops", "voip-admins"] }, "groups", ["ops", "voip-admins"]],
  [{ groups: [{ name: "ops" }, { group_name: "voip-admins" }, { id: 3 }, 7] }, "groups", ["ops", "voip-admins", "7"]],
  [{ roles: "voip-admins" }, "roles", ["voip-admins"]],
  [{ groups: ["ops"] }, "roles", []],
  [{ groups: "not-a-list-but-one" }, "", ["not-a-list-but-one"]],
])("groupsOf(%p, %p) → %p", (profile, claim, expected) => {
  expect(groupsOf(profile, claim)).toEqual(expected);
});

test("admin by membership in admin_groups, compared exactly", () => {
  expect(inAdminGroup(["ops", "voip-admins"], ["voip-admins"])).toBe(true);
  expect(inAdminGroup(["VOIP-admins"], ["voip-admins"])).toBe(false);
  expect(inAdminGroup([], ["voip-admins"])).toBe(false);
});

test("names from given/family name, else split from name", () => {
  expect(namesOf({ given_name: "Ada", family_name: "Lovelace", name: "x y" })).toEqual({
    firstName: "Ada",
    lastName: "Lovelace",
  });
  expect(namesOf({ name: "Grace Brewster Hopper" })).toEqual({ firstName: "Grace Brewster", lastName: "Hopper" });
});

test("OnceStore: a value is taken once, and not after its TTL", () => {
  let now = 1_000;
  const s = new OnceStore<string>(60_000, 2, () => now);
  s.put("a", "A");
  expect(s.take("a")).toBe("A");
  expect(s.take("a")).toBeUndefined();
  s.put("b", "B");
  now += 60_000;
  expect(s.take("b")).toBeUndefined();
  s.put("c", "C");
  s.put("d", "D");
  s.put("e", "E"); // over max: the oldest goes
  expect([s.take("c"), s.take("d"), s.take("e")]).toEqual([undefined, "D", "E"]);
});
