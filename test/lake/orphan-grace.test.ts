/**
 * The orphan sweep leaves unknown files younger than the grace age alone
 * (src/lake/catalog-config.ts ORPHAN_MIN_AGE_MS; docs/OPERATIONS.md "Orphans at start and the
 * quarantine"): a stock DuckDB writer of the same catalog reserves nothing before its commit, so a
 * young unreferenced file may be one it is still writing.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/core/index.ts";
import { sweepOrphans } from "../../src/lake/admin/quarantine.ts";
import { ORPHAN_MIN_AGE_MS } from "../../src/lake/catalog-config.ts";
import { tempDir } from "../harness.ts";

test("unknown files younger than the grace age are left in place, older ones quarantined; this writer's reserved leftovers are deleted at any age", async () => {
  await using dir = tempDir();
  const table = join(dir.path, "main", "t");
  mkdirSync(table, { recursive: true });
  const young = join(table, "ducklake-young.parquet");
  const youngReserved = join(table, "ducklake-young-reserved.parquet");
  const old = join(table, "ducklake-old.parquet");
  const oldReserved = join(table, "ducklake-old-reserved.parquet");
  for (const f of [young, youngReserved, old, oldReserved]) writeFileSync(f, "x");
  // A second ahead: the files' times (ns from the kernel) are never after `now` (ms) by a hair.
  const now = new Date(Date.now() + 1000);
  const past = new Date(now.getTime() - ORPHAN_MIN_AGE_MS - 60_000);
  for (const f of [old, oldReserved]) utimesSync(f, past, past);
  const inflight = new Set(["main/t/ducklake-young-reserved.parquet", "main/t/ducklake-old-reserved.parquet"]);
  const r = sweepOrphans(dir.path, new Set(), inflight, createLogger({ test: true }), now, ORPHAN_MIN_AGE_MS);
  expect({ deleted: r.deleted, quarantined: r.quarantined, young: r.young }).toEqual({
    deleted: 2,
    quarantined: 1,
    young: 1,
  });
  expect([young, youngReserved, old, oldReserved].map((f) => existsSync(f))).toEqual([true, false, false, false]);
  // Without a grace age the young unknown file is quarantined too.
  const r2 = sweepOrphans(dir.path, new Set(), inflight, createLogger({ test: true }), now, 0);
  expect({ deleted: r2.deleted, quarantined: r2.quarantined }).toEqual({ deleted: 0, quarantined: 1 });
});
