/**
 * `svc system --rebuild-catalog` through the real process (docs/OPERATIONS.md "Rebuilding the
 * catalog"). A lake written by the appliance (HEP calls and registrations, a line-protocol table,
 * compaction leaving its superseded sources on disk) loses its catalog; the rebuild from the Parquet
 * files alone must give the same live files with the same statistics as the catalog the writer
 * kept, the same rows in our engine and in the stock DuckDB ducklake extension, report the files it
 * cannot register and delete them only with --rebuild-cleanup-orphans. Spool files a crash left
 * behind are loaded again only when their rows are not in Parquet yet.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { startTestAppliance } from "../appliance.ts";
import { PEERS, peerTest, tempDir, waitFor } from "../harness.ts";
import { CALL, REG, count, ingest, peerQueries, rowsOf, sendHep, svc, writeConfig } from "./catalog-tools-harness.ts";

const LP = "metrics.cpu";
const OVERRIDES = {
  ingest: { line_protocol: { enable: true } },
  storage: {
    lakehouse: {
      flush_interval_sec: 3600,
      batch_size: 100000,
      compaction: { min_age_sec: 0, check_interval_sec: 3600 },
    },
  },
};

/** Live files of a catalog with every statistic the catalog keeps for them, keyed by path. */
function liveFileFacts(catalog: string): Record<string, unknown> {
  const db = new Database(catalog, { readonly: true });
  try {
    const rows = db
      .query<Record<string, unknown> & { path: string; table_name: string }, []>(
        `SELECT t.table_name, f.path, f.record_count, f.file_size_bytes, f.footer_size, s.column_id, c.column_name, c.column_type,
                s.column_size_bytes, s.value_count, s.null_count, s.min_value, s.max_value, s.contains_nan, pv.partition_value
         FROM ducklake_data_file f JOIN ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL
         JOIN ducklake_file_column_stats s ON s.data_file_id = f.data_file_id
         JOIN ducklake_column c ON c.table_id = f.table_id AND c.column_id = s.column_id
         LEFT JOIN ducklake_file_partition_value pv ON pv.data_file_id = f.data_file_id
         WHERE f.end_snapshot IS NULL ORDER BY t.table_name, f.path, s.column_id`,
      )
      .all();
    const out: Record<string, unknown[]> = {};
    for (const r of rows) (out[`${r.table_name}/${r.path}`] ??= []).push(r);
    return out;
  } finally {
    db.close();
  }
}

const PEER_SQL = {
  calls: `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM l.${CALL} ORDER BY uuid`,
  regs: `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM l.${REG} ORDER BY uuid`,
  cpu: `SELECT CAST(COLUMNS(*) AS VARCHAR) FROM l.${LP} ORDER BY "time", host`,
  cpuTypes: `SELECT column_name, column_type FROM (DESCRIBE l.${LP})`,
};

async function writeLp(base: string, from: number, n: number): Promise<void> {
  const now = BigInt(Date.now() - 120_000) * 1_000_000n;
  const lines = Array.from(
    { length: n },
    (_, i) =>
      `cpu,host=h${(from + i) % 7} usage=${((from + i) * 1.25).toFixed(2)},cores=${from + i}i ${now + BigInt((from + i) * 1_000_000)}`,
  );
  const r = await fetch(`${base}/write?db=metrics&precision=ns`, { method: "POST", body: lines.join("\n") });
  expect(r.status).toBe(204);
}

