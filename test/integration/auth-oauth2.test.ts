/**
 * OAuth 2.0 login over HTTP (docs/AUTH.md "OAuth 2.0") against a real OpenID provider
 * (npm oidc-provider, test/integration/oauth2-harness.ts): the confidential client and the public
 * client with PKCE, user mapping and admin groups, the photo, the one-time token used once, state
 * and code tampering, the provider refusing or being down, skip_auto_provision, and every
 * redirect-safety rule through the routes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tempDir, type TempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, startCore, type Core } from "./auth-harness.ts";
import {
  begin,
  bindingCookies,
  callback,
  location,
  loginAtProvider,
  oauthErrorOf,
  PHOTO_PNG,
  refreshOf,
  startIdp,
  type Idp,
} from "./oauth2-harness.ts";

let idp: Idp;
const dirs: TempDir[] = [];
const cores: Core[] = [];

async function core(oauth: Record<string, unknown>): Promise<Core> {
  const dir = tempDir("svc-oauth2-");
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

describe("confidential client", () => {
  test("redirect → provider login → callback → one-time token → 201 JWT; token works once; groups make admin; photo via /me/avatar", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const providers = dataOf(await c.call("GET", "/auth/providers")) as { oauth2: Array<Record<string, unknown>> };
    expect(providers.oauth2.map((o) => [o.name, o.url])).toEqual([["corp", "/api/v4/auth/oauth2/corp/redirect"]]);

    const authorize = await begin(c);
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get("client_id")).toBe("svc-web");
    expect(authorize.searchParams.get("redirect_uri")).toBe(idp.redirectUri);
    expect(authorize.searchParams.get("state")?.length).toBeGreaterThan(20);
    expect(authorize.searchParams.has("code_challenge")).toBe(false);

    const back = await loginAtProvider(authorize.href, "alice");
    const cb = await callback(c, back);
    expect(cb.status).toBe(302);
    const landing = new URL(location(cb), "http://svc.test");
    expect(landing.pathname).toBe("/");
    const token = landing.searchParams.get("token") ?? "";
    expect(token.length).toBeGreaterThan(30);

    const ex = await c.call("POST", "/auth/oauth2/token", { body: { token } });
    expect(ex.status).toBe(201);
    const body = ex.json as { token: string; user: Record<string, unknown> };
    expect([body.user.username, body.user.email, body.user.is_admin, body.user.provider]).toEqual([
      "alice",
      "alice@corp.example",
      true,
      "oauth2",
    ]);
    expect(ex.headers.get("set-cookie")).toContain("svc_session=");

    const replay = await c.call("POST", "/auth/oauth2/token", { body: { token } });
    expect(replay.status).toBe(401);
    expect((replay.json as { message: string }).message).toContain("already used");

    const me = dataOf(await c.call("GET", "/me", { token: body.token }));
    expect([me.username, me.is_admin, me.avatar, me.first_name, me.last_name]).toEqual([
      "alice",
      true,
      "/api/v4/me/avatar",
      "Alice",
      "Example",
    ]);
    const photo = await c.core.app.handle(
      new Request("http://localhost/api/v4/me/avatar", { headers: { authorization: `Bearer ${body.token}` } }),
    );
    expect(photo.status).toBe(200);
    expect(photo.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await photo.arrayBuffer())).toEqual(PHOTO_PNG);
    expect(idp.photoRequests.at(-1)).toStartWith("Bearer ");
    expect((await c.call("GET", "/me/avatar")).status).toBe(401);

    // The provisioned row is a normal user (admin came from the group for this session only).
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const users = dataOf(await c.call("GET", "/users?search=alice", { token: admin.token })).items as Array<
      Record<string, unknown>
    >;
    expect(users.map((u) => [u.username, u.email, u.is_admin])).toEqual([["alice", "alice@corp.example", false]]);

    // Disabling the row ends the single-sign-on session at once, as for an internal user.
    const disabled = await c.call("PATCH", `/users/${String(users[0]!.id)}`, {
      token: admin.token,
      body: { is_active: false },
    });
    expect(disabled.status).toBe(200);
    expect((await c.call("GET", "/me", { token: body.token })).status).toBe(401);
  }, 60_000);

  test("a tampered state or code answers 400 and forwards with oauth_error; a state works once", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const back = await loginAtProvider((await begin(c)).href, "alice");

    const badState = await callback(c, back, (q) => q.set("state", `${q.get("state")}x`));
    expect(badState.status).toBe(400);
    expect(badState.headers.get("content-type")).toContain("text/html");
    expect(oauthErrorOf(refreshOf(badState))).toContain("state mismatch");

    const badCode = await callback(c, back, (q) => q.set("code", `${q.get("code")}x`));
    expect(badCode.status).toBe(400);
    expect(refreshOf(badCode)).toStartWith("/?oauth_error=");
    expect(oauthErrorOf(refreshOf(badCode))).toContain("rejected the authorization code (invalid_grant");

    // That state was taken by the bad code: the right code with it is refused too.
    const again = await callback(c, back);
    expect(again.status).toBe(400);
    expect(oauthErrorOf(refreshOf(again))).toContain("state mismatch");

    const noState = await c.call("GET", "/auth/oauth2/corp/callback?code=abc");
    expect(noState.status).toBe(400);
    expect(oauthErrorOf(refreshOf(noState))).toContain("state mismatch");
  }, 60_000);

  test("the provider refusing (user cancels) redirects with oauth_error in words; unknown provider and bad tokens are 4xx", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const refused = await callback(c, await loginAtProvider((await begin(c)).href, "alice", { abort: true }));
    expect(refused.status).toBe(302);
    expect(oauthErrorOf(location(refused))).toBe(
      "the identity provider refused the sign-in (access_denied: End-User aborted interaction)",
    );

    const unknownProvider = await c.call("GET", "/auth/oauth2/other/redirect");
    expect(unknownProvider.status).toBe(400);
    expect((unknownProvider.json as { message: string }).message).toContain('"other" is not configured');
    expect((await c.call("POST", "/auth/oauth2/token", { body: {} })).status).toBe(400);
    expect((await c.call("POST", "/auth/oauth2/token", { body: { token: "never-issued" } })).status).toBe(401);
  }, 60_000);
});

test("a picture on another site is fetched without the provider's token", async () => {
  const c = await core(idp.providerConfig("confidential"));
  const seen = idp.cdnRequests.length;
  const cb = await callback(c, await loginAtProvider((await begin(c)).href, "erin"));
  const ex = await c.call("POST", "/auth/oauth2/token", {
    body: { token: new URL(location(cb), "http://x").searchParams.get("token") },
  });
  const me = dataOf(await c.call("GET", "/me", { token: (ex.json as { token: string }).token }));
  expect(me.avatar).toBe("/api/v4/me/avatar");
  expect(idp.cdnRequests.slice(seen)).toEqual([""]);
}, 60_000);

test("two first sign-ins of the same new user at once both succeed, with one row", async () => {
  const c = await core(idp.providerConfig("confidential"));
  const backs = await Promise.all([0, 1].map(async () => await loginAtProvider((await begin(c)).href, "frank")));
  const results = await Promise.all(backs.map((b) => callback(c, b)));
  expect(results.map((r) => [r.status, location(r).startsWith("/?token=")])).toEqual([
    [302, true],
    [302, true],
  ]);
  const admin = await c.login("admin", ADMIN_PASSWORD);
  const users = dataOf(await c.call("GET", "/users?search=frank", { token: admin.token })).items as Array<{
    username: string;
  }>;
  expect(users.map((u) => u.username)).toEqual(["oidc-frank"]);
}, 60_000);

describe("public client with PKCE", () => {
  test("S256 challenge, no secret; email-only profile maps to bob_corp.example, not admin", async () => {
    const c = await core(idp.providerConfig("public"));
    const authorize = await begin(c, "/#/d/calls");
    expect(authorize.searchParams.get("client_id")).toBe("svc-spa");
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("code_challenge")?.length).toBe(43);
    const cb = await callback(c, await loginAtProvider(authorize.href, "bob"));
    expect(cb.status).toBe(302);
    expect(location(cb)).toMatch(/^\/\?token=[A-Za-z0-9_-]+#\/d\/calls$/);
    const ex = await c.call("POST", "/auth/oauth2/token", {
      body: { token: new URL(location(cb), "http://x").searchParams.get("token") },
    });
    expect(ex.status).toBe(201);
    const user = (ex.json as { user: Record<string, unknown> }).user;
    expect([user.username, user.is_admin, user.first_name, user.last_name]).toEqual([
      "bob_corp.example",
      false,
      "Bob",
      "Builder",
    ]);
    const me = dataOf(await c.call("GET", "/me", { token: (ex.json as { token: string }).token }));
    expect(me.avatar).toBeUndefined();
  }, 60_000);

  test("sub-only profile maps to oidc-<sub>", async () => {
    const c = await core(idp.providerConfig("public"));
    const cb = await callback(c, await loginAtProvider((await begin(c)).href, "carol-7"));
    const ex = await c.call("POST", "/auth/oauth2/token", {
      body: { token: new URL(location(cb), "http://x").searchParams.get("token") },
    });
    expect((ex.json as { user: { username: string } }).user.username).toBe("oidc-carol-7");
  }, 60_000);
});

describe("skip_auto_provision", () => {
  test("an existing user matches by (verified) email; an unknown one is told there is no matching user", async () => {
    const c = await core(idp.providerConfig("confidential", { skip_auto_provision: true }));
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const created = await c.call("POST", "/users", {
      token: admin.token,
      body: { username: "robert", password: "robert-password-1", email: "bob@corp.example" },
    });
    expect(created.status).toBe(201);

    const bob = await callback(c, await loginAtProvider((await begin(c)).href, "bob"));
    const ex = await c.call("POST", "/auth/oauth2/token", {
      body: { token: new URL(location(bob), "http://x").searchParams.get("token") },
    });
    expect((ex.json as { user: { username: string } }).user.username).toBe("robert");

    // The same address marked unverified by the provider matches nobody.
    const mallory = await callback(c, await loginAtProvider((await begin(c)).href, "mallory"));
    expect(oauthErrorOf(location(mallory))).toBe(
      'no matching user for "bob_corp.example" or bob@corp.example on this server; ask an administrator to create the account',
    );

    const carol = await callback(c, await loginAtProvider((await begin(c)).href, "carol"));
    expect(carol.status).toBe(302);
    expect(oauthErrorOf(location(carol))).toBe(
      'no matching user for "oidc-carol" on this server; ask an administrator to create the account',
    );
    const users = dataOf(await c.call("GET", "/users", { token: admin.token })).items as Array<{ username: string }>;
    expect(users.map((u) => u.username).sort()).toEqual(["admin", "robert"]);
  }, 60_000);
});

describe("redirect safety (docs/AUTH.md)", () => {
  test("rules 2 and 3: without callback_url only a relative redirect_uri is taken", async () => {
    const c = await core(idp.providerConfig("confidential"));
    for (const bad of ["https://evil.example/", "//evil.example/", "evil/relative"]) {
      const r = await c.call("GET", `/auth/oauth2/corp/redirect?redirect_uri=${encodeURIComponent(bad)}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
      expect((r.json as { message: string }).message).toContain("relative path");
    }
    const back = await loginAtProvider((await begin(c, "/#/admin/users")).href, "alice");
    // A redirect_uri added to the callback is held to the same rules.
    const sneaky = await callback(c, back, (q) => q.set("redirect_uri", "https://evil.example/"));
    expect(sneaky.status).toBe(400);
    expect(refreshOf(sneaky)).toStartWith("/?oauth_error=");
    const ok = await callback(c, back);
    expect(location(ok)).toMatch(/^\/\?token=[^#]+#\/admin\/users$/);
    // A relative redirect_uri on the callback itself is taken instead of the one kept with the state.
    const own = await callback(c, await loginAtProvider((await begin(c, "/#/admin/users")).href, "alice"), (q) =>
      q.set("redirect_uri", "/#/settings"),
    );
    expect(location(own)).toMatch(/^\/\?token=[^#]+#\/settings$/);
  }, 60_000);

  test("rules 1 and 4: with callback_url it is used; a redirect_uri must stay on its site", async () => {
    const c = await core(idp.providerConfig("confidential", { callback_url: "https://svc.example/ui/" }));
    const plain = await callback(c, await loginAtProvider((await begin(c)).href, "alice"));
    expect(location(plain)).toMatch(/^https:\/\/svc\.example\/ui\/\?token=/);
    const relative = await callback(c, await loginAtProvider((await begin(c, "/ui/#/d/x")).href, "alice"));
    expect(location(relative)).toMatch(/^https:\/\/svc\.example\/ui\/\?token=[^#]+#\/d\/x$/);
    const sameSite = await callback(
      c,
      await loginAtProvider((await begin(c, "https://svc.example/other")).href, "alice"),
    );
    expect(location(sameSite)).toMatch(/^https:\/\/svc\.example\/other\?token=/);
    for (const bad of ["https://evil.example/ui/", "http://svc.example/ui/", "//evil.example/"]) {
      const r = await c.call("GET", `/auth/oauth2/corp/redirect?redirect_uri=${encodeURIComponent(bad)}`);
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
      expect((r.json as { message: string }).message).toContain("https://svc.example");
    }
    // A failure goes to the callback URL too, never elsewhere.
    const bad = await c.call("GET", "/auth/oauth2/corp/callback?state=forged&code=x");
    expect(refreshOf(bad)).toStartWith("https://svc.example/ui/?oauth_error=");
  }, 60_000);
});

describe("every other failure redirect says what went wrong", () => {
  test("no code with a valid state: 400 page", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const state = (await begin(c)).searchParams.get("state")!;
    const r = await c.call("GET", `/auth/oauth2/corp/callback?state=${encodeURIComponent(state)}`, {
      headers: { cookie: bindingCookies.get(state)! },
    });
    expect(r.status).toBe(400);
    expect(oauthErrorOf(refreshOf(r))).toBe("the identity provider sent no authorization code");
  }, 60_000);

  test("the profile URL failing: 302 naming it and the status", async () => {
    const c = await core(idp.providerConfig("confidential", { profile_url: `${idp.issuer}/no-such-userinfo` }));
    const r = await callback(c, await loginAtProvider((await begin(c)).href, "alice"));
    expect(r.status).toBe(302);
    expect(oauthErrorOf(location(r))).toBe(`could not read the user profile from ${idp.issuer}: HTTP 404`);
  }, 60_000);

  test("a token endpoint answering 503: 302 naming the status", async () => {
    await using broken = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response("maintenance", { status: 503 }),
    });
    const tokenUrl = `http://127.0.0.1:${broken.port}/token`;
    const c = await core(idp.providerConfig("confidential", { token_url: tokenUrl }));
    const r = await callback(c, await loginAtProvider((await begin(c)).href, "alice"));
    expect(r.status).toBe(302);
    expect(oauthErrorOf(location(r))).toBe(
      `the identity provider's token endpoint http://127.0.0.1:${broken.port} failed: HTTP 503`,
    );
  }, 60_000);

  test("a disabled account cannot sign in", async () => {
    const c = await core(idp.providerConfig("confidential"));
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const created = await c.call("POST", "/users", {
      token: admin.token,
      body: { username: "alice", password: "alice-password-1", is_active: false },
    });
    expect(created.status).toBe(201);
    const r = await callback(c, await loginAtProvider((await begin(c)).href, "alice"));
    expect(r.status).toBe(302);
    expect(oauthErrorOf(location(r))).toBe('the account "alice" is disabled on this server');
  }, 60_000);
});

describe("provider down", () => {
  test("the token endpoint unreachable redirects with oauth_error naming it", async () => {
    await using own = await startIdp();
    const c = await core(own.providerConfig("confidential"));
    const back = await loginAtProvider((await begin(c)).href, "alice");
    await own.stopProvider();
    const r = await callback(c, back);
    expect(r.status).toBe(302);
    expect(oauthErrorOf(location(r))).toStartWith(
      `the identity provider's token endpoint ${own.issuer} failed: cannot connect`,
    );
  }, 60_000);
});
