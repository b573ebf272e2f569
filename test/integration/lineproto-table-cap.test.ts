/**
 * ingest.line_protocol.max_tables (docs/BENCHMARKS.md "Line protocol: many tables"): a point that would create one table more than the
 * cap is refused with 400 (lines[].reason `table_limit`), points of existing tables in the same and
 * later requests are written, nothing accepted before is lost, and the count survives a restart.
 */
import { describe, expect, test } from "bun:test";
import { tempDir } from "../harness.ts";
import { lpWrite, startLineProtocol, tableRows } from "./lineproto-helpers.ts";

const T0 = 1_700_000_000;

describe("line-protocol table cap", () => {
  test("the table beyond max_tables is refused with 400, existing tables keep taking writes, also after a restart", async () => {
    await using dir = tempDir();
    {
      await using s = await startLineProtocol(dir.path, { max_tables: 3 });
      const lake = s.a.app.lake!;
      expect((await lpWrite(s.lpUrl, "/write?precision=s", `t1 v=1i ${T0}\nt2 v=1i ${T0}`)).status).toBe(204);
      expect((await lpWrite(s.lpUrl, "/write?db=other&precision=s", `t3 v=1i ${T0}`)).status).toBe(204);

      // One request mixing existing tables and a fourth one: the existing ones are written.
      const mixed = await lpWrite(
        s.lpUrl,
        "/write?precision=s",
        `t1 v=2i ${T0 + 1}\nt4 v=1i ${T0 + 1}\nt2 v=2i ${T0 + 1}`,
      );
      expect(mixed.status).toBe(400);
      expect(mixed.body?.written).toBe(2);
      expect(mixed.body?.lines).toEqual([
        { line: 2, reason: "table_limit", message: expect.stringContaining("ingest.line_protocol.max_tables (3") },
      ]);
      expect(mixed.body?.error).toContain("max_tables");
      expect(lake.table("main.t4")).toBeUndefined();

      // Parallel creations at the cap: none gets in (the slot is taken before the table is created).
      const parallel = await Promise.all(
        ["n1", "n2", "n3"].map((t) => lpWrite(s.lpUrl, "/write?precision=s", `${t} v=1i ${T0}`)),
      );
      expect(parallel.map((r) => r.status)).toEqual([400, 400, 400]);

      expect((await lpWrite(s.lpUrl, "/write?db=other&precision=s", `t3 v=2i ${T0 + 1}`)).status).toBe(204);
      expect((await tableRows(lake, "main", "t1")).map((r) => r.v)).toEqual([1, 2]);
      expect((await tableRows(lake, "other", "t3")).map((r) => r.v)).toEqual([1, 2]);
    }
    {
      // Restart with the same cap: the stored tables count, so a new one is still refused.
      await using s = await startLineProtocol(dir.path, { max_tables: 3 });
      expect((await lpWrite(s.lpUrl, "/write?precision=s", `t5 v=1i ${T0}`)).status).toBe(400);
      expect((await lpWrite(s.lpUrl, "/write?precision=s", `t1 v=3i ${T0 + 2}`)).status).toBe(204);
      expect((await tableRows(s.a.app.lake!, "main", "t1")).map((r) => r.v)).toEqual([1, 2, 3]);
      expect((await tableRows(s.a.app.lake!, "main", "t2")).map((r) => r.v)).toEqual([1, 2]);
    }
    {
      // A higher cap admits exactly as many more, also when they arrive together.
      await using s = await startLineProtocol(dir.path, { max_tables: 5 });
      const parallel = await Promise.all(
        ["n1", "n2", "n3", "n4"].map((t) => lpWrite(s.lpUrl, "/write?precision=s", `${t} v=1i ${T0}`)),
      );
      expect(parallel.map((r) => r.status).sort()).toEqual([204, 204, 400, 400]);
      expect(s.a.app.lake!.tables().filter((d) => d.columns[0]?.name === "time").length).toBe(5);
    }
  });
});
