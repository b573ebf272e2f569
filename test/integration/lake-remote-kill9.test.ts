/**
 * kill -9 of a real `svc serve` process (test/peers/svc-child.ts) whose lake is on S3 (moto) with a
 * PostgreSQL catalog, at three points of a flush, each hit deterministically by a pause point in the
 * real code path (src/core/test-pause.ts, SVC_TEST_PAUSE_AT; docs/ARCHITECTURE.md "Pause points for
 * kill -9 tests"):
 *  - `flush:uploaded`: the Parquet object is in the bucket and reserved, the commit not started;
 *  - `commit:before-commit`: the catalog transaction has written every row, not committed;
 *  - `flush:committed`: the catalog committed, the spool still holds the flushed batch.
 * The child logs the point it paused at, so the test knows which window it hit. After the kill:
 * every live file of the catalog is an object of the bucket (nothing committed names a missing
 * object), every writer object the catalog does not name is reserved by this writer in
 * svc_inflight_file (so its sweep deletes it once older than the orphan grace; shown by running the
 * sweep with the clock past the grace). After a restart and a clean stop every accepted row is in
 * the lake exactly once, read back from the bucket's objects.
 */
import { afterAll, expect } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { SQL } from "bun";
import { sha256Hex } from "../../src/auth/index.ts";
import { createLogger, MetricsRegistry, type TestPausePoint } from "../../src/core/index.ts";
import { ORPHAN_GRACE_MS } from "../../src/lake/admin/quarantine.ts";
import { PgCatalog } from "../../src/lake/catalog-pg/index.ts";
import { RemoteFiles, remoteFilesMetrics } from "../../src/lake/remote/remote-files.ts";
import { sweepRemoteOrphans } from "../../src/lake/remote/open.ts";
import { openObjectStore, type ObjectStore } from "../../src/lake/store/index.ts";
import { testConfigJson } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { MOTO_PEER, type Moto, startMoto } from "../peers/moto.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";
import { hepInvite, spawnSvc } from "../peers/svc-child.ts";

const ROWS = 300;
const NO_AZURE = { account_name: "", account_key: "", connection_string: "", endpoint: "" };

let peers: Promise<{ pg: Postgres; moto: Moto; dir: string }> | undefined;
let dbCount = 0;
afterAll(async () => {
  if (!peers) return;
  const p = await peers;
  await p.moto[Symbol.asyncDispose]();
  await p.pg[Symbol.asyncDispose]();
});

/** Live data files of the catalog as store keys (relative paths nest: schema, table, file). */
async function liveKeys(url: string): Promise<string[]> {
  const sql = new SQL(url, { max: 1 });
  try {
    const rows: Array<{ key: string }> = await sql`SELECT s.path || t.path || f.path AS key FROM ducklake_data_file f
      JOIN ducklake_table t ON t.table_id = f.table_id AND t.end_snapshot IS NULL JOIN ducklake_schema s ON s.schema_id = t.schema_id AND s.end_snapshot IS NULL
      WHERE f.end_snapshot IS NULL AND f.path_is_relative ORDER BY 1`;
    return rows.map((r) => r.key);
  } finally {
    await sql.close();
  }
}

async function reservations(url: string): Promise<Array<{ path: string; owner: string }>> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await sql`SELECT path, owner FROM svc_inflight_file ORDER BY path`;
  } finally {
    await sql.close();
  }
}

async function objectKeys(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list("")) if (o.key.endsWith(".parquet")) out.push(o.key);
  return out.sort();
}

