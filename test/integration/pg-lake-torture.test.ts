/**
 * Commit torture on a shared PostgreSQL DuckLake catalog with real processes (docs/DUCKLAKE.md
 * "PostgreSQL catalog", "Several writers"): 4 `svc serve` child processes (test/peers/svc-child.ts),
 * each with its own state_path, on one PostgreSQL catalog and one local data_path, and 1 stock DuckDB
 * (ducklake + postgres extensions, test/peers/ducklake_pg.py `insert-loop`) inserting into its own
 * table of the same catalog in a loop. Each svc gets INVITEs over HEP/UDP and HEP/TCP with Call-IDs of
 * its own for SVC_TEST_TORTURE_SEC seconds (default 15 to keep CI short; the judged run is 60:
 * `SVC_TEST_TORTURE_SEC=60 bun test --timeout 300000 test/integration/pg-lake-torture.test.ts`,
 * figures in docs/BENCHMARKS.md "Shared PostgreSQL lake: commit torture"). The maintainer compacts
 * every 2 s meanwhile (min_age_sec 0), so catalog swaps race the commits too.
 * After a clean stop of all of them:
 *  - the live rows of the catalog are the rows the processes accepted (each svc's "stopped" line:
 *    rows_accepted, with rows_written equal and rows_lost 0) plus the rows the extension inserted;
 *  - no snapshot id, data file id or file path twice, no two live files of a table with overlapping
 *    row-id ranges, no reservation left in svc_inflight_file, every live file on disk;
 *  - the stock extension reads every row of every table (distinct whole rows = rows), and every
 *    Call-ID once.
 */
