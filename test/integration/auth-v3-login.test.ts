/**
 * The legacy v3 login (docs/AUTH.md "Legacy v3 login"): the request HOMER 7/10's UI sends to
 * POST /api/v3/auth gets the v4 login's answer, with a token the v4 API accepts; the same
 * credential rules and errors hold.
 */
import { describe, expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, startServer } from "./auth-harness.ts";

/** What HOMER's Angular UI sends: JSON with exactly these headers and members. */
const homerLogin = (url: string, username: string, password: string) =>
  fetch(`${url}/api/v3/auth`, {
    method: "POST",
    headers: { "content-type": "application/json;charset=UTF-8", accept: "application/json, text/plain, */*" },
    body: JSON.stringify({ username, password }),
  });

describe("POST /api/v3/auth", () => {
  test("HOMER's login body gets {token, scope, user} and the token works on /api/v4", async () => {
    await using dir = tempDir();
    await using s = await startServer(dir.path);
    const r = await homerLogin(s.url, "admin", ADMIN_PASSWORD);
    expect(r.status).toBe(201);
    const body = (await r.json()) as {
      token: string;
      scope: string;
      user: { username: string; admin: boolean; id: string };
    };
    expect(body.token).toBeString();
    expect(body.user).toMatchObject({ username: "admin", admin: true });
    expect(body.scope).toBe(body.user.id);
    const me = await fetch(`${s.url}/api/v4/me`, { headers: { authorization: `Bearer ${body.token}` } });
    expect(me.status).toBe(200);
  });

  test("a wrong password or a missing member is refused as on v4 (401, 400), never 404 or 5xx", async () => {
    await using dir = tempDir();
    await using s = await startServer(dir.path);
    const wrong = await homerLogin(s.url, "admin", "not-the-password");
    expect(wrong.status).toBe(401);
    const v4 = await fetch(`${s.url}/api/v4/auth/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "not-the-password" }),
    });
    expect(((await wrong.json()) as { message: string }).message).toBe(
      ((await v4.json()) as { message: string }).message,
    );
    const missing = await fetch(`${s.url}/api/v3/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin" }),
    });
    expect(missing.status).toBe(400);
    // Only the login is v3: other v3 paths stay unknown.
    expect((await fetch(`${s.url}/api/v3/search/call/data`, { method: "POST" })).status).toBe(404);
  });
});
