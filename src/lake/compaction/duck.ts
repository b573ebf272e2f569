import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AppError, errorMessage } from "../../core/index.ts";
import { loadDuckDb } from "../duckdb.ts";
import { literal } from "../sql.ts";

/**
 * The compaction's own DuckDB instance (docs/ARCHITECTURE.md "Compaction memory"): one thread, its
 * own `compaction.memory_limit`, spilling to `<tuning.temp_directory>/compaction`. Separate from the
 * query engine so a merge never takes memory from searches and flushes (tuning.memory_limit).
 * Locked down like the query engine: offline, UTC, file access limited to the data path.
 */
export class CompactionDb {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly con: DuckDBConnection,
    /** Where a merge's file is written before it is cut into pages (emptied at every start). */
    readonly scratchDir: string,
  ) {}

  static async open(opts: { memoryLimit: string; tempDirectory: string; dataPath: string }): Promise<CompactionDb> {
    const spill = join(opts.tempDirectory, "compaction");
    // Ours alone: spill files a killed process left behind go (DuckDB removes its own on a clean close).
    rmSync(spill, { recursive: true, force: true });
    mkdirSync(spill, { recursive: true });
    const duckdb = await loadDuckDb();
    let instance: DuckDBInstance;
    try {
      instance = await duckdb.DuckDBInstance.create(":memory:", {
        threads: "1",
        memory_limit: opts.memoryLimit,
        temp_directory: spill,
        autoinstall_known_extensions: "false",
        autoload_known_extensions: "false",
      });
    } catch (e) {
      throw new AppError(
        "CONFIG_INVALID",
        `storage.lakehouse.compaction.memory_limit: cannot start the compaction engine: ${errorMessage(e)}`,
        { cause: e },
      );
    }
    const con = await instance.connect();
    const dirs = [opts.dataPath, spill].map((d) => (d.endsWith("/") ? d : d + "/"));
    try {
      for (const sql of [
        "SET TimeZone = 'UTC'",
        "SET parquet_metadata_cache = true",
        // DuckDB keeps the Parquet bytes it read in its buffer pool, up to memory_limit; every byte
        // of a merge is read once or twice, so the cache only grew the process (147 → 100 MB above
        // idle for a streaming COPY at a 256 MB limit).
        "SET enable_external_file_cache = false",
        // DuckDB's allocator kept the memory of a finished sort: a second 64 MB merge took the
        // process from 260 to 510 MB above idle at a 224 MB limit; flushing it after each task
        // kept every merge at about 205 MB.
        "SET allocator_flush_threshold = '8MB'",
        "SET allocator_bulk_deallocation_flush_threshold = '8MB'",
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
    return new CompactionDb(instance, con, spill);
  }

  async run(sql: string): Promise<void> {
    await this.con.run(sql);
  }

  /** Rows as JSON-friendly objects (BIGINT as text; callers convert with Number()). */
  async read(sql: string): Promise<Record<string, unknown>[]> {
    return (await this.con.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  }

  /** Set by `interrupt`: a statement failing from now on failed because of the shutdown. */
  interrupted = false;

  /** Stops the statement in progress (shutdown); it fails with an interrupt error. */
  interrupt(): void {
    this.interrupted = true;
    this.con.interrupt();
  }

  close(): void {
    this.con.closeSync();
    this.instance.closeSync();
  }
}

/** DuckDB's "Out of Memory Error" (the merge is split in two and retried). */
export { isOutOfMemory } from "../engine.ts";
