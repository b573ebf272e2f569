import { availableParallelism } from "node:os";
import { isSet } from "./defaults.ts";
import type { Config } from "./schema.ts";

/**
 * How many HEP ingest threads `ingest.hep.threads` asks for (docs/ARCHITECTURE.md "Several ingest
 * threads"), at least 1 and at most 16 for `auto`; 0 = listeners on the main thread. With the
 * Parquet spool the write side costs a tenth of the threads' CPU, so from 3 cores on `auto` leaves
 * a quarter of them to the main thread, queries and compaction; 1 or 2 cores get one thread (one
 * thread keeps the live stream in arrival order). With the CSV spool DuckDB's flush needs about
 * as much CPU as the threads, so half the cores receive and parse.
 */
export function hepThreadCount(
  setting: number | "auto",
  cores = availableParallelism(),
  spool: "csv" | "parquet" = "parquet",
): number {
  if (setting !== "auto") return setting;
  const threads = spool === "csv" || cores <= 2 ? Math.floor(cores / 2) : cores - Math.ceil(cores / 4);
  return Math.min(16, Math.max(1, threads));
}

/**
 * DuckDB's worker threads for `storage.lakehouse.tuning.threads` (docs/OPERATIONS.md "Engine
 * tuning"), at least 2 for `auto`. With the Parquet spool DuckDB writes nothing per message (the
 * flush joins seals), so it is for searches and compaction: half the cores, which it shares with
 * the ingest threads (they run at a higher priority, `ingest.hep.thread_nice`). With the CSV spool
 * it flushes every row: the cores the ingest threads and the main thread leave.
 */
export function engineThreadCount(config: Pick<Config, "storage" | "ingest">, cores = availableParallelism()): number {
  const t = config.storage.lakehouse.tuning.threads;
  if (t !== "auto") return t;
  if (config.storage.lakehouse.spool_format !== "csv") return Math.max(2, Math.floor(cores / 2));
  const hep = config.ingest.hep.enable ? hepThreadCount(config.ingest.hep.threads, cores, "csv") : 0;
  return Math.max(2, cores - hep - 1);
}

/**
 * The DuckDB engine caps this process runs with (docs/OPERATIONS.md "Engine tuning"). The interface
 * has the same keys under `storage.lakehouse.tuning` (the writer) and `node.lakehouse.tuning` (the
 * node's queries); this build runs one engine for both, so a key set under `node.lakehouse.tuning`
 * (threads above 0, a non-empty string) replaces the storage one. Both set to different values is
 * refused at start (`tuningConflicts`): one of them would do nothing.
 */
export type EngineTuning = Omit<Config["storage"]["lakehouse"]["tuning"], "threads"> & { threads: number };

type NodeTuning = Config["node"]["lakehouse"]["tuning"];
/** The keys both engine sections have (the sql_* keys are storage.lakehouse.tuning's only). */
type Key = keyof NodeTuning;
const KEYS: readonly Key[] = ["threads", "memory_limit", "temp_directory"];

const nodeSets = (node: NodeTuning, k: Key): boolean => (k === "threads" ? node.threads > 0 : node[k] !== "");

export function engineTuning(config: Pick<Config, "storage" | "node" | "ingest">): EngineTuning {
  const storage = config.storage.lakehouse.tuning;
  const node = config.node.lakehouse.tuning;
  return {
    ...storage,
    threads: nodeSets(node, "threads") ? node.threads : engineThreadCount(config),
    memory_limit: nodeSets(node, "memory_limit") ? node.memory_limit : storage.memory_limit,
    temp_directory: nodeSets(node, "temp_directory") ? node.temp_directory : storage.temp_directory,
  };
}

/** `key: reason` for each key set under both sections to different values. */
export function tuningConflicts(config: Pick<Config, "storage" | "node" | "ingest">): string[] {
  const storage = config.storage.lakehouse.tuning;
  const node = config.node.lakehouse.tuning;
  return KEYS.filter(
    (k) => nodeSets(node, k) && isSet(config, `storage.lakehouse.tuning.${k}`) && storage[k] !== node[k],
  ).map(
    (k) =>
      `node.lakehouse.tuning.${k}: ${JSON.stringify(node[k])} differs from storage.lakehouse.tuning.${k} ${JSON.stringify(storage[k])}; this build runs one DuckDB engine for the writer and the node's queries, so set it in one place`,
  );
}

/** The lakehouse keys with the engine's tuning resolved: what the Lake takes. */
export function lakeConfig(
  config: Pick<Config, "storage" | "node" | "ingest">,
): Omit<Config["storage"]["lakehouse"], "tuning"> & { tuning: EngineTuning } {
  return { ...config.storage.lakehouse, tuning: engineTuning(config) };
}
