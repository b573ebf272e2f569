/**
 * Retention and snapshot expiry on an Azure Blob data_path (Azurite; docs/STORAGE.md "Compaction,
 * retention and orphans"): the blobs of the files retention retires are deleted from the container
 * once their snapshots expire, and nothing else is: the files still in retention, a blob of another
 * program under the same prefix, and a writer-named blob the catalog does not know stay.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { createLogger, MetricsRegistry } from "../../src/core/index.ts";
import { lakeConfig } from "../../src/config/index.ts";
import { Lake } from "../../src/lake/index.ts";
import { openObjectStore, type ObjectStore } from "../../src/lake/store/index.ts";
import { testConfig } from "../appliance.ts";
import { peerTest, tempDir } from "../harness.ts";
import { AZURITE_PEER, startAzurite, type Azurite } from "../peers/azurite.ts";
import { ingestProbe, probeTable, storeKeys } from "./lake-probe.ts";

const def = probeTable("az_retention");
const KEY = "main.az_retention";
const NO_S3 = { region: "", access_key_id: "", secret_access_key: "" };
const DAY_US = 86_400_000_000;

const tmp = tempDir("svc-az-retention-");
let a: Azurite | undefined;
beforeAll(async () => {
  if (AZURITE_PEER.probe()) a = await startAzurite(tmp.path);
}, 90_000);
afterAll(async () => {
  await a?.[Symbol.asyncDispose]();
  await tmp[Symbol.asyncDispose]();
});

const keysOf = async (store: ObjectStore) => (await storeKeys(store)).sort();

async function ingest(lake: Lake, from: number, n: number, t0Us: number): Promise<void> {
  await ingestProbe(lake, KEY, from, n, t0Us);
  await lake.flush();
}

peerTest(
  "retention and expiry delete exactly the blobs of the retired files from the container",
  [AZURITE_PEER],
  async () => {
    const azure = {
      account_name: a!.account,
      account_key: a!.accountKey,
      connection_string: "",
      endpoint: a!.endpoint,
    };
    const dataPath = `az://${a!.container}/retention/`;
    const store = openObjectStore({ data_path: dataPath, s3: NO_S3, azure });
    const config = testConfig(`${tmp.path}/lake`, {
      storage: {
        lakehouse: {
          data_path: dataPath,
          azure,
          batch_size: 100,
          flush_interval_sec: 0.05,
          read_cache_bytes: 1,
          retention: { days: 3 },
          snapshot_retention_sec: 1,
          compaction: { enable: false },
        },
      },
    });
    const lake = new Lake({
      config: lakeConfig(config),
      logger: createLogger({ test: true }),
      metrics: new MetricsRegistry(),
      sealIntervalMs: 20,
    });
    await lake.start();
    try {
      await lake.defineTable(def);
      const nowUs = Date.now() * 1000;
      // Two old days (retired), one recent day (kept).
      await ingest(lake, 0, 20, nowUs - 10 * DAY_US);
      await ingest(lake, 20, 20, nowUs - 9 * DAY_US);
      await ingest(lake, 40, 20, nowUs - DAY_US);
      const files = await lake.files(KEY);
      expect(files.length).toBe(3);
      const recent = files
        .filter((f) => f.path.includes(new Date((nowUs - DAY_US) / 1000).toISOString().slice(0, 10)))
        .map((f) => f.path);
      expect(recent.length).toBe(1);
      // Another program's blob and an unknown writer-named blob under the same prefix.
      await store.put("notes/readme.txt", new TextEncoder().encode("not the lake's"));
      const stranger = `${files[0]!.path.slice(0, files[0]!.path.lastIndexOf("/") + 1)}ducklake-not-in-the-catalog.parquet`;
      await store.put(stranger, new TextEncoder().encode("PAR1"));
      const before = await keysOf(store);
      expect(before).toEqual([...files.map((f) => f.path), "notes/readme.txt", stranger].sort());

      const r = await lake.maintain(Date.now());
      expect(r.retired).toBe(2);
      // Nothing is deleted before the retiring snapshot expires.
      expect(await keysOf(store)).toEqual(before);
      const out = await lake.maintain(Date.now() + 5_000);
      expect(out.deleted).toBe(2);
      expect(await keysOf(store)).toEqual([...recent, "notes/readme.txt", stranger].sort());
      expect((await lake.files(KEY)).map((f) => f.path)).toEqual(recent);
      const rows = await lake.query(`SELECT count(*) AS n FROM (${await lake.scanSql(KEY, { buffer: false })}) t`);
      expect(rows.rows[0]!.n).toBe(20);
    } finally {
      await lake.stop();
    }
  },
  120_000,
);
