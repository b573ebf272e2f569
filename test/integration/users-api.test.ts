/** Users and profile (docs/API.md "Users and settings"): admin rules, visibility, paging, settings, avatar. */
import { describe, expect, test } from "bun:test";
import { isBcryptHash } from "../../src/auth/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore, type Core } from "./auth-harness.ts";

async function withUser(
  c: Core,
  adminToken: string,
  username: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; token: string }> {
  const r = await c.call("POST", "/users", {
    token: adminToken,
    body: { username, password: `${username}-password`, ...extra },
  });
  expect(r.status).toBe(201);
  const id = String(dataOf(r).id);
  return { id, token: (await c.login(username, `${username}-password`)).token };
}

describe("/users", () => {
  test("admin creates users (bcrypt stored, no hash in any response); duplicates 409; short password 400", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const r = await c.call("POST", "/users", {
      token,
      body: {
        username: "gina",
        password: "gina-password",
        email: "gina@example.net",
        first_name: "Gina",
        user_group: "noc",
      },
    });
    expect(r.status).toBe(201);
    // (not toMatchObject with expect.any: Bun 1.4.5 writes the matcher into the received object)
    expect(typeof dataOf(r).id).toBe("string");
    expect((r.json as { message: string }).message).toBe("user created");
    expect(isBcryptHash(c.core.settings.users.getWithSecret("gina")!.passwordHash)).toBe(true);
    const got = await c.call("GET", `/users/${String(dataOf(r).id)}`, { token });
    expect(dataOf(got)).toMatchObject({
      username: "gina",
      email: "gina@example.net",
      first_name: "Gina",
      user_group: "noc",
      is_admin: false,
      is_active: true,
    });
    expect(got.text).not.toContain("$2");
    expect(got.text).not.toContain("password");
    expect(
      (await c.call("POST", "/users", { token, body: { username: "GINA", password: "other-password" } })).status,
    ).toBe(409);
    const short = await c.call("POST", "/users", { token, body: { username: "hank", password: "short" } });
    expect(short.status).toBe(400);
    expect((short.json as { message: string }).message).toStartWith("password");
    const badName = await c.call("POST", "/users", { token, body: { username: "has space", password: "long-enough" } });
    expect(badName.status).toBe(400);
    expect((badName.json as { message: string }).message).toStartWith("username");
  });

  test("password length counts characters (code points), not UTF-16 units, on create and on change", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    // Four emoji are 8 UTF-16 units but 4 characters: below the 8-character minimum.
    const fourEmoji = await c.call("POST", "/users", { token, body: { username: "emoji4", password: "😀😀😀😀" } });
    expect(fourEmoji.status).toBe(400);
    expect(fourEmoji.json).toMatchObject({
      error: "VALIDATION",
      message: "password: 8-1024 characters (Unicode code points)",
    });
    // 1024 emoji are 1024 characters (2048 UTF-16 units): at the maximum, accepted.
    const created = await c.call("POST", "/users", { token, body: { username: "emoji8", password: "😀".repeat(8) } });
    expect(created.status).toBe(201);
    expect((await c.login("emoji8", "😀".repeat(8))).token).toBeTruthy();
    expect(
      (await c.call("POST", "/users", { token, body: { username: "emoji1024", password: "😀".repeat(1024) } })).status,
    ).toBe(201);
    expect(
      (await c.call("POST", "/users", { token, body: { username: "ascii1025", password: "a".repeat(1025) } })).status,
    ).toBe(400);
    const id = String(dataOf(created).id);
    const patched = await c.call("PATCH", `/users/${id}`, { token, body: { password: "😀😀😀😀" } });
    expect(patched.status).toBe(400);
    expect((patched.json as { message: string }).message).toStartWith("password");
  });

  test("a non-admin cannot create or delete users (403), sees only themselves, and another id is a 404", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const ivy = await withUser(c, admin.token, "ivy");
    const jack = await withUser(c, admin.token, "jack");
    expect(
      (await c.call("POST", "/users", { token: ivy.token, body: { username: "kate", password: "kate-password" } }))
        .status,
    ).toBe(403);
    expect((await c.call("DELETE", `/users/${jack.id}`, { token: ivy.token })).status).toBe(403);
    expect(itemsOf(await c.call("GET", "/users", { token: ivy.token })).map((u) => u.username)).toEqual(["ivy"]);
    expect((await c.call("GET", `/users/${jack.id}`, { token: ivy.token })).status).toBe(404);
    expect((await c.call("GET", `/users/${ivy.id}`, { token: ivy.token })).status).toBe(200);
    expect((await c.call("PATCH", `/users/${jack.id}`, { token: ivy.token, body: { email: "x@y" } })).status).toBe(404);
    expect(itemsOf(await c.call("GET", "/users", { token: admin.token })).map((u) => u.username)).toEqual([
      "admin",
      "ivy",
      "jack",
    ]);
  });

  test("PATCH: own email/names/password (current password needed), never own is_admin; admin changes others", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const lea = await withUser(c, admin.token, "lea");
    expect(
      (
        await c.call("PATCH", `/users/${lea.id}`, {
          token: lea.token,
          body: { email: "lea@example.net", last_name: "L" },
        })
      ).status,
    ).toBe(200);
    const up = await c.call("PATCH", `/users/${lea.id}`, { token: lea.token, body: { is_admin: true } });
    expect(up.status).toBe(403);
    expect((up.json as { message: string }).message).toStartWith("is_admin");
    expect(
      (
        await c.call("PATCH", `/users/${lea.id}`, {
          token: lea.token,
          body: { is_admin: false, email: "same@flag.ok" },
        })
      ).status,
    ).toBe(200);
    expect(
      (await c.call("PATCH", `/users/${lea.id}`, { token: lea.token, body: { user_group: "admins" } })).status,
    ).toBe(403);
    const noCurrent = await c.call("PATCH", `/users/${lea.id}`, {
      token: lea.token,
      body: { password: "new-lea-password" },
    });
    expect(noCurrent.status).toBe(400);
    expect((noCurrent.json as { message: string }).message).toStartWith("current_password");
    expect(
      (
        await c.call("PATCH", `/users/${lea.id}`, {
          token: lea.token,
          body: { password: "new-lea-password", current_password: "wrong" },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await c.call("PATCH", `/users/${lea.id}`, {
          token: lea.token,
          body: { password: "new-lea-password", current_password: "lea-password" },
        })
      ).status,
    ).toBe(200);
    await c.login("lea", "new-lea-password");
    expect(isBcryptHash(c.core.settings.users.getWithSecret("lea")!.passwordHash)).toBe(true);
    // admin: password without current_password, is_admin for someone else
    expect(
      (
        await c.call("PATCH", `/users/${lea.id}`, {
          token: admin.token,
          body: { password: "admin-set-pass", is_admin: true },
        })
      ).status,
    ).toBe(200);
    const me = dataOf(await c.call("GET", "/me", { token: (await c.login("lea", "admin-set-pass")).token }));
    expect(me.is_admin).toBe(true);
  });

  test("the last active administrator cannot be demoted, disabled or deleted (409)", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const adminId = String(dataOf(await c.call("GET", "/me", { token: admin.token })).id);
    expect(
      (await c.call("PATCH", `/users/${adminId}`, { token: admin.token, body: { is_active: false } })).status,
    ).toBe(409);
    expect((await c.call("DELETE", `/users/${adminId}`, { token: admin.token })).status).toBe(409);
    expect((await c.call("PATCH", `/users/${adminId}`, { token: admin.token, body: { is_admin: false } })).status).toBe(
      403,
    );
    const mia = await withUser(c, admin.token, "mia", { is_admin: true });
    expect((await c.call("DELETE", `/users/${adminId}`, { token: mia.token })).status).toBe(204);
    expect((await c.call("GET", "/me", { token: admin.token })).status).toBe(401);
  });

  test("delete removes the user's dashboards and settings; unknown id 404", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const ned = await withUser(c, admin.token, "ned");
    await c.call("GET", "/dashboards", { token: ned.token });
    await c.call("PUT", "/me/settings/transaction", {
      token: ned.token,
      body: { param: "range", data: { from: -1000 } },
    });
    expect((await c.call("DELETE", `/users/${ned.id}`, { token: admin.token })).status).toBe(204);
    expect(c.core.settings.dashboards.count("ned")).toBe(0);
    expect(c.core.settings.userSettings.list("ned").every((s) => s.isDefault)).toBe(true);
    expect((await c.call("DELETE", `/users/${ned.id}`, { token: admin.token })).status).toBe(404);
  });

  test("paging: page[limit], opaque page[cursor], total, sort, search and filters", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    for (const [u, g, active] of [
      ["u1", "noc", true],
      ["u2", "noc", false],
      ["u3", "dev", true],
      ["u4", "dev", true],
      ["x5", "noc", true],
    ] as const) {
      expect(
        (
          await c.call("POST", "/users", {
            token,
            body: {
              username: u,
              password: "password-123",
              user_group: g,
              is_active: active,
              email: `${u}@corp.example`,
            },
          })
        ).status,
      ).toBe(201);
    }
    const p1 = await c.call("GET", "/users?page[limit]=2&sort=-username", { token });
    expect(itemsOf(p1).map((u) => u.username)).toEqual(["x5", "u4"]);
    const pagination = (p1.json as { meta: { pagination: { limit: number; total: number; next_cursor: string } } }).meta
      .pagination;
    expect(pagination).toMatchObject({ limit: 2, total: 6 });
    const p2 = await c.call(
      "GET",
      `/users?page[limit]=2&sort=-username&page[cursor]=${encodeURIComponent(pagination.next_cursor)}`,
      { token },
    );
    expect(itemsOf(p2).map((u) => u.username)).toEqual(["u3", "u2"]);
    const p3 = await c.call(
      "GET",
      `/users?page%5Blimit%5D=2&sort=-username&page%5Bcursor%5D=${encodeURIComponent(String((p2.json as { meta: { pagination: { next_cursor: string } } }).meta.pagination.next_cursor))}`,
      { token },
    );
    expect(itemsOf(p3).map((u) => u.username)).toEqual(["u1", "admin"]);
    expect((p3.json as { meta: { pagination: { next_cursor: unknown } } }).meta.pagination.next_cursor).toBeNull();
    expect(itemsOf(await c.call("GET", "/users?group=noc&enabled=true", { token })).map((u) => u.username)).toEqual([
      "u1",
      "x5",
    ]);
    expect(itemsOf(await c.call("GET", "/users?search=U&sort=username", { token })).map((u) => u.username)).toEqual([
      "u1",
      "u2",
      "u3",
      "u4",
    ]);
    expect(itemsOf(await c.call("GET", "/users?email=U3@CORP.EXAMPLE", { token })).map((u) => u.username)).toEqual([
      "u3",
    ]);
    for (const bad of [
      "page[limit]=0",
      "page[limit]=1001",
      "page[limit]=abc",
      "sort=password_hash",
      "page[cursor]=zzz",
      "enabled=maybe",
    ]) {
      const r = await c.call("GET", `/users?${bad}`, { token });
      expect(`${bad} → ${r.status}`).toBe(`${bad} → 400`);
    }
  });
});

