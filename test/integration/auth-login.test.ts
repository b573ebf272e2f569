import { describe, expect, spyOn, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { jwtVerify } from "jose";
import { BCRYPT_COST, hashPassword, sha256Hex } from "../../src/auth/index.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, startCore, startServer, type CallResult } from "./auth-harness.ts";

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
    const r = await c.call("POST", "/auth/sessions", {
      body: { username: "admin", password: ADMIN_PASSWORD },
      headers: { "x-forwarded-proto": "https" },
    });
    expect(r.headers.get("set-cookie")).toContain("; Secure");
  });

  test("wrong password and unknown user get the same generic 401", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const wrong = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "not-the-password" } });
    const unknown = await c.call("POST", "/auth/sessions", {
      body: { username: "nobody", password: "not-the-password" },
    });
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
    const r = await c.call("POST", "/auth/sessions", {
      body: { username: "admin", password: ADMIN_PASSWORD, type: "ldap" },
    });
    expect(r.status).toBe(400);
    expect((r.json as { message: string }).message).toStartWith("type:");
    await using dir2 = tempDir();
    await using c2 = await startCore(dir2.path, { coordinator: { auth: { fallback_auth_type: "internal" } } });
    const ok = await c2.call("POST", "/auth/sessions", {
      body: { username: "admin", password: ADMIN_PASSWORD, type: "ldap" },
    });
    expect(ok.status).toBe(201);
  });

  test("disable_password_login → 403 and internal/ldap hidden from /auth/providers", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, {
      coordinator: { auth: { disable_password_login: true }, ldap: { enable: true, host: "ldap.example" } },
    });
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
    for (let i = 0; i < 3; i++)
      expect((await c.call("POST", "/auth/sessions", { body: { username: "admin", password: "guess" } })).status).toBe(
        401,
      );
    const locked = await c.call("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(locked.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "bob", password: "bob-password-1" } })).status,
    ).toBe(201);
  });
});

describe("every failed login does the same work", () => {
  // Structural, not timed: each path runs exactly one bcrypt verify (Bun.password.verify is the
  // platform's; spying on it leaves it running). The bootstrap admin once compared a bare SHA-256
  // in microseconds (1.3 ms vs 85 ms per answer), which told the account apart and exposed the digest.
  test("unknown user, bootstrap admin, normal, empty-hash, legacy-digest and disabled users: one bcrypt verify each", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { auth: { max_failed_logins: 100 } } });
    const users = c.core.settings.users;
    users.create({ username: "norma", passwordHash: await hashPassword("norma-password") });
    users.create({ username: "oauth-only", passwordHash: "" });
    // a bare digest written while running (by another tool): start-up never saw it
    users.create({ username: "legacy", passwordHash: sha256Hex("legacy-password") });
    users.create({ username: "gone", passwordHash: await hashPassword("gone-password"), isActive: false });
    const verify = spyOn(Bun.password, "verify");
    try {
      for (const username of ["nobody", "admin", "norma", "oauth-only", "legacy", "gone"]) {
        verify.mockClear();
        const r = await c.call("POST", "/auth/sessions", { body: { username, password: "wrong-password" } });
        expect(`${username}: ${r.status} after ${verify.mock.calls.length} verify`).toBe(
          `${username}: 401 after 1 verify`,
        );
      }
      verify.mockClear();
      expect(
        (await c.call("POST", "/auth/sessions", { body: { username: "gone", password: "gone-password" } })).status,
      ).toBe(401);
      expect(verify).toHaveBeenCalledTimes(1);
    } finally {
      verify.mockRestore();
    }
  });

  test("a right password stored in another form (legacy digest, cheaper bcrypt) is rehashed to bcrypt at the default cost", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const users = c.core.settings.users;
    users.create({ username: "legacy", passwordHash: sha256Hex("legacy-password") });
    users.create({
      username: "cheap",
      passwordHash: await Bun.password.hash("cheap-password", { algorithm: "bcrypt", cost: 4 }),
    });
    for (const [name, pw] of [
      ["legacy", "legacy-password"],
      ["cheap", "cheap-password"],
    ] as const) {
      expect((await c.call("POST", "/auth/sessions", { body: { username: name, password: pw } })).status).toBe(201);
      expect(users.getWithSecret(name)!.passwordHash).toStartWith(`$2b$${BCRYPT_COST}$`);
      expect((await c.call("POST", "/auth/sessions", { body: { username: name, password: pw } })).status).toBe(201);
    }
  });
});

