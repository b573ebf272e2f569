/**
 * The read cache of a remote lake (docs/STORAGE.md "Read cache") over a LocalStore standing in for
 * the bucket (the same ObjectStore contract, test/integration/object-store.test.ts): fetch on
 * acquire, one fetch for two readers, least recently used eviction to an empty placeholder, pinned
 * files never evicted; and the start's orphan sweep of the store with its grace age.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createLogger, MetricsRegistry } from "../../core/index.ts";
import { openLakeCatalog } from "../catalog-adapter.ts";
import { LocalStore } from "../store/index.ts";
import { filesOfSql, sweepRemoteOrphans } from "./open.ts";
import { RemoteFiles, remoteFilesMetrics } from "./remote-files.ts";

function setup(cap: number) {
  const root = mkdtempSync(join(tmpdir(), "svc-remote-files-"));
  const bucket = join(root, "bucket");
  mkdirSync(bucket);
  const store = new LocalStore(bucket);
  const metrics = new MetricsRegistry();
  const files = new RemoteFiles(store, join(root, "cache"), cap, remoteFilesMetrics(metrics));
  const put = (key: string, text: string) => {
    mkdirSync(dirname(join(bucket, key)), { recursive: true });
    writeFileSync(join(bucket, key), text);
  };
  const local = (key: string) => join(files.cacheDir, key);
  return {
    root,
    bucket,
    store,
    files,
    metrics,
    put,
    local,
    [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
  };
}

describe("RemoteFiles", () => {
  test("acquire fetches missing files once, release evicts the least recently used to an empty placeholder", async () => {
    using t = setup(25);
    for (const k of ["a", "b", "c"]) t.put(`main/t/${k}.parquet`, k.repeat(10));
    const [a, b, c] = ["a", "b", "c"].map((k) => t.local(`main/t/${k}.parquet`)) as [string, string, string];
    await Promise.all([t.files.acquire([a, b]), t.files.acquire([a])]);
    expect(readFileSync(a, "utf8")).toBe("a".repeat(10));
    expect(t.metrics.render()).toContain("svc_lake_cache_misses_total 2");
    t.files.release([a]);
    t.files.release([a, b]);
    expect(t.files.usage()).toEqual({ bytes: 20, files: 2 });
    // A hit makes b the most recently used: a goes when c comes in over the cap of 25 bytes.
    await t.files.acquire([b]);
    t.files.release([b]);
    expect(t.metrics.render()).toContain("svc_lake_cache_hits_total 1");
    await t.files.acquire([c]);
    t.files.release([c]);
    expect(statSync(a).size).toBe(0);
    expect(statSync(b).size).toBe(10);
    expect(t.files.usage()).toEqual({ bytes: 20, files: 2 });
    // A placeholder is fetched again when read.
    await t.files.acquire([a]);
    expect(readFileSync(a, "utf8")).toBe("a".repeat(10));
    t.files.release([a]);
  });

  test("pinned files stay even above the cap; paths outside the cache are ignored", async () => {
    using t = setup(0);
    t.put("x.parquet", "xxxx");
    const x = t.local("x.parquet");
    await t.files.acquire([x, "/elsewhere/y.parquet"]);
    t.files.committed([]);
    expect(statSync(x).size).toBe(4);
    t.files.release([x, "/elsewhere/y.parquet"]);
    expect(statSync(x).size).toBe(0);
  });

  test("a file missing from the store fails the acquire and pins nothing", async () => {
    using t = setup(100);
    await expect(t.files.acquire([t.local("gone.parquet")])).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(t.files.usage()).toEqual({ bytes: 0, files: 0 });
    expect(existsSync(t.local("gone.parquet"))).toBe(false);
  });

  test("upload puts the staged file under its key; remove deletes the object and the copy", async () => {
    using t = setup(100);
    const f = t.local("main/t/new.parquet");
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, "PAR1");
    await t.files.upload([f]);
    t.files.committed([f]);
    expect(readFileSync(join(t.bucket, "main/t/new.parquet"), "utf8")).toBe("PAR1");
    await t.files.remove([f]);
    expect(existsSync(join(t.bucket, "main/t/new.parquet")) || existsSync(f)).toBe(false);
  });

  test("the orphan sweep deletes only reserved objects older than the grace age, never unknown ones", async () => {
    using t = setup(100);
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const k of [
      "main/t/ducklake-live.parquet",
      "main/t/ducklake-reserved-old.parquet",
      "main/t/ducklake-reserved-young.parquet",
      "main/t/ducklake-unknown.parquet",
      "main/t/notes.parquet",
    ]) {
      t.put(k, "PAR1");
      if (!k.includes("young")) utimesSync(join(t.bucket, k), old, old);
    }
    const referenced = new Set([t.local("main/t/ducklake-live.parquet")]);
    const inflight = new Set(["main/t/ducklake-reserved-old.parquet", "main/t/ducklake-reserved-young.parquet"]);
    const forgot: string[] = [];
    const r = await sweepRemoteOrphans(
      t.files,
      referenced,
      inflight,
      { forgetInflight: async (p) => (forgot.push(...p), p.length) },
      createLogger({ test: true }),
    );
    expect(r).toEqual({ deleted: 1, unknown: 1, young: 1, forgotten: 1 });
    expect(forgot).toEqual(["main/t/ducklake-reserved-old.parquet"]);
    const left = [];
    for await (const o of t.store.list("")) left.push(o.key);
    expect(left).toEqual([
      "main/t/ducklake-live.parquet",
      "main/t/ducklake-reserved-young.parquet",
      "main/t/ducklake-unknown.parquet",
      "main/t/notes.parquet",
    ]);
  });
});

describe("the orphan sweep and the SQLite catalog's reservations", () => {
  test("forgets the rows of the objects it deleted and of objects never uploaded; a young leftover keeps its row", async () => {
    using t = setup(100);
    const catalog = openLakeCatalog({ path: join(t.root, "catalog.sqlite"), dataPath: t.files.cacheDir });
    try {
      const { tableId } = await catalog.ensureTable("main", { name: "t", columns: [{ name: "k", type: "varchar" }] });
      const [old, young, never] = [
        await catalog.newDataFilePath(tableId),
        await catalog.newDataFilePath(tableId),
        await catalog.newDataFilePath(tableId),
      ] as [string, string, string];
      const unknown = "main/t/ducklake-unknown.parquet";
      const at = new Date(Date.now() - 2 * 3_600_000);
      for (const k of [old, young, unknown]) t.put(k, "PAR1");
      for (const k of [old, unknown]) utimesSync(join(t.bucket, k), at, at);
      // The flush of `never` wrote its staging copy and died before the upload.
      mkdirSync(dirname(t.local(never)), { recursive: true });
      writeFileSync(t.local(never), "PAR1");
      const r = await sweepRemoteOrphans(
        t.files,
        new Set(),
        await catalog.inflightPaths(),
        catalog,
        createLogger({ test: true }),
      );
      expect(r).toEqual({ deleted: 1, unknown: 1, young: 1, forgotten: 2 });
      expect([...(await catalog.inflightPaths())]).toEqual([young]);
      expect(existsSync(t.local(never))).toBe(false);
      const left = [];
      for await (const o of t.store.list("")) left.push(o.key);
      expect(left.sort()).toEqual([unknown, young].sort());
    } finally {
      await catalog.close();
    }
  });
});

describe("filesOfSql", () => {
  const file = (p: string) => ({ absolutePath: p }) as never;
  const tables = [{ def: { name: "calls" } }, { def: { name: "regs" } }];
  const live = [[file("/c/main/calls/1.parquet"), file("/c/main/calls/2.parquet")], [file("/c/main/regs/1.parquet")]];
  test("quoted cache paths, and every file of a table named outside quotes", async () => {
    expect(
      await filesOfSql(
        "SELECT * FROM read_parquet(['/c/main/calls/2.parquet'], hive_partitioning = false)",
        "/c",
        tables,
        async (i) => live[i]!,
      ),
    ).toEqual(["/c/main/calls/2.parquet"]);
    expect(
      await filesOfSql("SELECT * FROM svc_lake.main.regs WHERE x = 'calls'", "/c", tables, async (i) => live[i]!),
    ).toEqual(["/c/main/regs/1.parquet"]);
    expect(await filesOfSql("SELECT * FROM svc_lake.main.mem_calls", "/c", tables, async (i) => live[i]!)).toEqual([]);
    expect(await filesOfSql("SELECT 1 FROM read_csv('/spool/calls.csv')", "/c", tables, async (i) => live[i]!)).toEqual(
      [],
    );
  });
});
