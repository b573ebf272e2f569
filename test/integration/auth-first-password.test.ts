/**
 * The bootstrap's generated administrator password must be changed at first login (docs/AUTH.md
 * "First login: change the generated password"): GET /me says so until any password change of
 * that row; a configured digest sets no flag; coordinator.auth.require_first_password_change=false
 * lets the dashboard offer "Later".
 */
import { describe, expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { dataOf, startCore } from "./auth-harness.ts";

const generated = { coordinator: { auth: { admin_password_hash: "" } } };

describe("first login with the generated password", () => {
  test("GET /me says must_change_password until the administrator changes it; the new login has it cleared", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, generated);
    const boot = c.core.auth.takeFirstRunAdmin()!;
    const s = await c.login("admin", boot.password);
    const me = dataOf(await c.call("GET", "/me", { token: s.token }));
    expect({ must: me.must_change_password, wait: me.password_change_can_wait }).toEqual({ must: true, wait: false });

    const patch = await c.call("PATCH", `/users/${String(me.id)}`, {
      token: s.token,
      body: { password: "a-new-admin-pw", current_password: boot.password },
    });
    expect(patch.status).toBe(200);
    const again = await c.login("admin", "a-new-admin-pw");
    expect(dataOf(await c.call("GET", "/me", { token: again.token })).must_change_password).toBe(false);
  });

  test("a configured digest sets no flag; require_first_password_change=false lets it wait", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { auth: { require_first_password_change: false } } });
    const me = dataOf(await c.call("GET", "/me", { token: (await c.login("admin", "admin-pass-for-tests")).token }));
    expect({ must: me.must_change_password, wait: me.password_change_can_wait }).toEqual({ must: false, wait: true });
  });
});
