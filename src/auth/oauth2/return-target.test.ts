import { describe, expect, test } from "bun:test";
import { resolveReturnTarget, withQuery } from "./return-target.ts";

const target = (cb: string, uri?: string) => {
  const r = resolveReturnTarget(cb, uri);
  return r.ok ? r.value : r.reason;
};

describe("redirect safety (docs/AUTH.md)", () => {
  // rule 0: whatever the mode, a path must stay on this site once a browser has normalised it
  test.each([
    "/..//evil.example",
    "//evil.example",
    "/\\evil.example",
    "/%2f%2fevil.example",
    "/%2F%2Fevil.example",
    "/%252f%252fevil.example",
    "/%5c%5cevil.example",
    "/%255c%255cevil.example",
    "https://evil.example/",
    "javascript:alert(1)",
    "/a/../..//evil.example",
    "/%2e%2e//evil.example",
    "/%252e%252e/x",
    "/./x",
    "/a//b",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    " /evil.example",
    "/evil.example ",
    "/a b",
    "/\u0000x",
    "/\u2028x",
    "\\\\evil.example",
    "/\\/evil.example",
    "relative/path",
  ])("%p is refused with and without callback_url", (bad) => {
    for (const cb of ["", "/ui/", "https://svc.example/ui/"]) {
      const r = resolveReturnTarget(cb, bad);
      expect({ cb, bad, ok: r.ok }).toEqual({ cb, bad, ok: false });
      if (!r.ok) expect(r.detail).toStartWith("redirect_uri ");
    }
  });

  test.each([
    ["/search?x=1#y", "/search?x=1#y"],
    ["/#/d/calls", "/#/d/calls"],
    ["/", "/"],
    ["/a/b/?q=http://x#/y", "/a/b/?q=http://x#/y"],
    ["/ünïcode", "/%C3%BCn%C3%AFcode"],
  ])("%p is kept as %p", (good, expected) => {
    expect(target("", good)).toBe(expected);
    expect(target("https://svc.example/ui/", good)).toBe(`https://svc.example${expected}`);
  });

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
    ["", "/\\evil.example", "rule0"],
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
    ["https://svc.example/ui/", "https://svc.example@evil.example/", "rule4"],
    ["https://svc.example/ui/", "https://svc.example//evil.example", "rule0"],
    ["https://svc.example/ui/", "https://svc.example/a/../..//evil.example", "rule0"],
    ["https://svc.example/ui/", "https://svc.example?x=1", "https://svc.example/?x=1"],
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

test("withQuery refuses to put a parameter on a target that leaves the site", () => {
  expect(() => withQuery("//evil.example", "token", "t")).toThrow("unsafe return target");
});
