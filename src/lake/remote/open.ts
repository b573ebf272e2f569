/**
 * Opening a remote data_path (docs/STORAGE.md "Parquet on an object store"): the store from the
 * configuration, one probe at start so a wrong credential or an unreachable store stops the start
 * with one line naming the key, and the read cache beside the catalog.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { AppError, errorMessage, type Logger, type MetricsRegistry, type TableDef } from "../../core/index.ts";
import { isWriterFileName } from "../admin/lake-files.ts";
import { ORPHAN_GRACE_MS } from "../admin/quarantine.ts";
import type { LakeCatalog, LiveDataFile } from "../catalog-port.ts";
import { openObjectStore, parseDataPath, type ObjectStore } from "../store/index.ts";
import type { AzureSettings } from "../store/index.ts";
import { RemoteFiles, remoteFilesMetrics } from "./remote-files.ts";

export interface RemoteSettings {
  data_path: string;
  s3: { region: string; access_key_id: string; secret_access_key: string; endpoint?: string };
  azure: AzureSettings;
  read_cache_bytes: number;
  /** Seconds a request may go unanswered (docs/STORAGE.md "When the store is down"); default the store's. */
  store_timeout_sec?: number;
}

/** True for `s3://…` and `az://…` (any scheme: parseDataPath refuses the others with the key's name). */
export const isRemoteDataPath = (dataPath: string) => /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(dataPath);

/** `<state dir>/lake-cache`: the local mirror the engine reads (remote-files.ts). */
export const cacheDirOf = (stateDir: string) => join(stateDir, "lake-cache");

/**
 * The store of a remote data_path and its read cache; AppError CONFIG_INVALID (bad path, refused
 * credential, missing bucket: the message names the key) or UNAVAILABLE (nothing answers).
 */
export async function openRemoteFiles(
  s: RemoteSettings,
  stateDir: string,
  metrics: MetricsRegistry,
  env: Record<string, string | undefined> = process.env,
): Promise<RemoteFiles> {
  parseDataPath(s.data_path);
  const store = openObjectStore(
    { data_path: s.data_path, s3: s.s3, azure: s.azure },
    env,
    s.store_timeout_sec ? { requestTimeoutMs: s.store_timeout_sec * 1000 } : {},
  );
  await probe(store);
  return new RemoteFiles(store, cacheDirOf(stateDir), s.read_cache_bytes, remoteFilesMetrics(metrics));
}

/**
 * One HEAD of a key nobody writes: the answer proves the endpoint, the credentials and the bucket
 * (S3Store.head reads one byte with GET to get the real error code; docs/STORAGE.md "Errors").
 */
async function probe(store: ObjectStore): Promise<void> {
  try {
    await store.head("svc-start-probe");
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    // The store's message names the key to check and never a secret (docs/STORAGE.md "Errors").
    throw new AppError(e.code, `storage.lakehouse.data_path ${store.location} is not usable at start: ${e.message}`);
  }
}

/**
 * ducklake_metadata `data_path` names the store (`s3://bucket/prefix/`), so a stock DuckDB with the
 * ducklake and httpfs (or azure) extensions reads the lake (docs/DUCKLAKE.md). svc itself opens the
 * catalog with the cache directory as its data path: the configured path wins over the stored one.
 */
export function publishDataPath(catalogPath: string, location: string): void {
  const db = new Database(catalogPath);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    db.run("UPDATE ducklake_metadata SET value = ? WHERE key = 'data_path' AND scope IS NULL AND value <> ?", [
      location,
      location,
    ]);
  } finally {
    db.close();
  }
}

/**
 * The catalog paths one statement reads: every cache path quoted in it (scan SQL names its pruned
 * files), and every live file of a table whose name it mentions outside quotes (a view reads all
 * of them). Over-approximates: a name inside a longer identifier (`mem_<name>`) does not count.
 */
export async function filesOfSql(
  sql: string,
  cacheDir: string,
  tables: ReadonlyArray<{ def: Pick<TableDef, "name"> }>,
  filesOf: (i: number) => Promise<readonly LiveDataFile[]>,
): Promise<string[]> {
  const out = new Set<string>();
  for (const m of sql.matchAll(/'((?:[^']|'')*)'/g)) {
    const text = m[1]!.replace(/''/g, "'");
    if (text.startsWith(`${cacheDir}/`) && text.endsWith(".parquet")) out.add(text);
  }
  const bare = sql.replace(/'(?:[^']|'')*'/g, "''").toLowerCase();
  for (const [i, t] of tables.entries()) {
    const name = t.def.name.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    if (new RegExp(`(^|[^a-z0-9_])${name}($|[^a-z0-9_])`).test(bare))
      for (const f of await filesOf(i)) out.add(f.absolutePath);
  }
  return [...out];
}