peerTest(
  "rebuild from the Parquet files alone: same files and statistics, same rows in our engine and the ducklake extension; orphans kept unless asked",
  [PEERS.pyDuckLake],
  async () => {
    await using dir = tempDir("svc-rebuild-");
    const cfg = writeConfig(dir.path, OVERRIDES);
    const catalog = join(dir.path, "catalog.sqlite");
    const dataPath = join(dir.path, "lake") + "/";
    const ours: Record<string, unknown> = {};
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      const base = a.app.lineProtocol!.url();
      for (let b = 0; b < 4; b++) {
        await ingest(a.app, `c${b}`, 30, 5);
        await writeLp(base, b * 20, 20);
        await waitFor("line protocol rows", async () => (await count(a.app, LP)) === (b + 1) * 20);
        await a.app.lake!.flush();
      }
      const merged = await a.app.lake!.maintain();
      expect(merged.merged).toBeGreaterThanOrEqual(8);
      await ingest(a.app, "late", 10, 2);
      for (const t of [CALL, REG]) ours[t] = await rowsOf(a.app, t);
    }
    const before = liveFileFacts(catalog);
    const peerBefore = peerQueries(catalog, dataPath, PEER_SQL);
    expect(peerBefore.calls).toHaveLength(130);
    expect(peerBefore.cpu).toHaveLength(80);

    // The catalog is lost; only the Parquet files remain, plus two files that are not ours.
    for (const s of ["", "-wal", "-shm"]) rmSync(catalog + s, { force: true });
    const callDir = join(dir.path, "lake/main/hep_proto_1_call");
    const partition = readdirSync(callDir).find((n) => n.startsWith("date="))!;
    const torn = join(callDir, partition, `ducklake-${Bun.randomUUIDv7()}.parquet`);
    writeFileSync(torn, "PAR1 a flush that died mid-write");
    const stray = join(dir.path, "lake/stray.parquet");
    writeFileSync(stray, "not a table file");
    // A directory only the case tells apart: DuckDB would see one table.
    const sibling = join(dir.path, "lake/main/HEP_proto_1_call", partition);
    mkdirSync(sibling, { recursive: true });
    const upper = join(sibling, `ducklake-${Bun.randomUUIDv7()}.parquet`);
    cpSync(join(callDir, partition, readdirSync(join(callDir, partition)).find((n) => n !== basename(torn))!), upper);
    // Left over for more than an hour: the start's sweep sets unknown files aside only then
    // (docs/STORAGE.md "Compaction, retention and orphans").
    const longAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const f of [torn, upper]) utimesSync(f, longAgo, longAgo);

    // Starting now would make every file an orphan (and delete it): refused, nothing touched.
    const files = readdirSync(join(callDir, partition)).length;
    await expect(startTestAppliance(dir.path, OVERRIDES)).rejects.toThrow(
      new RegExp(
        `^catalog ${catalog} is missing but ${dataPath.slice(0, -1)} holds \\d+ Parquet data file\\(s\\); a new catalog would make them all orphans, set aside at start\\. Rebuild it from them \\(svc system --rebuild-catalog\\)`,
      ),
    );
    expect(readdirSync(join(callDir, partition))).toHaveLength(files);
    expect(existsSync(catalog)).toBe(false);

    const r = await svc(["system", "--rebuild-catalog", "--config-path", cfg], dir.path);
    expect(r.stderr).toBe("");
    const out = r.stdout.split("\n");
    expect(out[0]).toMatch(
      new RegExp(`^rebuilt ${catalog} from the Parquet files under ${dataPath.slice(0, -1)} \\(snapshot \\d+\\)$`),
    );
    expect(out).toContain("there was no previous catalog");
    expect(out).toContain("previous catalog: absent");
    expect(out.find((l) => l.startsWith(`table ${CALL}:`))).toMatch(
      /^table main\.hep_proto_1_call: 2 file\(s\), 130 rows, 20 columns, partitioned by date; 4 superseded file\(s\) registered as retired \(compaction sources\)$/,
    );
    expect(out.find((l) => l.startsWith(`table ${REG}:`))).toMatch(
      /: 2 file\(s\), 22 rows, .+; 4 superseded file\(s\)/,
    );
    expect(out.find((l) => l.startsWith(`table ${LP}:`))).toMatch(
      /: \d+ file\(s\), 80 rows, .+; 4 superseded file\(s\)/,
    );
    expect(out).toContain("not registered: 3 file(s), left in place");
    expect(out).toContain(`  ${stray}: not at <schema>/<table>/[<column>=<value>/]<file>.parquet`);
    expect(out).toContain(`  ${upper}: table main.HEP_proto_1_call differs from main.hep_proto_1_call only by case`);
    expect(out.some((l) => l.startsWith(`  ${torn}: `))).toBe(true);
    expect(r.code).toBe(0);
    expect(existsSync(torn) && existsSync(stray) && existsSync(upper)).toBe(true);

    // The live files and every statistic of them are what the writer registered.
    expect(liveFileFacts(catalog)).toEqual(before);
    const peerAfter = peerQueries(catalog, dataPath, PEER_SQL);
    expect(peerAfter).toEqual(peerBefore);
    {
      await using a = await startTestAppliance(dir.path, OVERRIDES);
      for (const t of [CALL, REG]) expect(await rowsOf(a.app, t)).toEqual(ours[t] as Array<Record<string, unknown>>);
    }

    // Again with the flag: the two files are deleted, the previous catalog is kept.
    const again = await svc(
      ["system", "--rebuild-catalog", "--rebuild-cleanup-orphans", "--config-path", cfg],
      dir.path,
    );
    expect(again.stdout).toMatch(new RegExp(`\\nprevious catalog kept as ${catalog}\\.corrupt\\.\\d{8}T\\d{9}Z\\n`));
    expect(again.stdout).toContain("not registered: 1 file(s), deleted (--rebuild-cleanup-orphans)\n");
    expect(again.code).toBe(0);
    expect(existsSync(stray)).toBe(false);
    // The torn file was moved into the quarantine at the appliance's start (an unreferenced
    // ducklake-*.parquet the writer had not reserved), not deleted.
    expect(existsSync(torn)).toBe(false);
    const q = join(dir.path, "lake/_quarantine");
    const stamp = readdirSync(q);
    expect(stamp).toHaveLength(1);
    expect(existsSync(join(q, stamp[0]!, "main/hep_proto_1_call", partition, basename(torn)))).toBe(true);
    expect(readdirSync(dir.path).filter((n) => /^catalog\.sqlite\.corrupt\.\d{8}T\d{9}Z$/.test(n))).toHaveLength(1);
    expect(peerQueries(catalog, dataPath, PEER_SQL)).toEqual(peerBefore);
  },
  240_000,
);

