/**
 * The lake's Parquet files on an object store (docs/STORAGE.md "Parquet on an object store").
 * DuckDB reads local files only (docs/PLATFORM.md "DuckDB offline"), so a remote lake keeps a
 * local directory, `<state dir>/lake-cache/`, that mirrors the keys of the store:
 *  - the writer and the merge write a new file there (staging), `upload` puts it into the store
 *    BEFORE the catalog commit that names it, and after the commit the file stays as a cached copy;
 *  - a read first `acquire`s the files it names: missing ones are fetched through the store
 *    (getStream), and they stay pinned until `release`;
 *  - the cache holds at most `capBytes`: the least recently used unpinned files are removed.
 * A catalog path `<cacheDir>/<key>` is the object `<key>` under the store's prefix.
 */
import { mkdirSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { AppError, type Counter, type Gauge, type MetricsRegistry } from "../../core/index.ts";
import type { ObjectStore } from "../store/index.ts";

interface Entry {
  bytes: number;
  usedAt: number;
  pins: number;
}

/** Fetches at a time: a search over hundreds of cold files must not open hundreds of requests. */
const FETCH_CONCURRENCY = 8;

export interface RemoteFilesMetrics {
  hits: Counter;
  misses: Counter;
  fetchedBytes: Counter;
  evicted: Counter;
  uploads: Counter<"result">;
  cacheBytes: Gauge;
}

export function remoteFilesMetrics(reg: MetricsRegistry): RemoteFilesMetrics {
  return {
    hits: reg.counter(
      "svc_lake_cache_hits_total",
      "Parquet files a read found in the local read cache (remote data_path).",
    ),
    misses: reg.counter(
      "svc_lake_cache_misses_total",
      "Parquet files a read had to fetch from the object store into the local read cache.",
    ),
    fetchedBytes: reg.counter(
      "svc_lake_cache_fetched_bytes_total",
      "Bytes fetched from the object store into the local read cache.",
    ),
    evicted: reg.counter(
      "svc_lake_cache_evicted_files_total",
      "Files removed from the local read cache to stay under storage.lakehouse.read_cache_bytes.",
    ),
    uploads: reg.counter(
      "svc_lake_uploads_total",
      "Parquet files put into the object store before their commit, by result (ok, failed).",
      ["result"],
    ),
    cacheBytes: reg.gauge("svc_lake_cache_bytes", "Bytes of Parquet files in the local read cache (remote data_path)."),
  };
}

export class RemoteFiles {
  private readonly entries = new Map<string, Entry>();
  private readonly fetching = new Map<string, Promise<void>>();
  private total = 0;
  private clock = 0;

  constructor(
    readonly store: ObjectStore,
    /** Absolute, without a trailing separator. */
    readonly cacheDir: string,
    private readonly capBytes: number,
    private readonly metrics: RemoteFilesMetrics,
  ) {
    mkdirSync(cacheDir, { recursive: true });
    this.scan();
  }

  /** The store's key of a catalog path (`<cacheDir>/<key>`); undefined for a path outside the cache. */
  keyOf(absPath: string): string | undefined {
    const rel = relative(this.cacheDir, absPath);
    if (rel === "" || rel.startsWith("..") || rel.startsWith(sep)) return undefined;
    return rel.split(sep).join("/");
  }

  /** Files already in the cache at start (a restart keeps its cache; mtime orders them). */
  private scan(): void {
    const found: Array<{ key: string; bytes: number; mtime: number }> = [];
    const walk = (dir: string) => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const n of names) {
        const abs = join(dir, n);
        const st = statSync(abs, { throwIfNoEntry: false });
        if (!st) continue;
        if (st.isDirectory()) walk(abs);
        else if (n.endsWith(".svc-fetch")) rmSync(abs, { force: true });
        else if (st.isFile() && n.endsWith(".parquet") && st.size > 0)
          found.push({ key: this.keyOf(abs)!, bytes: st.size, mtime: st.mtimeMs });
      }
    };
    walk(this.cacheDir);
    found.sort((a, b) => a.mtime - b.mtime);
    for (const f of found) this.add(f.key, f.bytes);
  }

  private add(key: string, bytes: number): void {
    const old = this.entries.get(key);
    if (old) this.total -= old.bytes;
    this.entries.set(key, { bytes, usedAt: ++this.clock, pins: old?.pins ?? 0 });
    this.total += bytes;
    this.metrics.cacheBytes.set(this.total);
  }

  /**
   * Puts written files (catalog paths under the cache) into the store, before the commit that names
   * them. Throws the store's AppError (UNAVAILABLE, CONFIG_INVALID…): the caller keeps its batch.
   */
  async upload(absPaths: readonly string[]): Promise<void> {
    for (const abs of absPaths) {
      const key = this.keyOf(abs);
      if (key === undefined)
        throw new AppError("INTERNAL", `data file ${abs} is outside the read cache ${this.cacheDir}`);
      try {
        await this.store.put(key, { file: abs });
      } catch (e) {
        this.metrics.uploads.inc({ result: "failed" });
        throw e;
      }
      this.metrics.uploads.inc({ result: "ok" });
    }
  }

  /** Files committed after `upload`: their local copies stay as cached files (evicted like any other). */
  committed(absPaths: readonly string[]): void {
    for (const abs of absPaths) {
      const key = this.keyOf(abs);
      const st = key === undefined ? undefined : statSync(abs, { throwIfNoEntry: false });
      if (key !== undefined && st) this.add(key, st.size);
    }
    this.evict();
  }

  /**
   * Makes every file of `absPaths` (catalog paths) local and pins it until `release` with the same
   * list. Paths outside the cache are ignored. Throws the store's AppError when a fetch fails (the
   * files pinned so far are released).
   */
  async acquire(absPaths: readonly string[]): Promise<void> {
    const keys = [...new Set(absPaths.map((p) => this.keyOf(p)).filter((k): k is string => k !== undefined))];
    for (const k of keys) this.pin(k);
    try {
      const missing = keys.filter(
        (k) =>
          !((this.entries.get(k)?.bytes ?? 0) > 0) ||
          !((statSync(join(this.cacheDir, k), { throwIfNoEntry: false })?.size ?? 0) > 0),
      );
      this.metrics.hits.inc(undefined, keys.length - missing.length);
      for (let i = 0; i < missing.length; i += FETCH_CONCURRENCY) {
        await Promise.all(missing.slice(i, i + FETCH_CONCURRENCY).map((k) => this.fetch(k)));
      }
    } catch (e) {
      for (const k of keys) this.unpin(k);
      throw e;
    }
  }

  release(absPaths: readonly string[]): void {
    const keys = new Set(absPaths.map((p) => this.keyOf(p)).filter((k): k is string => k !== undefined));
    for (const k of keys) this.unpin(k);
    this.evict();
  }

  private pin(key: string): void {
    const e = this.entries.get(key);
    if (e) {
      e.pins++;
      e.usedAt = ++this.clock;
    } else this.entries.set(key, { bytes: 0, usedAt: ++this.clock, pins: 1 });
  }

  private unpin(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.pins = Math.max(0, e.pins - 1);
    // A pin of a file that was never fetched (the fetch failed) leaves no entry behind.
    if (e.pins === 0 && e.bytes === 0) this.entries.delete(key);
  }

  private fetch(key: string): Promise<void> {
    let p = this.fetching.get(key);
    if (!p) {
      p = this.download(key).finally(() => this.fetching.delete(key));
      this.fetching.set(key, p);
    }
    return p;
  }

  private async download(key: string): Promise<void> {
    const abs = join(this.cacheDir, key);
    const tmp = `${abs}.${process.pid}.${++this.clock}.svc-fetch`;
    mkdirSync(dirname(abs), { recursive: true });
    try {
      const body = await this.store.getStream(key);
      await Bun.write(tmp, new Response(body));
      await rename(tmp, abs);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    const bytes = (await stat(abs)).size;
    const e = this.entries.get(key);
    this.total += bytes - (e?.bytes ?? 0);
    if (e) e.bytes = bytes;
    else this.entries.set(key, { bytes, usedAt: ++this.clock, pins: 0 });
    this.metrics.misses.inc();
    this.metrics.fetchedBytes.inc(undefined, bytes);
    this.metrics.cacheBytes.set(this.total);
  }

  /** Least recently used unpinned files go until the cache is under its cap. */
  private evict(): void {
    if (this.total <= this.capBytes) return;
    const victims = [...this.entries.entries()]
      .filter(([, e]) => e.pins === 0 && e.bytes > 0)
      .sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [key, e] of victims) {
      if (this.total <= this.capBytes) break;
      // A view names every live file and DuckDB checks that each exists when it binds the view:
      // an evicted file stays as an empty placeholder; a read acquires (fetches) it first.
      truncateSync(join(this.cacheDir, key), 0);
      this.entries.delete(key);
      this.total -= e.bytes;
      this.metrics.evicted.inc();
    }
    this.metrics.cacheBytes.set(this.total);
  }

  /**
   * Before a view over `groups` (the files of each column set, in view order) is created: DuckDB
   * reads the first file of each group to bind the view and checks that the others exist. The
   * first ones are acquired (call the returned function after the DDL), the others get an empty
   * placeholder when they are not cached.
   */
  async prepareView(groups: ReadonlyArray<readonly string[]>): Promise<() => void> {
    const firsts = groups.map((g) => g[0]).filter((p): p is string => p !== undefined);
    for (const g of groups) {
      for (const abs of g.slice(1)) {
        if (statSync(abs, { throwIfNoEntry: false })) continue;
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, "");
      }
    }
    await this.acquire(firsts);
    return () => this.release(firsts);
  }

  /** Removes objects the catalog no longer names (expiry, a failed commit): the store's, then the cached copy. */
  async remove(absPaths: readonly string[]): Promise<void> {
    const keys = absPaths.map((p) => this.keyOf(p)).filter((k): k is string => k !== undefined);
    if (keys.length === 0) return;
    await this.store.deleteMany(keys);
    for (const k of keys) this.dropLocal(k);
  }

  /** Forgets the cached copy only (a failed upload's staging file). */
  dropLocal(key: string): void {
    rmSync(join(this.cacheDir, key), { force: true });
    const e = this.entries.get(key);
    if (e && e.pins === 0) {
      this.entries.delete(key);
      this.total -= e.bytes;
      this.metrics.cacheBytes.set(this.total);
    }
  }

  /** Bytes and files in the cache (tests, /metrics). */
  usage(): { bytes: number; files: number } {
    return { bytes: this.total, files: [...this.entries.values()].filter((e) => e.bytes > 0).length };
  }
}
