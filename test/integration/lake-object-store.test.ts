/**
 * The lake on an object store (docs/STORAGE.md "Parquet on an object store"): a Lake whose
 * data_path is `s3://` on moto (or `az://` on Azurite) uploads every Parquet file before the commit
 * that names it, reads through its bounded local cache (a cap of one byte: every read fetches from
 * the store), keeps rows in the spool while the store is down and writes each exactly once when it
 * is back, and deletes the objects retention retires. A wrong secret stops the start with one line
 * naming the key, never the secret.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Socket, TCPSocketListener } from "bun";
import { AppError, createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { lakeConfig } from "../../src/config/index.ts";
import { Lake } from "../../src/lake/index.ts";
import { openObjectStore, type ObjectStore } from "../../src/lake/store/index.ts";
import { testConfig, testConfigJson } from "../appliance.ts";
import { peerTest, pyPeersPython, tempDir, waitFor, type Peer } from "../harness.ts";
import { AZURITE_PEER, startAzurite, type Azurite } from "../peers/azurite.ts";
import { MOTO_PEER, startMoto, type Moto } from "../peers/moto.ts";
import { ingestProbe, probeTable, storeKeys } from "./lake-probe.ts";

const def = probeTable("remote_probe");
const KEY = "main.remote_probe";
const NO_AZURE = { account_name: "", account_key: "", connection_string: "", endpoint: "" };

const once = (p: Peer): Peer => {
  let v: boolean | undefined;
  return { install: p.install, probe: () => (v ??= p.probe()) };
};
const moto = once(MOTO_PEER);
const ROOT = join(import.meta.dir, "../..");
const PY_S3 = resolve(import.meta.dir, "../peers/ducklake_s3.py");
const httpfs = once({
  install: "run scripts/python-peers.sh (pip: duckdb-extension-httpfs==1.5.5)",
  probe: () => {
    try {
      return (
        Bun.spawnSync([pyPeersPython(), "-c", "import duckdb_extension_httpfs, duckdb_extension_ducklake"], {
          stdout: "ignore",
          stderr: "ignore",
        }).exitCode === 0
      );
    } catch {
      return false;
    }
  },
});
const azurite = once(AZURITE_PEER);

/**
 * A loopback TCP relay in front of the store: `down()` closes the listener and every connection
 * (the store is unreachable: connections are refused), `up()` listens again on the same port.
 */
class Relay {
  private listener: TCPSocketListener<{ peer?: Socket<unknown>; queued: Uint8Array[] }> | undefined;
  private readonly open = new Set<Socket<unknown>>();
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  up(): void {
    const relay = this;
    this.listener = Bun.listen<{ peer?: Socket<unknown>; queued: Uint8Array[] }>({
      hostname: "127.0.0.1",
      port: this.port,
      socket: {
        open(client) {
          client.data = { queued: [] };
          relay.open.add(client as Socket<unknown>);
          void Bun.connect({
            hostname: relay.target.host,
            port: relay.target.port,
            socket: {
              open(server) {
                relay.open.add(server as Socket<unknown>);
                client.data.peer = server as Socket<unknown>;
                for (const b of client.data.queued) server.write(b);
                client.data.queued = [];
              },
              data(_server, bytes) {
                client.write(bytes);
              },
              close() {
                client.end();
              },
              error() {
                client.end();
              },
            },
          }).catch(() => client.end());
        },
        data(client, bytes) {
          if (client.data.peer) client.data.peer.write(bytes);
          else client.data.queued.push(new Uint8Array(bytes));
        },
        close(client) {
          relay.open.delete(client as Socket<unknown>);
          client.data.peer?.end();
        },
        error(client) {
          client.data.peer?.end();
        },
      },
    });
    this.port = this.listener.port;
  }

  down(): void {
    this.listener?.stop(true);
    this.listener = undefined;
    for (const s of this.open) s.terminate();
    this.open.clear();
  }
}

function newLake(dir: string, lakehouse: Record<string, unknown>, metrics = new MetricsRegistry()): Lake {
  const config = testConfig(dir, {
    storage: {
      lakehouse: {
        batch_size: 100,
        flush_interval_sec: 0.05,
        read_cache_bytes: 1,
        compaction: { enable: false },
        ...lakehouse,
      },
    },
  });
  return new Lake({ config: lakeConfig(config), logger: createLogger({ test: true }), metrics, sealIntervalMs: 20 });
}