import { afterAll, expect } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { sha256Hex } from "../../src/auth/index.ts";
import { testConfigJson } from "../appliance.ts";
import { peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";
import { DUCKLAKE_PG_PEERS, DUCKLAKE_PG_SCRIPT, duckLakePg } from "../peers/ducklake-pg.ts";
import { type Postgres, startPostgres } from "../peers/postgres.ts";
import { type SvcChild, spawnSvc, startHepSender } from "../peers/svc-child.ts";

const SECONDS = Number(process.env.SVC_TEST_TORTURE_SEC ?? 15);
const WRITERS = 4;
/** INVITEs per 10 ms per protocol per process: 400 rows/s per process. */
const PER_TICK = 2;

let server: Promise<Postgres> | undefined;
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

interface Counts {
  rows: number;
  distinct_rows: number;
  distinct_session_ids: number | null;
}

peerTest(
  `${WRITERS} svc processes and the stock DuckDB commit into one PostgreSQL catalog for ${SECONDS} s: every accepted row once`,
  DUCKLAKE_PG_PEERS,
  async () => {
    await using dir = tempDir("svc-pg-torture-");
    server ??= startPostgres();
    const pg = await server;
    const url = pg.url;
    const dataPath = join(dir.path, "lake/");
    const children: SvcChild[] = [];
    try {
      for (let i = 0; i < WRITERS; i++) {
        const own = join(dir.path, `w${i}`);
        const cfg = testConfigJson(own, {
          log: { level: "info" },
          coordinator: { auth: { admin_password_hash: sha256Hex(`torture-${i}`) } },
          storage: {
            lakehouse: {
              catalog_type: "postgres",
              catalog_path: url,
              data_path: dataPath,
              state_path: join(own, "state"),
              flush_interval_sec: 0.5,
              batch_size: 200,
              tuning: { threads: 1, memory_limit: "256MB" },
              compaction: { check_interval_sec: 2, min_age_sec: 0 },
            },
          },
        });
        const cfgPath = join(dir.path, `w${i}.json`);
        writeFileSync(cfgPath, JSON.stringify(cfg));
        // One at a time: the first creates the catalog, the others adopt it.
        children.push(await spawnSvc(`svc-${i}`, cfgPath, {}, 90_000));
      }
      const stopFile = join(dir.path, "stop-extension");
      const ext = Bun.spawn(
        [pyPeersPython(), DUCKLAKE_PG_SCRIPT, "insert-loop", pg.libpq, dataPath, "main.ext_rows", "50", stopFile],
        { stdout: "pipe", stderr: "pipe" },
      );
      // The clock starts once the extension has its table (its start-up takes seconds on a busy machine).
      await waitFor(
        "the stock DuckDB writer's table",
        async () => {
          if (ext.exitCode !== null)
            throw new Error(`insert-loop exited ${ext.exitCode}: ${await new Response(ext.stderr).text()}`);
          const probe = new SQL(url, { max: 1 });
          try {
            return (await probe`SELECT 1 FROM ducklake_table WHERE table_name = 'ext_rows'`).length > 0;
          } finally {
            await probe.close();
          }
        },
        60_000,
        200,
      );
      const senders = await Promise.all(children.map((c, i) => startHepSender(c, `tort${i}`, PER_TICK)));
      const t0 = performance.now();
      await Bun.sleep(SECONDS * 1000); // the length of the experiment, not a wait for a condition
      const sent = await Promise.all(senders.map((s) => s.stop()));
      writeFileSync(stopFile, "");
      const [extOut, extErr, extCode] = await Promise.all([
        new Response(ext.stdout).text(),
        new Response(ext.stderr).text(),
        ext.exited,
      ]);
      expect({ extCode, extErr: extCode === 0 ? "" : extErr }).toEqual({ extCode: 0, extErr: "" });
      const extension = JSON.parse(extOut) as { inserted: number; failed: number; errors: string[] };
      // Every row the TCP senders wrote was decoded before the stop (UDP may drop in the kernel: counted).
      for (const [i, c] of children.entries()) {
        await waitFor(
          `svc-${i} decoded every TCP frame`,
          async () => (await c.metric("svc_hep_packets_received_total")) >= sent[i]!.tcp,
          30_000,
          100,
        );
      }
      const stopped = [];
      for (const c of children) stopped.push(await c.stop());
      const elapsed = (performance.now() - t0) / 1000;
      for (const [i, s] of stopped.entries())
        expect({ i, code: s.code, lost: s.lost, written: s.written }).toEqual({
          i,
          code: 0,
          lost: 0,
          written: s.accepted,
        });
      const errors = children.flatMap((c) =>
        c.lines.filter((l) => l.level === "error" || l.level === "raw").map((l) => ({ child: c.name, ...l })),
      );
      expect(errors).toEqual([]);
      const accepted = stopped.reduce((a, s) => a + s.accepted, 0);
      expect(accepted).toBeGreaterThan(0);

      // The catalog itself.
      const sql = new SQL(url, { max: 1 });
      let live: Array<{ table_name: string; rows: string; files: string }>;
      let dupSnap: unknown[];
      let dupFile: unknown[];
      let dupPath: unknown[];
      let overlaps: unknown[];
      let inflight: unknown[];
      let paths: Array<{ path: string }>;
      let snapshots: number;
      try {
        live =
          await sql`SELECT t.table_name, sum(f.record_count)::text AS rows, count(*)::text AS files FROM ducklake_data_file f
          JOIN ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL WHERE f.end_snapshot IS NULL GROUP BY 1 ORDER BY 1`;
        dupSnap = await sql`SELECT snapshot_id FROM ducklake_snapshot GROUP BY 1 HAVING count(*) > 1`;
        dupFile = await sql`SELECT data_file_id FROM ducklake_data_file GROUP BY 1 HAVING count(*) > 1`;
        dupPath = await sql`SELECT path FROM ducklake_data_file GROUP BY 1 HAVING count(*) > 1`;
        // Over every file ever committed (compaction leaves few live ones): two files live at one
        // snapshot never share a row id.
        overlaps =
          await sql`SELECT a.data_file_id AS a, b.data_file_id AS b FROM ducklake_data_file a JOIN ducklake_data_file b
          ON a.table_id = b.table_id AND a.data_file_id < b.data_file_id
          AND a.begin_snapshot < coalesce(b.end_snapshot, 9223372036854775807) AND b.begin_snapshot < coalesce(a.end_snapshot, 9223372036854775807)
          AND a.row_id_start < b.row_id_start + b.record_count AND b.row_id_start < a.row_id_start + a.record_count LIMIT 5`;
        inflight = await sql`SELECT path, owner FROM svc_inflight_file`;
        // Relative paths nest: data_path, then the schema's, the table's and the file's (docs/DUCKLAKE.md "Paths and file layout").
        paths =
          await sql`SELECT CASE WHEN f.path_is_relative THEN s.path || t.path || f.path ELSE f.path END AS path FROM ducklake_data_file f
          JOIN ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL JOIN ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
          WHERE f.end_snapshot IS NULL`;
        snapshots = Number((await sql`SELECT count(*)::text AS n FROM ducklake_snapshot`)[0].n);
      } finally {
        await sql.close();
      }
      expect({ dupSnap, dupFile, dupPath, overlaps, inflight }).toEqual({
        dupSnap: [],
        dupFile: [],
        dupPath: [],
        overlaps: [],
        inflight: [],
      });
      const tableDirs = (await Array.fromAsync(new Bun.Glob("**/*.parquet").scan({ cwd: dataPath }))).length;
      expect(paths.map((p) => join(dataPath, p.path)).filter((p) => !existsSync(p))).toEqual([]);
      const rowsOf = (name: string) => Number(live.find((r) => r.table_name === name)?.rows ?? 0);
      const svcRows = live.filter((r) => r.table_name !== "ext_rows").reduce((a, r) => a + Number(r.rows), 0);
      expect({ svcRows, extRows: rowsOf("ext_rows") }).toEqual({ svcRows: accepted, extRows: extension.inserted });

      // The stock extension reads every row of every table, each Call-ID once.
      const counts = duckLakePg<Record<string, Counts>>(["counts", pg.libpq, dataPath]);
      const read = Object.entries(counts).map(([t, c]) => ({
        t,
        rows: c.rows,
        distinct: c.distinct_rows,
        ids: c.distinct_session_ids ?? c.rows,
      }));
      expect(read).toEqual(read.map((r) => ({ ...r, distinct: r.rows, ids: r.rows })));
      expect(read.reduce((a, r) => a + r.rows, 0)).toBe(svcRows + extension.inserted);
      expect(counts["main.ext_rows"]?.rows).toBe(extension.inserted);

      const sentAll = sent.reduce((a, s) => a + s.udp + s.tcp, 0);
      console.log(
        `pg-lake-torture: ${SECONDS} s (${elapsed.toFixed(1)} s to the last stop), ${WRITERS} svc + 1 stock DuckDB; HEP sent ${sentAll}, accepted ${accepted} ` +
          `(${(accepted / SECONDS).toFixed(0)} rows/s); extension inserted ${extension.inserted} in ${extension.inserted / 50} INSERTs (${extension.failed} failed${extension.errors.length ? `: ${extension.errors[0]}` : ""}); ` +
          `snapshots ${snapshots}, live files ${live.reduce((a, r) => a + Number(r.files), 0)}, parquet on disk ${tableDirs}; tables ${live.map((r) => `${r.table_name}=${r.rows}`).join(" ")}`,
      );
    } finally {
      for (const c of children) if (c.proc.exitCode === null) await c.kill9();
    }
  },
  SECONDS * 1000 + 240_000, // generous: the machine may be shared; the run itself is about SECONDS + 35 s
);
