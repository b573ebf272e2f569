import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { jwtVerify } from "jose";
import { hashPassword } from "../../src/auth/index.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, startCore } from "./auth-harness.ts";

describe("POST /auth/sessions (internal)", () => {
  test("configured SHA-256 admin hash logs in: 201, token, jti, user, HttpOnly cookie", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
    expect(r.status).toBe(201);
    const body = r.json as Record<string, unknown>;
    expect(body.token).toBeString();
    expect(body.jti).toBeString();
    expect(Date.parse(String(body.expires_at))).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
    expect(body.user).toMatchObject({ username: "admin", is_admin: true, admin: true, provider: "internal" });
    expect(body.scope).toBe((body.user as { id: string }).id);
    const cookie = r.headers.get("set-cookie") ?? "";
    expect(cookie).toStartWith(`svc_session=${String(body.token)};`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
    expect(r.headers.get("cache-control")).toBe("no-store");
    // the session works
    const me = await c.call("GET", "/me", { token: String(body.token) });
    expect(me.status).toBe(200);
    expect(dataOf(me)).toMatchObject({ username: "admin", is_admin: true, via: "jwt" });
  });

  test("the cookie is Secure when the request came over https (proxy header)", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD }, headers: { "x-forwarded-proto": "https" } });
    expect(r.headers.get("set-cookie")).toContain("; Secure");
  });

  test("wrong password and unknown user get the same generic 401", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const wrong = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "not-the-password" } });
    const unknown = await c.call("POST", "/auth/sessions", { body: { username: "nobody", password: "not-the-password" } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.json).toEqual(unknown.json);
    expect(wrong.json).toEqual({ error: "UNAUTHORIZED", message: "invalid username or password" });
  });

  test.each([
    [{ password: "x" }, "username"],
    [{ username: "admin", password: "" }, "password"],
    [{ username: "admin", password: "x", type: "kerberos" }, "type"],
  ])("invalid body %j → 400 naming %s", async (body, field) => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("POST", "/auth/sessions", { body });
    expect(r.status).toBe(400);
    expect((r.json as { error: string; message: string }).error).toBe("VALIDATION");
    expect((r.json as { message: string }).message).toContain(field);
  });

  test("malformed JSON → 400, not 500", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("POST", "/auth/sessions", { body: "{not json" });
    expect(r.status).toBe(400);
  });

  test("type ldap without a configured LDAP host → 400 naming type; with fallback internal it logs in", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { ldap: { enable: true } } });
    const r = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD, type: "ldap" } });
    expect(r.status).toBe(400);
    expect((r.json as { message: string }).message).toStartWith("type:");
    await using dir2 = tempDir();
    await using c2 = await startCore(dir2.path, { coordinator: { auth: { fallback_auth_type: "internal" } } });
    const ok = await c2.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD, type: "ldap" } });
    expect(ok.status).toBe(201);
  });

  test("disable_password_login → 403 and internal/ldap hidden from /auth/providers", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { auth: { disable_password_login: true }, ldap: { enable: true, host: "ldap.example" } } });
    const r = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
    expect(r.status).toBe(403);
    const p = dataOf(await c.call("GET", "/auth/providers"));
    expect((p.internal as { enable: boolean }).enable).toBe(false);
    expect((p.ldap as { enable: boolean }).enable).toBe(false);
  });

  test("repeated failures → 429 with Retry-After for that user+address; another user still logs in", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { auth: { max_failed_logins: 3, lockout_sec: 60 } } });
    await c.core.settings.users.create({ username: "bob", passwordHash: await hashPassword("bob-password-1") });
    for (let i = 0; i < 3; i++) expect((await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "guess" } })).status).toBe(401);
    const locked = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(locked.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect((await c.call("POST", "/auth/sessions", { body: { username: "bob", password: "bob-password-1" } })).status).toBe(201);
  });
});