describe("login throttle under concurrency (real HTTP on 127.0.0.1)", () => {
  const THROTTLE = { coordinator: { auth: { max_failed_logins: 5, lockout_sec: 60 } } };
  const VICTIM = { username: "victim", password: "victim-password-1" };
  const statuses = (rs: CallResult[]) =>
    rs.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});
  /** A server with a user whose password is bcrypt (the slow check the burst races against). */
  async function serverWithVictim(dir: string) {
    const s = await startServer(dir, THROTTLE);
    const admin = await s.fetch("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
    const created = await s.fetch("POST", "/users", {
      token: String((admin.json as { token: string }).token),
      body: VICTIM,
    });
    expect(created.status).toBe(201);
    return s;
  }
  const guess = (i: number) => ({ body: { username: VICTIM.username, password: `guess-${i}` } });

  test("200 parallel wrong guesses: at most max_failed_logins passwords are checked, the rest are 429", async () => {
    await using dir = tempDir();
    await using s = await serverWithVictim(dir.path);
    const counts = statuses(
      await Promise.all(Array.from({ length: 200 }, (_, i) => s.fetch("POST", "/auth/sessions", guess(i)))),
    );
    expect(Object.keys(counts).sort()).toEqual(["401", "429"]);
    expect(counts[401]).toBeLessThanOrEqual(5);
    expect(counts[401]! + counts[429]!).toBe(200);
  });

  test("the right password sent inside a burst of wrong ones is refused with 429 like them", async () => {
    await using dir = tempDir();
    await using s = await serverWithVictim(dir.path);
    const inFlight = s.app.metrics.gauge("svc_auth_password_checks_in_flight", "");
    let answered = 0;
    const burst = Array.from({ length: 39 }, (_, i) =>
      s.fetch("POST", "/auth/sessions", guess(i)).then((r) => {
        answered++;
        return r;
      }),
    );
    // Every guess of the burst has reached the server: answered, or admitted and being checked.
    await waitFor("the burst to reach the password check", () => answered + inFlight.get() === 39);
    const right = await s.fetch("POST", "/auth/sessions", { body: VICTIM });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    const counts = statuses(await Promise.all(burst));
    expect(counts[401]).toBeLessThanOrEqual(5);
    expect(counts[429]).toBeGreaterThanOrEqual(34);
    // the burst's failures locked the pair: the right password stays refused
    expect((await s.fetch("POST", "/auth/sessions", { body: VICTIM })).status).toBe(429);
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
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "carol", password: "carol-secret-9" } })).status,
    ).toBe(201);
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "carol", password: "carol-secret-8" } })).status,
    ).toBe(401);
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
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ["HS256"],
    });
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

  test.each([
    [1, "x"],
    [31, "k".repeat(31)],
  ])("a jwt.secret of %d bytes stops the start naming the key", async (bytes, secret) => {
    await using dir = tempDir();
    const start = startCore(dir.path, { coordinator: { jwt: { secret } } });
    await expect(start).rejects.toThrow(`coordinator.jwt.secret: must be at least 32 bytes (got ${bytes})`);
  });

  test("32 bytes are enough, counted as UTF-8 bytes (16 × é), and the generated secret is longer", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { jwt: { secret: "é".repeat(16) } } });
    expect((await c.login("admin", ADMIN_PASSWORD)).token).toBeString();
    await using dir2 = tempDir();
    await using c2 = await startCore(dir2.path);
    expect(Buffer.byteLength(readFileSync(`${dir2.path}/.svc_jwt_secret`, "utf8").trim())).toBeGreaterThanOrEqual(32);
    expect(c2.config.coordinator.jwt.secret).toBe("");
  });

  test("svc serve with SVC_COORDINATOR_JWT_SECRET=x exits 2 naming the key", async () => {
    await using dir = tempDir();
    const cfg = `${dir.path}/svc.json`;
    writeFileSync(
      cfg,
      JSON.stringify({
        coordinator: { settings_db_path: `${dir.path}/settings.db`, http_server: { listen: "127.0.0.1:0" } },
        storage: { lakehouse: { enable: false } },
      }),
    );
    const root = `${import.meta.dir}/../..`;
    const p = Bun.spawnSync([process.execPath, `${root}/src/main.ts`, "serve", "--config-path", cfg], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", SVC_COORDINATOR_JWT_SECRET: "x", SVC_LOG_FORMAT: "json" },
      timeout: 30_000, // without the check it would serve until killed
    });
    const err = p.stderr.toString();
    expect(err).toContain("svc: coordinator.jwt.secret: must be at least 32 bytes (got 1)");
    expect(err).not.toContain("listening");
    expect(p.exitCode).toBe(2);
  });

  test("a token signed with another secret, or tampered, is 401", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const [h, p, s] = token.split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p!, "base64url").toString()), username: "other" }),
    ).toString("base64url");
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

  test("a logout survives a restart on the same settings database; expired revocations are pruned at start", async () => {
    await using dir = tempDir();
    let revoked: { token: string; jti: string };
    let kept: { token: string; jti: string };
    {
      await using c = await startCore(dir.path);
      revoked = await c.login("admin", ADMIN_PASSWORD);
      kept = await c.login("admin", ADMIN_PASSWORD);
      expect((await c.call("DELETE", `/auth/sessions/${revoked.jti}`, { token: revoked.token })).status).toBe(204);
      // an old revocation whose token has expired: nothing to keep
      c.core.settings.revokedSessions.add("expired-jti", "admin", Date.now() - 1000);
    }
    await using c2 = await startCore(dir.path);
    const after = await c2.call("GET", "/me", { token: revoked.token });
    expect(after.status).toBe(401);
    expect((after.json as { message: string }).message).toContain("revoked");
    expect((await c2.call("GET", "/me", { token: kept.token })).status).toBe(200);
    const rows = c2.core.settings.db.db.query("SELECT jti, expires_at FROM revoked_sessions").all() as Array<{
      jti: string;
      expires_at: number;
    }>;
    expect(rows.map((r) => r.jti)).toEqual([revoked.jti]);
    // kept until the token's exp plus the verifier's 30 s leeway, not forever
    const exp = Number(JSON.parse(Buffer.from(revoked.token.split(".")[1]!, "base64url").toString()).exp);
    expect(rows[0]!.expires_at).toBe(exp * 1000 + 30_000);
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
