/**
 * A password change ends every older session of that user (docs/AUTH.md "Password change ends
 * older sessions"): a JWT issued before it is refused with 401, whether the password was changed
 * through the users API or by `svc reset-admin-password` in another process while the service runs;
 * a login right after the change works, and other users' sessions are untouched.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, startCore } from "./auth-harness.ts";

const ROOT = resolve(import.meta.dir, "../..");
const me = (c: Awaited<ReturnType<typeof startCore>>, token: string) => c.call("GET", "/me", { token });

describe("a password change ends older sessions", () => {
  test("users API: own change and an administrator's change refuse tokens issued before; a new login works at once", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const created = await c.call("POST", "/users", {
      token: admin.token,
      body: { username: "alice", password: "alice-first-pw", is_admin: false },
    });
    expect(created.status).toBe(201);
    const aliceId = String(dataOf(created).id);
    const before = await c.login("alice", "alice-first-pw");
    const otherDevice = await c.login("alice", "alice-first-pw");
    expect((await me(c, before.token)).status).toBe(200);

    // Alice changes her own password: both of her sessions end, the admin's stays.
    const own = await c.call("PATCH", `/users/${aliceId}`, {
      token: before.token,
      body: { password: "alice-second-pw", current_password: "alice-first-pw" },
    });
    expect(own.status).toBe(200);
    expect((await me(c, before.token)).status).toBe(401);
    expect((await me(c, otherDevice.token)).status).toBe(401);
    expect((await me(c, admin.token)).status).toBe(200);
    const after = await c.login("alice", "alice-second-pw");
    expect((await me(c, after.token)).status).toBe(200);

    // The administrator resets it: the session Alice opened after her own change ends too.
    expect(
      (await c.call("PATCH", `/users/${aliceId}`, { token: admin.token, body: { password: "alice-third-pw" } })).status,
    ).toBe(200);
    expect((await me(c, after.token)).status).toBe(401);
    expect((await me(c, (await c.login("alice", "alice-third-pw")).token)).status).toBe(200);

    // Other edits (names, email) keep sessions.
    const kept = await c.login("alice", "alice-third-pw");
    expect(
      (await c.call("PATCH", `/users/${aliceId}`, { token: admin.token, body: { first_name: "Alice" } })).status,
    ).toBe(200);
    expect((await me(c, kept.token)).status).toBe(200);
  });

  test("svc reset-admin-password in another process: the running service refuses the admin's older JWT", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const old = await c.login("admin", ADMIN_PASSWORD);
    expect((await me(c, old.token)).status).toBe(200);
    const cfg = join(dir.path, "svc.json");
    writeFileSync(cfg, JSON.stringify({ coordinator: { settings_db_path: join(dir.path, "settings.db") } }));
    const r = Bun.spawnSync(
      [process.execPath, join(ROOT, "src/main.ts"), "reset-admin-password", "--config-path", cfg, "--pass-stdin"],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "" },
        stdin: new TextEncoder().encode("reset-by-operator-pw\n"),
      },
    );
    expect({ code: r.exitCode, err: r.stderr.toString() }).toEqual({ code: 0, err: expect.any(String) });
    expect((await me(c, old.token)).status).toBe(401);
    expect((await me(c, (await c.login("admin", "reset-by-operator-pw")).token)).status).toBe(200);
  });
});