describe("bcrypt hashes written by other tools", () => {
  peerTest("a $2y$ hash from htpasswd -B logs in; a wrong password does not", [PEERS.htpasswd], async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const proc = Bun.spawnSync(["htpasswd", "-nbB", "-C", "5", "carol", "carol-secret-9"]);
    const hash = new TextDecoder().decode(proc.stdout).trim().split(":")[1] ?? "";
    expect(hash).toStartWith("$2y$05$");
    c.core.settings.users.create({ username: "carol", passwordHash: hash });
    expect((await c.call("POST", "/auth/sessions", { body: { username: "carol", password: "carol-secret-9" } })).status).toBe(201);
    expect((await c.call("POST", "/auth/sessions", { body: { username: "carol", password: "carol-secret-8" } })).status).toBe(401);
  });
});

describe("JWT", () => {
  test("generated secret is persisted beside the database (0600), verifies with jose, and is reused on restart", async () => {
    await using dir = tempDir();
    let token: string;
    {
      await using c = await startCore(dir.path);
      token = (await c.login("admin", ADMIN_PASSWORD)).token;
    }
    const secretPath = `${dir.path}/.svc_jwt_secret`;
    expect(statSync(secretPath).mode & 0o777).toBe(0o600);
    const secret = readFileSync(secretPath, "utf8").trim();
    expect(secret.length).toBeGreaterThanOrEqual(43);
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"] });
    expect(protectedHeader.alg).toBe("HS256");
    expect(payload.sub).toBe("admin");
    expect(payload.username).toBe("admin");
    expect(payload.admin).toBe(true);
    expect(payload.jti).toBeString();
    expect(Number(payload.exp) - Number(payload.iat)).toBe(24 * 3600);
    await using c2 = await startCore(dir.path);
    expect((await c2.call("GET", "/me", { token })).status).toBe(200);
    expect(readFileSync(secretPath, "utf8").trim()).toBe(secret);
  });

  test("a configured secret signs the tokens; lifetime_hours sets exp", async () => {
    await using dir = tempDir();
    const secret = "configured-secret-with-at-least-32-chars!";
    await using c = await startCore(dir.path, { coordinator: { jwt: { secret, lifetime_hours: 2 } } });
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret));
    expect(Number(payload.exp) - Number(payload.iat)).toBe(7200);
  });

  test("a token signed with another secret, or tampered, is 401", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const [h, p, s] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, "base64url").toString()), username: "other" })).toString("base64url");
    expect((await c.call("GET", "/me", { token: `${h}.${forged}.${s}` })).status).toBe(401);
    expect((await c.call("GET", "/me", { token: "a.b.c" })).status).toBe(401);
    expect((await c.call("GET", "/me", { headers: { authorization: `Basic ${btoa("admin:x")}` } })).status).toBe(401);
  });
});

describe("DELETE /auth/sessions/{jti}", () => {
  test("revokes the session: the same token is 401 afterwards; a second session stays valid", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const a = await c.login("admin", ADMIN_PASSWORD);
    const b = await c.login("admin", ADMIN_PASSWORD);
    const del = await c.call("DELETE", `/auth/sessions/${a.jti}`, { token: a.token });
    expect(del.status).toBe(204);
    const after = await c.call("GET", "/me", { token: a.token });
    expect(after.status).toBe(401);
    expect((after.json as { message: string }).message).toContain("revoked");
    expect((await c.call("GET", "/me", { token: b.token })).status).toBe(200);
  });

  test("unknown session → 404; another user's session → 404; without auth → 401", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    await c.core.settings.users.create({ username: "dave", passwordHash: await hashPassword("dave-password") });
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const dave = await c.login("dave", "dave-password");
    expect((await c.call("DELETE", "/auth/sessions/does-not-exist", { token: dave.token })).status).toBe(404);
    expect((await c.call("DELETE", `/auth/sessions/${admin.jti}`, { token: dave.token })).status).toBe(404);
    expect((await c.call("GET", "/me", { token: admin.token })).status).toBe(200);
    expect((await c.call("DELETE", `/auth/sessions/${admin.jti}`)).status).toBe(401);
    // an administrator may end another user's session
    expect((await c.call("DELETE", `/auth/sessions/${dave.jti}`, { token: admin.token })).status).toBe(204);
    expect((await c.call("GET", "/me", { token: dave.token })).status).toBe(401);
  });
});
