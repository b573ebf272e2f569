import { describe, expect, test } from "bun:test";
import type { TableDef } from "../../src/core/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "metrics",
  name: "cpu",
  columns: [
    { name: "time", type: "timestamp" },
    { name: "host", type: "varchar" },
    { name: "usage", type: "float64" },
  ],
  timeColumn: "time",
  sortBy: ["time"],
};

describe("lake schema evolution (line-protocol tables)", () => {
  test("columns added on the fly: old rows read NULL, rows written around the change keep their layout, survives restart", async () => {
    await using dir = tempDir();
    const t0 = Date.UTC(2026, 10, 1) * 1000;
    let snapBefore = 0;
    {
      await using a = await startTestAppliance(dir.path);
      const lake = a.app.lake!;
      await lake.defineTable(def);
      for (let i = 0; i < 3; i++)
        lake
          .row("metrics.cpu")!
          .time(t0 + i)
          .str(`h${i}`)
          .float(i / 2)
          .end();
      await lake.flush();
      snapBefore = await lake.snapshotId();
      // A row in the old layout still open in the buffer when the column arrives.
      lake
        .row("metrics.cpu")!
        .time(t0 + 10)
        .str("pending")
        .float(9)
        .end();
      const grown = await lake.extendTable("metrics.cpu", [
        { name: "cores", type: "int64" },
        { name: "usage", type: "float64" }, // already there: ignored, never altered
      ]);
      expect(grown.columns.map((c) => c.name)).toEqual(["time", "host", "usage", "cores"]);
      lake
        .row("metrics.cpu")!
        .time(t0 + 20)
        .str("new")
        .float(1.5)
        .int(8)
        .end();
      await lake.sync();
      const q = `SELECT host, usage, cores FROM svc_lake.metrics.cpu ORDER BY time`;
      const expected = [
        { host: "h0", usage: 0, cores: null },
        { host: "h1", usage: 0.5, cores: null },
        { host: "h2", usage: 1, cores: null },
        { host: "pending", usage: 9, cores: null },
        { host: "new", usage: 1.5, cores: 8 },
      ];
      expect((await lake.query(q)).rows).toEqual(expected);
      await lake.flush();
      expect((await lake.query(q)).rows).toEqual(expected);
      const old = await lake.query(`SELECT count(*) AS n FROM svc_lake.metrics.cpu AT (VERSION => ${snapBefore})`);
      expect(old.rows[0]!.n).toBe(3);
    }
    {
      await using a = await startTestAppliance(dir.path);
      await a.app.lake!.defineTable(def); // the producer re-declares its first layout; the catalog keeps the grown one
      const r = await a.app.lake!.query(`SELECT count(*) AS n, count(cores) AS with_cores FROM svc_lake.metrics.cpu`);
      expect(r.rows[0]).toEqual({ n: 5, with_cores: 1 });
    }
  });
});
