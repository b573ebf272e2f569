import { describe, expect, test } from "bun:test";
import { resolveReturnTarget, withQuery } from "./return-target.ts";

const target = (cb: string, uri?: string) => {
  const r = resolveReturnTarget(cb, uri);
  return r.ok ? r.value : r.reason;
};

describe("redirect safety (docs/AUTH.md)", () => {
  test.each([
    // rule 1: callback_url set → used; redirect_uri must be a relative path on the same site
    ["https://svc.example/ui/", undefined, "https://svc.example/ui/"],
    ["https://svc.example/ui/", "/#/d/calls", "https://svc.example/#/d/calls"],
    ["/ui/", "/#/d/calls", "/#/d/calls"],
    ["/ui/", "https://svc.example/", "rule1"],
    ["/ui/", "javascript:alert(1)", "rule1"],
    ["https://svc.example/ui/", "javascript:alert(1)", "rule1"],
    // rule 2: callback_url empty → only a relative redirect_uri (starts with /, not //)
    ["", undefined, "/"],
    ["", "/#/admin/users", "/#/admin/users"],
    ["", "relative/no-slash", "rule2"],
    ["", "/\\evil.example", "rule2"],
    // rule 3: absolute redirect_uri without callback_url → refused
    ["", "https://evil.example/", "rule3"],
    ["", "//evil.example/", "rule3"],
    ["", "data:text/html,x", "rule3"],
    // rule 4: absolute callback_url with redirect_uri → origins must match
    ["https://svc.example/ui/", "https://svc.example/other#/x", "https://svc.example/other#/x"],
    ["https://svc.example/ui/", "https://evil.example/ui/", "rule4"],
    ["https://svc.example/ui/", "http://svc.example/ui/", "rule4"],
    ["https://svc.example/ui/", "https://svc.example:8443/ui/", "rule4"],
    ["https://svc.example/ui/", "//evil.example/x", "rule4"],
  ])("callback_url %p, redirect_uri %p → %p", (cb, uri, expected) => {
    expect(target(cb, uri)).toBe(expected);
  });
});

test.each([
  ["/", "/?token=t%2B1"],
  ["/#/d/calls", "/?token=t%2B1#/d/calls"],
  ["https://svc.example/ui/?a=1#/x", "https://svc.example/ui/?a=1&token=t%2B1#/x"],
])("withQuery(%p) puts the parameter before the fragment", (t, expected) => {
  expect(withQuery(t, "token", "t+1")).toBe(expected);
});
