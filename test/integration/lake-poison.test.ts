/**
 * One unauthenticated line-protocol write (`POST /write?db=information_schema`, body
 * `tables v=1i`) left the lake's shared DDL connection in an aborted transaction: every later view
 * refresh failed, HEP batches were counted as lost, new tables failed, and a restart re-poisoned
 * it from the catalog. Real appliance (lake, HEP over HTTP, line-protocol receiver) on loopback.
 */
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { encodeHep3 } from "../../src/hep/index.ts";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import type { Lake } from "../../src/lake/index.ts";
import { tempDir, waitFor } from "../harness.ts";
import { invite } from "../fixtures/sip.ts";
import { lpWrite, metricValue, startLineProtocol, tableRows } from "./lineproto-helpers.ts";

const T0 = Math.floor(Date.now() / 1000) - 60;

/** One INVITE over HEP-over-HTTP (the node's /api/v1/hep), answered 202 once it is accepted. */
async function sendHepInvite(nodeUrl: string, callId: string): Promise<void> {
  const packet = encodeHep3({
    ipFamily: 4,
    ipProtocol: 17,
    srcIp: "10.0.0.1",
    dstIp: "10.0.0.2",
    srcPort: 5060,
    dstPort: 5060,
    timestampUs: T0 * 1_000_000,
    protoType: 1,
    captureId: 2001,
    nodeName: "edge-1",
    payload: invite({ callId, from: "alice", to: "bob" }),
  });
  const res = await fetch(`${nodeUrl}/api/v1/hep`, { method: "POST", body: Buffer.from(packet) });
  expect(res.status).toBe(202);
}

/** Rows of the call in the HEP call table and whether they are in Parquet (not only the buffer). */
async function callRows(lake: Lake, callId: string): Promise<number> {
  await lake.sync();
  const r = await lake.query("SELECT count(*) AS n FROM svc_lake.main.hep_proto_1_call WHERE session_id = $1", [
    callId,
  ]);
  return Number(r.rows[0]?.n ?? 0);
}

async function metrics(coordinatorUrl: string): Promise<string> {
  return await (await fetch(`${coordinatorUrl}/metrics`)).text();
}

