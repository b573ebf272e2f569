import { expect, test } from "bun:test";
import {
  clearedOauthBindingCookie,
  clearedSessionCookie,
  isHttps,
  oauthBindingCookie,
  oauthBindingCookieName,
  cookieValue,
  sessionCookie,
} from "./cookies.ts";

test.each([
  ["a=1; svc_session=abc.def.ghi; b=2", "abc.def.ghi"],
  ['svc_session="q.u.o"', "q.u.o"],
  ["svc_session=first; svc_session=second", "first"],
  ["other=1", undefined],
  ["", undefined],
  ["garbage;;=;svc_session=x", "x"],
  ["a=1; svc_session=x%2Ey", "x.y"],
])("cookieValue(%p) → %p", (header, expected) => {
  expect(cookieValue(header, "svc_session")).toBe(expected);
});

/** A Set-Cookie header's attributes, by lower-case name (the order is the serializer's business). */
const attributes = (setCookie: string) => {
  const [pair, ...rest] = setCookie.split("; ");
  return {
    pair,
    attrs: Object.fromEntries(
      rest.map((a) => [a.split("=")[0]!.toLowerCase(), a.includes("=") ? a.slice(a.indexOf("=") + 1) : true]),
    ),
  };
};

test("session cookie attributes", () => {
  expect(attributes(sessionCookie("t", 3600, false))).toEqual({
    pair: "svc_session=t",
    attrs: { path: "/", httponly: true, samesite: "Lax", "max-age": "3600" },
  });
  expect(attributes(sessionCookie("t", 60, true)).attrs.secure).toBe(true);
  expect(attributes(clearedSessionCookie(false))).toEqual({
    pair: "svc_session=",
    attrs: { path: "/", httponly: true, samesite: "Lax", "max-age": "0", expires: "Thu, 01 Jan 1970 00:00:00 GMT" },
  });
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
  expect(attributes(oauthBindingCookie("state-1", "v", "/api/v4/auth/oauth2/corp/callback", 600, false))).toEqual({
    pair: `${name}=v`,
    attrs: { path: "/api/v4/auth/oauth2/corp/callback", httponly: true, samesite: "Lax", "max-age": "600" },
  });
  expect(attributes(oauthBindingCookie("state-1", "v", "/cb", 600, true)).attrs.secure).toBe(true);
  expect(attributes(clearedOauthBindingCookie("state-1", "/cb", false))).toEqual({
    pair: `${name}=`,
    attrs: { path: "/cb", httponly: true, samesite: "Lax", "max-age": "0", expires: "Thu, 01 Jan 1970 00:00:00 GMT" },
  });
});
