/**
 * Start-up repair of duplicate catalog rows (`storage.lakehouse.auto_repair_catalog`;
 * docs/OPERATIONS.md "Automatic repair at start"). Duplicates are written straight into
 * the SQLite catalog of a lake the appliance filled (snapshot rows need the table without its key,
 * as an interrupted foreign writer could leave it). The next start removes them keeping the most
 * recent row, logs the counts, keeps a backup holding every removed row, and the lake reads the
 * same in our engine and in the stock DuckDB ducklake extension. With the switch off the start
 * only reports them.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { configureLogging } from "../../src/core/index.ts";
import { openCatalog } from "../../src/lake/catalog/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir } from "../harness.ts";
import { CALL, REG, ingest, peerQueries, rowsOf } from "./catalog-tools-harness.ts";

const OVERRIDES = { storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000 } } };
type Line = Record<string, unknown>;

/** Duplicates of the newest snapshot, of the call table's row and of one of its columns. */
function injectDuplicates(catalog: string): void {
  const db = new Database(catalog);
  db.run("ALTER TABLE ducklake_snapshot RENAME TO old_snapshot");
  db.run(
    "CREATE TABLE ducklake_snapshot(snapshot_id BIGINT, snapshot_time VARCHAR, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
  );
  db.run("INSERT INTO ducklake_snapshot SELECT * FROM old_snapshot");
  db.run(
    "INSERT INTO ducklake_snapshot SELECT * FROM old_snapshot WHERE snapshot_id = (SELECT max(snapshot_id) FROM old_snapshot)",
  );
  db.run("DROP TABLE old_snapshot");
  db.run("INSERT INTO ducklake_table SELECT * FROM ducklake_table WHERE table_name = 'hep_proto_1_call'");
  db.run(
    "INSERT INTO ducklake_column SELECT * FROM ducklake_column WHERE column_name = 'session_id' AND table_id = (SELECT table_id FROM ducklake_table WHERE table_name = 'hep_proto_1_call' LIMIT 1)",
  );
  db.close();
}

async function startLogged(
  dir: string,
  overrides: Record<string, unknown>,
): Promise<{ lines: Line[]; rows: Record<string, unknown[]> }> {
  const lines: Line[] = [];
  configureLogging({ level: "info", format: "json", sink: { write: (l) => lines.push(JSON.parse(l) as Line) } });
  const rows: Record<string, unknown[]> = {};
  try {
    await using a = await startTestAppliance(dir, overrides);
    for (const t of [CALL, REG]) rows[t] = await rowsOf(a.app, t);
  } finally {
    configureLogging({ level: "error", format: "json", sink: { write: (l) => process.stderr.write(`${l}\n`) } });
  }
  return { lines, rows };
}

const REPAIRED = "repaired duplicate catalog rows at start (the most recent of each kept)";

peerTest(
  "duplicate snapshot, table and column rows are repaired at start: counts logged, a backup keeps them, the extension reads the same rows",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir("svc-repair-");
    const catalog = join(dir.path, "catalog.sqlite");
    const dataPath = join(dir.path, "lake") + "/";
    const before: Record<string, unknown[]> = {};
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      await ingest(a.app, "r1", 30, 4);
      await ingest(a.app, "r2", 20, 0);
      for (const t of [CALL, REG]) before[t] = await rowsOf(a.app, t);
    }
    const sql = {
      calls: `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM l.${CALL} ORDER BY uuid`,
      regs: `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM l.${REG} ORDER BY uuid`,
    };
    const peerBefore = peerQueries(catalog, dataPath, sql);
    expect(peerBefore.calls).toHaveLength(50);

    injectDuplicates(catalog);
    // The damage matters: the extension refuses such a catalog.
    expect(() => peerQueries(catalog, dataPath, sql)).toThrow("Corrupt DuckLake - multiple snapshots");
    {
      using damaged = openCatalog({ path: catalog, dataPath, readOnly: true });
      expect(damaged.duplicateRows()).toEqual({ ducklake_snapshot: 1, ducklake_table: 1, ducklake_column: 1 });
    }

    const first = await startLogged(dir.path, OVERRIDES);
    const repaired = first.lines.filter((l) => l.msg === REPAIRED);
    expect(repaired).toHaveLength(1);
    expect(repaired[0]).toMatchObject({
      level: "warn",
      catalog,
      removed: { ducklake_snapshot: 1, ducklake_table: 1, ducklake_column: 1 },
      rows: 3,
    });
    expect(repaired[0]!.remaining).toBeUndefined();
    expect(first.rows).toEqual(before);

    // Lossless: the backup taken before the repair still has every removed row.
    const backup = String(repaired[0]!.backup);
    expect(backup).toMatch(new RegExp(`^${catalog}\\.bak-\\d{8}T\\d{9}Z$`));
    expect(existsSync(backup)).toBe(true);
    {
      using copy = openCatalog({ path: backup, dataPath, readOnly: true });
      expect(copy.duplicateRows()).toEqual({ ducklake_snapshot: 1, ducklake_table: 1, ducklake_column: 1 });
      using fixed = openCatalog({ path: catalog, dataPath, readOnly: true });
      expect(fixed.integrityCheck()).toEqual({ ok: true, problems: [] });
    }
    expect(peerQueries(catalog, dataPath, sql)).toEqual(peerBefore);

    // Nothing left to repair on the next start.
    const second = await startLogged(dir.path, OVERRIDES);
    expect(second.lines.filter((l) => l.msg === REPAIRED)).toHaveLength(0);
    expect(second.rows).toEqual(before);
  },
);

test("auto_repair_catalog false: duplicates are reported at start and left in place", async () => {
  await using dir = tempDir("svc-repair-off-");
  const catalog = join(dir.path, "catalog.sqlite");
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await ingest(a.app, "o", 10, 0);
  }
  injectDuplicates(catalog);
  const off = { storage: { lakehouse: { ...OVERRIDES.storage.lakehouse, auto_repair_catalog: false } } };
  const { lines } = await startLogged(dir.path, off);
  expect(lines.filter((l) => l.msg === REPAIRED)).toHaveLength(0);
  const report = lines.filter((l) =>
    String(l.msg).startsWith("the catalog has duplicate rows and auto_repair_catalog is off"),
  );
  expect(report).toHaveLength(1);
  expect(report[0]).toMatchObject({
    level: "error",
    duplicates: { ducklake_snapshot: 1, ducklake_table: 1, ducklake_column: 1 },
    rows: 3,
  });
  using still = openCatalog({ path: catalog, dataPath: join(dir.path, "lake"), readOnly: true });
  expect(still.duplicateRows()).toEqual({ ducklake_snapshot: 1, ducklake_table: 1, ducklake_column: 1 });
});