/** Runs `run` with the files `sql` reads (filesOfSql) local and pinned. */
export async function withFilesOf<T>(
  remote: RemoteFiles,
  sql: string,
  tables: ReadonlyArray<{ def: Pick<TableDef, "name">; info: { tableId: number } }>,
  catalog: Pick<LakeCatalog, "listDataFiles">,
  run: () => Promise<T>,
): Promise<T> {
  const files = await filesOfSql(sql, remote.cacheDir, tables, (i) =>
    catalog.listDataFiles(tables[i]!.info.tableId, { statsColumns: [] }),
  );
  await remote.acquire(files);
  try {
    return await run();
  } finally {
    remote.release(files);
  }
}

/** The files of a view grouped as filesSelect (src/lake/query/views.ts) groups them: by the table's columns each file holds. */
export function groupsOfView(def: Pick<TableDef, "columns">, files: readonly LiveDataFile[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const f of files) {
    const key = def.columns
      .filter((c) => c.name in f.columnStats)
      .map((c) => c.name)
      .join("\u0000");
    const g = groups.get(key);
    if (g) g.push(f.absolutePath);
    else groups.set(key, [f.absolutePath]);
  }
  return [...groups.values()];
}

export interface RemoteOrphanSweep {
  deleted: number;
  /** Unreferenced, old enough, but not reserved by this writer: left in place and logged. */
  unknown: number;
  /** Unreferenced but younger than the grace age: left for a later start. */
  young: number;
  /** This writer's reservations forgotten: of the objects deleted, and of objects never uploaded. */
  forgotten: number;
}

/**
 * The start's orphan sweep on a remote data_path (docs/STORAGE.md "Orphans in the store"): lists
 * the store; a writer file (`ducklake-*.parquet`) the catalog does not reference and this writer
 * had reserved (a flush or merge that died before its commit) is deleted once older than the grace
 * age. Unknown files are never deleted (there is no quarantine in a bucket: the operator decides;
 * the log names a few). Then the reservations of `inflight` that name nothing any more are
 * forgotten (`catalog.forgetInflight`, this writer's rows only): those of the objects deleted and
 * those whose object is not in the store (the upload never happened or never finished) or is
 * committed; a young leftover keeps its row, so a later start deletes it. `inflight` is read
 * before the writer starts: a reservation the running writer makes is never in it.
 */
export async function sweepRemoteOrphans(
  remote: RemoteFiles,
  referenced: ReadonlySet<string>,
  inflight: ReadonlySet<string>,
  catalog: Pick<LakeCatalog, "forgetInflight">,
  log: Logger,
  nowMs = Date.now(),
  graceMs = ORPHAN_GRACE_MS,
): Promise<RemoteOrphanSweep> {
  const out: RemoteOrphanSweep = { deleted: 0, unknown: 0, young: 0, forgotten: 0 };
  const doomed: string[] = [];
  const unknown: string[] = [];
  /** Reserved keys still in the store and left there (young): their rows stay. */
  const kept = new Set<string>();
  try {
    for await (const o of remote.store.list("")) {
      const name = o.key.slice(o.key.lastIndexOf("/") + 1);
      if (!isWriterFileName(name) || referenced.has(join(remote.cacheDir, o.key))) continue;
      if (o.lastModified.getTime() > nowMs - graceMs) {
        out.young++;
        if (inflight.has(o.key)) kept.add(o.key);
      } else if (inflight.has(o.key)) doomed.push(o.key);
      else unknown.push(o.key);
    }
    if (doomed.length > 0) await remote.remove(doomed.map((k) => join(remote.cacheDir, k)));
    out.deleted = doomed.length;
    const stale = [...inflight].filter((k) => !kept.has(k));
    const gone = new Set(doomed);
    // A staging copy of an object never uploaded is no cached file either.
    for (const k of stale) if (!gone.has(k) && !referenced.has(join(remote.cacheDir, k))) remote.dropLocal(k);
    out.forgotten = await catalog.forgetInflight(stale);
  } catch (e) {
    log.error("orphan sweep of the object store failed; retried at the next start", {
      store: remote.store.location,
      error: errorMessage(e),
    });
    return out;
  }
  out.unknown = unknown.length;
  if (out.deleted > 0)
    log.info("removed unreferenced data files left by an interrupted flush", {
      store: remote.store.location,
      files: out.deleted,
    });
  if (out.unknown > 0)
    log.warn("the object store holds data files the catalog does not reference; left in place", {
      store: remote.store.location,
      files: out.unknown,
      first: unknown.slice(0, 5),
    });
  return out;
}