const ingest = (lake: Lake, from: number, n: number, t0Us: number) => ingestProbe(lake, KEY, from, n, t0Us);

const countRows = async (lake: Lake) =>
  (
    await lake.query(
      `SELECT count(*) AS n, count(DISTINCT k) AS d FROM (${await lake.scanSql(KEY, { buffer: false })}) t`,
    )
  ).rows[0];

describe("lake on S3 (moto)", () => {
  const tmp = tempDir("svc-remote-s3-");
  let m: Moto | undefined;
  let store: ObjectStore;
  const s3 = () => ({
    region: "us-east-1",
    access_key_id: m!.accessKeyId,
    secret_access_key: m!.secretAccessKey,
    endpoint: m!.endpoint,
  });

  beforeAll(async () => {
    if (!moto.probe()) return;
    m = await startMoto(tmp.path);
    store = openObjectStore({ data_path: `s3://${m.bucket}/lake/`, s3: s3(), azure: NO_AZURE });
  }, 90_000);
  afterAll(async () => {
    await m?.[Symbol.asyncDispose]();
    await tmp[Symbol.asyncDispose]();
  });

  peerTest(
    "rows land as objects before their commit, are searchable through the cache, and stock DuckDB reads the catalog's data_path",
    [moto],
    async () => {
      const dir = `${tmp.path}/ingest`;
      const lake = newLake(dir, { data_path: `s3://${m!.bucket}/lake/`, s3: s3() });
      await lake.start();
      try {
        await lake.defineTable(def);
        const t0 = Date.UTC(2026, 10, 24, 12) * 1000;
        for (let b = 0; b < 5; b++) {
          await ingest(lake, b * 40, 40, t0);
          await lake.flush();
        }
        const files = await lake.files(KEY);
        expect(files.length).toBeGreaterThanOrEqual(1);
        const keys = await storeKeys(store);
        for (const f of files) expect(keys).toContain(f.path);
        // The cap of one byte: every committed file is an empty placeholder locally, so the
        // reads below fetch from the store.
        for (const f of files) expect(statSync(join(dir, "lake-cache", f.path)).size).toBe(0);
        expect(await countRows(lake)).toEqual({ n: 200, d: 200 });
        const view = await lake.query("SELECT count(*) AS n FROM svc_lake.main.remote_probe");
        expect(view.rows[0]!.n).toBe(200);
        const one = await lake.query(
          `SELECT k FROM (${await lake.scanSql(KEY, { fromUs: t0 + 17, toUs: t0 + 17 })}) t WHERE k = 'r17'`,
        );
        expect(one.rows).toEqual([{ k: "r17" }]);
        expect(lake.remoteFiles()!.usage().bytes).toBeLessThanOrEqual(1);
        // The node's metadata names the bucket, not the local cache (publicDataPath keeps scheme and host only).
        expect(lake.dataLocation()).toBe(`s3://${m!.bucket}/lake/`);
      } finally {
        await lake.stop();
      }
      // The catalog names the bucket: a stock DuckDB with httpfs reads the lake from it.
      if (!httpfs.probe()) {
        console.warn(`skip: stock DuckDB reading s3:// needs ${httpfs.install}`);
        if (process.env.SVC_TEST_REQUIRE_PEERS === "1")
          throw new Error(`missing test peer (SVC_TEST_REQUIRE_PEERS=1): ${httpfs.install}`);
        return;
      }
      const r = Bun.spawnSync(
        [
          pyPeersPython(),
          PY_S3,
          "count",
          `${dir}/catalog.sqlite`,
          "main.remote_probe",
          m!.endpoint,
          m!.accessKeyId,
          m!.secretAccessKey,
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      expect({ exit: r.exitCode, err: r.exitCode === 0 ? "" : r.stderr.toString().slice(-2000) }).toEqual({
        exit: 0,
        err: "",
      });
      expect(JSON.parse(r.stdout.toString())).toEqual({ count: 200, distinct: 200 });
    },
    120_000,
  );

  peerTest(
    "the store down for a while: rows stay in the spool, flushes fail with reason store, and every row lands once when it is back",
    [moto],
    async () => {
      const dir = `${tmp.path}/outage`;
      const relay = new Relay({ host: "127.0.0.1", port: Number(new URL(m!.endpoint).port) });
      relay.up();
      const metrics = new MetricsRegistry();
      const lake = newLake(
        dir,
        { data_path: `s3://${m!.bucket}/outage/`, s3: { ...s3(), endpoint: `http://127.0.0.1:${relay.port}` } },
        metrics,
      );
      await lake.start();
      try {
        await lake.defineTable(def);
        const t0 = Date.UTC(2026, 10, 25, 12) * 1000;
        await ingest(lake, 0, 50, t0);
        await lake.flush();
        relay.down();
        await ingest(lake, 50, 150, t0);
        // Retried with back-off while it lasts: wait for the third failed attempt.
        const failing = await waitFor(
          "three flushes failing for the store",
          () => lake.writerHealth()?.failing.find((f) => f.table === KEY && f.reason === "store" && f.failures >= 3),
          60_000,
        );
        expect(failing.reason).toBe("store");
        const counted = /svc_lake_flush_failures_total\{[^}]*reason="store"[^}]*\} (\d+)/.exec(metrics.render());
        expect(Number(counted?.[1])).toBeGreaterThanOrEqual(3);
        // Still searchable meanwhile: the buffer holds them (the committed files need the store:
        // the cache of one byte holds none of them).
        expect(
          (await lake.query(`SELECT count(*) AS n FROM (${await lake.scanSql(KEY, { files: false })}) t`)).rows[0]!.n,
        ).toBe(150);
        relay.up();
        await waitFor(
          "the flushes to work again",
          () => lake.writerHealth()?.failing.length === 0 && lake.backlog() === 0,
          90_000,
          50,
        );
        expect(await countRows(lake)).toEqual({ n: 200, d: 200 });
        const keys = await storeKeys(
          openObjectStore({ data_path: `s3://${m!.bucket}/outage/`, s3: s3(), azure: NO_AZURE }),
        );
        for (const f of await lake.files(KEY)) expect(keys).toContain(f.path);
      } finally {
        relay.down();
        await lake.stop();
      }
    },
    180_000,
  );

  peerTest(
    "retention and expiry delete the retired objects from the bucket",
    [moto],
    async () => {
      const dir = `${tmp.path}/retention`;
      const prefix = "retention/";
      const here = openObjectStore({ data_path: `s3://${m!.bucket}/${prefix}`, s3: s3(), azure: NO_AZURE });
      const lake = newLake(dir, {
        data_path: `s3://${m!.bucket}/${prefix}`,
        s3: s3(),
        retention: { days: 1 },
        snapshot_retention_sec: 1,
      });
      await lake.start();
      try {
        await lake.defineTable(def);
        const old = (Date.now() - 10 * 86_400_000) * 1000;
        await ingest(lake, 0, 30, old);
        await lake.flush();
        const before = (await storeKeys(here)).filter((k) => k.endsWith(".parquet"));
        expect(before.length).toBeGreaterThanOrEqual(1);
        const r = await lake.maintain(Date.now());
        expect(r.retired).toBeGreaterThanOrEqual(1);
        // Expiry deletes once the retiring snapshot is older than snapshot_retention_sec.
        const out = await lake.maintain(Date.now() + 5_000);
        expect(out.deleted).toBe(before.length);
        expect((await storeKeys(here)).filter((k) => k.endsWith(".parquet"))).toEqual([]);
      } finally {
        await lake.stop();
      }
    },
    120_000,
  );

  peerTest(
    "the default merge fetches its inputs, uploads the merged file before the swap, and expiry deletes the sources",
    [moto],
    async () => {
      const dir = `${tmp.path}/merge`;
      const prefix = "merge/";
      const here = openObjectStore({ data_path: `s3://${m!.bucket}/${prefix}`, s3: s3(), azure: NO_AZURE });
      const lake = newLake(dir, {
        data_path: `s3://${m!.bucket}/${prefix}`,
        s3: s3(),
        snapshot_retention_sec: 1,
        compaction: { enable: true, engine: "duckdb", min_age_sec: 0, check_interval_sec: 86_400 },
      });
      await lake.start();
      try {
        await lake.defineTable(def);
        const t0 = Date.UTC(2026, 10, 26, 12) * 1000;
        for (let b = 0; b < 4; b++) {
          await ingest(lake, b * 25, 25, t0);
          await lake.flush();
        }
        const sources = (await lake.files(KEY)).map((f) => f.path);
        expect(sources.length).toBe(4);
        const r = await lake.maintain(Date.now());
        expect(r.merged).toBe(4);
        const merged = (await lake.files(KEY)).map((f) => f.path);
        expect(merged.length).toBe(1);
        expect(await storeKeys(here)).toContain(merged[0]!);
        expect(await countRows(lake)).toEqual({ n: 100, d: 100 });
        const out = await lake.maintain(Date.now() + 5_000);
        expect(out.deleted).toBe(4);
        expect((await storeKeys(here)).filter((k) => k.endsWith(".parquet"))).toEqual(merged);
      } finally {
        await lake.stop();
      }
    },
    120_000,
  );

  peerTest(
    "a wrong secret stops the start with the key named and the secret not shown",
    [moto],
    async () => {
      const secret = "wrong-secret-Zq8xK2vLr9";
      const lake = newLake(`${tmp.path}/badkey`, {
        data_path: `s3://${m!.bucket}/lake/`,
        s3: { ...s3(), secret_access_key: secret },
      });
      let err: unknown;
      try {
        await lake.start();
      } catch (e) {
        err = e;
      }
      await lake.stop();
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe("CONFIG_INVALID");
      expect((err as AppError).message).toContain("storage.lakehouse.s3.secret_access_key");
      expect(JSON.stringify({ m: (err as AppError).message, d: (err as AppError).details })).not.toContain(secret);
    },
    60_000,
  );
});

