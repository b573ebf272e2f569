/**
 * The v4 guard: every route except the spec's open ones needs a credential — checked over the
 * app's real route table, so a route added later by any plugin is covered by this test too.
 */
import { describe, expect, test } from "bun:test";
import { createHttpModule } from "../../src/api/index.ts";
import { hashPassword } from "../../src/auth/index.ts";
import { MetricsRegistry, createLogger, startAll, stopAll } from "../../src/core/index.ts";
import { createCoordinator } from "../../src/main.ts";
import { peerTest, tempDir } from "../harness.ts";
import { OPENSSL, selfSignedCert } from "../peers/tls.ts";
import { ADMIN_PASSWORD, dataOf, startCore, startServer, testConfig } from "./auth-harness.ts";

/** Logs in over `url` and answers the status of a cookie-authenticated POST /dashboards per Origin. */
async function csrfProbe(url: string, tls: boolean): Promise<(headers: Record<string, string>) => Promise<number>> {
  const opts = tls ? { tls: { rejectUnauthorized: false } } : {};
  const login = await fetch(`${url}/api/v4/auth/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: ADMIN_PASSWORD }),
    ...opts,
  });
  expect(login.status).toBe(201);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  return async (headers) => {
    const r = await fetch(`${url}/api/v4/dashboards`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, ...headers },
      body: JSON.stringify({ name: "csrf-probe", layout: [] }),
      ...opts,
    });
    await r.arrayBuffer();
    return r.status;
  };
}

describe("protected by default", () => {
  test("every v4 route but the open ones answers 401 without credentials", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const open = new Set([
      "POST /api/v4/auth/sessions",
      "GET /api/v4/auth/providers",
      "GET /api/v4/auth/oauth2/:provider/redirect",
      "GET /api/v4/auth/oauth2/:provider/callback",
      "POST /api/v4/auth/oauth2/token",
      "GET /api/v4/openapi.json",
      "GET /api/v4/openapi",
    ]);
    const routes = c.core.app.routes.filter(
      (r) => r.path.startsWith("/api/v4/") && ["GET", "POST", "PUT", "PATCH", "DELETE"].includes(r.method),
    );
    expect(routes.length).toBeGreaterThan(25);
    const checked: string[] = [];
    for (const r of routes) {
      const key = `${r.method} ${r.path}`;
      if (open.has(key)) continue;
      const path = r.path.replace(/:[^/]+/g, "x");
      const res = await c.core.app.handle(
        new Request(`http://localhost${path}`, {
          method: r.method,
          headers: { "content-type": "application/json" },
          ...(r.method === "GET" || r.method === "DELETE" ? {} : { body: "{}" }),
        }),
      );
      expect(`${key} → ${res.status}`).toBe(`${key} → 401`);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      checked.push(key);
    }
    expect(checked).toContain("GET /api/v4/users");
    expect(checked).toContain("DELETE /api/v4/auth/sessions/:sessionId");
  });

  test("unknown paths under v4 are 401 without credentials and 404 with them; root /health stays open", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    expect((await c.call("GET", "/no-such-thing")).status).toBe(401);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const r = await c.call("GET", "/no-such-thing", { token });
    expect(r.status).toBe(404);
    expect((r.json as { error: string }).error).toBe("NOT_FOUND");
    expect((await c.core.app.handle(new Request("http://localhost/health"))).status).toBe(200);
  });

  test("a trailing slash does not turn an open-route check into a bypass or a protected route into an open one", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    expect((await c.call("GET", "/users/")).status).toBe(401);
    expect((await c.call("GET", "/auth/providers/")).status).toBe(200);
  });
});

