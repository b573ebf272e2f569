import { describe, expect, test } from "bun:test";
import type { TableDef } from "../../src/core/index.ts";
import { HEP_CLUSTER_SEC, hepTableDef } from "../../src/ingest/hep/tables.ts";
import { Engine } from "../../src/lake/engine.ts";
import { openLakeCatalog } from "../../src/lake/catalog-adapter.ts";
import { writeDataFile } from "../../src/lake/writer/data-file.ts";
import { tempDir } from "../harness.ts";

/**
 * Compaction order (docs/ARCHITECTURE.md "Compaction"): a sorted HEP data file is ordered by
 * 5-minute time buckets first, then by Call-ID, so every row group covers one bucket of time at
 * most and the newest-first search reads only the row groups reaching its window. Calls are
 * interleaved over four buckets and written with 2048-row groups (DuckDB's smallest); a file sorted by Call-ID alone
 * (the control) has row groups spanning every bucket.
 */
const BUCKET_US = HEP_CLUSTER_SEC * 1_000_000;
const CALLS = 4096;

async function rowGroups(def: TableDef, dir: string) {
  const catalog = openLakeCatalog({ path: `${dir}/catalog.sqlite`, dataPath: `${dir}/lake/` });
  const engine = await Engine.open({ threads: 1, memoryLimit: "512MB", tempDirectory: `${dir}/tmp`, allowedDirectories: [`${dir}/lake/`, `${dir}/tmp`] });
  try {
    const info = catalog.ensureTable(def.schema, { name: def.name, columns: def.columns.map((c) => ({ name: c.name, type: c.type })) });
    const t0 = Math.floor(Date.now() / 1000 / HEP_CLUSTER_SEC) * BUCKET_US;
    // 4096 calls × 4 messages, one per bucket: call c sends at t0 + b·bucket + c·50 ms; the
    // Call-IDs are a hash of c, so Call-ID order is not time order.
    const source = `SELECT make_timestamp(${t0}::BIGINT + b * ${BUCKET_US}::BIGINT + c * 50000) AS "timestamp",
      md5(c::VARCHAR) AS session_id
      FROM range(0, ${CALLS}) r(c), range(0, 4) s(b)`;
    const cols = def.columns.map((c) => (c.name === "timestamp" || c.name === "session_id" ? `"${c.name}"` : `NULL AS "${c.name}"`)).join(", ");
    const file = await writeDataFile(
      (sql) => engine.run(sql),
      (sql) => engine.readAll(sql),
      `SELECT ${cols} FROM (${source})`,
      { def, info, dataPath: `${dir}/lake/`, relPath: catalog.newDataFilePath(info.tableId), rowGroupRows: 2048 },
    );
    expect(file.recordCount).toBe(4 * CALLS);
    const meta = await engine.readAll(
      `SELECT row_group_id AS g, stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata('${dir}/lake/${file.path}') WHERE path_in_schema = 'timestamp' ORDER BY g`,
    );
    const ids = (await engine.readAll(`SELECT session_id FROM read_parquet('${dir}/lake/${file.path}', file_row_number = true) ORDER BY file_row_number`)).map((r) => String(r.session_id));
    return { meta: meta.map((m) => ({ lo: Date.parse(`${String(m.lo).replace(" ", "T")}Z`) * 1000, hi: Date.parse(`${String(m.hi).replace(" ", "T")}Z`) * 1000 })), ids };
  } finally {
    engine.close();
    catalog.close();
  }
}

describe("compaction order", () => {
  test("HEP files: each row group lies in one 5-minute bucket, Call-IDs sorted inside it", async () => {
    await using dir = tempDir();
    const def = hepTableDef(1, "call");
    expect(def.clusterSec).toBe(HEP_CLUSTER_SEC);
    const { meta, ids } = await rowGroups(def, dir.path);
    expect(meta.length).toBe(8);
    for (const g of meta) expect(Math.floor(g.lo / BUCKET_US)).toBe(Math.floor(g.hi / BUCKET_US));
    // Inside each bucket the Call-IDs ascend; the file is bucket after bucket.
    for (let b = 0; b < 4; b++) {
      const inBucket = ids.slice(b * CALLS, (b + 1) * CALLS);
      expect(inBucket.every((id, i) => i === 0 || inBucket[i - 1]! < id)).toBe(true);
      expect(new Set(inBucket).size).toBe(CALLS);
    }
  });

  test("control: sorted by Call-ID alone, row groups span every bucket", async () => {
    await using dir = tempDir();
    const { clusterSec: _dropped, ...def } = hepTableDef(1, "call");
    const { meta } = await rowGroups(def, dir.path);
    expect(meta.some((g) => Math.floor(g.hi / BUCKET_US) - Math.floor(g.lo / BUCKET_US) >= 3)).toBe(true);
  });
});