describe("svc serve on a remote data_path", () => {
  const tmp = tempDir("svc-remote-serve-");
  let m: Moto | undefined;
  beforeAll(async () => {
    if (!moto.probe()) return;
    m = await startMoto(tmp.path);
  }, 90_000);
  afterAll(async () => {
    await m?.[Symbol.asyncDispose]();
    await tmp[Symbol.asyncDispose]();
  });

  peerTest(
    "a wrong secret: exit code 2, one line naming the key, the secret nowhere on stderr",
    [moto],
    async () => {
      const secret = "wrong-secret-Qm4pT7wZ1";
      const configPath = join(tmp.path, "svc.json");
      await Bun.write(
        configPath,
        JSON.stringify(
          testConfigJson(tmp.path, {
            storage: {
              lakehouse: {
                data_path: `s3://${m!.bucket}/lake/`,
                s3: {
                  region: "us-east-1",
                  access_key_id: m!.accessKeyId,
                  secret_access_key: secret,
                  endpoint: m!.endpoint,
                },
              },
            },
          }),
        ),
      );
      const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "serve", "--config-path", configPath], {
        cwd: tmp.path,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      expect(code).toBe(2);
      const last = stderr.trim().split("\n").pop()!;
      expect(last).toStartWith(`svc: storage.lakehouse.data_path s3://${m!.bucket}/lake/ is not usable at start: `);
      expect(last).toContain("storage.lakehouse.s3.secret_access_key");
      expect(stderr).not.toContain(secret);
    },
    60_000,
  );
});