describe("credentials", () => {
  test("session cookie authenticates reads; writes need a same-site Origin or Referer (CSRF) or a trusted origin", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, {
      coordinator: { http_server: { trusted_origins: ["https://ui.example.net"] } },
    });
    const { cookie } = await c.login("admin", ADMIN_PASSWORD);
    expect(cookie).toStartWith("svc_session=");
    const me = await c.call("GET", "/me", { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(dataOf(me).via).toBe("cookie");
    const body = { name: "csrf-probe", layout: [] };
    expect((await c.call("POST", "/dashboards", { headers: { cookie }, body })).status).toBe(403);
    expect(
      (await c.call("POST", "/dashboards", { headers: { cookie, origin: "https://evil.example" }, body })).status,
    ).toBe(403);
    expect(
      (await c.call("POST", "/dashboards", { headers: { cookie, referer: "https://evil.example/x" }, body })).status,
    ).toBe(403);
    expect((await c.call("POST", "/dashboards", { headers: { cookie, origin: "null" }, body })).status).toBe(403);
    expect(
      (await c.call("POST", "/dashboards", { headers: { cookie, origin: "http://localhost" }, body })).status,
    ).toBe(201);
    expect(
      (await c.call("POST", "/dashboards", { headers: { cookie, referer: "http://localhost/ui/" }, body })).status,
    ).toBe(201);
    expect(
      (await c.call("POST", "/dashboards", { headers: { cookie, origin: "https://ui.example.net" }, body })).status,
    ).toBe(201);
  });

  test("logout through the cookie clears it", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { cookie, jti } = await c.login("admin", ADMIN_PASSWORD);
    const r = await c.call("DELETE", `/auth/sessions/${jti}`, { headers: { cookie, origin: "http://localhost" } });
    expect(r.status).toBe(204);
    expect(r.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await c.call("GET", "/me", { headers: { cookie } })).status).toBe(401);
  });

  test("?access_token= is read only on a GET WebSocket upgrade of a declared WebSocket route", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const upgrade = { upgrade: "websocket", connection: "Upgrade" };
    expect((await c.call("GET", `/me?access_token=${token}`)).status).toBe(401);
    // the finding: every route accepted it as soon as the request carried Upgrade: websocket
    const create = await c.call("POST", `/users?access_token=${token}`, {
      headers: upgrade,
      body: { username: "ws-smuggled", password: "xxxxxxxx" },
    });
    expect(create.status).toBe(401);
    expect(c.core.settings.users.getByUsername("ws-smuggled")).toBeUndefined();
    expect((await c.call("GET", `/me?access_token=${token}`, { headers: upgrade })).status).toBe(401);
    expect((await c.call("GET", `/users?access_token=${token}`, { headers: upgrade })).status).toBe(401);
    // a declared WebSocket route (not mounted in this app): the guard lets it through (404, no route)
    expect((await c.call("GET", `/stream/hep?access_token=${token}`, { headers: upgrade })).status).toBe(404);
    expect((await c.call("GET", `/stream/hep?access_token=x.y.z`, { headers: upgrade })).status).toBe(401);
    // but not without the upgrade, nor with another method
    expect((await c.call("GET", `/stream/hep?access_token=${token}`)).status).toBe(401);
    expect((await c.call("POST", `/stream/hep?access_token=${token}`, { headers: upgrade, body: {} })).status).toBe(
      401,
    );
  });

  test("a disabled user's session stops working; a demoted admin loses admin at once", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const erin = c.core.settings.users.create({
      username: "erin",
      passwordHash: await hashPassword("erin-password"),
      isAdmin: true,
    });
    const { token } = await c.login("erin", "erin-password");
    expect((await c.call("POST", "/users", { token, body: { username: "x1", password: "xxxxxxxx" } })).status).toBe(
      201,
    );
    c.core.settings.users.update(erin.id, { isAdmin: false });
    expect((await c.call("POST", "/users", { token, body: { username: "x2", password: "xxxxxxxx" } })).status).toBe(
      403,
    );
    c.core.settings.users.update(erin.id, { isActive: false });
    expect((await c.call("GET", "/me", { token })).status).toBe(401);
    expect(
      (await c.call("POST", "/auth/sessions", { body: { username: "erin", password: "erin-password" } })).status,
    ).toBe(401);
  });
});

describe("CSRF check compares scheme, host and port (RFC 6454 origin)", () => {
  test("plain HTTP: the same host and port over https, or another site over https, is refused", async () => {
    await using dir = tempDir();
    await using s = await startServer(dir.path);
    const own = new URL(s.url);
    const post = await csrfProbe(s.url, false);
    expect(await post({ origin: `https://${own.host}` })).toBe(403);
    expect(await post({ referer: `https://${own.host}/ui/` })).toBe(403);
    expect(await post({ origin: "https://evil.example" })).toBe(403);
    expect(await post({ origin: `http://${own.hostname}:${Number(own.port) + 1}` })).toBe(403);
    expect(await post({ origin: `http://${own.host}` })).toBe(201);
    // behind a TLS-terminating proxy (X-Forwarded-Proto: https) the browser's origin is https
    expect(await post({ origin: `http://${own.host}`, "x-forwarded-proto": "https" })).toBe(403);
    expect(await post({ origin: `https://${own.host}`, "x-forwarded-proto": "https" })).toBe(201);
  });

  peerTest("TLS: the same host and port over plain http is refused, https is accepted", [OPENSSL], async () => {
    await using dir = tempDir();
    const { cert, key } = selfSignedCert(dir.path, "127.0.0.1");
    const logger = createLogger({ test: true });
    const core = createCoordinator(testConfig(dir.path), logger, new MetricsRegistry());
    const https = createHttpModule(
      core.app,
      { name: "coordinator-https", listen: "127.0.0.1:0", listenKey: "test", tls: { cert, key } },
      logger,
    );
    const modules = [...core.modules, https];
    await startAll(modules, logger);
    try {
      expect(https.url()).toStartWith("https://");
      const own = new URL(https.url());
      const post = await csrfProbe(https.url(), true);
      expect(await post({ origin: `http://${own.host}` })).toBe(403);
      expect(await post({ referer: `http://${own.host}/ui/` })).toBe(403);
      expect(await post({ origin: "http://evil.example" })).toBe(403);
      expect(await post({ origin: `https://${own.host}` })).toBe(201);
    } finally {
      await stopAll(modules, logger);
    }
  });
});

