/**
 * Coordinator side of line protocol (docs/LINE-PROTOCOL.md "Discovery response", "Automatic mapping rows"):
 * the discovery endpoints, the generated mapping rows (stable guid, LP_ alias, profile, fields),
 * a re-sync that follows new columns but leaves operator columns alone, and a restart that brings
 * the tables back (searchable, discoverable) before any new write.
 */
import { describe, expect, test } from "bun:test";
import { stableGuid } from "../../src/settings/index.ts";
import { tempDir } from "../harness.ts";
import { lpWrite, startLineProtocol } from "./lineproto-helpers.ts";

type Item = {
  catalog: string;
  schema: string;
  name: string;
  fqn: string;
  columns?: Array<{ name: string; data_type: string; nullable: boolean; position: number }>;
};
type ListBody = {
  data: { items: Item[]; prefix: string };
  total: number;
  meta: { pagination: { limit: number; total: number; has_more: boolean } };
};
type Mapping = {
  guid: string;
  hepid: number;
  profile: string;
  hep_alias: string;
  source: string;
  retention: number;
  partition_step: number;
  mapping_settings: Record<string, unknown>;
  fields_mapping: Array<Record<string, unknown>>;
};

const T0 = 1_700_000_000;

describe("line-protocol discovery and mapping rows", () => {
  test("discovery lists line-protocol tables only, with columns, filters and paging", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const body = [`cpu,host=a usage=1.5,cores=4i ${T0}`, `mem,host=a used=3i,ok=true ${T0}`].join("\n");
    expect((await lpWrite(s.lpUrl, "/write?db=telegraf&precision=s", body)).status).toBe(204);
    expect(
      (await lpWrite(s.lpUrl, "/write?precision=s", `weather,city=x temp=3.5,raw="{}",_seq=1i ${T0}`)).status,
    ).toBe(204);
    const list = async (q = "") => {
      const r = await s.api.call("GET", `/line_protocol/tables${q}`);
      return { status: r.status, body: r.json as unknown as ListBody };
    };
    const all = await list();
    expect(all.status).toBe(200);
    // The HEP tables of the same lake (main.hep_proto_*) are not line-protocol tables.
    expect(all.body.data.items.map((i) => i.fqn)).toEqual([
      "svc_lake.main.weather",
      "svc_lake.telegraf.cpu",
      "svc_lake.telegraf.mem",
    ]);
    expect(all.body).toMatchObject({
      total: 3,
      data: { prefix: "" },
      meta: { pagination: { limit: 100, total: 3, has_more: false } },
    });
    expect(all.body.data.items[1]).toEqual({
      catalog: "svc_lake",
      schema: "telegraf",
      name: "cpu",
      fqn: "svc_lake.telegraf.cpu",
      columns: [
        { name: "time", data_type: "TIMESTAMP", nullable: true, position: 1 },
        { name: "host", data_type: "VARCHAR", nullable: true, position: 2 },
        { name: "usage", data_type: "DOUBLE", nullable: true, position: 3 },
        { name: "cores", data_type: "BIGINT", nullable: true, position: 4 },
      ],
    });
    expect((await list("?with_columns=false")).body.data.items.every((i) => i.columns === undefined)).toBe(true);
    expect((await list("?schema=telegraf")).body.data.items.map((i) => i.name)).toEqual(["cpu", "mem"]);
    expect((await list("?prefix=me")).body).toMatchObject({
      total: 1,
      data: { prefix: "me", items: [{ name: "mem" }] },
    });
    const page = await list("?page[limit]=2&with_columns=false");
    expect(page.body.data.items.length).toBe(2);
    expect(page.body.meta.pagination).toMatchObject({ limit: 2, total: 3, has_more: true });
    expect((await list("?page[limit]=2&page[offset]=2")).body.data.items.map((i) => i.name)).toEqual(["mem"]);
    expect((await list("?prefix=a-b")).status).toBe(400);
    expect((await list("?schema=x;drop")).status).toBe(400);

    const one = await s.api.call("GET", "/line_protocol/tables/TELEGRAF/Cpu");
    expect(one.status).toBe(200);
    expect((one.json!.data as unknown as Item).columns!.map((c) => c.name)).toEqual(["time", "host", "usage", "cores"]);
    expect((await s.api.call("GET", "/line_protocol/tables/main/hep_proto_1_call")).status).toBe(404);
    expect((await s.api.call("GET", "/line_protocol/tables/telegraf/nope")).status).toBe(404);
    expect((await s.api.call("GET", "/line_protocol/tables", undefined, { token: null })).status).toBe(401);
  });

  test("mapping rows: stable guid, LP_ alias, <schema>__<table> profile, generated fields; re-sync keeps operator columns; a restart brings tables back", async () => {
    await using dir = tempDir();
    const mappingsOf = async (s: Awaited<ReturnType<typeof startLineProtocol>>) => {
      const r = await s.api.call("GET", "/mappings?hepid=300");
      return (r.json!.data!.items as unknown as Mapping[]).sort((a, b) => (a.profile < b.profile ? -1 : 1));
    };
    let guid: string;
    {
      await using s = await startLineProtocol(dir.path);
      expect(
        (await lpWrite(s.lpUrl, "/write?db=telegraf&precision=s", `cpu,host=a usage=1.5,ok=t,raw="r",_seq=1i ${T0}`))
          .status,
      ).toBe(204);
      expect(s.a.app.lineProtocolSync!.syncNow()).toEqual({ inserted: 1, updated: 0, unchanged: 0, kept: 0 });
      const [m] = await mappingsOf(s);
      guid = stableGuid("lp:telegraf:cpu");
      expect(m).toMatchObject({ guid, hepid: 300, profile: "telegraf__cpu", hep_alias: "LP_CPU", source: "sync" });
      const fields = Object.fromEntries(m!.fields_mapping.map((f) => [f.id, f]));
      expect(fields.time).toMatchObject({
        type: "string",
        form_type: "datetime",
        index: "primary",
        sid_type: true,
        position: 10,
      });
      expect(fields.host).toMatchObject({ type: "string", form_type: "input", index: "none" });
      expect(fields.usage).toMatchObject({ type: "number", form_type: "input" });
      expect(fields.ok).toMatchObject({ type: "boolean", form_type: "switch" });
      expect(fields._seq).toMatchObject({ type: "integer", hide: true });
      expect(fields.raw).toMatchObject({ hide: true });
      expect(fields.host!.hide).toBeUndefined();
      expect(s.a.app.lineProtocolSync!.syncNow()).toEqual({ inserted: 0, updated: 0, unchanged: 1, kept: 0 });

      // The operator sets the operator columns (same fields: the row stays generated).
      const put = await s.api.call("PUT", `/mappings/${guid}`, {
        hepid: 300,
        profile: "telegraf__cpu",
        hep_alias: "LP_CPU",
        fields_mapping: m!.fields_mapping,
        retention: 7,
        partition_step: 3600,
        mapping_settings: { colour: "red" },
      });
      expect(put.status).toBe(200);
      // A new column: the next sync rewrites the fields, never the operator columns.
      expect(
        (await lpWrite(s.lpUrl, "/write?db=telegraf&precision=s", `cpu,host=b usage=2,steal=0.5 ${T0 + 1}`)).status,
      ).toBe(204);
      expect(s.a.app.lineProtocolSync!.syncNow()).toEqual({ inserted: 0, updated: 1, unchanged: 0, kept: 0 });
      const [after] = await mappingsOf(s);
      expect(after).toMatchObject({
        guid,
        source: "sync",
        retention: 7,
        partition_step: 3600,
        mapping_settings: { colour: "red" },
      });
      expect(after!.fields_mapping.map((f) => f.id)).toEqual(["time", "host", "usage", "ok", "raw", "_seq", "steal"]);
    }
    {
      // Restart: the table is adopted from the catalog; discovery and search see it before any write.
      await using s = await startLineProtocol(dir.path);
      const r = await s.api.call("GET", "/line_protocol/tables");
      expect((r.json!.data!.items as unknown as Item[]).map((i) => i.fqn)).toEqual(["svc_lake.telegraf.cpu"]);
      const search = await s.api.call("POST", "/transactions/search", {
        filter: { proto_type: 300, event_type: "telegraf__cpu" },
        param: { limit: 10 },
        timestamp: { from: T0 * 1000 - 1000, to: T0 * 1000 + 5000 },
      });
      expect((search.json!.data!.items as Array<Record<string, unknown>>).map((i) => i.host)).toEqual(["b", "a"]);
      const [m] = await mappingsOf(s);
      expect(m).toMatchObject({ guid, retention: 7, partition_step: 3600 });
      expect(s.a.app.lineProtocolSync!.syncNow()).toEqual({ inserted: 0, updated: 0, unchanged: 1, kept: 0 });
      // Writing after the restart grows the adopted table, no second table.
      expect(
        (await lpWrite(s.lpUrl, "/write?db=TELEGRAF&precision=s", `CPU,host=c usage=3,iowait=1 ${T0 + 2}`)).status,
      ).toBe(204);
      expect(
        s.a.app
          .lake!.tables()
          .filter((d) => d.name.toLowerCase() === "cpu")
          .map((d) => `${d.schema}.${d.name}:${d.columns.length}`),
      ).toEqual(["telegraf.cpu:8"]);
    }
  });
});
