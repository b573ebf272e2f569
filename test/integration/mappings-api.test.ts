/**
 * Mappings tag (docs/API.md "Mapping rows", "Field object", "Virtual block") through
 * the real coordinator: CRUD with admin/non-admin, validation naming the member, the field views with
 * per-user layouts (only selected and position), 404s, and no 500 for any bad input.
 */
import { describe, expect, test } from "bun:test";
import { stableGuid } from "../../src/settings/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore, type CallResult, type Core } from "./auth-harness.ts";

async function userToken(c: Core, adminToken: string, username: string): Promise<string> {
  const r = await c.call("POST", "/users", { token: adminToken, body: { username, password: `${username}-password` } });
  expect(r.status).toBe(201);
  return (await c.login(username, `${username}-password`)).token;
}

const field = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: id.toUpperCase(),
  type: "string",
  ...extra,
});
const upsert = (extra: Record<string, unknown> = {}) => ({
  hepid: 77,
  profile: "custom",
  hep_alias: "Custom",
  fields_mapping: [field("a", { position: 1 })],
  ...extra,
});
const message = (r: CallResult) => String((r.json as { message?: unknown }).message);
const fieldsOf = (r: CallResult) => (r.json as { fields?: string[] }).fields ?? [];
const ids = (list: unknown) => (list as Array<{ id: string }>).map((f) => f.id);