describe("/me", () => {
  test("profile with is_admin; avatar only when a photo is cached; /me/avatar 404 otherwise", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const me = dataOf(await c.call("GET", "/me", { token }));
    expect(me).toMatchObject({ username: "admin", is_admin: true, provider: "internal" });
    expect(me).not.toHaveProperty("avatar");
    expect((await c.call("GET", "/me/avatar", { token })).status).toBe(404);
    c.core.auth.avatars.set("admin", { bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47]), contentType: "image/png" });
    expect(dataOf(await c.call("GET", "/me", { token })).avatar).toBe("/api/v4/me/avatar");
    const res = await c.core.app.handle(
      new Request("http://localhost/api/v4/me/avatar", { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
  });

  test("settings: defaults listed, transaction.range keeps defaults for missing/out-of-range members, delete restores", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const list0 = itemsOf(await c.call("GET", "/me/settings", { token }));
    expect(list0.find((s) => s.category === "transaction")).toMatchObject({
      param: "range",
      is_default: true,
      data: { from: -300000, to: 300000, message_from: -300000, message_to: 300000 },
    });
    const put = await c.call("PUT", "/me/settings/transaction", {
      token,
      body: { param: "range", data: { from: -60000, to: 99999999, message_to: 1000 } },
    });
    expect(put.status).toBe(200);
    expect(dataOf(put).data).toEqual({ from: -60000, to: 300000, message_from: -300000, message_to: 1000 });
    const list1 = itemsOf(await c.call("GET", "/me/settings", { token }));
    expect(list1.find((s) => s.category === "transaction")).toMatchObject({
      is_default: false,
      data: { from: -60000, to: 300000 },
    });
    expect((await c.call("DELETE", "/me/settings/transaction", { token })).status).toBe(204);
    expect((await c.call("DELETE", "/me/settings/transaction", { token })).status).toBe(404);
    expect(
      itemsOf(await c.call("GET", "/me/settings", { token })).find((s) => s.category === "transaction")?.is_default,
    ).toBe(true);
  });

  test("export.transaction excludedCIDR is validated, naming the failing member", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const ok = await c.call("PUT", "/me/settings/export", {
      token,
      body: { param: "transaction", data: { excludedCIDR: [{ ip: "10.0.0.0/8", disabled: false }, { alias: "sbc" }] } },
    });
    expect(ok.status).toBe(200);
    expect(dataOf(ok).data).toEqual({
      excludedCIDR: [
        { ip: "10.0.0.0/8", disabled: false },
        { alias: "sbc", disabled: false },
      ],
    });
    const bad = await c.call("PUT", "/me/settings/export", {
      token,
      body: { param: "transaction", data: { excludedCIDR: [{ ip: "999.1.1.1" }] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: "VALIDATION", fields: ["data.excludedCIDR[0].ip"] });
    expect((await c.call("PUT", "/me/settings/Bad Category", { token, body: { param: "x", data: {} } })).status).toBe(
      400,
    );
    expect((await c.call("PUT", "/me/settings/ui", { token, body: { param: "theme", data: "dark" } })).status).toBe(
      400,
    );
    expect(
      (await c.call("PUT", "/me/settings/ui", { token, body: { param: "theme", data: { mode: "dark" } } })).status,
    ).toBe(200);
  });
});
