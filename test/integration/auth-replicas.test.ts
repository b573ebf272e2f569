/**
 * Several coordinators behind one load balancer (docs/AUTH.md "Several coordinators"): two real
 * appliances, each listening on its own loopback port 0 with its own settings database, share one
 * real PostgreSQL (test/peers/postgres.ts) through `coordinator.shared_store.url`, and one OpenID
 * provider (npm oidc-provider, test/integration/oauth2-harness.ts). A sign-in started on A finishes
 * on B, a one-time token issued on A is taken once on B and refused again on A, a logout on A holds
 * on B, and failed logins count across both.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PgAuthStore } from "../../src/auth/state-store-pg.ts";
import { AppError } from "../../src/core/index.ts";
import { peerTest, tempDir, type TempDir } from "../harness.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { ADMIN_PASSWORD, type CallOptions, type CallResult, startServer, type Server } from "./auth-harness.ts";
import { loginAtProvider, startIdp, type Idp } from "./oauth2-harness.ts";

const JWT_SECRET = "replicas-share-this-secret-0123456789abcdef";

let pg: Postgres | undefined;
let idp: Idp | undefined;
const dirs: TempDir[] = [];
const servers: Server[] = [];

/** One replica: its own directory and port, the shared store and JWT secret of the site. */
async function replica(extra: Record<string, unknown> = {}): Promise<Server> {
  const dir = tempDir("svc-replica-");
  dirs.push(dir);
  const s = await startServer(dir.path, {
    coordinator: {
      replicas: 2,
      shared_store: { url: pg!.url },
      jwt: { secret: JWT_SECRET },
      auth: { max_failed_logins: 3, lockout_sec: 600 },
      oauth2_provider: idp!.providerConfig("public"),
      ...extra,
    },
  });
  servers.push(s);
  return s;
}

