/**
 * `storage.lakehouse.catalog_type: postgres` end to end (docs/DUCKLAKE.md "PostgreSQL catalog"): the
 * appliance ingests line protocol into a DuckLake catalog in a real PostgreSQL
 * (test/peers/postgres.ts), its searches and the stock DuckDB (ducklake + postgres extensions) read
 * the same rows; two appliances with their own state directories share one catalog and one data path
 * and elect one maintainer. Start-up errors and the admin tools: lake-pg-catalog-errors.test.ts.
 */
import { afterAll, expect } from "bun:test";
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { SQL } from "bun";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { MAINTAINER_LOCK_KEY, PgCatalog } from "../../src/lake/catalog-pg/index.ts";
import { sweepRemoteOrphans } from "../../src/lake/remote/open.ts";
import { RemoteFiles, remoteFilesMetrics } from "../../src/lake/remote/remote-files.ts";
import { LocalStore } from "../../src/lake/store/index.ts";
import { startTestAppliance, type TestAppliance } from "../appliance.ts";
import { peerTest, tempDir, waitFor } from "../harness.ts";
import { DUCKLAKE_PG_PEERS, duckLakePg, type ReadResult } from "../peers/ducklake-pg.ts";
import { type Postgres, postgresPeer, startPostgres } from "../peers/postgres.ts";

const T = 60_000;
let server: Promise<Postgres> | undefined;
let dbCount = 0;
async function database(): Promise<{ url: string; libpq: string }> {
  server ??= startPostgres();
  const pg = await server;
  const name = `a${++dbCount}`;
  const url = await pg.createDatabase(name);
  return { url, libpq: pg.libpq.replace(/dbname=\S+/, `dbname=${name}`) };
}
afterAll(async () => {
  if (server) await (await server)[Symbol.asyncDispose]();
});

const NOW_MS = Date.UTC(2026, 10, 28, 12);
function lakeOf(url: string, dataPath: string, stateDir: string) {
  return {
    ingest: { line_protocol: { enable: true } },
    storage: { lakehouse: { catalog_type: "postgres", catalog_path: url, data_path: dataPath, state_path: stateDir } },
  };
}

/**
 * A temporary directory and a fresh database: the catalog and data path the appliances of one test
 * share; `writer(name)` starts one on them with its own state directory (`<dir>/<name>/state`).
 */
async function sharedLake() {
  const dir = tempDir();
  const db = await database();
  const dataPath = join(dir.path, "lake/");
  return {
    path: dir.path,
    db,
    dataPath,
    writer: (name: string) =>
      startTestAppliance(join(dir.path, name), lakeOf(db.url, dataPath, join(dir.path, name, "state"))),
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
  };
}

async function write(a: TestAppliance, host: string, from: number, n: number): Promise<void> {
  const lines = Array.from({ length: n }, (_, i) => `cpu,host=${host} v=${from + i}i ${NOW_MS + from + i}`);
  const r = await fetch(`${a.app.lineProtocol!.url()}/write?db=metrics&precision=ms`, {
    method: "POST",
    body: lines.join("\n"),
  });
  expect(r.status).toBe(204);
}

/** `write`, then the flush that commits the rows to the catalog. */
async function written(a: TestAppliance, host: string, from: number, n: number): Promise<void> {
  await write(a, host, from, n);
  await a.app.lake!.flush();
}

