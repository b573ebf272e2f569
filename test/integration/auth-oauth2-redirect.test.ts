/**
 * Where the one-time sign-in token may go, and which browser may finish a sign-in (docs/AUTH.md
 * "Redirect safety", "Browser binding"), against npm oidc-provider (test/integration/oauth2-harness.ts):
 * hostile `redirect_uri` values are refused at the redirect step, before the login at the provider;
 * a good one is kept exactly and the final Location stays on the site; a callback finished in
 * another browser (no or a wrong binding cookie) issues no token.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tempDir, type TempDir } from "../harness.ts";
import { startCore, type CallResult, type Core } from "./auth-harness.ts";
import {
  begin,
  bindingCookies,
  callback,
  location,
  loginAtProvider,
  oauthErrorOf,
  refreshOf,
  startIdp,
  type Idp,
} from "./oauth2-harness.ts";

let idp: Idp;
const dirs: TempDir[] = [];
const cores: Core[] = [];

async function core(oauth: Record<string, unknown>): Promise<Core> {
  const dir = tempDir("svc-oauth2-redirect-");
  dirs.push(dir);
  const c = await startCore(dir.path, { coordinator: { oauth2_provider: oauth } });
  cores.push(c);
  return c;
}

beforeAll(async () => {
  idp = await startIdp();
});
afterAll(async () => {
  for (const c of cores) await c[Symbol.asyncDispose]();
  for (const d of dirs) await d[Symbol.asyncDispose]();
  await idp[Symbol.asyncDispose]();
});

/** The site as the browser sees it: `call` sends requests to http://localhost. */
const SITE = "http://localhost";
const tokenOf = (target: string) => new URL(target, SITE).searchParams.get("token");

const HOSTILE = [
  "/..//evil.example",
  "//evil.example",
  "/\\evil.example",
  "/%2f%2fevil.example",
  "/%5c%5cevil.example",
  "/%252f%252fevil.example",
  "/%255c%255cevil.example",
  "https://evil.example/",
  "javascript:alert(1)",
  "/a/../..//evil.example",
  "/%2e%2e//evil.example",
  "/\t/evil.example",
  "/\n/evil.example",
  "/x\r\n/evil.example",
];