/** A request as a browser sends it: redirects not followed, an optional cookie. */
async function call(s: Server, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const r = await fetch(`${s.url}/api/v4${path}`, {
    method,
    headers,
    redirect: "manual",
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}

/** Starts a sign-in on `s`: the provider's authorize URL and the browser's binding cookie. */
async function begin(s: Server): Promise<{ authorize: URL; cookie: string }> {
  const r = await call(s, "GET", "/auth/oauth2/corp/redirect");
  expect(r.status).toBe(302);
  return {
    authorize: new URL(r.headers.get("location") ?? ""),
    cookie: (r.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
  };
}

/** The provider's redirect back (registered URI with code and state), delivered to `s` by the load balancer. */
async function callback(s: Server, back: URL, cookie: string): Promise<CallResult> {
  return await call(s, "GET", `/auth/oauth2/corp/callback${back.search}`, { headers: { cookie } });
}

const tokenOf = (r: CallResult) => new URL(r.headers.get("location") ?? "", "http://x").searchParams.get("token") ?? "";
const errorOf = (r: CallResult) =>
  new URL(r.headers.get("location") ?? "", "http://x").searchParams.get("oauth_error") ?? r.text;

test("a shared store URL that is not postgres:// stops the start, its password not shown", async () => {
  await using dir = tempDir("svc-replica-");
  const failure = await startServer(dir.path, {
    coordinator: { shared_store: { url: "mysql://svc:hunter2-not-shown@db:3306/svc" } },
  }).then(
    async (s) => {
      await s[Symbol.asyncDispose]();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(AppError);
  expect((failure as AppError).code).toBe("CONFIG_INVALID");
  expect((failure as AppError).message).toBe(
    "coordinator.shared_store.url: mysql://svc:***@db:3306/svc is not a postgres:// URL",
  );
});

describe("two coordinators with a shared PostgreSQL store", () => {
  let a: Server;
  let b: Server;

  beforeAll(async () => {
    if (!postgresPeer.probe()) return;
    pg = await startPostgres("svc_auth");
    idp = await startIdp();
    a = await replica();
    b = await replica();
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s[Symbol.asyncDispose]();
    for (const d of dirs) await d[Symbol.asyncDispose]();
    await idp?.[Symbol.asyncDispose]();
    await pg?.[Symbol.asyncDispose]();
  });

  peerTest(
    "an OAuth sign-in started on A (state, PKCE verifier) finishes on B; the state works once",
    [postgresPeer],
    async () => {
      const { authorize, cookie } = await begin(a);
      expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
      const back = await loginAtProvider(authorize.href, "alice");
      const cb = await callback(b, back, cookie);
      expect({ status: cb.status, error: cb.status === 302 ? "" : errorOf(cb) }).toEqual({ status: 302, error: "" });
      expect(tokenOf(cb).length).toBeGreaterThan(30);
      // The same state again, on either replica: already taken.
      for (const s of [a, b]) {
        const again = await callback(s, back, cookie);
        expect(again.status).toBe(400);
        expect(errorOf(again)).toContain("state mismatch");
      }
    },
    60_000,
  );

  peerTest(
    "a one-time token issued on A is taken once on B and refused the second time on A",
    [postgresPeer],
    async () => {
      const { authorize, cookie } = await begin(a);
      const cb = await callback(a, await loginAtProvider(authorize.href, "bob"), cookie);
      expect(cb.status).toBe(302);
      const token = tokenOf(cb);
      const onB = await call(b, "POST", "/auth/oauth2/token", { body: { token } });
      expect(onB.status).toBe(201);
      const session = onB.json as { token: string; user: { username: string } };
      expect(session.user.username).toBe("bob_corp.example");
      expect((await call(a, "GET", "/me", { token: session.token })).status).toBe(200);
      const again = await call(a, "POST", "/auth/oauth2/token", { body: { token } });
      expect(again.status).toBe(401);
      expect((again.json as { message: string }).message).toContain("already used");
    },
    60_000,
  );

  peerTest(
    "a one-time token issued on A and sent to B four times at once (two connections) signs in once",
    [postgresPeer],
    async () => {
      const { authorize, cookie } = await begin(a);
      const cb = await callback(a, await loginAtProvider(authorize.href, "erin"), cookie);
      expect(cb.status).toBe(302);
      const token = tokenOf(cb);
      const answers = await Promise.all(
        [b, b, b, b].map((s) => call(s, "POST", "/auth/oauth2/token", { body: { token } })),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([201, 401, 401, 401]);
    },
    60_000,
  );

  peerTest(
    "a logout on A holds on B; an administrator on A ends a session issued by B",
    [postgresPeer],
    async () => {
      const login = async (s: Server) => {
        const r = await call(s, "POST", "/auth/sessions", { body: { username: "admin", password: ADMIN_PASSWORD } });
        expect(r.status).toBe(201);
        return r.json as { token: string; jti: string };
      };
      const first = await login(a);
      expect((await call(b, "GET", "/me", { token: first.token })).status).toBe(200);
      expect((await call(a, "DELETE", `/auth/sessions/${first.jti}`, { token: first.token })).status).toBe(204);
      expect((await call(b, "GET", "/me", { token: first.token })).status).toBe(401);
      expect((await call(a, "GET", "/me", { token: first.token })).status).toBe(401);

      // A session issued by B is known on A: the administrator ends it there.
      const onB = await login(b);
      const other = await login(a);
      expect((await call(a, "DELETE", `/auth/sessions/${onB.jti}`, { token: other.token })).status).toBe(204);
      expect((await call(b, "GET", "/me", { token: onB.token })).status).toBe(401);
    },
    60_000,
  );

  peerTest(
    "failed logins count across both replicas: two on A and one on B lock the user on A",
    [postgresPeer],
    async () => {
      const attempt = (s: Server, password: string) =>
        call(s, "POST", "/auth/sessions", { body: { username: "carol", password } });
      expect((await attempt(a, "wrong-1")).status).toBe(401);
      expect((await attempt(a, "wrong-2")).status).toBe(401);
      expect((await attempt(b, "wrong-3")).status).toBe(401);
      const locked = await attempt(a, "wrong-4");
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await attempt(b, "wrong-5")).status).toBe(429);
    },
    60_000,
  );

  peerTest(
    "a burst of guesses spread over both replicas gets at most max_failed_logins password checks",
    [postgresPeer],
    async () => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          call(i % 2 === 0 ? a : b, "POST", "/auth/sessions", { body: { username: "dave", password: `guess-${i}` } }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(3);
      expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    },
    60_000,
  );

  peerTest(
    "the store keeps only hashes of states and tokens, and a wrong password never shows in the error",
    [postgresPeer],
    async () => {
      const { authorize } = await begin(a);
      const state = authorize.searchParams.get("state") ?? "";
      const sql = new SQL(pg!.url, { max: 1 });
      try {
        const rows: Array<{ key_hash: string }> =
          await sql`SELECT key_hash FROM svc_auth_once WHERE kind = 'oauth_state'`;
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.some((r) => r.key_hash === state)).toBe(false);
        expect(rows.some((r) => r.key_hash === new Bun.CryptoHasher("sha256").update(state).digest("hex"))).toBe(true);
      } finally {
        await sql.close();
      }
      const secret = "not-the-password-0123456789";
      const store = new PgAuthStore(pg!.url.replace(`:${pg!.password}@`, `:${secret}@`), 3, 600);
      const failure = await store.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      await store.stop();
      expect(failure).toBeInstanceOf(AppError);
      const message = (failure as AppError).message;
      expect(message).toContain(`postgres://svc:***@127.0.0.1:${pg!.port}/svc_auth`);
      expect(message).not.toContain(secret);
      expect((failure as AppError).code).toBe("UNAVAILABLE");
    },
    60_000,
  );
});
