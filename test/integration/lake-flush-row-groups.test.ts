/**
 * A flush file's row groups are cut at FLUSH_ROW_GROUP_BYTES as well as row_group_rows: each DuckDB
 * thread of the flush holds the row group it fills, and 16 384 rows of ~1 KB made it ~20 MB
 * (docs/ARCHITECTURE.md "Write path").
 */
import { expect, test } from "bun:test";
import type { TableDef } from "../../src/core/index.ts";
import { FLUSH_ROW_GROUP_BYTES } from "../../src/lake/writer/data-file.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";

const def: TableDef = {
  schema: "main",
  name: "wide_rows",
  columns: [
    { name: "timestamp", type: "timestamp" },
    { name: "k", type: "varchar" },
    { name: "payload", type: "varchar" },
  ],
  timeColumn: "timestamp",
  sortBy: ["timestamp"],
};

test("20 000 rows of 1 KB flush into row groups smaller than row_group_rows, every row kept", async () => {
  expect(FLUSH_ROW_GROUP_BYTES).toBe("8MB");
  await using dir = tempDir();
  await using a = await startTestAppliance(dir.path, { storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 1_000_000, row_group_rows: 16384 } } });
  const lake = a.app.lake!;
  await lake.defineTable(def);
  const t0 = Date.UTC(2026, 10, 28) * 1000;
  const filler = "p".repeat(1000);
  for (let i = 0; i < 20_000; i++)
    lake
      .row("main.wide_rows")!
      .time(t0 + i)
      .str(`k${i}`)
      .str(`${i}:${filler}`)
      .end();
  await lake.sync();
  await lake.flush();
  const files = lake.files("main.wide_rows");
  expect(files).toHaveLength(1);
  const groups = await lake.query(`SELECT row_group_id, any_value(row_group_num_rows) AS n FROM parquet_metadata('${dir.path}/lake/${files[0]!.path}') GROUP BY row_group_id ORDER BY row_group_id`);
  const sizes = groups.rows.map((r) => Number(r.n));
  // 16 384 rows of 1 KB are ~16 MB: cut at 8 MB, so more than the two groups of row_group_rows.
  expect(sizes.length).toBeGreaterThan(2);
  expect(Math.max(...sizes)).toBeLessThan(16384);
  expect(sizes.reduce((x, y) => x + y, 0)).toBe(20_000);
  const r = await lake.query(`SELECT count(*) AS n, count(DISTINCT k) AS d, min(length(payload)) AS len FROM svc_lake.main.wide_rows`);
  expect(r.rows[0]).toEqual({ n: 20_000, d: 20_000, len: 1002 });
});
