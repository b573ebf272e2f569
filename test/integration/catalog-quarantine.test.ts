/**
 * The start's orphan sweep (docs/OPERATIONS.md "Orphans at start and the quarantine"): a file the
 * writer reserved and never committed (a crashed flush) is deleted; a `ducklake-*.parquet` file the
 * catalog does not know (written after the backup a restore went back to) is moved into
 * `<data_path>/_quarantine/<UTC time>/`, logged and counted, never deleted. Moved back, a rebuild
 * registers it again; `svc catalog quarantine` lists, `--purge` deletes. Backups and restores
 * carry no reservations (a start from one must not delete files the newer catalog committed).
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createLogger } from "../../src/core/index.ts";
import { openCatalog } from "../../src/lake/catalog/index.ts";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";
import { CALL, count, ingest, svc, writeConfig } from "./catalog-tools-harness.ts";
import { metricValue } from "./compaction-helpers.ts";

const OVERRIDES = {
  storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000, compaction: { check_interval_sec: 3600 } } },
};

const inflightRows = (catalog: string) => {
  const db = new Database(catalog, { readonly: true });
  try {
    return db
      .query<{ path: string }, []>("SELECT path FROM svc_inflight_file")
      .all()
      .map((r) => r.path);
  } finally {
    db.close();
  }
};

/** Files below `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.endsWith(".parquet")).sort();
}

test("after a restore the newer files are quarantined, not deleted; a reserved leftover is deleted; moved back and rebuilt, their rows return", async () => {
  await using dir = tempDir("svc-quarantine-");
  const cfg = writeConfig(dir.path, OVERRIDES);
  const catalog = join(dir.path, "catalog.sqlite");
  const lake = join(dir.path, "lake");
  let afterBackup: string[] = [];
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await ingest(a.app, "before", 100);
    const b = await svc(["catalog", "backup", "--config-path", cfg], dir.path);
    expect(b.code).toBe(0);
    const known = new Set(filesUnder(lake));
    await ingest(a.app, "after", 50);
    afterBackup = filesUnder(lake).filter((f) => !known.has(f));
    expect(afterBackup.length).toBeGreaterThan(0);
    // Committed flushes leave no reservation behind.
    expect(inflightRows(catalog)).toEqual([]);
  }
  const r = await svc(["catalog", "restore", "--config-path", cfg], dir.path);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`${afterBackup.length} data file(s) under ${lake} are not in this backup`);
  // A flush that crashed after writing its file and before its commit: reserved, then written.
  const partition = readdirSync(join(lake, "main/hep_proto_1_call")).find((n) => n.startsWith("date="))!;
  const leftover = `main/hep_proto_1_call/${partition}/ducklake-${Bun.randomUUIDv7()}.parquet`;
  {
    const c = openCatalog({ path: catalog, dataPath: lake, log: createLogger({ test: true }) });
    c.reserveDataFile(leftover);
    c.close();
  }
  writeFileSync(join(lake, leftover), "PAR1 half a flush");
  // The files the restore orphaned were written over an hour ago; one more unknown file is new
  // (another writer's, not committed yet): left in place, not quarantined (docs/STORAGE.md
  // "Compaction, retention and orphans").
  const hourAgo = new Date(Date.now() - 2 * 3_600_000);
  for (const f of afterBackup) utimesSync(join(lake, f), hourAgo, hourAgo);
  const young = `main/hep_proto_1_call/${partition}/ducklake-${Bun.randomUUIDv7()}.parquet`;
  writeFileSync(join(lake, young), "PAR1 another writer's");

  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    expect(await count(a.app, CALL)).toBe(100);
    expect(metricValue(a.app.metrics, "svc_lake_quarantined_files_total")).toBe(afterBackup.length);
    expect(metricValue(a.app.metrics, "svc_lake_deleted_files_total")).toBe(1);
    expect(existsSync(join(lake, leftover))).toBe(false);
    expect(existsSync(join(lake, young))).toBe(true);
    expect(inflightRows(catalog)).toEqual([]);
  }
  rmSync(join(lake, young));
  const stamps = readdirSync(join(lake, "_quarantine"));
  expect(stamps).toHaveLength(1);
  expect(stamps[0]).toMatch(/^\d{8}T\d{9}Z$/);
  const folder = join(lake, "_quarantine", stamps[0]!);
  // Same relative paths inside the folder; nothing left at the old place.
  expect(filesUnder(folder)).toEqual(afterBackup);
  for (const f of afterBackup) expect(existsSync(join(lake, f))).toBe(false);

  const list = await svc(["catalog", "quarantine", "--config-path", cfg], dir.path);
  expect(list.code).toBe(0);
  expect(list.stdout).toMatch(
    new RegExp(
      `^${folder}: ${afterBackup.length} file\\(s\\), [\\d.]+ (B|KiB|MiB)\\n${afterBackup.length} file\\(s\\); svc catalog quarantine --purge deletes them\\n$`,
    ),
  );

  // The operator's way back: move them to their place and rebuild.
  for (const f of afterBackup) {
    mkdirSync(dirname(join(lake, f)), { recursive: true });
    cpSync(join(folder, f), join(lake, f));
  }
  const rebuilt = await svc(["system", "--rebuild-catalog", "--config-path", cfg], dir.path);
  expect(rebuilt.code).toBe(0);
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    expect(await count(a.app, CALL)).toBe(150);
    expect(metricValue(a.app.metrics, "svc_lake_quarantined_files_total")).toBe(0);
  }
  // Only the operator's word deletes quarantined files.
  const purge = await svc(["catalog", "quarantine", "--purge", "--config-path", cfg], dir.path);
  expect(purge.code).toBe(0);
  expect(purge.stdout).toEndWith(`deleted ${afterBackup.length} quarantined file(s)\n`);
  expect(existsSync(join(lake, "_quarantine"))).toBe(false);
  const empty = await svc(["catalog", "quarantine", "--config-path", cfg], dir.path);
  expect(empty.stdout).toBe(`the quarantine ${lake}/_quarantine is empty\n`);
  const misuse = await svc(["catalog", "list", "--purge", "--config-path", cfg], dir.path);
  expect(misuse.stderr).toBe("svc: --purge is for svc catalog quarantine\n");
  expect(misuse.code).toBe(2);
}, 180_000);

test("a backup carries no reservations; the catalog it was taken from keeps them", async () => {
  await using dir = tempDir("svc-quarantine-bak-");
  const lake = join(dir.path, "lake");
  const c = openCatalog({ path: join(dir.path, "c.sqlite"), dataPath: lake, log: createLogger({ test: true }) });
  try {
    c.reserveDataFile("main/t/ducklake-x.parquet");
    const b = c.backup();
    expect([...c.inflightPaths()]).toEqual(["main/t/ducklake-x.parquet"]);
    expect(inflightRows(b)).toEqual([]);
  } finally {
    c.close();
  }
  rmSync(lake, { recursive: true, force: true });
});
