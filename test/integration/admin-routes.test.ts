/**
 * Every operation the OpenAPI document marks "(admin)" refuses a signed-in user who is not an
 * administrator (docs/AUTH.md "Administrator routes"): the `admin: true` macro, checked before the
 * handler. Bodies are left out, so a route with a body may answer 400 (validation comes first);
 * none may answer 2xx, and every route without a body answers 403.
 */
import { expect, test } from "bun:test";
import { hashPassword } from "../../src/auth/index.ts";
import { tempDir } from "../harness.ts";
import { startCore } from "./auth-harness.ts";

test('a user who is not an administrator gets 403 from every "(admin)" operation, an administrator does not', async () => {
  await using dir = tempDir();
  await using c = await startCore(dir.path);
  c.core.settings.users.create({
    username: "olive",
    passwordHash: await hashPassword("olive-password"),
    isAdmin: false,
  });
  const { token } = await c.login("olive", "olive-password");
  type Op = {
    summary?: string;
    requestBody?: unknown;
    parameters?: Array<{ in: string; name: string; required?: boolean }>;
  };
  const doc = (await c.call("GET", "/openapi.json", { token })).json as { paths: Record<string, Record<string, Op>> };
  // Required query parameters get a valid value, so validation (which comes first) passes.
  const query = (op: Op) => {
    const q = (op.parameters ?? []).filter((p) => p.in === "query" && p.required).map((p) => `${p.name}=10.0.0.1`);
    return q.length ? `?${q.join("&")}` : "";
  };
  const prefix = "/api/v4";
  const admin: Array<{ method: string; path: string; body: boolean }> = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!path.startsWith(prefix)) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (!op.summary?.includes("(admin)")) continue;
      admin.push({
        method: method.toUpperCase(),
        path: path.slice(prefix.length).replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000") + query(op),
        body: op.requestBody !== undefined,
      });
    }
  }
  // The routes this rule covers today: users, aliases, mappings, HEP subscriptions, agents, system.
  expect(admin.length).toBeGreaterThanOrEqual(14);
  const seen: string[] = [];
  for (const r of admin) {
    const res = await c.call(r.method, r.path, { token, ...(r.body ? { body: {} } : {}) });
    seen.push(`${r.method} ${r.path} ${res.status}`);
    if (r.body) expect([400, 403]).toContain(res.status);
    else expect(`${r.method} ${r.path} ${res.status}`).toBe(`${r.method} ${r.path} 403`);
  }
  // The administrator passes the check: the same GETs answer 200 or 404 (no such id), never 403.
  const root = await c.login("admin", process.env.SVC_TEST_ADMIN_PASSWORD ?? "admin-pass-for-tests");
  for (const r of admin.filter((x) => x.method === "GET"))
    expect((await c.call(r.method, r.path, { token: root.token })).status).not.toBe(403);
  expect(seen.length).toBe(admin.length);
});
