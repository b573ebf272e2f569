/**
 * Built-in protocol mappings (docs/API.md "Mapping rows"; settings/mapping-seed.ts) through the real
 * coordinator over a real settings file, restarted in place: idempotent by guid, refreshed while the
 * seed owns a row, never overwriting operator columns or an administrator's row.
 */
import { describe, expect, test } from "bun:test";
import { createSettingsStore, seedMappingRows, stableGuid } from "../../src/settings/index.ts";
import { tempDir } from "../harness.ts";
import { ADMIN_PASSWORD, dataOf, itemsOf, startCore } from "./auth-harness.ts";

type Snapshot = Map<string, { updated_at: string; source: string; fields: string }>;

async function snapshot(dir: string): Promise<Snapshot> {
  await using c = await startCore(dir);
  const { token } = await c.login("admin", ADMIN_PASSWORD);
  const items = itemsOf(await c.call("GET", "/mappings", { token }));
  return new Map(
    items.map((m) => [
      String(m.guid),
      { updated_at: String(m.updated_at), source: String(m.source), fields: JSON.stringify(m.fields_mapping) },
    ]),
  );
}

describe("mapping seed", () => {
  test("first start writes every built-in row with its stable guid; later starts write nothing", async () => {
    await using dir = tempDir();
    const first = await snapshot(dir.path);
    const expected = seedMappingRows();
    expect([...first.keys()].sort()).toEqual(expected.map((r) => stableGuid(`seed:${r.hepid}:${r.profile}`)).sort());
    expect([...first.values()].every((v) => v.source === "seed")).toBe(true);
    const second = await snapshot(dir.path);
    expect(second).toEqual(first);
  });

  test("operator columns survive a refresh; an admin-edited row and an admin's own row are never touched; a deleted one comes back", async () => {
    await using dir = tempDir();
    const callGuid = stableGuid("seed:1:call");
    const regGuid = stableGuid("seed:1:registration");
    const rtcpGuid = stableGuid("seed:5:default");
    let shippedCall: unknown;
    {
      await using c = await startCore(dir.path);
      const { token } = await c.login("admin", ADMIN_PASSWORD);
      const call = dataOf(await c.call("GET", `/mappings/${callGuid}`, { token }));
      shippedCall = call.fields_mapping;
      // Only operator columns change (same fields): the seed keeps owning the row.
      const put = await c.call("PUT", `/mappings/${callGuid}`, {
        token,
        body: {
          hepid: 1,
          profile: "call",
          hep_alias: "SIP",
          fields_mapping: call.fields_mapping,
          retention: 14,
          partition_step: 3600,
          mapping_settings: { note: "ops" },
        },
      });
      expect(put.status).toBe(200);
      expect(dataOf(await c.call("GET", `/mappings/${callGuid}`, { token })).source).toBe("seed");
      // An older build's field list, as if the seed had changed since (written behind the API's back).
      c.core.settings.db.db
        .query("UPDATE mapping_schema SET fields_mapping = $fm WHERE guid = $g")
        .run({ fm: JSON.stringify([{ id: "call_id", name: "Old", type: "string" }]), g: callGuid });
      // The admin edits the registration fields: the row becomes theirs.
      const reg = dataOf(await c.call("GET", `/mappings/${regGuid}`, { token }));
      const mine = [{ id: "aor", name: "My AOR", type: "string", position: 1 }];
      expect(
        (
          await c.call("PUT", `/mappings/${regGuid}`, {
            token,
            body: { hepid: 1, profile: "registration", fields_mapping: mine },
          })
        ).status,
      ).toBe(200);
      expect(dataOf(await c.call("GET", `/mappings/${regGuid}`, { token })).source).toBe("user");
      expect(reg.source).toBe("seed");
      expect((await c.call("DELETE", `/mappings/${rtcpGuid}`, { token })).status).toBe(204);
    }
    {
      await using c = await startCore(dir.path);
      const { token } = await c.login("admin", ADMIN_PASSWORD);
      const call = dataOf(await c.call("GET", `/mappings/${callGuid}`, { token }));
      expect(call.fields_mapping).toEqual(shippedCall);
      expect(call).toMatchObject({
        retention: 14,
        partition_step: 3600,
        mapping_settings: { note: "ops" },
        source: "seed",
      });
      expect(dataOf(await c.call("GET", `/mappings/${regGuid}`, { token })).fields_mapping).toEqual([
        { id: "aor", name: "My AOR", type: "string", position: 1 },
      ]);
      const rtcp = await c.call("GET", `/mappings/${rtcpGuid}`, { token });
      expect(rtcp.status).toBe(200);
      expect(dataOf(rtcp).source).toBe("seed");
    }
  });

  test("a row an administrator created before the first seed keeps its guid and content", async () => {
    await using dir = tempDir();
    const store = createSettingsStore({ path: `${dir.path}/settings.db`, games: true });
    store.db.open();
    const own = store.mappings.create({
      hepid: 1,
      profile: "call",
      hepAlias: "Calls",
      fieldsMapping: [{ id: "call_id", name: "CID", type: "string" }],
    });
    store.db.close();
    await using c = await startCore(dir.path);
    const { token } = await c.login("admin", ADMIN_PASSWORD);
    const calls = itemsOf(await c.call("GET", "/mappings?hepid=1&profile=call", { token }));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      guid: own.guid,
      hep_alias: "Calls",
      source: "user",
      fields_mapping: [{ id: "call_id", name: "CID", type: "string" }],
    });
    expect((await c.call("GET", `/mappings/${stableGuid("seed:1:call")}`, { token })).status).toBe(404);
  });
});