/** A Set-Cookie header as its name=value pair and its attributes by lower-case name, in any order. */
function setCookieParts(header: string): { pair: string; attrs: Record<string, string | true> } {
  const [pair, ...rest] = header.split("; ");
  return {
    pair: pair!,
    attrs: Object.fromEntries(
      rest.map((a) =>
        a.includes("=")
          ? [a.slice(0, a.indexOf("=")).toLowerCase(), a.slice(a.indexOf("=") + 1)]
          : [a.toLowerCase(), true],
      ),
    ),
  };
}
describe("redirect_uri that would leave the site", () => {
  let shared: Promise<Core> | undefined;
  test.each(HOSTILE)(
    "%p is refused with 400 at the redirect step (callback_url empty), and no sign-in starts",
    async (bad) => {
      shared ??= core(idp.providerConfig("confidential"));
      const c = await shared;
      const r = await c.call("GET", `/auth/oauth2/corp/redirect?redirect_uri=${encodeURIComponent(bad)}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
      expect(r.json).toMatchObject({ error: "VALIDATION" });
      expect((r.json as { message: string }).message).toStartWith("redirect_uri ");
      expect([r.headers.get("location"), r.headers.get("set-cookie")]).toEqual([null, null]);
    },
    60_000,
  );

  test("the same values are refused with callback_url set", async () => {
    const c = await core(idp.providerConfig("confidential", { callback_url: "https://svc.example/ui/" }));
    for (const bad of HOSTILE) {
      const r = await c.call("GET", `/auth/oauth2/corp/redirect?redirect_uri=${encodeURIComponent(bad)}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
    }
  }, 60_000);

  test("a good redirect_uri is kept exactly; the full flow's Location stays on the site and its token signs in", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const cb = await callback(c, await loginAtProvider((await begin(c, "/search?x=1#y")).href, "alice"));
    expect(cb.status).toBe(302);
    const to = location(cb);
    expect(to).toMatch(/^\/search\?x=1&token=[A-Za-z0-9_-]+#y$/);
    expect(new URL(to, SITE).origin).toBe(SITE);
    const ex = await c.call("POST", "/auth/oauth2/token", { body: { token: tokenOf(to) } });
    expect(ex.status).toBe(201);
  }, 60_000);

  test("a hostile redirect_uri added to the callback is refused there with the 400 page: no token, the state stays usable", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const back = await loginAtProvider((await begin(c, "/#/d/calls")).href, "alice");
    for (const bad of ["/..//evil.example", "/%5c%5cevil.example", "/a/../..//evil.example"]) {
      const r = await callback(c, back, (q) => q.set("redirect_uri", bad));
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
      expect(refreshOf(r)).toStartWith("/?oauth_error=redirect_uri");
      expect(tokenOf(refreshOf(r))).toBeNull();
    }
    const ok = await callback(c, back);
    expect(location(ok)).toMatch(/^\/\?token=[^#]+#\/d\/calls$/);
  }, 60_000);
});

describe("browser binding", () => {
  const refusedInOtherBrowser = (r: CallResult, why: "missing" | "wrong") => {
    expect(r.status).toBe(400);
    const target = refreshOf(r);
    expect(target).toStartWith("/?oauth_error=");
    expect(oauthErrorOf(target)).toBe(
      `this browser did not start this sign-in (its sign-in cookie is ${why}): start the sign-in again in this browser, at ${new URL(idp.redirectUri).origin}`,
    );
    expect(tokenOf(target)).toBeNull();
    expect(r.text).not.toContain("token=");
  };

  test("the redirect sets an HttpOnly, SameSite=Lax cookie on the callback path only, Secure over HTTPS; the callback clears it", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const plain = await c.call("GET", "/auth/oauth2/corp/redirect");
    const set = setCookieParts(plain.headers.get("set-cookie")!);
    expect(set.pair).toMatch(/^svc_oauth2_[0-9a-f]{24}=[A-Za-z0-9_-]{43}$/);
    expect(set.attrs).toEqual({
      path: "/api/v4/auth/oauth2/corp/callback",
      httponly: true,
      samesite: "Lax",
      "max-age": "600",
    });
    const https = await c.call("GET", "/auth/oauth2/corp/redirect", { headers: { "x-forwarded-proto": "https" } });
    expect(setCookieParts(https.headers.get("set-cookie")!).attrs).toEqual({
      path: "/api/v4/auth/oauth2/corp/callback",
      httponly: true,
      samesite: "Lax",
      "max-age": "600",
      secure: true,
    });

    const authorize = await begin(c);
    const name = bindingCookies.get(authorize.searchParams.get("state")!)!.split("=")[0]!;
    const done = await callback(c, await loginAtProvider(authorize.href, "alice"));
    expect(done.status).toBe(302);
    expect(setCookieParts(done.headers.get("set-cookie")!)).toEqual({
      pair: `${name}=`,
      attrs: {
        path: "/api/v4/auth/oauth2/corp/callback",
        httponly: true,
        samesite: "Lax",
        "max-age": "0",
        expires: "Thu, 01 Jan 1970 00:00:00 GMT",
      },
    });
  }, 60_000);

  test("a callback opened in another browser (no binding cookie) is refused and no token is ever issued for that sign-in", async () => {
    const c = await core(idp.providerConfig("confidential"));
    // Login CSRF: the attacker starts a sign-in and logs in as himself; the victim opens the callback URL.
    const back = await loginAtProvider((await begin(c)).href, "alice");
    refusedInOtherBrowser(await callback(c, back, undefined, null), "missing");
    // The state is spent: the starting browser cannot finish it either, so the code is never exchanged.
    const late = await callback(c, back);
    expect(late.status).toBe(400);
    expect(oauthErrorOf(refreshOf(late))).toContain("state mismatch");
  }, 60_000);

  test("a wrong binding value (another sign-in's, or made up) is refused", async () => {
    const c = await core(idp.providerConfig("public"));
    const first = await begin(c);
    const second = await begin(c);
    const [name] = bindingCookies.get(first.searchParams.get("state")!)!.split("=");
    const otherValue = bindingCookies.get(second.searchParams.get("state")!)!.split("=")[1];
    const back = await loginAtProvider(first.href, "bob");
    refusedInOtherBrowser(await callback(c, back, undefined, `${name}=${otherValue}`), "wrong");
    const [secondName] = bindingCookies.get(second.searchParams.get("state")!)!.split("=");
    refusedInOtherBrowser(
      await callback(c, await loginAtProvider(second.href, "bob"), undefined, `${secondName}=made-up-value`),
      "wrong",
    );
  }, 60_000);

  test("two sign-ins started in the same browser at once both finish (one cookie each)", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const [a, b] = [await begin(c, "/#/a"), await begin(c, "/#/b")];
    const jar = [a, b].map((u) => bindingCookies.get(u.searchParams.get("state")!)!).join("; ");
    const backs = [await loginAtProvider(a.href, "alice"), await loginAtProvider(b.href, "alice")];
    const results = [await callback(c, backs[1]!, undefined, jar), await callback(c, backs[0]!, undefined, jar)];
    expect(results.map((r) => [r.status, location(r).replace(/token=[^#]+/, "token=…")])).toEqual([
      [302, "/?token=…#/b"],
      [302, "/?token=…#/a"],
    ]);
  }, 60_000);
});