test("rebuild after a crash: spool files whose rows are in Parquet are not loaded again, the others are", async () => {
  await using dir = tempDir("svc-rebuild-spool-");
  const cfg = writeConfig(dir.path, OVERRIDES);
  const catalog = join(dir.path, "catalog.sqlite");
  const spoolDir = join(dir.path, "spool", CALL);
  const kept = join(dir.path, "spool-kept");
  mkdirSync(kept);
  /** Sends a batch, waits until it is sealed into spool files, copies them aside, then flushes. */
  const spooled = async (a: Awaited<ReturnType<typeof startTestAppliance>>, prefix: string) => {
    await sendHep(a.app, prefix, 40);
    await waitFor(
      `${prefix} in the buffer`,
      async () => (await count(a.app, CALL, `session_id LIKE '${prefix}-%'`)) === 40,
    );
    const names = readdirSync(spoolDir).filter((n) => n.endsWith(".csv") || n.endsWith(".parquet"));
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) cpSync(join(spoolDir, n), join(kept, n));
    await a.app.lake!.flush();
  };
  let pendingParquet: string[] = [];
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await ingest(a.app, "keep", 40);
    // Flushed, but its spool files still on disk (a crash within the spool's grace time)…
    await spooled(a, "flushed");
    const before = new Set((await a.app.lake!.files(CALL)).map((f) => f.path));
    // …and a batch whose flush never happened (its Parquet is removed below).
    await spooled(a, "pending");
    pendingParquet = (await a.app.lake!.files(CALL)).map((f) => f.path).filter((p) => !before.has(p));
    expect(pendingParquet.length).toBeGreaterThan(0);
  }
  for (const p of pendingParquet) rmSync(join(dir.path, "lake", p));
  for (const s of ["", "-wal", "-shm"]) rmSync(catalog + s, { force: true });
  for (const n of readdirSync(kept)) cpSync(join(kept, n), join(spoolDir, n));

  const r = await svc(["system", "--rebuild-catalog", "--config-path", cfg], dir.path);
  expect(r.code).toBe(0);
  const note = r.stdout.split("\n").find((l) => l.startsWith("  spool: "));
  expect(note).toMatch(/^ {2}spool: \d+ spool file\(s\), 40 rows not in Parquet, are loaded again at start$/);
  {
    await using a = await startTestAppliance(dir.path, OVERRIDES);
    await a.app.lake!.flush();
    const per = await a.app.lake!.query(
      `SELECT split_part(session_id, '-', 1) AS batch, count(*) AS n, count(DISTINCT uuid) AS u FROM svc_lake.${CALL} GROUP BY 1 ORDER BY 1`,
    );
    expect(per.rows.map((x) => [x.batch, Number(x.n), Number(x.u)])).toEqual([
      ["flushed", 40, 40],
      ["keep", 40, 40],
      ["pending", 40, 40],
    ]);
  }
});
