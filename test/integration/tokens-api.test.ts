/** Static API tokens end to end: create (secret once), header auth, limit_calls, expiry, ownership. */
import { describe, expect, test } from "bun:test";
import { hashPassword } from "../../src/auth/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore } from "./auth-harness.ts";

const ENABLED = { coordinator: { api_settings: { enable_token_access: true } } };

async function createToken(c: Awaited<ReturnType<typeof startCore>>, token: string, body: Record<string, unknown>) {
  const r = await c.call("POST", "/tokens", { token, body });
  expect(r.status).toBe(201);
  return dataOf(r) as { id: string; token: string; token_prefix: string; calls: number };
}

describe("API tokens", () => {
  test("the secret is shown once (svc_ + 32 random bytes) and stored only as its SHA-256", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const t = await createToken(c, token, { name: "ci" });
    expect(t.token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(t.token_prefix).toBe(t.token.slice(0, 8));
    const list = await c.call("GET", "/tokens", { token });
    expect(list.text).not.toContain(t.token);
    expect(itemsOf(list)[0]).not.toHaveProperty("token");
    const one = await c.call("GET", `/tokens/${t.id}`, { token });
    expect(one.text).not.toContain(t.token);
    expect(one.text).not.toContain(new Bun.CryptoHasher("sha256").update(t.token).digest("hex"));
    const row = c.core.settings.db.db.query("SELECT token_hash FROM api_tokens WHERE id = $id").get({ id: t.id }) as {
      token_hash: string;
    };
    expect(row.token_hash).toBe(new Bun.CryptoHasher("sha256").update(t.token).digest("hex"));
  });

  test("accepted raw in Auth-Token, counts calls, acts as its owner", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const t = await createToken(c, token, { name: "ci" });
    const me = await c.call("GET", "/me", { headers: { "Auth-Token": t.token } });
    expect(me.status).toBe(200);
    expect(dataOf(me)).toMatchObject({ username: "admin", is_admin: true, via: "token" });
    await c.call("GET", "/me", { headers: { "auth-token": t.token } });
    expect(dataOf(await c.call("GET", `/tokens/${t.id}`, { token })).calls).toBe(2);
    // a prefix in the header is not accepted: the value is raw
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": `Bearer ${t.token}` } })).status).toBe(401);
  });

  test("stops after limit_calls", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const t = await createToken(c, token, { name: "limited", limit_calls: 2 });
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(200);
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(200);
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(401);
    expect(dataOf(await c.call("GET", `/tokens/${t.id}`, { token })).calls).toBe(2);
    // raising the limit revives it
    expect((await c.call("PATCH", `/tokens/${t.id}`, { token, body: { limit_calls: 3 } })).status).toBe(200);
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(200);
  });

  test("stops after expiry and when inactive", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const t = await createToken(c, token, {
      name: "expiring",
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    });
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(200);
    const past = await c.call("PATCH", `/tokens/${t.id}`, {
      token,
      body: { expires_at: new Date(Date.now() - 1000).toISOString() },
    });
    expect(past.status).toBe(200);
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(401);
    expect((await c.call("PATCH", `/tokens/${t.id}`, { token, body: { expires_at: null } })).status).toBe(200);
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(200);
    expect((await c.call("PATCH", `/tokens/${t.id}`, { token, body: { active: false } })).status).toBe(200);
    expect((await c.call("GET", "/me", { headers: { "Auth-Token": t.token } })).status).toBe(401);
    expect((await c.call("PATCH", `/tokens/${t.id}`, { token, body: { expires_at: "tomorrow" } })).status).toBe(400);
  });

  test("ignored unless enable_token_access; the header name is configurable", async () => {
    await using dir = tempDir();
    let secret: string;
    {
      await using c = await startCore(dir.path);
      const { token } = await c.login("admin", ADMIN_PASSWORD);
      secret = (await createToken(c, token, { name: "x" })).token;
      const r = await c.call("GET", "/me", { headers: { "Auth-Token": secret } });
      expect(r.status).toBe(401);
      expect((r.json as { message: string }).message).toContain("disabled");
    }
    await using c2 = await startCore(dir.path, {
      coordinator: { api_settings: { enable_token_access: true, auth_token_header: "X-Svc-Key" } },
    });
    expect((await c2.call("GET", "/me", { headers: { "X-Svc-Key": secret } })).status).toBe(200);
  });

  test("GET /tokens says in meta.token_access whether tokens are accepted and how to enable them; the key and variable named work", async () => {
    await using dir = tempDir();
    {
      await using c = await startCore(dir.path);
      const { token } = await c.login("admin", ADMIN_PASSWORD);
      const list = await c.call("GET", "/tokens", { token });
      expect(list.status).toBe(200);
      const access = (list.json as { meta: { token_access: Record<string, unknown> } }).meta.token_access;
      expect(access).toEqual({
        enabled: false,
        header: "Auth-Token",
        config_key: "coordinator.api_settings.enable_token_access",
        env: "SVC_COORDINATOR_API_SETTINGS_ENABLE_TOKEN_ACCESS",
        message:
          "API token access is disabled on this server. To enable it set coordinator.api_settings.enable_token_access = true in the configuration file " +
          "(/etc/svc/svc.json on an installed appliance, or the file given with --config-path) or set SVC_COORDINATOR_API_SETTINGS_ENABLE_TOKEN_ACCESS=true, then restart svc",
      });
      // A token sent while disabled is refused with the same sentence.
      const secret = (await createToken(c, token, { name: "early" })).token;
      const refused = await c.call("GET", "/me", { headers: { "Auth-Token": secret } });
      expect(refused.status).toBe(401);
      expect((refused.json as { message: string }).message).toBe(access.message as string);
    }
    // The key and the variable the message names are the ones the configuration reads.
    const fromKey = loadConfig({
      json: { coordinator: { api_settings: { enable_token_access: true } } },
      env: {},
    }).config;
    const fromEnv = loadConfig({ json: {}, env: { SVC_COORDINATOR_API_SETTINGS_ENABLE_TOKEN_ACCESS: "true" } }).config;
    expect([
      fromKey.coordinator.api_settings.enable_token_access,
      fromEnv.coordinator.api_settings.enable_token_access,
    ]).toEqual([true, true]);
    await using on = await startCore(dir.path, ENABLED);
    const { token } = await on.login("admin", ADMIN_PASSWORD);
    expect((await on.call("GET", "/tokens", { token })).json).toMatchObject({
      meta: {
        token_access: {
          enabled: true,
          message:
            "API tokens are accepted in the Auth-Token header (coordinator.api_settings.enable_token_access = true)",
        },
      },
    });
  });

  test("a non-admin's token is not admin; tokens cannot manage tokens; users see only their own tokens", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    c.core.settings.users.create({ username: "frank", passwordHash: await hashPassword("frank-password") });
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const frank = await c.login("frank", "frank-password");
    const adminTok = await createToken(c, admin.token, { name: "admin-token" });
    const frankTok = await createToken(c, frank.token, { name: "frank-token" });
    const h = { "Auth-Token": frankTok.token };
    expect(
      (await c.call("POST", "/users", { headers: h, body: { username: "x3", password: "xxxxxxxx" } })).status,
    ).toBe(403);
    expect((await c.call("POST", "/tokens", { headers: h, body: { name: "more" } })).status).toBe(403);
    expect(itemsOf(await c.call("GET", "/tokens", { token: frank.token })).map((t) => t.name)).toEqual(["frank-token"]);
    expect((await c.call("GET", `/tokens/${adminTok.id}`, { token: frank.token })).status).toBe(404);
    expect((await c.call("DELETE", `/tokens/${adminTok.id}`, { token: frank.token })).status).toBe(404);
    expect(itemsOf(await c.call("GET", "/tokens", { token: admin.token })).length).toBe(2);
    expect((await c.call("DELETE", `/tokens/${frankTok.id}`, { token: admin.token })).status).toBe(204);
    expect((await c.call("GET", "/me", { headers: h })).status).toBe(401);
  });

  test("validation: name required, limit_calls ≥ 0", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const r = await c.call("POST", "/tokens", { token, body: { limit_calls: 1 } });
    expect(r.status).toBe(400);
    expect((r.json as { message: string }).message).toContain("name");
    const neg = await c.call("POST", "/tokens", { token, body: { name: "n", limit_calls: -1 } });
    expect(neg.status).toBe(400);
    expect((neg.json as { message: string }).message).toContain("limit_calls");
  });

  test("PATCH with a body that is not a JSON object (array, string, number, null) is a 400 and changes nothing", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, ENABLED);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const t = await createToken(c, token, { name: "shape" });
    for (const [body, what] of [
      ["[]", "an array"],
      ['[{"active":false}]', "an array"],
      ['"x"', "a string"],
      ["3", "a number"],
      ["true", "a boolean"],
      ["null", "null"],
    ] as const) {
      const r = await c.call("PATCH", `/tokens/${t.id}`, { token, body });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({
        error: "VALIDATION",
        message: `(body): must be a JSON object, not ${what}`,
        fields: ["(body)"],
      });
    }
    // No body at all: the document says it is required.
    const none = await c.call("PATCH", `/tokens/${t.id}`, { token });
    expect(none.status).toBe(400);
    expect((none.json as { message: string }).message).toBe(
      "(body): a JSON object is required (send {} to change nothing)",
    );
    // The same with another content type: the body is the text, still not an object.
    const text = await c.call("PATCH", `/tokens/${t.id}`, {
      token,
      body: "[]",
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(400);
    expect(dataOf(await c.call("GET", `/tokens/${t.id}`, { token }))).toMatchObject({ name: "shape", active: true });
    // An object still works, an empty one included.
    expect((await c.call("PATCH", `/tokens/${t.id}`, { token, body: {} })).status).toBe(200);
    expect((await c.call("PATCH", `/tokens/${t.id}`, { token, body: { name: "renamed" } })).status).toBe(200);
    // Routes without a body schema are not affected (a POST without body).
    expect((await c.call("POST", "/me/dashboards/reset", { token })).status).toBeLessThan(300);
  });
});
