import { isSet } from "./defaults.ts";
import type { Config } from "./schema.ts";

/**
 * The DuckDB engine caps this process runs with (docs/OPERATIONS.md "Engine tuning"). Spec doc 2
 * has the same keys under `storage.lakehouse.tuning` (the writer) and `node.lakehouse.tuning` (the
 * node's queries); this build runs one engine for both, so a key set under `node.lakehouse.tuning`
 * (threads above 0, a non-empty string) replaces the storage one. Both set to different values is
 * refused at start (`tuningConflicts`): one of them would do nothing.
 */
export type EngineTuning = Config["storage"]["lakehouse"]["tuning"];

type NodeTuning = Config["node"]["lakehouse"]["tuning"];
/** The keys both engine sections have (the sql_* keys are storage.lakehouse.tuning's only). */
type Key = keyof NodeTuning;
const KEYS: readonly Key[] = ["threads", "memory_limit", "temp_directory"];

const nodeSets = (node: NodeTuning, k: Key): boolean => (k === "threads" ? node.threads > 0 : node[k] !== "");

export function engineTuning(config: Pick<Config, "storage" | "node">): EngineTuning {
  const storage = config.storage.lakehouse.tuning;
  const node = config.node.lakehouse.tuning;
  return {
    ...storage,
    threads: nodeSets(node, "threads") ? node.threads : storage.threads,
    memory_limit: nodeSets(node, "memory_limit") ? node.memory_limit : storage.memory_limit,
    temp_directory: nodeSets(node, "temp_directory") ? node.temp_directory : storage.temp_directory,
  };
}

/** `key: reason` for each key set under both sections to different values. */
export function tuningConflicts(config: Pick<Config, "storage" | "node">): string[] {
  const storage = config.storage.lakehouse.tuning;
  const node = config.node.lakehouse.tuning;
  return KEYS.filter((k) => nodeSets(node, k) && isSet(config, `storage.lakehouse.tuning.${k}`) && storage[k] !== node[k]).map(
    (k) =>
      `node.lakehouse.tuning.${k}: ${JSON.stringify(node[k])} differs from storage.lakehouse.tuning.${k} ${JSON.stringify(storage[k])}; this build runs one DuckDB engine for the writer and the node's queries, so set it in one place`,
  );
}