describe("/mappings CRUD", () => {
  test("admin creates, reads, updates and deletes; a user reads but gets 403 on every write", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = (await c.login("admin", ADMIN_PASSWORD)).token;
    const user = await userToken(c, admin, "noc");

    expect((await c.call("POST", "/mappings", { token: user, body: upsert() })).status).toBe(403);
    const created = await c.call("POST", "/mappings", { token: admin, body: upsert({ retention: 3 }) });
    expect(created.status).toBe(201);
    const id = String(dataOf(created).id);
    expect(message(created)).toBe("mapping created");
    expect((await c.call("POST", "/mappings", { token: admin, body: upsert() })).status).toBe(409);

    const got = await c.call("GET", `/mappings/${id}`, { token: user });
    expect(got.status).toBe(200);
    expect(dataOf(got)).toMatchObject({
      id,
      guid: id,
      hepid: 77,
      profile: "custom",
      hep_alias: "Custom",
      retention: 3,
      source: "user",
      fields_mapping: [field("a", { position: 1 })],
    });

    const change = upsert({
      hep_alias: "Renamed",
      fields_mapping: [field("b", { form_type: "select", selector: [{ name: "x", value: 1 }] })],
    });
    expect((await c.call("PUT", `/mappings/${id}`, { token: user, body: change })).status).toBe(403);
    expect((await c.call("PUT", `/mappings/${id}`, { token: admin, body: change })).status).toBe(200);
    expect(dataOf(await c.call("GET", `/mappings/${id}`, { token: admin }))).toMatchObject({
      hep_alias: "Renamed",
      retention: 3,
      fields_mapping: [{ id: "b", selector: [{ name: "x", value: 1 }] }],
    });
    // moving it onto an existing (hepid, profile) is a conflict, not a 500
    expect(
      (await c.call("PUT", `/mappings/${id}`, { token: admin, body: upsert({ hepid: 1, profile: "call" }) })).status,
    ).toBe(409);

    expect((await c.call("DELETE", `/mappings/${id}`, { token: user })).status).toBe(403);
    expect((await c.call("DELETE", `/mappings/${id}`, { token: admin })).status).toBe(204);
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", upsert()],
      ["DELETE", undefined],
    ] as const) {
      expect((await c.call(method, `/mappings/${id}`, { token: admin, body })).status).toBe(404);
    }
    expect((await c.call("GET", "/mappings", {})).status).toBe(401);
  });

  test("list: envelope, filters, sort and cursor paging over the seeded rows", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const token = (await c.login("admin", ADMIN_PASSWORD)).token;
    const all = await c.call("GET", "/mappings", { token });
    const meta = (all.json as { meta: { pagination: { total: number; limit: number; next_cursor: string | null } } })
      .meta.pagination;
    expect(meta).toEqual({ total: 11, limit: 100, next_cursor: null });
    expect(itemsOf(all).map((m) => `${m.hepid}_${m.profile}`)).toEqual([
      "1_call",
      "1_default",
      "1_registration",
      "5_default",
      "34_default",
      "35_default",
      "53_default",
      "100_default",
      "200_default",
      "201_default",
      "202_default",
    ]);
    expect(itemsOf(await c.call("GET", "/mappings?hepid=1", { token })).map((m) => m.profile)).toEqual([
      "call",
      "default",
      "registration",
    ]);
    expect(itemsOf(await c.call("GET", "/mappings?profile=registration", { token })).map((m) => m.hepid)).toEqual([1]);
    expect(itemsOf(await c.call("GET", "/mappings?hep_alias=OTLP%20Logs", { token })).map((m) => m.hepid)).toEqual([
      202,
    ]);
    expect(itemsOf(await c.call("GET", "/mappings?search=otlp&sort=-hepid", { token })).map((m) => m.hepid)).toEqual([
      202, 201, 200,
    ]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/mappings?page[limit]=4${cursor ? `&page[cursor]=${encodeURIComponent(cursor)}` : ""}`;
      const page = await c.call("GET", q, { token });
      expect(page.status).toBe(200);
      seen.push(...itemsOf(page).map((m) => String(m.guid)));
      cursor = (page.json as { meta: { pagination: { next_cursor: string | null } } }).meta.pagination.next_cursor;
    } while (cursor);
    expect(seen).toEqual(itemsOf(all).map((m) => String(m.guid)));
  });
});

describe("validation", () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["hepid not an integer", upsert({ hepid: 1.5 }), "hepid"],
    ["hepid missing", { profile: "x", fields_mapping: [] }, "hepid"],
    ["profile with a slash", upsert({ profile: "a/b" }), "profile"],
    ["fields_mapping missing", { hepid: 77, profile: "custom" }, "fields_mapping"],
    ["fields_mapping an object", upsert({ fields_mapping: { id: "a" } }), "fields_mapping"],
    ["field without name", upsert({ fields_mapping: [{ id: "a", type: "string" }] }), "fields_mapping.0.name"],
    ["unknown type", upsert({ fields_mapping: [field("a", { type: "varchar" })] }), "fields_mapping.0.type"],
    [
      "unknown form_type",
      upsert({ fields_mapping: [field("a"), field("b", { form_type: "radio" })] }),
      "fields_mapping.1.form_type",
    ],
    [
      "select without selector",
      upsert({ fields_mapping: [field("a", { form_type: "select" })] }),
      "fields_mapping.0.selector",
    ],
    [
      "bad virtual kind",
      upsert({ fields_mapping: [field("a", { virtual: { kind: "sql", path: "a" } })] }),
      "fields_mapping.0.virtual.kind",
    ],
    [
      "bad virtual path",
      upsert({ fields_mapping: [field("a", { virtual: { kind: "data_extra_json", path: "a'; DROP" } })] }),
      "fields_mapping.0.virtual.path",
    ],
    [
      "bad virtual match",
      upsert({ fields_mapping: [field("a", { virtual: { kind: "data_extra_json", path: "a", match: "glob" } })] }),
      "fields_mapping.0.virtual.match",
    ],
    ["duplicate ids", upsert({ fields_mapping: [field("a"), field("a")] }), "fields_mapping.1.id"],
    ["mapping_settings not an object", upsert({ mapping_settings: "x" }), "mapping_settings"],
    ["negative retention", upsert({ retention: -1 }), "retention"],
  ];
  test.each(cases)("%s → 400 naming it (POST and PUT)", async (_name, body, name) => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const token = (await c.login("admin", ADMIN_PASSWORD)).token;
    for (const [method, path] of [
      ["POST", "/mappings"],
      ["PUT", `/mappings/${stableGuid("seed:1:call")}`],
    ] as const) {
      const r = await c.call(method, path, { token, body });
      expect(r.status).toBe(400);
      expect(fieldsOf(r)).toContain(name);
      expect(message(r)).toStartWith(name);
    }
    expect(itemsOf(await c.call("GET", "/mappings?hepid=77", { token }))).toEqual([]);
  });
});

describe("field views and per-user layouts", () => {
  test("fields needs hepid and profile (400 naming the missing one); unknown mapping 404", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const token = (await c.login("admin", ADMIN_PASSWORD)).token;
    for (const path of ["/mappings/fields", "/mappings/widget-fields"]) {
      const noHepid = await c.call("GET", `${path}?profile=call`, { token });
      expect(noHepid.status).toBe(400);
      expect(fieldsOf(noHepid)).toEqual(["hepid"]);
      const noProfile = await c.call("GET", `${path}?hepid=1`, { token });
      expect(noProfile.status).toBe(400);
      expect(fieldsOf(noProfile)).toEqual(["profile"]);
      expect((await c.call("GET", `${path}?hepid=abc&profile=call`, { token })).status).toBe(400);
      expect((await c.call("GET", `${path}?hepid=1&profile=nope`, { token })).status).toBe(404);
    }
    const f = await c.call("GET", "/mappings/fields?hepid=1&profile=call", { token });
    expect(f.status).toBe(200);
    expect(dataOf(f)).toMatchObject({ hepid: 1, profile: "call", hep_alias: "SIP" });
    const items = dataOf(f).items as Array<Record<string, unknown>>;
    expect((f.json as { meta: { total: number } }).meta.total).toBe(items.length);
    expect(items.find((x) => x.id === "call_id")).toMatchObject({ sid_type: true, index: "primary" });
    expect(items.find((x) => x.id === "from_tag")?.virtual).toEqual({
      kind: "data_extra_json",
      path: "from_tag",
      match: "equals",
    });
  });

  test("a user's layout changes only selected and position, only for them; widget drops skip and keeps hide", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const admin = (await c.login("admin", ADMIN_PASSWORD)).token;
    const ann = await userToken(c, admin, "ann");
    const bob = await userToken(c, admin, "bob");
    const body = upsert({
      fields_mapping: [
        field("a", { position: 1, selected: true }),
        field("b", { position: 2, hide: true }),
        field("c", { position: 3, skip: true }),
        field("d", { position: 4, type: "integer" }),
      ],
    });
    expect((await c.call("POST", "/mappings", { token: admin, body })).status).toBe(201);

    // only selected and position are accepted; the mapping key must exist
    const bad = await c.call("PUT", "/me/mappings/77_custom", {
      token: ann,
      body: { fields: [{ id: "d", position: 0, type: "string" }] },
    });
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad)).toEqual(["fields.0.type"]);
    expect(
      (await c.call("PUT", "/me/mappings/77_custom", { token: ann, body: { fields: [{ id: "zz", selected: true }] } }))
        .status,
    ).toBe(400);
    expect((await c.call("PUT", "/me/mappings/77_nope", { token: ann, body: { fields: [] } })).status).toBe(404);
    expect((await c.call("PUT", "/me/mappings/garbage", { token: ann, body: { fields: [] } })).status).toBe(404);
    const saved = await c.call("PUT", "/me/mappings/77_custom", {
      token: ann,
      body: {
        fields: [
          { id: "d", position: 0, selected: true },
          { id: "a", selected: false },
        ],
      },
    });
    expect(saved.status).toBe(200);
    expect(dataOf(saved).id).toBe("77_custom");
    expect(dataOf(await c.call("GET", "/me/mappings/77_custom", { token: ann })).fields).toEqual([
      { id: "d", position: 0, selected: true },
      { id: "a", selected: false },
    ]);

    // a stored document with more than selected/position (older client, hand edit) changes nothing else
    c.core.settings.mappings.setUserMapping("ann", "77_custom", {
      fields: {
        d: { position: 0, selected: true, type: "string", name: "Hacked" },
        b: { hide: false },
        a: { selected: false },
      },
    });

    const widget = await c.call("GET", "/mappings/widget-fields?hepid=77&profile=custom", { token: ann });
    const w = dataOf(widget).items as Array<Record<string, unknown>>;
    expect(ids(w)).toEqual(["d", "a", "b"]);
    expect(w[0]).toEqual({ id: "d", name: "D", type: "integer", position: 0, selected: true });
    expect(w[1]).toMatchObject({ id: "a", selected: false });
    expect(w[2]).toMatchObject({ id: "b", hide: true });
    expect(
      ids(dataOf(await c.call("GET", "/mappings/widget-fields?hepid=77&profile=custom", { token: bob })).items),
    ).toEqual(["a", "b", "d"]);
    // /mappings/fields is the server's list, whoever asks
    expect(dataOf(await c.call("GET", "/mappings/fields?hepid=77&profile=custom", { token: ann })).items).toEqual(
      body.fields_mapping,
    );

    const merged = itemsOf(await c.call("GET", "/mappings/merged", { token: ann }));
    expect(merged).toHaveLength(12);
    const custom = merged.find((m) => m.profile === "custom")!;
    expect(ids(custom.fields_mapping)).toEqual(["d", "a", "b", "c"]);
    expect((custom.fields_mapping as Array<Record<string, unknown>>)[0]).toEqual({
      id: "d",
      name: "D",
      type: "integer",
      position: 0,
      selected: true,
    });
    const call = merged.find((m) => m.hepid === 1 && m.profile === "call")!;
    expect(call.fields_mapping).toEqual(
      dataOf(await c.call("GET", "/mappings/fields?hepid=1&profile=call", { token: ann })).items,
    );
    const bobCustom = itemsOf(await c.call("GET", "/mappings/merged", { token: bob })).find(
      (m) => m.profile === "custom",
    )!;
    expect(bobCustom.fields_mapping).toEqual(body.fields_mapping);

    // the admin's later change of a field's type reaches ann's view; her position stays
    const changed = upsert({
      fields_mapping: [field("a", { position: 1 }), field("d", { position: 4, type: "number" })],
    });
    const id = String(itemsOf(await c.call("GET", "/mappings?hepid=77", { token: admin }))[0]!.id);
    expect((await c.call("PUT", `/mappings/${id}`, { token: admin, body: changed })).status).toBe(200);
    expect(
      dataOf(await c.call("GET", "/mappings/widget-fields?hepid=77&profile=custom", { token: ann })).items,
    ).toEqual([
      { id: "d", name: "D", type: "number", position: 0, selected: true },
      { id: "a", name: "A", type: "string", position: 1, selected: false },
    ]);

    expect((await c.call("DELETE", "/me/mappings/77_custom", { token: ann })).status).toBe(204);
    expect(
      ids(dataOf(await c.call("GET", "/mappings/widget-fields?hepid=77&profile=custom", { token: ann })).items),
    ).toEqual(["a", "d"]);
  });
});

describe("robustness", () => {
  test("no input gives a 500", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const token = (await c.login("admin", ADMIN_PASSWORD)).token;
    const callGuid = stableGuid("seed:1:call");
    const requests: Array<[string, string, unknown]> = [
      ["GET", "/mappings?page[limit]=0", undefined],
      ["GET", "/mappings?page[limit]=abc", undefined],
      ["GET", "/mappings?page[cursor]=%%%", undefined],
      ["GET", "/mappings?sort=payload", undefined],
      ["GET", "/mappings?hepid=-1", undefined],
      ["GET", `/mappings/${"x".repeat(200)}`, undefined],
      ["GET", "/mappings/fields?hepid=99999999&profile=call", undefined],
      ["GET", "/mappings/widget-fields?hepid=1&profile=%00", undefined],
      ["POST", "/mappings", "{not json"],
      ["POST", "/mappings", []],
      ["POST", "/mappings", null],
      ["POST", "/mappings", upsert({ fields_mapping: Array.from({ length: 600 }, (_, i) => field(`f${i}`)) })],
      ["POST", "/mappings", upsert({ fields_mapping: [field("a", { form_default: "INVITE" })] })],
      ["POST", "/mappings", upsert({ fields_mapping: [field("a", { selector: [null] })] })],
      ["POST", "/mappings", upsert({ fields_mapping: [{ __proto__: { id: "x" } }] })],
      ["PUT", `/mappings/${callGuid}`, '{"hepid":'],
      ["PUT", `/mappings/${callGuid}`, { hepid: 1, profile: "call", fields_mapping: [null] }],
      ["PUT", "/me/mappings/1_call", null],
      ["PUT", "/me/mappings/1_call", "[]"],
      ["PUT", "/me/mappings/1_call", { fields: [{ id: "__proto__", selected: true }] }],
      ["PUT", "/me/mappings/1_call", { fields: "call_id" }],
      ["PUT", "/me/mappings/99999999999_call", { fields: [] }],
      ["GET", "/me/mappings/1_", undefined],
      ["DELETE", "/me/mappings/x_y", undefined],
    ];
    for (const [method, path, body] of requests) {
      const r = await c.call(method, path, { token, body });
      expect(r.status, `${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`).toBeLessThan(500);
    }
    // and the seeded call mapping is untouched by all of that
    expect(dataOf(await c.call("GET", `/mappings/${callGuid}`, { token })).source).toBe("seed");
  });
});