/** What a search of `a` reads: the catalog's files now (planned per query) and its own buffer. */
async function values(a: TestAppliance): Promise<number[]> {
  const lake = a.app.lake!;
  const key = lake.findTable("metrics", "cpu");
  if (!key) return [];
  const r = await lake.query(`SELECT v FROM (${await lake.scanSql(key)}) t ORDER BY v`);
  return r.rows.map((row) => Number(row.v));
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

peerTest(
  "one appliance on a PostgreSQL catalog: searches and the stock DuckDB read exactly its rows",
  DUCKLAKE_PG_PEERS,
  async () => {
    await using shared = await sharedLake();
    const { db, dataPath } = shared;
    {
      await using a = await startTestAppliance(shared.path, lakeOf(db.url, dataPath, join(shared.path, "state")));
      await written(a, "a", 0, 50);
      expect(await values(a)).toEqual(range(0, 50));
      expect(a.app.lake!.maintainerState()).toEqual({ isMaintainer: true });
      // Nothing is made at a path derived from the URL (the lake id, spools, temp: state_path, data_path).
      expect(existsSync(dirname(resolve(db.url)))).toBe(false);
    }
    const read = duckLakePg<ReadResult>(["read", db.libpq, dataPath, "metrics.cpu"]);
    expect(read.rows.map((r) => Number(r.v))).toEqual(range(0, 50));
    expect(new Set(read.rows.map((r) => r.host))).toEqual(new Set(["a"]));
  },
  T,
);

peerTest(
  "two appliances on one catalog and data path: every row once, one maintainer, the other takes over",
  [postgresPeer],
  async () => {
    await using shared = await sharedLake();
    await using a = await shared.writer("a");
    await using b = await shared.writer("b");
    expect(a.app.lake!.maintainerState()).toEqual({ isMaintainer: true });
    expect(b.app.lake!.maintainerState()).toEqual({ isMaintainer: false });
    await Promise.all([write(a, "a", 0, 40), write(b, "b", 1000, 40)]);
    await Promise.all([a.app.lake!.flush(), b.app.lake!.flush()]);
    const all = [...range(0, 40), ...range(1000, 40)];
    expect(await values(a)).toEqual(all);
    expect(await values(b)).toEqual(all);
    // A maintenance tick of the non-maintainer does nothing; of the maintainer it runs.
    await b.app.lake!.maintain();
    expect(b.app.lake!.maintainerState()).toEqual({ isMaintainer: false });
    const health = await (await fetch(`${b.app.nodeUrl}/health`)).json();
    expect(health.checks["lake:maintainer"][0].observedValue).toBe(0);
    await a[Symbol.asyncDispose]();
    await waitFor(
      "b takes over",
      async () => (await b.app.lake!.maintain(), b.app.lake!.maintainerState()?.isMaintainer),
    );
    await written(b, "b", 2000, 5);
    expect(await values(b)).toEqual([...all, ...range(2000, 5)]);
  },
  T,
);

/** A data file reserved in the catalog by `owner` (a writer's flush cut short), `ageMs` old. */
async function reservedFile(url: string, dataPath: string, owner: string, ageMs: number): Promise<string> {
  const cat = await PgCatalog.open({ url, dataPath, owner, create: false });
  try {
    const t = await cat.getTable("metrics", "cpu");
    return orphanFile(dataPath, await cat.newDataFilePath(t!.tableId), ageMs);
  } finally {
    await cat.close();
  }
}

function orphanFile(dataPath: string, rel: string, ageMs: number): string {
  const abs = join(dataPath, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, "not committed");
  const at = new Date(Date.now() - ageMs);
  utimesSync(abs, at, at);
  return abs;
}

peerTest(
  "orphans on a shared catalog: a writer deletes its own leftovers at start; the maintainer spares other writers' and young files",
  [postgresPeer],
  async () => {
    await using shared = await sharedLake();
    const { db, dataPath } = shared;
    const bState = join(shared.path, "b", "state");
    await using a = await shared.writer("a");
    await written(a, "a", 0, 3);
    const HOUR = 3_600_000;
    // B's flush cut by a crash: reserved under B's owner (host + its state directory).
    const bLeftover = await reservedFile(db.url, dataPath, `${hostname()}:${bState}`, 2 * HOUR);
    // Another host's flush in progress, old; an unreserved file (a stock DuckDB writer), young; one old.
    const otherHost = await reservedFile(db.url, dataPath, "other-host:/var/lib/svc", 2 * HOUR);
    const young = orphanFile(dataPath, "metrics/cpu/ducklake-young-unreserved.parquet", 0);
    const stale = orphanFile(dataPath, "metrics/cpu/ducklake-stale-unreserved.parquet", 2 * HOUR);
    await using b = await shared.writer("b");
    expect(b.app.lake!.maintainerState()).toEqual({ isMaintainer: false });
    // B is not the maintainer: it removed only its own leftover.
    expect([bLeftover, otherHost, young, stale].map((f) => existsSync(f))).toEqual([false, true, true, true]);
    await a[Symbol.asyncDispose]();
    await waitFor(
      "b takes over",
      async () => (await b.app.lake!.maintain(), b.app.lake!.maintainerState()?.isMaintainer),
    );
    // B's takeover sweep: the other host's reservation and the young file stay, the old unreserved file is quarantined.
    expect([otherHost, young, stale].map((f) => existsSync(f))).toEqual([true, true, false]);
    expect(readdirSync(join(dataPath, "_quarantine"))).toHaveLength(1);
    await written(b, "b", 100, 2);
    expect(await values(b)).toEqual([0, 1, 2, 100, 101]);
  },
  T,
);

peerTest(
  "the maintainer's connection dies (as with kill -9): the other writer takes over, the old one stops maintaining",
  [postgresPeer],
  async () => {
    await using shared = await sharedLake();
    const { db } = shared;
    await using a = await shared.writer("a");
    await using b = await shared.writer("b");
    expect([a.app.lake!.maintainerState(), b.app.lake!.maintainerState()]).toEqual([
      { isMaintainer: true },
      { isMaintainer: false },
    ]);
    // The server ends the session holding the maintainer lock: the lock goes with it.
    const admin = new SQL(db.url, { max: 1 });
    try {
      const killed =
        await admin`SELECT pg_terminate_backend(pid) AS ok FROM pg_locks WHERE locktype = 'advisory' AND granted
        AND classid = (${MAINTAINER_LOCK_KEY.toString()}::bigint >> 32)::oid AND objid = (${MAINTAINER_LOCK_KEY.toString()}::bigint & 4294967295)::oid`;
      expect(killed.length).toBe(1);
    } finally {
      await admin.close();
    }
    await waitFor(
      "b takes over",
      async () => (await b.app.lake!.maintain(), b.app.lake!.maintainerState()?.isMaintainer),
    );
    await a.app.lake!.maintain();
    expect(a.app.lake!.maintainerState()).toEqual({ isMaintainer: false });
    // A still writes (its commits use the other connection of its pool).
    await written(a, "a", 0, 2);
    expect(await values(a)).toEqual([0, 1]);
  },
  T,
);

/** Ages the reservations of `owners` by `ageMs` on the server's clock. */
async function ageReservations(url: string, owners: string[], ageMs: number): Promise<void> {
  const sql = new SQL(url, { max: 1 });
  try {
    await sql`UPDATE svc_inflight_file SET reserved_at = clock_timestamp() - (${ageMs}::bigint * interval '1 millisecond') WHERE owner = ANY(${owners}::varchar[])`;
  } finally {
    await sql.close();
  }
}

async function reservationOwners(url: string): Promise<string[]> {
  const sql = new SQL(url, { max: 1 });
  try {
    return (await sql`SELECT DISTINCT owner FROM svc_inflight_file ORDER BY owner`).map(
      (r: { owner: string }) => r.owner,
    );
  } finally {
    await sql.close();
  }
}

peerTest(
  "reservations of a writer that is gone are cleared with their files once older than the grace; a connected writer's and young ones stay",
  [postgresPeer],
  async () => {
    await using shared = await sharedLake();
    const { db, dataPath } = shared;
    await using a = await shared.writer("a");
    await written(a, "a", 0, 3);
    const HOUR = 3_600_000;
    // A host that died mid-flush two hours ago, and one that died a minute ago (within the grace).
    const gone = await reservedFile(db.url, dataPath, "gone-host:/var/lib/svc", 2 * HOUR);
    const young = await reservedFile(db.url, dataPath, "young-host:/var/lib/svc", 60_000);
    // A writer still connected to the server with an old reservation: it may still commit it.
    const live = await PgCatalog.open({ url: db.url, dataPath, owner: "live-host:/var/lib/svc", create: false });
    let liveOpen = true;
    try {
      const t = await live.getTable("metrics", "cpu");
      const liveFile = orphanFile(dataPath, await live.newDataFilePath(t!.tableId), 2 * HOUR);
      await ageReservations(db.url, ["gone-host:/var/lib/svc", "live-host:/var/lib/svc"], 2 * HOUR);
      await a.app.lake!.maintain();
      expect([gone, young, liveFile].map((f) => existsSync(f))).toEqual([false, true, true]);
      expect(await reservationOwners(db.url)).toEqual(["live-host:/var/lib/svc", "young-host:/var/lib/svc"]);
      // The connected writer goes away: a later pass clears its reservation too (its session ends a moment after close).
      await live.close();
      liveOpen = false;
      await waitFor(
        "the closed writer's reservation cleared",
        async () => (await a.app.lake!.maintain(), !existsSync(liveFile)),
      );
      expect(await reservationOwners(db.url)).toEqual(["young-host:/var/lib/svc"]);
      expect(existsSync(young)).toBe(true);
      // The lake still writes and reads its rows.
      await written(a, "a", 10, 2);
      expect(await values(a)).toEqual([0, 1, 2, 10, 11]);
    } finally {
      if (liveOpen) await live.close();
    }
  },
  T,
);

peerTest(
  "the object-store sweep forgets this writer's reservations of deleted and never-uploaded objects; another writer's stay",
  [postgresPeer],
  async () => {
    await using dir = tempDir();
    const db = await database();
    // The bucket is a LocalStore (the same ObjectStore contract as S3 and Azure, object-store.test.ts).
    const bucket = join(dir.path, "bucket");
    mkdirSync(bucket, { recursive: true });
    const remote = new RemoteFiles(
      new LocalStore(bucket),
      join(dir.path, "cache"),
      1 << 20,
      remoteFilesMetrics(new MetricsRegistry()),
    );
    const me = await PgCatalog.open({ url: db.url, dataPath: remote.cacheDir, owner: "me:/var/lib/svc" });
    const other = await PgCatalog.open({
      url: db.url,
      dataPath: remote.cacheDir,
      owner: "other:/var/lib/svc",
      create: false,
    });
    try {
      const { tableId } = await me.ensureTable("metrics", { name: "cpu", columns: [{ name: "v", type: "int64" }] });
      const [uploaded, _neverUploaded, young, othersOld] = [
        await me.newDataFilePath(tableId),
        await me.newDataFilePath(tableId),
        await me.newDataFilePath(tableId),
        await other.newDataFilePath(tableId),
      ];
      const at = new Date(Date.now() - 2 * 3_600_000);
      for (const k of [uploaded!, young!, othersOld!]) {
        mkdirSync(dirname(join(bucket, k)), { recursive: true });
        writeFileSync(join(bucket, k), "PAR1");
      }
      for (const k of [uploaded!, othersOld!]) utimesSync(join(bucket, k), at, at);
      // The other writer reserves a file right now (its upload not started): its row must stay.
      const othersFresh = await other.newDataFilePath(tableId);
      const r = await sweepRemoteOrphans(
        remote,
        await me.referencedPaths(),
        await me.inflightPaths(),
        me,
        createLogger({ test: true }),
      );
      expect(r).toEqual({ deleted: 1, unknown: 0, young: 1, forgotten: 2 });
      expect((await me.inflightReservations()).map((x) => [x.owner, x.path]).sort()).toEqual(
        [
          ["me:/var/lib/svc", young!],
          ["other:/var/lib/svc", othersOld!],
          ["other:/var/lib/svc", othersFresh],
        ].sort(),
      );
      expect([uploaded!, young!, othersOld!].map((k) => existsSync(join(bucket, k)))).toEqual([false, true, true]);
    } finally {
      await other.close();
      await me.close();
    }
  },
  T,
);

peerTest(
  "a line-protocol table another writer creates is searchable here without a restart",
  [postgresPeer],
  async () => {
    await using shared = await sharedLake();
    await using a = await shared.writer("a");
    await using b = await shared.writer("b");
    expect(b.app.lake!.findTable("metrics", "cpu")).toBeUndefined();
    await written(a, "a", 0, 4);
    // B adopts the table when it sees the catalog's snapshot change (the receiver checks every second).
    await waitFor("b adopts metrics.cpu", () => b.app.lake!.findTable("metrics", "cpu"), 20_000);
    expect(await values(b)).toEqual([0, 1, 2, 3]);
    // B writes into it too, and A reads both.
    await written(b, "b", 100, 2);
    expect(await values(a)).toEqual([0, 1, 2, 3, 100, 101]);
  },
  T,
);

peerTest(
  "columns another writer adds to a line-protocol table this one knows are searchable and written here without a restart",
  [postgresPeer],
  async () => {
    await using shared = await sharedLake();
    await using a = await shared.writer("a");
    await using b = await shared.writer("b");
    await write(a, "a", 0, 2);
    await write(b, "b", 100, 2);
    await Promise.all([a.app.lake!.flush(), b.app.lake!.flush()]);
    const key = b.app.lake!.findTable("metrics", "cpu")!;
    expect(b.app.lake!.table(key)!.columns.map((c) => c.name)).toEqual(["time", "host", "v"]);
    // A grows the table by a field B has never seen.
    const r = await fetch(`${a.app.lineProtocol!.url()}/write?db=metrics&precision=ms`, {
      method: "POST",
      body: `cpu,host=a v=10i,w=7i ${NOW_MS + 10}`,
    });
    expect(r.status).toBe(204);
    await a.app.lake!.flush();
    const lake = b.app.lake!;
    // Adopted once B's view names the column too (the definition changes first, the view right after).
    const viewCount = async () => {
      try {
        return Number((await lake.query("SELECT count(w) AS n FROM svc_lake.metrics.cpu")).rows[0]!.n);
      } catch {
        return undefined;
      }
    };
    expect(await waitFor("b's view adopts column w", viewCount, 20_000)).toBe(1);
    expect(lake.table(key)!.columns.map((c) => c.name)).toEqual(["time", "host", "v", "w"]);
    const seen = await lake.query(`SELECT v, w FROM (${await lake.scanSql(key)}) t WHERE w IS NOT NULL`);
    expect(seen.rows.map((row) => [Number(row.v), Number(row.w)])).toEqual([[10, 7]]);
    // B writes the new column too; A reads it.
    const rb = await fetch(`${b.app.lineProtocol!.url()}/write?db=metrics&precision=ms`, {
      method: "POST",
      body: `cpu,host=b v=11i,w=8i ${NOW_MS + 11}`,
    });
    expect(rb.status).toBe(204);
    await lake.flush();
    const both = await a.app.lake!.query(
      `SELECT v, w FROM (${await a.app.lake!.scanSql(key)}) t WHERE w IS NOT NULL ORDER BY v`,
    );
    expect(both.rows.map((row) => [Number(row.v), Number(row.w)])).toEqual([
      [10, 7],
      [11, 8],
    ]);
  },
  T,
);
