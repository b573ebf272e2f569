/**
 * The PostgreSQL DuckLake catalog (src/lake/catalog-pg) against the reference implementation: a real
 * PostgreSQL (test/peers/postgres.ts) and a stock DuckDB 1.5.5 with the ducklake and postgres
 * extensions (Python venv from scripts/python-peers.sh, driven by test/peers/ducklake_pg.py).
 * 1. The tables svc creates are column for column those the extension creates.
 * 2. svc commits Parquet files, the extension reads exactly those rows.
 * 3. The extension inserts, svc lists its files, commits one more, the extension reads all.
 * 4. 4 writers (4 instances, each its own pool) commit 25 times each at once: every commit is a
 *    snapshot of its own, no snapshot id or file id twice, the extension reads every row.
 * 5. A race with a writer that does not take the advisory lock ends in SQLSTATE 23505 and a retry;
 *    svc and the extension committing into one table at the same time both succeed.
 * 6. Connection and login failures are told apart by SQLSTATE, and no message holds the password.
 */
import { afterAll, expect } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { statSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import type { NewDataFile } from "../../src/lake/catalog/index.ts";
import { PgCatalog } from "../../src/lake/catalog-pg/index.ts";
import { peerTest, pyPeersPython, tempDir, waitFor } from "../harness.ts";
import {
  DUCKLAKE_PG_PEERS as NEEDS,
  DUCKLAKE_PG_SCRIPT as SCRIPT,
  duckLakePg as py,
  type ReadResult,
  rowsOf,
  sqlStr,
  writeParquet,
} from "../peers/ducklake-pg.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { freeTcpPort } from "../peers/slapd.ts";

/** One server for the file, started by the first test that runs (a skipped file starts none). */
let server: Promise<Postgres> | undefined;
let dbCount = 0;
async function database(): Promise<{ url: string; libpq: string }> {
  server ??= startPostgres();
  const pg = await server;
  const name = `t${++dbCount}`;
  const url = await pg.createDatabase(name);
  return { url, libpq: pg.libpq.replace(`dbname=${pg.database}`, `dbname=${name}`) };
}
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

const CALLS = {
  name: "calls",
  columns: [
    { name: "id", type: "int64" as const },
    { name: "name", type: "varchar" as const },
    { name: "d", type: "float64" as const },
    { name: "day", type: "date" as const },
  ],
  partitionBy: "day",
};
const callRows = (from: number, to: number, day: string) =>
  `SELECT i::BIGINT AS id, CASE WHEN i % 3 = 0 THEN NULL ELSE 'n' || i END AS name, i / 4.0 AS d, DATE ${sqlStr(day)} AS day FROM range(${from}, ${to}) t(i)`;
const expectedCalls = (from: number, to: number, day: string) =>
  Array.from({ length: to - from }, (_, k) => from + k).map((i) => ({
    id: i,
    name: i % 3 === 0 ? null : `n${i}`,
    d: i / 4,
    day,
  }));

/** What information_schema says about the DuckLake tables: name, column, position, type, nullability; and the primary keys. */
async function catalogShape(url: string): Promise<{ columns: string[]; keys: string[] }> {
  const sql = new SQL(url, { max: 1 });
  try {
    const cols: Array<{ s: string }> =
      await sql`SELECT table_name || '.' || column_name || ' #' || ordinal_position || ' ' || data_type || ' ' || is_nullable AS s
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name LIKE 'ducklake\\_%' AND table_name NOT LIKE 'ducklake\\_inlined\\_data\\_%\\_%'
      ORDER BY table_name, ordinal_position`;
    const keys: Array<{ s: string }> =
      await sql`SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) AS s FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text LIKE 'ducklake\\_%' ORDER BY 1`;
    return { columns: cols.map((r) => r.s), keys: keys.map((r) => r.s) };
  } finally {
    await sql.close();
  }
}

peerTest(
  "svc creates the catalog tables exactly as the extension does",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const ext = await database();
    py(["attach", ext.libpq, `${dir.path}/ext/`]);
    const ours = await database();
    const cat = await PgCatalog.open({ url: ours.url, dataPath: join(dir.path, "ours") });
    await cat.close();
    const a = await catalogShape(ext.url);
    const b = await catalogShape(ours.url);
    expect(a.columns.length).toBeGreaterThan(150);
    expect(b.columns).toEqual(a.columns);
    expect(b.keys).toEqual(a.keys);
    // The extension opens what svc created (its own check of the schema), and svc adopts the extension's.
    expect(py<{ snapshot: number }>(["attach", ours.libpq, `${dir.path}/ours/`]).snapshot).toBe(0);
    const adopted = await PgCatalog.open({ url: ext.url, dataPath: join(dir.path, "ext"), create: false });
    expect((await adopted.currentSnapshot()).snapshotId).toBe(0);
    await adopted.close();
  },
  120_000,
);