/** Rows and distinct Call-IDs of the call table, read from the bucket's objects of the live files. */
async function readBack(store: ObjectStore, keys: string[], dir: string): Promise<{ rows: number; ids: number }> {
  const calls = keys.filter((k) => k.includes("hep_proto_1_call/"));
  if (calls.length === 0) return { rows: 0, ids: 0 };
  const local: string[] = [];
  for (const [i, k] of calls.entries()) {
    const p = join(dir, `read-${i}.parquet`);
    writeFileSync(p, await store.get(k));
    local.push(p);
  }
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  try {
    const r = await con.runAndReadAll(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT session_id)::INTEGER AS d FROM read_parquet([${local.map((p) => `'${p}'`).join(", ")}])`,
    );
    const row = r.getRowObjects()[0] as { n: number; d: number };
    return { rows: row.n, ids: row.d };
  } finally {
    con.closeSync();
    db.closeSync();
  }
}

const CASES: Array<{ point: TestPausePoint; leftover: number }> = [
  { point: "flush:uploaded", leftover: 1 },
  { point: "commit:before-commit", leftover: 1 },
  { point: "flush:committed", leftover: 0 },
];

for (const { point, leftover } of CASES) {
  peerTest(
    `kill -9 at ${point} of a flush to S3 with a PostgreSQL catalog: nothing committed lost, no half-committed object, every row once after a restart`,
    [postgresPeer, MOTO_PEER],
    async () => {
      peers ??= (async () => {
        const dir = tempDir("svc-remote-kill9-").path;
        return { dir, pg: await startPostgres(), moto: await startMoto(dir) };
      })();
      const { pg, moto, dir: peerDir } = await peers;
      await using dir = tempDir("svc-remote-kill9-case-");
      const n = ++dbCount;
      const url = await pg.createDatabase(`k${n}`);
      const prefix = `case${n}/`;
      const s3 = {
        endpoint: moto.endpoint,
        region: "us-east-1",
        access_key_id: moto.accessKeyId,
        secret_access_key: moto.secretAccessKey,
      };
      const state = join(dir.path, "state");
      const cfg = testConfigJson(dir.path, {
        log: { level: "info" },
        coordinator: { auth: { admin_password_hash: sha256Hex("remote-kill9") } },
        storage: {
          lakehouse: {
            catalog_type: "postgres",
            catalog_path: url,
            data_path: `s3://${moto.bucket}/${prefix}`,
            state_path: state,
            s3,
            // One flush of every row: it starts 2 s after the first sealed batch, the rows arrive at once.
            flush_interval_sec: 2,
            batch_size: 100_000,
          },
        },
      });
      const cfgPath = join(dir.path, "svc.json");
      writeFileSync(cfgPath, JSON.stringify(cfg));
      const store = openObjectStore({ data_path: `s3://${moto.bucket}/${prefix}`, s3, azure: NO_AZURE });

      const first = await spawnSvc("svc", cfgPath, { SVC_TEST_PAUSE_AT: point });
      const tcp = await Bun.connect({
        hostname: "127.0.0.1",
        port: first.port("hep-tcp"),
        socket: { data() {}, error() {} },
      });
      const frames = Buffer.concat(Array.from({ length: ROWS }, (_, i) => hepInvite(`rk9-${n}-${i}`, "tcp")));
      expect(tcp.write(frames)).toBe(frames.length);
      await waitFor(
        "every row accepted",
        async () => (await first.metric("svc_hep_rows_accepted_total")) >= ROWS,
        30_000,
      );
      await waitFor(`the pause at ${point}`, () => first.lines.find((l) => l.msg === "test pause"), 30_000);
      tcp.end();
      await first.kill9();
      // The window hit is the one asked for.
      expect(first.lines.filter((l) => l.msg === "test pause").map((l) => l.point)).toEqual([point]);
      expect(first.lines.filter((l) => l.level === "error" || l.level === "raw")).toEqual([]);

      // Right after the kill: no catalog row names a missing object; every unnamed object is this writer's reservation.
      const atKill = await liveKeys(url);
      const objects = await objectKeys(store);
      expect(atKill.filter((k) => !objects.includes(k))).toEqual([]);
      const unnamed = objects.filter((k) => !atKill.includes(k));
      expect(unnamed.length).toBe(leftover);
      const reserved = await reservations(url);
      expect(unnamed.filter((k) => !reserved.some((r) => r.path === k))).toEqual([]);
      expect(atKill.length).toBe(point === "flush:committed" ? 1 : 0);

      // A restart recovers the spool above the committed watermark; a clean stop flushes it.
      const second = await spawnSvc("svc-restarted", cfgPath);
      const stopped = await second.stop();
      expect(stopped).toEqual({ code: 0, accepted: 0, written: point === "flush:committed" ? 0 : ROWS, lost: 0 });
      expect(second.lines.filter((l) => l.level === "error" || l.level === "raw")).toEqual([]);
      const after = await liveKeys(url);
      const objectsAfter = await objectKeys(store);
      expect(after.filter((k) => !objectsAfter.includes(k))).toEqual([]);
      mkdirSync(join(dir.path, "read"), { recursive: true });
      expect(await readBack(store, after, join(dir.path, "read"))).toEqual({ rows: ROWS, ids: ROWS });
      // The leftover stays reserved (younger than the grace) and the writer's sweep deletes it once older.
      const left = objectsAfter.filter((k) => !after.includes(k));
      expect(left).toEqual(unnamed);
      const own = new Set((await reservations(url)).map((r) => r.path));
      const remote = new RemoteFiles(
        store,
        join(peerDir, `cache-${n}`),
        1 << 20,
        remoteFilesMetrics(new MetricsRegistry()),
      );
      // The sweep as the writer itself runs it (same owner: host and state directory) forgets the rows too.
      const owners = [...new Set((await reservations(url)).map((r) => r.owner))];
      expect(owners.length).toBeLessThanOrEqual(1);
      const cat = await PgCatalog.open({ url, dataPath: remote.cacheDir, owner: owners[0] ?? "nobody", create: false });
      try {
        const sweep = await sweepRemoteOrphans(
          remote,
          new Set(after.map((k) => join(remote.cacheDir, k))),
          own,
          cat,
          createLogger({ test: true }),
          Date.now() + ORPHAN_GRACE_MS + 60_000,
        );
        expect({ deleted: sweep.deleted, unknown: sweep.unknown, forgotten: sweep.forgotten }).toEqual({
          deleted: leftover,
          unknown: 0,
          forgotten: own.size,
        });
      } finally {
        await cat.close();
      }
      expect(await objectKeys(store)).toEqual(after);
      expect(await reservations(url)).toEqual([]);
    },
    120_000,
  );
}
