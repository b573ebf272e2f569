/**
 * `svc system --rebuild-catalog` judges each Parquet file on its own and stays inside the data path
 * (docs/OPERATIONS.md "Rebuilding the catalog"): a foreign Parquet file beside a table's genuine
 * file is the one left out (the genuine rows are all there after the next start); symbolic links
 * are neither followed nor deleted, a link loop does not stop the rebuild, and files outside the
 * data path are never registered or deleted, neither by the rebuild with
 * --rebuild-cleanup-orphans nor by the next start.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import { expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { tempDir } from "../harness.ts";
import { CALL, count, ingest, REG, svc, writeConfig } from "./catalog-tools-harness.ts";

// One flush: one genuine file per table, so a single foreign file is as many as the genuine ones.
const OVERRIDES = {
  storage: { lakehouse: { flush_interval_sec: 3600, batch_size: 100000, compaction: { check_interval_sec: 3600 } } },
};

const dropCatalog = (catalog: string) => {
  for (const s of ["", "-wal", "-shm"]) rmSync(catalog + s, { force: true });
};

/** The one partition directory of a table and its one file. */
function onlyFile(tableDir: string): { partition: string; file: string } {
  const partition = readdirSync(tableDir).find((n) => n.startsWith("date="))!;
  const files = readdirSync(join(tableDir, partition));
  expect(files).toHaveLength(1);
  return { partition, file: join(tableDir, partition, files[0]!) };
}

test("a foreign Parquet file beside a genuine one is left out; the genuine rows are all there after the next start", async () => {
  await using dir = tempDir("svc-rebuild-foreign-");
  const cfg = writeConfig(dir.path, OVERRIDES);
  const catalog = join(dir.path, "catalog.sqlite");
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await ingest(a.app, "g", 200, 20);
  }
  const callDir = join(dir.path, "lake/main/hep_proto_1_call");
  const regDir = join(dir.path, "lake/main/hep_proto_1_registration");
  const call = onlyFile(callDir);
  const reg = onlyFile(regDir);
  dropCatalog(catalog);
  // Unpartitioned, at the top of the call table: a tie of one file each on the partitioning.
  const foreignCall = join(callDir, "foreign.parquet");
  copyFileSync(reg.file, foreignCall);
  // In the registration table's partition, newer than its genuine file, with other columns under
  // the same field ids.
  const foreignReg = join(regDir, reg.partition, "foreign.parquet");
  const duck = await DuckDBInstance.create(":memory:");
  const con = await duck.connect();
  await con.run(
    `COPY (SELECT 'x' AS note, 1::BIGINT AS n, DATE '${reg.partition.slice(5)}' AS date) TO '${foreignReg}' (FORMAT parquet, FIELD_IDS {note: 1, n: 2, date: 3})`,
  );
  con.closeSync();
  duck.closeSync();

  const r = await svc(["system", "--rebuild-catalog", "--config-path", cfg], dir.path);
  expect(r.code).toBe(0);
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    expect({ calls: await count(a.app, CALL), registrations: await count(a.app, REG) }).toEqual({
      calls: 200,
      registrations: 20,
    });
  }
  // The genuine files are where they were; the foreign ones too (not the writer's names).
  for (const f of [call.file, reg.file, foreignCall, foreignReg]) expect(existsSync(f), f).toBe(true);
  expect(r.stderr).toBe("");
  const out = r.stdout.split("\n");
  expect(out.find((l) => l.startsWith(`table ${CALL}:`))).toMatch(
    /: 1 file\(s\), 200 rows, \d+ columns, partitioned by date$/,
  );
  expect(out.find((l) => l.startsWith(`table ${REG}:`))).toMatch(
    /: 1 file\(s\), 20 rows, \d+ columns, partitioned by date$/,
  );
  expect(out).toContain("not registered: 2 file(s), left in place");
  expect(out).toContain(`  ${foreignCall}: partitioned by nothing, the table's files by date`);
  expect(out.find((l) => l.startsWith(`  ${foreignReg}: `))).toMatch(
    /: column field id \d+ is \w+ \w+ here, .+ in the table's files$/,
  );
}, 120_000);

test("symbolic links are not followed nor deleted, a link loop does not stop the rebuild, nothing outside the data path is touched", async () => {
  await using dir = tempDir("svc-rebuild-links-");
  const cfg = writeConfig(dir.path, OVERRIDES);
  const catalog = join(dir.path, "catalog.sqlite");
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await ingest(a.app, "l", 200);
  }
  const callDir = join(dir.path, "lake/main/hep_proto_1_call");
  const call = onlyFile(callDir);
  dropCatalog(catalog);
  // Outside the data path: a copy of a genuine file (other rows' worth: same file) and a torn one,
  // both named as the writer names its files.
  const outside = join(dir.path, "outside");
  mkdirSync(join(outside, "date=2001-01-01"), { recursive: true });
  const outsideCopy = join(outside, `ducklake-${Bun.randomUUIDv7()}.parquet`);
  copyFileSync(call.file, outsideCopy);
  const outsideTorn = join(outside, "date=2001-01-01", `ducklake-${Bun.randomUUIDv7()}.parquet`);
  writeFileSync(outsideTorn, "PAR1 not a parquet file");
  // Links into it: a file link in the table's partition, a directory link as another partition.
  const fileLink = join(callDir, call.partition, `ducklake-${Bun.randomUUIDv7()}.parquet`);
  symlinkSync(outsideCopy, fileLink);
  const dirLink = join(callDir, "date=2001-01-01");
  symlinkSync(join(outside, "date=2001-01-01"), dirLink);
  // Loops: a link to itself and a link to an ancestor.
  const selfLoop = join(dir.path, "lake/main/loop");
  symlinkSync(selfLoop, selfLoop);
  const upLoop = join(callDir, "up");
  symlinkSync(join(dir.path, "lake"), upLoop);

  const r = await svc(["system", "--rebuild-catalog", "--rebuild-cleanup-orphans", "--config-path", cfg], dir.path);
  // One warning on stderr (the log); the report on stdout names the links.
  expect(r.stderr).toMatch(
    /^\{.*"level":"warn","msg":"symbolic links under the data path were not followed".*"links":4\}\n$/,
  );
  expect(r.code).toBe(0);
  for (const f of [outsideCopy, outsideTorn]) expect(existsSync(f), f).toBe(true);
  const out = r.stdout.split("\n");
  expect(out.find((l) => l.startsWith(`table ${CALL}:`))).toMatch(
    /: 1 file\(s\), 200 rows, \d+ columns, partitioned by date$/,
  );
  expect(out).toContain("symbolic links not followed: 4 (never registered nor deleted)");
  for (const l of [fileLink, dirLink, selfLoop, upLoop]) expect(out).toContain(`  ${l}`);
  expect(out.some((l) => l.includes(outside))).toBe(false);
  for (const f of [outsideCopy, outsideTorn]) expect(existsSync(f), f).toBe(true);
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    expect(await count(a.app, CALL)).toBe(200);
  }
  // The start's orphan sweep did not follow the links either.
  for (const f of [outsideCopy, outsideTorn, call.file]) expect(existsSync(f), f).toBe(true);
  expect(readdirSync(join(dir.path, "lake")).includes("_quarantine")).toBe(false);
}, 120_000);