peerTest(
  "files svc commits are read by the stock extension, row for row",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const { url, libpq } = await database();
    const cat = await PgCatalog.open({ url, dataPath: dir.path });
    const duck = await DuckDBInstance.create(":memory:");
    const con = await duck.connect();
    try {
      const t = await cat.ensureTable("main", CALLS);
      expect(t.columns.map((c) => c.columnId)).toEqual([1, 2, 3, 4]);
      const f1 = await writeParquet(con, dir.path, t, "2026-11-22", callRows(0, 7, "2026-11-22"));
      const f2 = await writeParquet(con, dir.path, t, "2026-11-23", callRows(7, 12, "2026-11-23"));
      const { snapshotId } = await cat.commitInserts([{ tableId: t.tableId, files: [f1, f2] }], {
        writerKey: "w1",
        watermark: 42,
      });
      expect(snapshotId).toBe(2);
      expect(await cat.writerWatermark("w1")).toBe(42);
      const listed = await cat.listFiles(t.tableId);
      expect(listed.map((f) => [f.path, f.recordCount, f.rowIdStart, f.partitionValues.day])).toEqual([
        [f1.path, 7, 0, "2026-11-22"],
        [f2.path, 5, 7, "2026-11-23"],
      ]);
      expect(listed[0]?.columnStats.id).toMatchObject({ min: "0", max: "6", nullCount: 0 });
      const read = py<ReadResult>(["read", libpq, `${dir.path}/`, "main.calls"]);
      expect(read.rows).toEqual([...expectedCalls(0, 7, "2026-11-22"), ...expectedCalls(7, 12, "2026-11-23")]);
      // Adding a column is a snapshot the extension follows; old files read NULL there.
      const t2 = await cat.ensureTable("main", {
        ...CALLS,
        columns: [...CALLS.columns, { name: "extra", type: "varchar" }],
      });
      expect(t2.columns.at(-1)).toMatchObject({ columnId: 5, name: "extra" });
      expect(py<ReadResult>(["read", libpq, `${dir.path}/`, "main.calls"]).rows[0]).toEqual({
        ...expectedCalls(0, 1, "2026-11-22")[0],
        extra: null,
      });
    } finally {
      con.closeSync();
      await cat.close();
    }
  },
  120_000,
);

peerTest(
  "svc lists the files the stock extension inserted and adds to its table",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const { url, libpq } = await database();
    py(["insert", libpq, `${dir.path}/`, "main.x", "0", "10", "2"]);
    const cat = await PgCatalog.open({ url, dataPath: dir.path, create: false });
    const duck = await DuckDBInstance.create(":memory:");
    const con = await duck.connect();
    try {
      const t = await cat.getTable("main", "X");
      expect(t?.columns.map((c) => [c.name, c.type])).toEqual([
        ["id", "int64"],
        ["name", "varchar"],
      ]);
      if (!t) return;
      const files = await cat.listFiles(t.tableId);
      expect(files.map((f) => f.recordCount)).toEqual([5, 5]);
      for (const f of files) expect(statSync(f.absolutePath).size).toBe(f.fileSizeBytes);
      const ids = await rowsOf(
        con,
        `SELECT id FROM read_parquet([${files.map((f) => sqlStr(f.absolutePath)).join(", ")}]) ORDER BY id`,
      );
      expect(ids.map((r) => Number(r.id))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(files[1]?.columnStats.name).toMatchObject({ min: "ext-5", max: "ext-9", nullCount: 0 });
      const mine = await writeParquet(con, dir.path, t, undefined, "SELECT 100::BIGINT AS id, 'svc' AS name");
      await cat.commitInserts([{ tableId: t.tableId, files: [mine] }]);
      const read = py<ReadResult>(["read", libpq, `${dir.path}/`, "main.x"]);
      expect(read.count).toBe(11);
      expect(read.rows.at(-1)).toEqual({ id: 100, name: "svc" });
      // The table statistics svc folded in are what the extension keeps: 11 rows, next row id 11.
      const sql = new SQL(url, { max: 1 });
      const [stats] =
        await sql`SELECT record_count::int AS n, next_row_id::int AS next FROM ducklake_table_stats WHERE table_id = ${t.tableId}`;
      await sql.close();
      expect(stats).toEqual({ n: 11, next: 11 });
    } finally {
      con.closeSync();
      await cat.close();
    }
  },
  120_000,
);