describe("lake on Azure Blob (Azurite)", () => {
  const tmp = tempDir("svc-remote-az-");
  let a: Azurite | undefined;
  beforeAll(async () => {
    if (!azurite.probe()) return;
    a = await startAzurite(tmp.path);
  }, 90_000);
  afterAll(async () => {
    await a?.[Symbol.asyncDispose]();
    await tmp[Symbol.asyncDispose]();
  });

  peerTest(
    "rows land as blobs and are searchable through the cache",
    [azurite],
    async () => {
      const dir = `${tmp.path}/ingest`;
      const azure = {
        account_name: a!.account,
        account_key: a!.accountKey,
        connection_string: "",
        endpoint: a!.endpoint,
      };
      const lake = newLake(dir, { data_path: `az://${a!.container}/lake/`, azure });
      await lake.start();
      try {
        await lake.defineTable(def);
        const t0 = Date.UTC(2026, 10, 24, 12) * 1000;
        for (let b = 0; b < 3; b++) {
          await ingest(lake, b * 40, 40, t0);
          await lake.flush();
        }
        const store = openObjectStore({
          data_path: `az://${a!.container}/lake/`,
          s3: { region: "", access_key_id: "", secret_access_key: "" },
          azure,
        });
        const keys = await storeKeys(store);
        for (const f of await lake.files(KEY)) expect(keys).toContain(f.path);
        expect(await countRows(lake)).toEqual({ n: 120, d: 120 });
      } finally {
        await lake.stop();
      }
    },
    120_000,
  );
});
