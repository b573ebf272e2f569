import { expect, test } from "bun:test";
import { clearedSessionCookie, isHttps, parseCookies, sessionCookie } from "./cookies.ts";

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