peerTest(
  "4 writers with their own pools commit 25 times each: 100 snapshots, no id twice",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const { url, libpq } = await database();
    const writers = await Promise.all([0, 1, 2, 3].map(() => PgCatalog.open({ url, dataPath: dir.path })));
    const duck = await DuckDBInstance.create(":memory:");
    const con = await duck.connect();
    try {
      const tables = await Promise.all(
        writers.map((w) =>
          w.ensureTable("main", {
            name: "events",
            columns: [
              { name: "id", type: "int64" },
              { name: "writer", type: "int32" },
            ],
          }),
        ),
      );
      const t = tables[0];
      if (!t) throw new Error("no table");
      expect(new Set(tables.map((x) => x.tableId)).size).toBe(1);
      // Files first (DuckDB is not what is measured), then all 100 commits at once.
      const files: NewDataFile[][] = [];
      for (let w = 0; w < 4; w++) {
        files.push([]);
        for (let k = 0; k < 25; k++) {
          const base = (w * 25 + k) * 3;
          files[w]?.push(
            await writeParquet(
              con,
              dir.path,
              t,
              undefined,
              `SELECT (${base} + i)::BIGINT AS id, ${w}::INTEGER AS writer FROM range(3) t(i)`,
            ),
          );
        }
      }
      const snaps = await Promise.all(
        writers.map(async (w, i) => {
          const out: number[] = [];
          for (const f of files[i] ?? [])
            out.push(
              (
                await w.commitInserts([{ tableId: t.tableId, files: [f] }], {
                  writerKey: `w${i}`,
                  watermark: out.length + 1,
                })
              ).snapshotId,
            );
          return out;
        }),
      );
      const all = snaps.flat();
      expect(all.length).toBe(100);
      expect(new Set(all).size).toBe(100);
      const sql = new SQL(url, { max: 1 });
      try {
        const [s] =
          await sql`SELECT count(*)::int AS n, count(DISTINCT snapshot_id)::int AS d, max(snapshot_id)::int AS top FROM ducklake_snapshot`;
        // snapshot 0, one for the table, 100 commits: contiguous ids.
        expect(s).toEqual({ n: 102, d: 102, top: 101 });
        const [c] =
          await sql`SELECT count(*)::int AS n FROM ducklake_snapshot_changes WHERE changes_made = ${`inserted_into_table:${t.tableId}`}`;
        expect(c?.n).toBe(100);
        const [f] =
          await sql`SELECT count(*)::int AS n, count(DISTINCT data_file_id)::int AS d, count(DISTINCT path)::int AS p, count(DISTINCT row_id_start)::int AS r
          FROM ducklake_data_file WHERE table_id = ${t.tableId}`;
        expect(f).toEqual({ n: 100, d: 100, p: 100, r: 100 });
        const marks: Array<{ k: string; w: number }> =
          await sql`SELECT writer_key AS k, watermark::int AS w FROM svc_writer_watermark ORDER BY 1`;
        expect(marks).toEqual([0, 1, 2, 3].map((i) => ({ k: `w${i}`, w: 25 })));
      } finally {
        await sql.close();
      }
      // The advisory lock serialised them: no commit had to be run again.
      expect(writers.map((w) => w.stats.retries)).toEqual([0, 0, 0, 0]);
      const listed = await writers[3]?.listFiles(t.tableId);
      expect(listed?.length).toBe(100);
      const read = py<ReadResult>(["read", libpq, `${dir.path}/`, "main.events"]);
      expect(read.count).toBe(300);
      expect(read.rows.map((r) => r.id)).toEqual(Array.from({ length: 300 }, (_, i) => i));
      expect(read.rows.map((r) => r.writer)).toEqual(Array.from({ length: 300 }, (_, i) => Math.floor(i / 75)));
    } finally {
      con.closeSync();
      await Promise.all(writers.map((w) => w.close()));
    }
  },
  300_000,
);