describe("one bad table never poisons the lake", () => {
  test("system and internal schema names are refused with 400 naming the rule; HEP and other tables keep landing in Parquet, also after a restart", async () => {
    await using dir = tempDir();
    const calls = [`poison-1-${crypto.randomUUID()}`, `poison-2-${crypto.randomUUID()}`];
    {
      await using s = await startLineProtocol(dir.path);
      const lake = s.a.app.lake!;
      // The attack, then its variants: DuckDB's system schemas and catalogs, its prefixes, ours.
      const refused: Array<[db: string, named: string]> = [
        ["information_schema", "information_schema"],
        ["INFORMATION_SCHEMA", "INFORMATION_SCHEMA"],
        ["pg_catalog", "pg_catalog"],
        ["temp", "temp"],
        ["system", "system"],
        ["memory", "memory"],
        ["duckdb_x", "duckdb_"],
        ["sqlite_master", "sqlite_"],
        ["svc_files", "svc_files"],
        ["svc_lake", "svc_lake"],
      ];
      for (const [db, named] of refused) {
        const r = await lpWrite(s.lpUrl, `/write?db=${db}`, "tables v=1i");
        expect({ db, status: r.status }).toEqual({ db, status: 400 });
        expect(r.body?.error).toContain("reserved");
        expect(r.body?.error).toContain(`"${named}"`);
      }
      // The buffer view of a HEP table, even before that table exists.
      const mem = await lpWrite(s.lpUrl, "/write", `mem_hep_proto_1_call v=1i ${T0}000000000`);
      expect(mem.status).toBe(400);
      expect(mem.body?.lines?.[0]).toMatchObject({ line: 1, reason: "reserved_table" });
      expect(
        lake.tables().some((d) => /information_schema|pg_catalog|svc_files|mem_hep/i.test(`${d.schema}.${d.name}`)),
      ).toBe(false);

      // Everything else goes on: HEP, an existing and a new line-protocol table, all flushed to Parquet.
      await sendHepInvite(s.a.app.nodeUrl!, calls[0]!);
      expect((await lpWrite(s.lpUrl, "/write?precision=s", `good,host=a v=1i ${T0}`)).status).toBe(204);
      expect((await lpWrite(s.lpUrl, "/write?db=other&precision=s", `fresh,host=b v=2i ${T0}`)).status).toBe(204);
      await lake.flush();
      expect((await lake.files("main.hep_proto_1_call")).length).toBeGreaterThan(0);
      expect((await lake.files("main.good")).length).toBe(1);
      expect((await lake.files("other.fresh")).length).toBe(1);
      expect(await callRows(lake, calls[0]!)).toBe(1);
      expect(await tableRows(lake, "main", "good")).toEqual([{ time_us: T0 * 1_000_000, host: "a", v: 1 }]);
      const text = await metrics(s.a.app.coordinatorUrl!);
      expect(metricValue(text, "svc_lake_rows_lost_total", { reason: "spool_write_failed" })).toBe(0);
    }
    {
      await using s = await startLineProtocol(dir.path);
      const lake = s.a.app.lake!;
      await sendHepInvite(s.a.app.nodeUrl!, calls[1]!);
      expect((await lpWrite(s.lpUrl, "/write?precision=s", `good,host=a v=3i ${T0 + 1}`)).status).toBe(204);
      await lake.flush();
      expect(await callRows(lake, calls[0]!)).toBe(1);
      expect(await callRows(lake, calls[1]!)).toBe(1);
      expect((await tableRows(lake, "main", "good")).map((r) => r.v)).toEqual([1, 3]);
      expect(await tableRows(lake, "other", "fresh")).toEqual([{ time_us: T0 * 1_000_000, host: "b", v: 2 }]);
      expect(
        metricValue(await metrics(s.a.app.coordinatorUrl!), "svc_lake_rows_lost_total", {
          reason: "spool_write_failed",
        }),
      ).toBe(0);
    }
  });

  test("a catalog that already holds a table under a reserved name (older version) starts: that table is skipped and counted, the rest works", async () => {
    await using dir = tempDir();
    // What an older version stored after the attack, written with the catalog alone.
    const catalog = openLakeCatalog({ path: join(dir.path, "catalog.sqlite"), dataPath: join(dir.path, "lake") });
    await catalog.ensureTable("information_schema", {
      name: "tables",
      columns: [
        { name: "time", type: "timestamp" },
        { name: "v", type: "int64" },
      ],
    });
    await catalog.ensureTable("main", {
      name: "kept",
      columns: [
        { name: "time", type: "timestamp" },
        { name: "v", type: "int64" },
      ],
    });
    await catalog.close();

    const callId = `stored-${crypto.randomUUID()}`;
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    expect(lake.table("information_schema.tables")).toBeUndefined();
    expect(lake.table("main.kept")).toBeDefined();
    const text = await metrics(s.a.app.coordinatorUrl!);
    expect(metricValue(text, "svc_lake_tables_refused_total", { reason: "reserved_name" })).toBe(1);

    await sendHepInvite(s.a.app.nodeUrl!, callId);
    await waitFor("the HEP row in the buffer", async () => (await callRows(lake, callId)) === 1 || undefined);
    expect((await lpWrite(s.lpUrl, "/write?precision=s", `kept v=7i ${T0}`)).status).toBe(204);
    expect((await lpWrite(s.lpUrl, "/write?precision=s", `newer v=8i ${T0}`)).status).toBe(204);
    await lake.flush();
    expect(await callRows(lake, callId)).toBe(1);
    expect(await tableRows(lake, "main", "kept")).toEqual([{ time_us: T0 * 1_000_000, v: 7 }]);
    expect(await tableRows(lake, "main", "newer")).toEqual([{ time_us: T0 * 1_000_000, v: 8 }]);
    expect(
      metricValue(await metrics(s.a.app.coordinatorUrl!), "svc_lake_rows_lost_total", { reason: "spool_write_failed" }),
    ).toBe(0);
  });

  test("a table whose views cannot be rebuilt stops neither the spool, nor HEP, nor any other table", async () => {
    await using dir = tempDir();
    await using s = await startLineProtocol(dir.path);
    const lake = s.a.app.lake!;
    expect((await lpWrite(s.lpUrl, "/write?precision=s", `broken v=1i ${T0}\ngood v=1i ${T0}`)).status).toBe(204);
    await lake.flush();
    // A Parquet file gone from disk: DuckDB binds a view when it is created, so every later
    // re-creation of this table's files view fails (a real failure inside the view transaction).
    for (const f of await lake.files("main.broken")) rmSync(join(lake.dataPathResolved(), f.path));
    expect((await lpWrite(s.lpUrl, "/write?precision=s", `broken v=2i ${T0 + 1}\ngood v=2i ${T0 + 1}`)).status).toBe(
      204,
    );
    await lake.flush();
    expect(
      metricValue(await metrics(s.a.app.coordinatorUrl!), "svc_lake_view_refresh_failures_total", {
        table: "main.broken",
      }),
    ).toBeGreaterThan(0);

    // After that failure: later writes of every other table are stored, flushed and queryable.
    const callId = `after-broken-${crypto.randomUUID()}`;
    await sendHepInvite(s.a.app.nodeUrl!, callId);
    // HEP reaches the writer from the ingest thread, after its next hand-over (≤ 100 ms): waited for
    // here, so the flush below takes it and nothing is left waiting.
    await waitFor("the HEP row in the buffer", async () => (await callRows(lake, callId)) === 1 || undefined);
    expect((await lpWrite(s.lpUrl, "/write?precision=s", `good v=3i ${T0 + 2}\nlater v=1i ${T0 + 2}`)).status).toBe(
      204,
    );
    await lake.flush();
    expect(await callRows(lake, callId)).toBe(1);
    expect((await tableRows(lake, "main", "good")).map((r) => r.v)).toEqual([1, 2, 3]);
    expect((await tableRows(lake, "main", "later")).map((r) => r.v)).toEqual([1]);
    expect((await lake.files("main.good")).length).toBe(3);
    // The broken table's flushes went through too and left nothing counted as waiting: a leak
    // here would fill max_buffered_rows and turn every table's writes into 503s.
    expect((await lake.files("main.broken")).length).toBe(2);
    expect(lake.backlog()).toBe(0);
    expect(
      metricValue(await metrics(s.a.app.coordinatorUrl!), "svc_lake_rows_lost_total", { reason: "spool_write_failed" }),
    ).toBe(0);
  });
});
