/**
 * Saved searches as the per-user setting `search` / `saved` (docs/DASHBOARD.md "Saved searches"):
 * stored through `PUT /me/settings/search`, listed by `GET /me/settings` (an empty list by default),
 * kept across logins and restarts, private to their user, and checked member by member.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore, type Core } from "./auth-harness.ts";

/** The example body of docs/DASHBOARD.md "Saved searches", read from the doc so the doc stays true. */
function docExample(): { param: string; data: { items: Array<typeof FAILED_INVITES> } } {
  const text = readFileSync(join(import.meta.dir, "../../docs/DASHBOARD.md"), "utf8");
  const block = /```json\n([\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error("docs/DASHBOARD.md has no json example");
  return JSON.parse(block) as { param: string; data: { items: Array<typeof FAILED_INVITES> } };
}

const FAILED_INVITES = {
  id: "k3f9a",
  name: "Failed INVITEs from 1001",
  hepid: 1,
  profile: "call",
  filters: { caller: "1001", method: "INVITE", status: ["486", "503"], empty: "" },
  range: { minutes: 1440 },
};

async function savedOf(c: Core, token: string): Promise<Record<string, unknown> | undefined> {
  const r = await c.call("GET", "/me/settings", { token });
  expect(r.status).toBe(200);
  return itemsOf(r).find((s) => s.category === "search" && s.param === "saved");
}

async function withUser(c: Core, adminToken: string, username: string): Promise<string> {
  expect(
    (await c.call("POST", "/users", { token: adminToken, body: { username, password: `${username}-password` } }))
      .status,
  ).toBe(201);
  return (await c.login(username, `${username}-password`)).token;
}

describe("search.saved", () => {
  test("saved, listed, kept across a new login and a restart; another user sees an empty list and cannot delete it", async () => {
    await using dir = tempDir();
    {
      await using c = await startCore(dir.path);
      const admin = await c.login("admin", ADMIN_PASSWORD);
      const other = await withUser(c, admin.token, "olga");
      expect(await savedOf(c, admin.token)).toMatchObject({ is_default: true, data: { items: [] }, updated_at: null });

      expect(docExample()).toEqual({ param: "saved", data: { items: [FAILED_INVITES] } });
      const put = await c.call("PUT", "/me/settings/search", { token: admin.token, body: docExample() });
      expect(put.status).toBe(200);
      const { empty: _dropped, ...kept } = FAILED_INVITES.filters;
      const stored = { items: [{ ...FAILED_INVITES, filters: kept }] };
      expect(dataOf(put).data).toEqual(stored);

      const again = await c.login("admin", ADMIN_PASSWORD);
      expect(await savedOf(c, again.token)).toMatchObject({ is_default: false, data: stored });
      expect(await savedOf(c, other)).toMatchObject({ is_default: true, data: { items: [] } });
      expect((await c.call("DELETE", "/me/settings/search?param=saved", { token: other })).status).toBe(404);
      expect(await savedOf(c, admin.token)).toMatchObject({ data: stored });
    }
    await using c = await startCore(dir.path);
    const admin = await c.login("admin", ADMIN_PASSWORD);
    expect((await savedOf(c, admin.token))?.data).toEqual({
      items: [{ ...FAILED_INVITES, filters: { caller: "1001", method: "INVITE", status: ["486", "503"] } }],
    });
    // Rename and delete are writes of the whole list.
    const renamed = { items: [{ ...FAILED_INVITES, name: "Busy or unavailable" }] };
    expect(
      (await c.call("PUT", "/me/settings/search", { token: admin.token, body: { param: "saved", data: renamed } }))
        .status,
    ).toBe(200);
    expect(
      ((await savedOf(c, admin.token))?.data as { items: Array<{ name: string }> } | undefined)?.items.map(
        (s) => s.name,
      ),
    ).toEqual(["Busy or unavailable"]);
    expect((await c.call("DELETE", "/me/settings/search?param=saved", { token: admin.token })).status).toBe(204);
    expect(await savedOf(c, admin.token)).toMatchObject({ is_default: true, data: { items: [] } });
  });

  test.each([
    ["data not an object", "data", ["x"]],
    ["items not an array", "data.items", { items: "x" }],
    ["a name of spaces", "data.items[0].name", { items: [{ ...FAILED_INVITES, name: "  " }] }],
    [
      "a number as a filter value",
      "data.items[0].filters.method",
      { items: [{ ...FAILED_INVITES, filters: { method: 1 } }] },
    ],
    ["an absolute range", "data.items[0].range.minutes", { items: [{ ...FAILED_INVITES, range: { from: 1, to: 2 } }] }],
    ["the same name twice", "data.items[1].name", { items: [FAILED_INVITES, { ...FAILED_INVITES, id: "other" }] }],
  ])("bad body (%s) is a 400 naming %s, and nothing is stored", async (_what, field, data) => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const r = await c.call("PUT", "/me/settings/search", { token, body: { param: "saved", data } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: "VALIDATION", fields: [field] });
    expect((r.json as { message: string }).message).toStartWith(`${field}: `);
    expect(await savedOf(c, token)).toMatchObject({ is_default: true, data: { items: [] } });
  });

  test("the OpenAPI document publishes the saved-search shape for PUT /me/settings/{category}", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const r = await c.call("GET", "/openapi.json");
    expect(r.status).toBe(200);
    type Schema = {
      anyOf?: Schema[];
      properties?: Record<string, Schema>;
      items?: Schema;
      required?: string[];
      maxItems?: number;
    };
    const doc = r.json as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Schema }> } }>>;
    };
    const put = Object.entries(doc.paths).find(([p]) => p.endsWith("/me/settings/{category}"))?.[1].put;
    const data = put?.requestBody.content["application/json"]?.schema.properties?.data;
    const saved = data?.anyOf?.find((s) => s.properties?.items !== undefined);
    expect(saved?.properties?.items?.maxItems).toBe(100);
    expect(saved?.properties?.items?.items?.required?.sort()).toEqual(["filters", "hepid", "id", "name", "profile"]);
  });
});