peerTest(
  "a commit that races a writer without the lock is run again on SQLSTATE 23505",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const { url, libpq } = await database();
    const cat = await PgCatalog.open({ url, dataPath: dir.path });
    const other = new SQL(url, { max: 2 }); // one held by the open transaction, one to watch
    const duck = await DuckDBInstance.create(":memory:");
    const con = await duck.connect();
    try {
      const t = await cat.ensureTable("main", { name: "r", columns: [{ name: "id", type: "int64" }] });
      const file = await writeParquet(con, dir.path, t, undefined, "SELECT 1::BIGINT AS id");
      // Another writer (as the extension does: no advisory lock) takes the next snapshot id and
      // holds its transaction open; svc's insert of the same id waits on the primary key.
      const tx = await other.reserve();
      const [base] =
        await tx`SELECT max(snapshot_id)::int AS s, max(next_catalog_id)::int AS c, max(next_file_id)::int AS f FROM ducklake_snapshot`;
      await tx`BEGIN`;
      await tx`INSERT INTO ducklake_snapshot SELECT ${base?.s + 1}, clock_timestamp(), schema_version, next_catalog_id, next_file_id FROM ducklake_snapshot WHERE snapshot_id = ${base?.s}`;
      await tx`INSERT INTO ducklake_snapshot_changes VALUES (${base?.s + 1}, '', NULL, NULL, NULL)`;
      const commit = cat.commitInserts([{ tableId: t.tableId, files: [file] }]);
      await waitFor("svc's commit waiting on the other writer", async () => {
        const [w] =
          await other`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`;
        return w?.n === 1;
      });
      await tx`COMMIT`;
      tx.release();
      const { snapshotId } = await commit;
      expect(snapshotId).toBe(base?.s + 2);
      expect(cat.stats.retries).toBe(1);
      expect(py<ReadResult>(["read", libpq, `${dir.path}/`, "main.r"]).rows).toEqual([{ id: 1 }]);
    } finally {
      con.closeSync();
      await other.close();
      await cat.close();
    }
  },
  60_000,
);

peerTest(
  "svc and the stock extension commit into one table at the same time",
  NEEDS,
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const { url, libpq } = await database();
    const cat = await PgCatalog.open({ url, dataPath: dir.path });
    const duck = await DuckDBInstance.create(":memory:");
    const con = await duck.connect();
    try {
      const t = await cat.ensureTable("main", {
        name: "x",
        columns: [
          { name: "id", type: "int64" },
          { name: "name", type: "varchar" },
        ],
      });
      const files: NewDataFile[] = [];
      for (let k = 0; k < 20; k++)
        files.push(
          await writeParquet(con, dir.path, t, undefined, `SELECT (1000 + ${k})::BIGINT AS id, 'svc' AS name`),
        );
      // The extension makes 20 commits of its own (one file each) while svc makes 20.
      const ext = Bun.spawn([pyPeersPython(), SCRIPT, "insert", libpq, `${dir.path}/`, "main.x", "0", "20", "20"], {
        stdout: "pipe",
        stderr: "pipe",
      });
      // Start once the extension is committing (its first insert is in), so the two overlap.
      await waitFor(
        "the extension's first commit",
        async () => (await cat.currentSnapshot()).changes?.startsWith("inserted_into_table") === true,
        60_000,
      );
      for (const f of files) await cat.commitInserts([{ tableId: t.tableId, files: [f] }]);
      const code = await ext.exited;
      expect(code, await new Response(ext.stderr).text()).toBe(0);
      const read = py<ReadResult>(["read", libpq, `${dir.path}/`, "main.x"]);
      expect(read.rows.map((r) => r.id)).toEqual([
        ...Array.from({ length: 20 }, (_, i) => i),
        ...Array.from({ length: 20 }, (_, i) => 1000 + i),
      ]);
      const listed = await cat.listFiles(t.tableId);
      expect(listed.length).toBe(40);
      expect(new Set(listed.map((f) => f.rowIdStart)).size).toBe(40);
      const sql = new SQL(url, { max: 1 });
      const [s] = await sql`SELECT count(*)::int AS n, max(snapshot_id)::int AS top FROM ducklake_snapshot`;
      await sql.close();
      // snapshot 0, the table, 20 + 20 inserts: each commit a snapshot of its own, ids contiguous.
      expect(s).toEqual({ n: 42, top: 41 });
    } finally {
      con.closeSync();
      await cat.close();
    }
  },
  120_000,
);

peerTest(
  "errors: a wrong password and a closed port are named by kind, never with the password",
  [postgresPeer],
  async () => {
    await using dir = tempDir("svc-pgcat-");
    const { url } = await database();
    const wrong = new URL(url);
    wrong.password = "not-the-password";
    const bad = await PgCatalog.open({ url: wrong.toString(), dataPath: dir.path }).catch((e: unknown) => e);
    // 28P01 invalid_password: a server error, kept by its SQLSTATE.
    expect(bad).toMatchObject({ code: "DEPENDENCY_FAILED", details: { sqlstate: "28P01" } });
    expect(String((bad as Error).message)).not.toContain("not-the-password");
    const closed = new URL(url);
    closed.port = String(freeTcpPort());
    const down = await PgCatalog.open({ url: closed.toString(), dataPath: dir.path }).catch((e: unknown) => e);
    expect(down).toMatchObject({ code: "UNAVAILABLE" });
    expect(String((down as Error).message)).not.toContain(closed.password);
    const notPg = await PgCatalog.open({ url: "mysql://u:p@127.0.0.1/x", dataPath: dir.path }).catch((e: unknown) => e);
    expect(notPg).toMatchObject({ code: "CONFIG_INVALID" });
  },
  60_000,
);
