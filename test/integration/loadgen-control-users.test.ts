/**
 * Control-API users of loadgen (docs/LOADGEN.md "Control API"): a management loadgen with
 * `auth.type internal` (a real SQLite users database in a temp folder) on an ephemeral API port,
 * driven over real HTTP: each user route, each error status, the last-administrator rule and the
 * end of a deleted or deactivated user's tokens.
 */
import { describe, expect, test } from "bun:test";
import { planFromArgv, startPlan } from "../../src/loadgen/index.ts";
import { tempDir } from "../harness.ts";
import { client, startUsersLoadgen } from "./loadgen-users-harness.ts";

describe("loadgen control-API users", () => {
  test("admins list, add, change and delete users; every mistake gets its 4xx with {error, message}", async () => {
    await using dir = tempDir("svc-loadgen-users-");
    await using lg = await startUsersLoadgen(dir.path);
    const { req, login } = client(lg.base);
    const admin = await login("admin", lg.adminPassword);

    const created = await req("POST", "/users", admin, { username: "bob", password: "bob-password-1" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: "bob", admin: false, active: true });
    const list = await req("GET", "/users", admin);
    expect(list.status).toBe(200);
    const users = list.body.users as Array<Record<string, unknown>>;
    expect(users.map((u) => [u.username, u.admin, u.active])).toEqual([
      ["admin", true, true],
      ["bob", false, true],
    ]);
    // Never a password hash, under whatever name.
    expect(JSON.stringify(list.body)).not.toMatch(/\$2[aby]\$|password|hash/i);

    for (const [body, status, error, message] of [
      [{ username: "bob", password: "another-pass" }, 409, "CONFLICT", /user "bob" already exists/],
      [{ username: "bad name!", password: "another-pass" }, 400, "BAD_REQUEST", /username: 1-64 of letters/],
      [{ username: "carol", password: "short" }, 400, "BAD_REQUEST", /password: at least 8 characters/],
      [{ username: "carol", password: "x".repeat(1025) }, 400, "BAD_REQUEST", /password: at most 1024 characters/],
      // Characters are code points: four emoji are 8 UTF-16 units but 4 characters (docs/AUTH.md "Password rules").
      [{ username: "carol", password: "😀😀😀😀" }, 400, "BAD_REQUEST", /password: at least 8 characters/],
      [{ username: "carol", password: "long-enough", role: "admin" }, 400, "BAD_REQUEST", /unknown key "role"/],
      [{ username: "carol", password: "long-enough", admin: "yes" }, 400, "BAD_REQUEST", /admin must be a boolean/],
      [{ username: "carol" }, 400, "BAD_REQUEST", /username and password are required/],
      ["{", 400, "BAD_REQUEST", /not valid JSON/],
      [[1], 400, "BAD_REQUEST", /must be a JSON object/],
    ] as const) {
      const r = await req("POST", "/users", admin, body);
      expect([r.status, r.body.error]).toEqual([status, error]);
      expect(r.body.message).toMatch(message);
    }
    expect((await req("POST", "/users", admin, { username: "emoji", password: "😀".repeat(1024) })).status).toBe(201);
    expect((await req("PATCH", "/users/emoji", admin, { password: "😀😀😀😀" })).body.message).toMatch(
      /password: at least 8 characters/,
    );
    expect((await req("DELETE", "/users/emoji", admin)).status).toBe(204);
    expect((await req("PATCH", "/users/nobody", admin, { active: false })).status).toBe(404);
    expect((await req("DELETE", "/users/nobody", admin)).body).toEqual({
      error: "NOT_FOUND",
      message: 'no user "nobody"',
    });
    expect((await req("PATCH", "/users/bob", admin, {})).body.message).toMatch(/nothing to change/);
    expect((await req("PUT", "/users/bob", admin, {})).status).toBe(405);
    expect((await req("GET", "/users", undefined)).status).toBe(401);
    expect((await req("GET", "/users", "not-a-token")).body.error).toBe("UNAUTHORIZED");

    // An administrator sets bob's password without the old one; bob logs in with it.
    expect((await req("PATCH", "/users/bob", admin, { password: "bob-password-2" })).status).toBe(200);
    const bob = await login("bob", "bob-password-2");

    // bob is not an administrator: 403 for everything but his own password.
    for (const [method, path, body] of [
      ["GET", "/users", undefined],
      ["POST", "/users", { username: "eve", password: "eve-password" }],
      ["DELETE", "/users/admin", undefined],
      ["PATCH", "/users/admin", { password: "taken-over-1" }],
      ["PATCH", "/users/bob", { admin: true }],
    ] as const) {
      const r = await req(method, path, bob, body);
      expect([method, path, r.status, r.body.error]).toEqual([method, path, 403, "FORBIDDEN"]);
    }
    // His own password needs the current one.
    expect((await req("PATCH", "/users/bob", bob, { password: "bob-password-3" })).body.message).toMatch(
      /current_password: required and must match/,
    );
    expect(
      (await req("PATCH", "/users/bob", bob, { password: "bob-password-3", current_password: "wrong-one" })).status,
    ).toBe(400);
    expect(
      (await req("PATCH", "/users/bob", bob, { password: "bob-password-3", current_password: "bob-password-2" }))
        .status,
    ).toBe(200);
    expect((await req("POST", "/login", undefined, { username: "bob", password: "bob-password-2" })).status).toBe(401);
    // The change ended the token bob had; a login with the new password gives a new one.
    expect((await req("GET", "/stats", bob)).status).toBe(401);
    const bob3 = await login("bob", "bob-password-3");

    // Promoted, bob may administer; deleted, he is gone from the list.
    expect((await req("PATCH", "/users/bob", admin, { admin: true })).body).toMatchObject({
      username: "bob",
      admin: true,
    });
    expect((await req("GET", "/users", bob3)).status).toBe(200);
    expect((await req("DELETE", "/users/bob", admin)).status).toBe(204);
    expect(
      ((await req("GET", "/users", admin)).body.users as Array<{ username: string }>).map((u) => u.username),
    ).toEqual(["admin"]);
  });

  test("the last active administrator cannot be deleted, deactivated or demoted (409)", async () => {
    await using dir = tempDir("svc-loadgen-users-");
    await using lg = await startUsersLoadgen(dir.path);
    const { req, login } = client(lg.base);
    const admin = await login("admin", lg.adminPassword);
    expect(
      (await req("POST", "/users", admin, { username: "ops", password: "ops-password", admin: false })).status,
    ).toBe(201);
    for (const [method, body, verb] of [
      ["DELETE", undefined, "delete"],
      ["PATCH", { active: false }, "deactivate"],
      ["PATCH", { admin: false }, "demote"],
    ] as const) {
      const r = await req(method, "/users/admin", admin, body);
      expect(r.status).toBe(409);
      expect(r.body).toEqual({
        error: "CONFLICT",
        message: `cannot ${verb} "admin": it is the last active administrator; make another user administrator first`,
      });
    }
    expect(await login("admin", lg.adminPassword)).toBeString();
    // With a second active administrator, the first may go.
    expect((await req("PATCH", "/users/ops", admin, { admin: true })).status).toBe(200);
    expect((await req("PATCH", "/users/admin", admin, { admin: false })).status).toBe(200);
    const ops = await login("ops", "ops-password");
    expect((await req("DELETE", "/users/ops", ops)).status).toBe(409);
    expect((await req("DELETE", "/users/admin", ops)).status).toBe(204);
  });

  test("a deleted or deactivated user's token, or one from before a password change, stops working at once; a user created again under the name gets no old token back", async () => {
    await using dir = tempDir("svc-loadgen-users-");
    await using lg = await startUsersLoadgen(dir.path);
    const { req, login } = client(lg.base);
    const admin = await login("admin", lg.adminPassword);
    await req("POST", "/users", admin, { username: "tmp", password: "tmp-password" });
    const tmp = await login("tmp", "tmp-password");
    expect((await req("GET", "/stats", tmp)).status).toBe(200);
    expect((await req("PATCH", "/users/tmp", admin, { active: false })).status).toBe(200);
    expect((await req("GET", "/stats", tmp)).status).toBe(401);
    expect((await req("POST", "/login", undefined, { username: "tmp", password: "tmp-password" })).status).toBe(401);
    expect((await req("PATCH", "/users/tmp", admin, { active: true })).status).toBe(200);
    expect((await req("GET", "/stats", tmp)).status).toBe(200);

    expect((await req("DELETE", "/users/tmp", admin)).status).toBe(204);
    expect((await req("GET", "/stats", tmp)).status).toBe(401);
    await req("POST", "/users", admin, { username: "tmp", password: "tmp-password" });
    expect((await req("GET", "/stats", tmp)).status).toBe(401);
    expect((await req("GET", "/stats", await login("tmp", "tmp-password"))).status).toBe(200);

    // An administrator resetting the password ends the user's tokens too.
    const fresh = await login("tmp", "tmp-password");
    expect((await req("PATCH", "/users/tmp", admin, { password: "tmp-password-2" })).status).toBe(200);
    expect((await req("GET", "/stats", fresh)).status).toBe(401);
    expect((await req("GET", "/stats", await login("tmp", "tmp-password-2"))).status).toBe(200);

    // A demoted administrator's token loses its rights with the stored flag.
    await req("POST", "/users", admin, { username: "boss", password: "boss-password", admin: true });
    const boss = await login("boss", "boss-password");
    expect((await req("GET", "/users", boss)).status).toBe(200);
    await req("PATCH", "/users/boss", admin, { admin: false });
    expect((await req("GET", "/users", boss)).status).toBe(403);
  });

  test("api_token counts as an administrator; without auth the user routes are a 404", async () => {
    await using dir = tempDir("svc-loadgen-users-");
    await using lg = await startUsersLoadgen(dir.path, "the-api-token");
    const { req } = client(lg.base);
    expect((await req("POST", "/users", "the-api-token", { username: "script", password: "script-pass" })).status).toBe(
      201,
    );
    expect((await req("PATCH", "/users/admin", "the-api-token", { active: false })).status).toBe(409);
    expect((await req("GET", "/users", "the-api-token")).status).toBe(200);

    const plan = planFromArgv(["server", "-sn", "uas", "-p", "0", "-api_addr", "127.0.0.1:0", "-api_token", "tok"]);
    if (!("engines" in plan)) throw new Error("expected a run plan");
    const plain = await startPlan(plan, { out: () => {}, err: () => {} });
    try {
      const r = await client(`http://127.0.0.1:${plain.api!.port}/api/v1`).req("GET", "/users", "tok");
      expect(r.status).toBe(404);
      expect(r.body.message).toMatch(/no control-API users in this run/);
    } finally {
      await plain.stop();
    }
  });

  test("repeated failed logins lock the user for a while (429 with Retry-After), even with the right password", async () => {
    await using dir = tempDir("svc-loadgen-users-");
    await using lg = await startUsersLoadgen(dir.path);
    const { req } = client(lg.base);
    for (let i = 0; i < 5; i++)
      expect(
        (await req("POST", "/login", undefined, { username: "admin", password: `wrong-${i}-password` })).status,
      ).toBe(401);
    const r = await fetch(`${lg.base}/login`, {
      method: "POST",
      body: JSON.stringify({ username: "admin", password: lg.adminPassword }),
    });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await r.json()) as { error: string; message: string }).message).toMatch(
      /too many failed logins; try again in \d+ s/,
    );
  });
});