describe("GET /auth/providers", () => {
  test("exact shape with defaults: internal on, LDAP off, no OAuth", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("GET", "/auth/providers");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      data: {
        internal: { enable: true, name: "Internal", position: 0, type: "internal" },
        ldap: { enable: false, name: "LDAP", position: 1, type: "ldap" },
        oauth2: [],
      },
      meta: {},
    });
  });

  test("LDAP is enabled only with a host; OAuth is listed only when enabled and complete", async () => {
    await using dir = tempDir();
    const oauth = {
      enable: true,
      name: "corp",
      provider_name: "Corp SSO",
      client_id: "id",
      client_secret: "s3cr3t",
      auth_url: "https://idp/authorize",
      token_url: "https://idp/token",
      profile_url: "https://idp/userinfo",
      redirect_url: "https://svc/api/v4/auth/oauth2/corp/callback",
      auto_redirect: true,
    };
    await using c = await startCore(dir.path, {
      coordinator: { ldap: { enable: true }, oauth2_provider: oauth, auth: { internal_position: 3 } },
    });
    const d = dataOf(await c.call("GET", "/auth/providers"));
    expect((d.ldap as { enable: boolean }).enable).toBe(false);
    expect(d.internal).toMatchObject({ position: 3 });
    expect(d.oauth2).toEqual([
      {
        enable: true,
        name: "corp",
        position: 2,
        type: "oauth2",
        provider_name: "Corp SSO",
        provider_image: "",
        url: "/api/v4/auth/oauth2/corp/redirect",
        auto_redirect: true,
      },
    ]);
    expect(JSON.stringify(d)).not.toContain("s3cr3t");

    await using dir2 = tempDir();
    await using c2 = await startCore(dir2.path, {
      coordinator: { ldap: { enable: true, host: "ldap1 ldap2" }, oauth2_provider: { ...oauth, client_secret: "" } },
    });
    const d2 = dataOf(await c2.call("GET", "/auth/providers"));
    expect((d2.ldap as { enable: boolean }).enable).toBe(true);
    expect(d2.oauth2).toEqual([]);
  });
});

describe("OpenAPI", () => {
  test("GET /openapi.json is open and describes the v4 routes with their security", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("GET", "/openapi.json");
    expect(r.status).toBe(200);
    const doc = r.json as {
      openapi: string;
      paths: Record<string, Record<string, { tags?: string[]; security?: unknown[] }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toStartWith("3.");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/v4/users",
        "/api/v4/users/{userId}",
        "/api/v4/auth/sessions",
        "/api/v4/dashboards",
        "/api/v4/tokens",
      ]),
    );
    expect(Object.keys(doc.paths).every((p) => p.startsWith("/api/v4/"))).toBe(true);
    expect(doc.paths["/api/v4/auth/sessions"]?.post?.security).toEqual([]);
    expect(doc.paths["/api/v4/users"]?.post?.tags).toEqual(["Users"]);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(["bearer", "apiToken", "sessionCookie"]);
  });

  test("GET /openapi is a self-contained HTML page without scripts", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("GET", "/openapi");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toContain("/api/v4/users/{userId}");
    expect(r.text).not.toContain("<script");
    expect(r.text).not.toMatch(/https?:\/\/(cdn|unpkg)/);
  });
});

describe("client mistakes are never 500", () => {
  test("every v4 route, called by an admin with garbage bodies, ids and queries, answers below 500", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { api_settings: { enable_token_access: true } } });
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const routes = c.core.app.routes.filter(
      (r) => r.path.startsWith("/api/v4/") && ["GET", "POST", "PUT", "PATCH", "DELETE"].includes(r.method),
    );
    const bodies = [
      undefined,
      "",
      "null",
      "[]",
      '"text"',
      "{}",
      '{"name":{"$gt":1},"password":1,"layout":"x","data":[1]}',
      "{bad json",
    ];
    const queries = ["", "?page[limit]=-1", "?sort=%27;drop", "?page[cursor]=%00%ff", "?enabled=2&hepid=x&ip="];
    const failures: string[] = [];
    for (const r of routes) {
      for (const id of ["x", "%00", "00000000-0000-0000-0000-000000000000"]) {
        const path = r.path.replace(/:[^/]+/g, id);
        for (const q of queries) {
          for (const b of r.method === "GET" ? [undefined] : bodies) {
            const res = await c.core.app.handle(
              new Request(`http://localhost${path}${q}`, {
                method: r.method,
                headers: {
                  authorization: `Bearer ${token}`,
                  ...(b === undefined ? {} : { "content-type": "application/json" }),
                },
                ...(b === undefined ? {} : { body: b }),
              }),
            );
            if (res.status >= 500)
              failures.push(`${r.method} ${path}${q} ${b ?? "(no body)"} → ${res.status} ${await res.text()}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
