import { expect, test } from "bun:test";
import { clearedOauthBindingCookie, clearedSessionCookie, isHttps, oauthBindingCookie, oauthBindingCookieName, parseCookies, sessionCookie } from "./cookies.ts";

test.each([
  ["a=1; svc_session=abc.def.ghi; b=2", "abc.def.ghi"],
  ['svc_session="q.u.o"', "q.u.o"],
  ["svc_session=first; svc_session=second", "first"],
  ["other=1", undefined],
  ["", undefined],
  ["garbage;;=;svc_session=x", "x"],
])("parseCookies(%p) → %p", (header, expected) => {
  expect(parseCookies(header).get("svc_session")).toBe(expected);
});

test("session cookie attributes", () => {
  expect(sessionCookie("t", 3600, false)).toBe("svc_session=t; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600");
  expect(sessionCookie("t", 60, true)).toEndWith("; Secure");
  expect(clearedSessionCookie(false)).toContain("Max-Age=0");
});

test("https detection honours X-Forwarded-Proto", () => {
  expect(isHttps(new Request("https://h/x"))).toBe(true);
  expect(isHttps(new Request("http://h/x"))).toBe(false);
  expect(isHttps(new Request("http://h/x", { headers: { "x-forwarded-proto": "https" } }))).toBe(true);
});

test("OAuth binding cookie: a name per state from its hash, HttpOnly, SameSite=Lax, on the given path", () => {
  const name = oauthBindingCookieName("state-1");
  expect(name).toMatch(/^svc_oauth2_[0-9a-f]{24}$/);
  expect(oauthBindingCookieName("state-2")).not.toBe(name);
  // A state with header syntax in it never reaches the header as such.
  expect(oauthBindingCookieName("x; Domain=evil.example")).toMatch(/^svc_oauth2_[0-9a-f]{24}$/);
  expect(oauthBindingCookie("state-1", "v", "/api/v4/auth/oauth2/corp/callback", 600, false)).toBe(`${name}=v; Path=/api/v4/auth/oauth2/corp/callback; HttpOnly; SameSite=Lax; Max-Age=600`);
  expect(oauthBindingCookie("state-1", "v", "/cb", 600, true)).toEndWith("; Secure");
  expect(clearedOauthBindingCookie("state-1", "/cb", false)).toStartWith(`${name}=; Path=/cb; HttpOnly; SameSite=Lax; Max-Age=0;`);
});
