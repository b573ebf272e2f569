import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AppError, errorMessage } from "../../core/index.ts";
import { literal } from "../sql.ts";

/**
 * The compaction's own DuckDB instance (docs/ARCHITECTURE.md "Maintenance"): one thread, its own
 * `compaction.memory_limit`, spilling to `<temp>/compaction/spill`. Separate from the query engine so
 * a merge never takes memory from searches and flushes (tuning.memory_limit), and so it can keep
 * `preserve_insertion_order = true`, which the windowed merge relies on (src/lake/compaction/merge.ts)
 * while the query engine turns it off. Locked down like the query engine: offline, UTC, file access
 * limited to the data path and its temp directory.
 */
export class CompactionDb {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly con: DuckDBConnection,
    /** Window files of a merge in progress (merge-*.parquet). */
    readonly tmpDir: string,
  ) {}

  static async open(opts: { memoryLimit: string; tempDirectory: string; dataPath: string }): Promise<CompactionDb> {
    const tmpDir = compactionTmpDir(opts.tempDirectory);
    const spill = join(tmpDir, "spill");
    mkdirSync(spill, { recursive: true });
    removeMergeLeftovers(opts.tempDirectory);
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(":memory:", {
        threads: "1",
        memory_limit: opts.memoryLimit,
        temp_directory: spill,
        preserve_insertion_order: "true",
        autoinstall_known_extensions: "false",
        autoload_known_extensions: "false",
      });
    } catch (e) {
      throw new AppError("CONFIG_INVALID", `storage.lakehouse.compaction.memory_limit: cannot start the compaction engine: ${errorMessage(e)}`, { cause: e });
    }
    const con = await instance.connect();
    const dirs = [opts.dataPath, tmpDir].map((d) => (d.endsWith("/") ? d : d + "/"));
    try {
      for (const sql of [
        "SET TimeZone = 'UTC'",
        "SET parquet_metadata_cache = true",
        // DuckDB keeps the Parquet bytes it read in its buffer pool, up to memory_limit; every byte
        // of a merge is read once or twice, so the cache only grew the process (147 → 100 MB above
        // idle for a streaming COPY at a 256 MB limit).
        "SET enable_external_file_cache = false",
        `SET allowed_directories = [${dirs.map(literal).join(", ")}]`,
        "SET enable_external_access = false",
        "SET lock_configuration = true",
      ]) {
        await con.run(sql);
      }
    } catch (e) {
      con.closeSync();
      instance.closeSync();
      throw new AppError("CONFIG_INVALID", `compaction engine setup failed: ${errorMessage(e)}`, { cause: e });
    }
    return new CompactionDb(instance, con, tmpDir);
  }

  async run(sql: string): Promise<void> {
    await this.con.run(sql);
  }

  /** Rows as JSON-friendly objects (BIGINT as text; callers convert with Number()). */
  async read(sql: string): Promise<Record<string, unknown>[]> {
    return (await this.con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  }

  /** Stops the statement in progress (shutdown); it fails with an interrupt error. */
  interrupt(): void {
    this.con.interrupt();
  }

  close(): void {
    this.con.closeSync();
    this.instance.closeSync();
  }
}

const compactionTmpDir = (tempDirectory: string) => join(tempDirectory, "compaction");

/** Removes the window files of a merge a crash interrupted (never referenced by the catalog); at every start, compaction on or off. */
export function removeMergeLeftovers(tempDirectory: string): number {
  const dir = compactionTmpDir(tempDirectory);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  const leftovers = names.filter((n) => n.startsWith("merge-") && n.endsWith(".parquet"));
  for (const n of leftovers) rmSync(join(dir, n), { force: true });
  return leftovers.length;
}

/** DuckDB's "Out of Memory Error" (the merge is retried with smaller windows). */
export const isOutOfMemory = (e: unknown) => /out of memory/i.test(errorMessage(e));
