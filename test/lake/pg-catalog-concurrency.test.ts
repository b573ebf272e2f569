/**
 * Several writers on one PostgreSQL DuckLake catalog at once (docs/DUCKLAKE.md "PostgreSQL catalog",
 * "Several writers"): 4 PgCatalog instances, each with its own pool as separate hosts would have,
 * and a stock DuckDB with the ducklake and postgres extensions commit into one table concurrently.
 * Afterwards no snapshot id, data file id or row-id range is there twice, every commit is a
 * snapshot of its own, and the stock extension reads every file's rows.
 */
import { afterAll, expect } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { SQL } from "bun";
import type { NewDataFile } from "../../src/lake/catalog/index.ts";
import { PgCatalog } from "../../src/lake/catalog-pg/index.ts";
import { peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";
import {
  DUCKLAKE_PG_PEERS,
  DUCKLAKE_PG_SCRIPT,
  duckLakePg,
  type ReadResult,
  writeParquet,
} from "../peers/ducklake-pg.ts";
import { type Postgres, startPostgres } from "../peers/postgres.ts";

let server: Postgres | undefined;
afterAll(async () => {
  if (server) await server[Symbol.asyncDispose]();
});

const WRITERS = 4;
const COMMITS = 25;
const EXT_COMMITS = 25;

peerTest(
  "4 svc writers and the stock extension commit at once: every commit lands, no id twice",
  DUCKLAKE_PG_PEERS,
  async () => {
    server = await startPostgres();
    const { url, libpq } = server;
    await using dir = tempDir("svc-pgconc-");
    const writers = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) => PgCatalog.open({ url, dataPath: dir.path, owner: `host-${i}` })),
    );
    const duck = await DuckDBInstance.create(":memory:");
    const con = await duck.connect();
    try {
      const t = await writers[0]!.ensureTable("main", {
        name: "x",
        columns: [
          { name: "id", type: "int64" },
          { name: "name", type: "varchar" },
        ],
      });
      // Files first, each at a path its writer reserved (DuckDB writing Parquet is not what is tested).
      const files: NewDataFile[][] = [];
      for (const [w, cat] of writers.entries()) {
        const mine: NewDataFile[] = [];
        for (let k = 0; k < COMMITS; k++) {
          const base = 1000 + (w * COMMITS + k) * 3;
          mine.push(
            await writeParquet(
              con,
              dir.path,
              t,
              undefined,
              `SELECT (${base} + i)::BIGINT AS id, 'w${w}' AS name FROM range(3) t(i)`,
              await cat.newDataFilePath(t.tableId),
            ),
          );
        }
        files.push(mine);
      }
      // The extension commits one file per INSERT (ids 0..24) while the four commit theirs.
      const ext = Bun.spawn(
        [
          pyPeersPython(),
          DUCKLAKE_PG_SCRIPT,
          "insert",
          libpq,
          `${dir.path}/`,
          "main.x",
          "0",
          String(EXT_COMMITS),
          String(EXT_COMMITS),
        ],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      await waitFor(
        "the extension's first commit",
        async () => (await writers[0]!.currentSnapshot()).changes?.startsWith("inserted_into_table") === true,
        60_000,
      );
      const snaps = await Promise.all(
        writers.map(async (cat, w) => {
          const out: number[] = [];
          for (const [k, f] of (files[w] ?? []).entries()) {
            const marks = [
              { writerKey: `w${w}`, watermark: k + 1 },
              { writerKey: `w${w}-lp`, watermark: 100 + k },
            ];
            out.push((await cat.commitDataFiles(t.tableId, [f], marks)).snapshotId);
          }
          return out;
        }),
      );
      const code = await ext.exited;
      expect(code, await new Response(ext.stderr).text()).toBe(0);
      const ours = snaps.flat();
      expect(ours.length).toBe(WRITERS * COMMITS);
      expect(new Set(ours).size).toBe(WRITERS * COMMITS);
      const sql = new SQL(url, { max: 1 });
      try {
        const total = 2 + WRITERS * COMMITS + EXT_COMMITS; // snapshot 0, the table, every commit
        const [s] =
          await sql`SELECT count(*)::int AS n, count(DISTINCT snapshot_id)::int AS d, min(snapshot_id)::int AS lo, max(snapshot_id)::int AS hi FROM ducklake_snapshot`;
        expect(s).toEqual({ n: total, d: total, lo: 0, hi: total - 1 });
        const changes: Array<{ id: number; c: string }> =
          await sql`SELECT snapshot_id::int AS id, changes_made AS c FROM ducklake_snapshot_changes ORDER BY 1`;
        const inserts = changes.filter((c) => c.c === `inserted_into_table:${t.tableId}`);
        expect(inserts.length).toBe(WRITERS * COMMITS + EXT_COMMITS);
        for (const id of ours) expect(inserts.some((c) => c.id === id)).toBe(true);
        const fs: Array<{ id: string; start: string; n: string; snap: string }> =
          await sql`SELECT data_file_id AS id, row_id_start AS start, record_count AS n, begin_snapshot AS snap FROM ducklake_data_file ORDER BY row_id_start`;
        expect(fs.length).toBe(WRITERS * COMMITS + EXT_COMMITS);
        expect(new Set(fs.map((f) => f.id)).size).toBe(fs.length);
        // Row-id ranges tile 0..rows without a gap or an overlap.
        let next = 0;
        for (const f of fs) {
          expect(Number(f.start)).toBe(next);
          next += Number(f.n);
        }
        expect(next).toBe(WRITERS * COMMITS * 3 + EXT_COMMITS);
        // One file per snapshot: no two commits shared one.
        expect(new Set(fs.map((f) => f.snap)).size).toBe(fs.length);
        const marks: Array<{ k: string; w: number }> =
          await sql`SELECT writer_key AS k, watermark::int AS w FROM svc_writer_watermark ORDER BY 1`;
        expect(marks).toEqual(
          writers.flatMap((_, w) => [
            { k: `w${w}`, w: COMMITS },
            { k: `w${w}-lp`, w: 100 + COMMITS - 1 },
          ]),
        );
        const [left] = await sql`SELECT count(*)::int AS n FROM svc_inflight_file`;
        expect(left?.n).toBe(0);
      } finally {
        await sql.close();
      }
      const read = duckLakePg<ReadResult>(["read", libpq, `${dir.path}/`, "main.x"]);
      expect(read.count).toBe(WRITERS * COMMITS * 3 + EXT_COMMITS);
      expect(read.rows.map((r) => r.id)).toEqual([
        ...Array.from({ length: EXT_COMMITS }, (_, i) => i),
        ...Array.from({ length: WRITERS * COMMITS * 3 }, (_, i) => 1000 + i),
      ]);
      expect((await writers[3]!.listDataFiles(t.tableId)).length).toBe(WRITERS * COMMITS + EXT_COMMITS);
    } finally {
      con.closeSync();
      await Promise.all(writers.map((w) => w.close()));
    }
  },
  120_000,
);
