/** Dashboards: per-user CRUD, the four defaults of docs/API.md "Default dashboards" on first list and on reset. */
import { describe, expect, test } from "bun:test";
import { hashPassword } from "../../src/auth/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore } from "./auth-harness.ts";

const layout = [
  { id: "a", type: "clock", x: 0, y: 0, w: 4, h: 4, config: { timezone: "UTC" } },
  { id: "b", type: "result-table", x: 4, y: 0, w: 8, h: 6 },
];

describe("dashboards", () => {
  test("first list seeds Home, Smart Search, Quality, Games, NetGames with their widgets", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const items = itemsOf(await c.call("GET", "/dashboards", { token }));
    expect(items.map((d) => d.name)).toEqual(["Home", "Smart Search", "Quality", "Games", "NetGames"]);
    const types = (name: string) =>
      (items.find((d) => d.name === name)!.layout as Array<{ type: string }>).map((w) => w.type).sort();
    expect(types("Home")).toEqual(["call-search", "clock", "result-table"]);
    expect(types("NetGames")).toEqual(["game-netchess", "game-netris"]);
    expect(types("Quality")).toEqual(["kpi-chart", "kpi-table", "kpi-table", "kpi-table"]);
    // a second read does not seed again
    expect(itemsOf(await c.call("GET", "/dashboards", { token })).length).toBe(5);
  });

  test("games off: only Home, Smart Search and Quality are seeded (also by reset)", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path, { coordinator: { widgets: { control: { games: false } } } });
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    expect(itemsOf(await c.call("GET", "/dashboards", { token })).map((d) => d.name)).toEqual([
      "Home",
      "Smart Search",
      "Quality",
    ]);
    const reset = await c.call("POST", "/me/dashboards/reset", { token });
    expect(itemsOf(reset).map((d) => d.name)).toEqual(["Home", "Smart Search", "Quality"]);
  });

  test("create, read, rename/reorder, delete; positions default to the end", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    await c.call("GET", "/dashboards", { token });
    const created = await c.call("POST", "/dashboards", { token, body: { name: "Ops", layout } });
    expect(created.status).toBe(201);
    const id = String(dataOf(created).id);
    const got = dataOf(await c.call("GET", `/dashboards/${id}`, { token }));
    expect(got).toMatchObject({ name: "Ops", position: 5 });
    expect(got.layout).toEqual([layout[0], { ...layout[1], config: {} }]);
    expect(
      (await c.call("PUT", `/dashboards/${id}`, { token, body: { name: "Ops 2", position: 0, layout: [] } })).status,
    ).toBe(200);
    const list = itemsOf(await c.call("GET", "/dashboards?sort=position", { token }));
    expect(
      list
        .slice(0, 2)
        .map((d) => d.name)
        .sort(),
    ).toEqual(["Home", "Ops 2"]);
    expect(list.find((d) => d.name === "Ops 2")).toMatchObject({ position: 0, layout: [] });
    expect(itemsOf(await c.call("GET", "/dashboards?sort=-name&page[limit]=2", { token })).map((d) => d.name)).toEqual([
      "Smart Search",
      "Quality",
    ]);
    expect((await c.call("DELETE", `/dashboards/${id}`, { token })).status).toBe(204);
    expect((await c.call("GET", `/dashboards/${id}`, { token })).status).toBe(404);
    expect((await c.call("DELETE", `/dashboards/${id}`, { token })).status).toBe(404);
  });

  test("another user's dashboard is a 404 for read, update and delete", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    c.core.settings.users.create({ username: "olga", passwordHash: await hashPassword("olga-password") });
    const admin = await c.login("admin", ADMIN_PASSWORD);
    const olga = await c.login("olga", "olga-password");
    const id = String(
      dataOf(await c.call("POST", "/dashboards", { token: admin.token, body: { name: "Private", layout } })).id,
    );
    expect((await c.call("GET", `/dashboards/${id}`, { token: olga.token })).status).toBe(404);
    expect(
      (await c.call("PUT", `/dashboards/${id}`, { token: olga.token, body: { name: "mine", layout: [] } })).status,
    ).toBe(404);
    expect((await c.call("DELETE", `/dashboards/${id}`, { token: olga.token })).status).toBe(404);
    expect(itemsOf(await c.call("GET", "/dashboards", { token: olga.token })).map((d) => d.name)).not.toContain(
      "Private",
    );
  });

  test("reset replaces the user's dashboards with the defaults", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    for (const d of itemsOf(await c.call("GET", "/dashboards", { token })))
      await c.call("DELETE", `/dashboards/${String(d.id)}`, { token });
    await c.call("POST", "/dashboards", { token, body: { name: "Only", layout: [] } });
    const r = await c.call("POST", "/me/dashboards/reset", { token });
    expect(r.status).toBe(200);
    expect((r.json as { message: string }).message).toContain("reset");
    expect(itemsOf(await c.call("GET", "/dashboards", { token })).map((d) => d.name)).toEqual([
      "Home",
      "Smart Search",
      "Quality",
      "Games",
      "NetGames",
    ]);
  });

  test.each([
    [{ layout: [] }, "name"],
    [{ name: "", layout: [] }, "name"],
    [{ name: "x", layout: [{ id: "a", type: "clock", x: 0, y: 0, w: 0, h: 1 }] }, "layout"],
    [{ name: "x", layout: [layout[0], layout[0]] }, "layout[1].id"],
    [{ name: "x", layout: [{ ...layout[0], config: "not-an-object" }] }, "layout[0].config"],
    [{ name: "x", position: -1, layout: [] }, "position"],
  ])("invalid %j → 400 naming %s", async (body, field) => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const r = await c.call("POST", "/dashboards", { token, body });
    expect(r.status).toBe(400);
    expect((r.json as { message: string }).message).toStartWith(field);
  });
});