describe("line-protocol style sync on the repository (upsert by guid, docs/LINE-PROTOCOL.md)", () => {
  test("inserted, unchanged when only key order differs, updated without touching operator columns, kept once an admin edits the fields", async () => {
    await using dir = tempDir();
    await using c = await startCore(dir.path);
    const repo = c.core.settings.mappings;
    const guid = stableGuid("lp:main:cpu");
    const base = { guid, hepid: 300, profile: "main__cpu", hepAlias: "LP_CPU" };
    expect(
      repo.syncGenerated({
        ...base,
        fieldsMapping: [{ id: "time", name: "time", type: "string", index: "primary", sid_type: true }],
      }),
    ).toBe("inserted");
    const row = repo.get(guid)!;
    expect(row.source).toBe("sync");
    c.core.settings.db.db
      .query(
        "UPDATE mapping_schema SET retention = 30, partition_step = 60, mapping_settings = '{\"k\":1}' WHERE guid = $g",
      )
      .run({ g: guid });
    expect(
      repo.syncGenerated({
        ...base,
        fieldsMapping: [{ sid_type: true, index: "primary", type: "string", id: "time" }],
      }),
    ).toBe("unchanged");
    expect(repo.get(guid)!.updatedAt).toBe(row.updatedAt);
    expect(
      repo.syncGenerated({
        ...base,
        mappingSettings: { k: 2 },
        retention: 1,
        fieldsMapping: [
          { id: "time", name: "time", type: "string" },
          { id: "usage", type: "number" },
        ],
      }),
    ).toBe("updated");
    expect(repo.get(guid)).toMatchObject({
      retention: 30,
      partitionStep: 60,
      mappingSettings: { k: 1 },
      fieldsMapping: [{ id: "time" }, { id: "usage", name: "usage", type: "number" }],
    });
    repo.update(guid, {
      hepid: 300,
      profile: "main__cpu",
      fieldsMapping: [{ id: "time", name: "Time", type: "string" }],
    });
    expect(repo.get(guid)?.source).toBe("user");
    expect(repo.syncGenerated({ ...base, fieldsMapping: [{ id: "time" }, { id: "usage" }, { id: "idle" }] })).toBe(
      "kept",
    );
    expect(repo.mappingFor(300, "main__cpu")?.fieldsMapping.map((f) => f.name)).toEqual(["Time"]);
  });
});
