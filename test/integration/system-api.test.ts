/**
 * The System, Logs and Integrations tags (docs/OPERATIONS.md "System, logs and integrations"):
 * administrators see version, uptime, roles, configuration summary and module health, the newest
 * log lines and the outbound connections; other users get 403; no secret is ever in an answer.
 */
import { describe, expect, test } from "bun:test";
import { configureLogging } from "../../src/core/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, startServer } from "./auth-harness.ts";

const SECRETS = {
  bind: "ldap-bind-secret-4711",
  client: "oauth-client-secret-0815",
  llm: "sk-llm-key-1234",
  url: "urlpass-99",
};

describe("System, Logs and Integrations", () => {
  test("admin: info, logs and integrations; a user: 403; no secret anywhere", async () => {
    // Info lines reach the ring (the tests' default level is error); the sink keeps stderr quiet.
    configureLogging({ level: "info", format: "json", sink: { write() {} } });
    try {
      await scenario();
    } finally {
      configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
    }
  });
});

async function scenario(): Promise<void> {
  await using dir = tempDir();
  await using s = await startServer(dir.path, {
    coordinator: {
      ldap: {
        enable: true,
        host: "ldap1.example.org ldap2.example.org",
        port: 636,
        use_ssl: true,
        bind_dn: "cn=svc",
        bind_password: SECRETS.bind,
        base: "dc=example",
      },
      oauth2_provider: {
        enable: true,
        name: "corp",
        client_id: "svc",
        client_secret: SECRETS.client,
        auth_url: "https://idp.example.org/authorize",
        token_url: `https://svc:${SECRETS.url}@idp.example.org:8443/token?x=1`,
        profile_url: "https://idp.example.org/userinfo",
        redirect_url: "http://127.0.0.1/api/v4/auth/oauth2/corp/callback",
      },
    },
    mcp: { llm: { enable: true, api_key: SECRETS.llm, base_url: "https://llm.example.org/v1", model: "m1" } },
  });
  const admin = await s.fetch("POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
  const token = String((admin.json as { token: string }).token);
  // A failed login writes a log line the admin can read back.
  expect(
    (await s.fetch("POST", "/auth/sessions", { body: { username: "nobody-here", password: "x-wrong-password" } }))
      .status,
  ).toBe(401);

  const info = await s.fetch("GET", "/system/info", { token });
  expect(info.status).toBe(200);
  const d = dataOf(info) as Record<string, Record<string, unknown>>;
  expect(d.version).toBeString();
  expect(d.uptime_sec).toBeGreaterThanOrEqual(0);
  expect(d.roles).toMatchObject({ coordinator: true, writer: false, hep_ingest: false });
  expect(d.auth).toMatchObject({ ldap: true, oauth2: true });
  expect(d.health).toHaveProperty("status");

  const logs = await s.fetch("GET", "/system/logs?limit=50", { token });
  expect(logs.status).toBe(200);
  const lines = (logs.json as { data: Array<{ msg: string; level: string; fields: Record<string, unknown> }> }).data;
  expect(lines.some((l) => l.msg === "login failed" && l.fields.username === "nobody-here")).toBe(true);
  const warnOnly = (await s.fetch("GET", "/system/logs?level=warn", { token })).json as {
    data: Array<{ level: string }>;
  };
  expect(warnOnly.data.every((l) => l.level === "warn" || l.level === "error")).toBe(true);
  expect((await s.fetch("GET", "/system/logs?level=loud", { token })).status).toBe(400);

  const integ = await s.fetch("GET", "/integrations", { token });
  expect(integ.status).toBe(200);
  expect((integ.json as { data: unknown[] }).data).toEqual([
    { kind: "ldap", name: "LDAP", enabled: true, endpoint: "ldaps://ldap1.example.org:636" },
    { kind: "ldap", name: "LDAP", enabled: true, endpoint: "ldaps://ldap2.example.org:636" },
    { kind: "oauth2", name: "corp", enabled: true, endpoint: "https://idp.example.org:8443" },
    { kind: "llm", name: "openai m1", enabled: true, endpoint: "https://llm.example.org" },
  ]);
  for (const r of [info, logs, integ])
    for (const secret of Object.values(SECRETS)) expect(r.text).not.toContain(secret);

  // A user who is not an administrator.
  const created = await s.fetch("POST", "/users", {
    token,
    body: { username: "viewer", password: "viewer-password-1" },
  });
  expect(created.status).toBe(201);
  const viewer = await s.fetch("POST", "/auth/sessions", {
    body: { username: "viewer", password: "viewer-password-1" },
  });
  const vt = String((viewer.json as { token: string }).token);
  for (const path of ["/system/info", "/system/logs", "/integrations"])
    expect((await s.fetch("GET", path, { token: vt })).status).toBe(403);
  for (const path of ["/system/info", "/system/logs", "/integrations"])
    expect((await s.fetch("GET", path)).status).toBe(401);
}
