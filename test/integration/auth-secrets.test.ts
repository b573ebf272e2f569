/**
 * No secret leaves the server: a broad session of logins, user and token management is recorded
 * (every response body, every log line at debug level) and scanned for passwords, password
 * hashes, the token secret and its hash, the JWT secret and the JWTs themselves.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { configureLogging } from "../../src/core/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, startCore } from "./auth-harness.ts";

test("no password, hash, token or secret in any response body or log line", async () => {
  const logs: string[] = [];
  configureLogging({ level: "debug", format: "json", sink: { write: (l) => logs.push(l) } });
  try {
    await using dir = tempDir();
    await using c = await startCore(dir.path, {
      coordinator: { api_settings: { enable_token_access: true }, auth: { max_failed_logins: 2, lockout_sec: 60 } },
    });
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const userPw = "rita-first-password";
    const userPw2 = "rita-second-password";
    const created = await c.call("POST", "/users", {
      token: admin.token,
      body: { username: "rita", password: userPw, email: "rita@example.net" },
    });
    const ritaId = String(dataOf(created).id);
    const rita = await c.login("rita", userPw);
    await c.call("PATCH", `/users/${ritaId}`, {
      token: rita.token,
      body: { password: userPw2, current_password: userPw },
    });
    await c.call("PATCH", `/users/${ritaId}`, {
      token: rita.token,
      body: { password: "rejected-password", current_password: "wrong-current-pw" },
    });
    const rita2 = await c.login("rita", userPw2);
    for (let i = 0; i < 3; i++)
      await c.call("POST", "/auth/sessions", { body: { username: "rita", password: `wrong-guess-${i}` } });
    const tok = await c.call("POST", "/tokens", { token: rita2.token, body: { name: "scan" } });
    const tokenSecret = String(dataOf(tok).token);
    await c.call("GET", "/me", { headers: { "Auth-Token": tokenSecret } });
    await c.call("GET", "/me", { headers: { "Auth-Token": `${tokenSecret}x` } });
    await c.call("GET", "/me", { token: `${admin.token}x` });
    for (const path of [
      "/users",
      `/users/${ritaId}`,
      "/me",
      "/me/settings",
      "/tokens",
      "/dashboards",
      "/auth/providers",
      "/openapi.json",
      "/agents",
      "/aliases",
      "/hepsubs",
    ]) {
      await c.call("GET", path, { token: admin.token });
    }
    await c.call("DELETE", `/auth/sessions/${rita.jti}`, { token: rita.token });

    const jwtSecret = readFileSync(`${dir.path}/.svc_jwt_secret`, "utf8").trim();
    const hashes = (
      c.core.settings.db.db
        .query("SELECT password_hash AS h FROM users UNION ALL SELECT token_hash FROM api_tokens")
        .all() as Array<{ h: string }>
    ).map((r) => r.h);
    expect(hashes.length).toBe(3);
    const jwts = [admin.token, rita.token, rita2.token];
    const alwaysSecret = [
      ADMIN_PASSWORD,
      userPw,
      userPw2,
      "rejected-password",
      "wrong-current-pw",
      "wrong-guess-0",
      jwtSecret,
      ...hashes,
    ];

    const log = logs.join("\n");
    expect(logs.filter((l) => l.includes("login failed")).length).toBe(2);
    for (const s of [...alwaysSecret, tokenSecret, ...jwts])
      expect(log.includes(s) ? `log contains ${s.slice(0, 12)}…` : "clean").toBe("clean");

    const bodies = c.bodies;
    for (const s of alwaysSecret) expect(bodies.filter((b) => b.includes(s)).length).toBe(0);
    expect(bodies.filter((b) => b.includes(tokenSecret)).length).toBe(1);
    for (const j of jwts) expect(bodies.filter((b) => b.includes(j)).length).toBe(1);
    expect(bodies.some((b) => /\$2[aby]\$\d\d\$/.test(b))).toBe(false);
    expect(bodies.some((b) => /"(password_hash|token_hash|passwordHash|tokenHash)"/.test(b))).toBe(false);
  } finally {
    configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
  }
});
