/**
 * Where the one-time sign-in token may go (docs/AUTH.md "Redirect safety"), against npm
 * oidc-provider (test/integration/oauth2-harness.ts): hostile `redirect_uri` values are refused at
 * the redirect step, before the login at the provider; a good one is kept exactly and the final
 * Location stays on the site.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tempDir, type TempDir } from "../harness.ts";
import { startCore, type Core } from "./auth-harness.ts";
import { begin, callback, location, loginAtProvider, refreshOf, startIdp, type Idp } from "./oauth2-harness.ts";

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
