import { availableParallelism } from "node:os";

/**
 * How many HEP ingest threads `ingest.hep.threads` asks for (docs/ARCHITECTURE.md "Several ingest
 * threads"). `auto` takes half the cores, at least 1 and at most 16: per message the ingest
 * threads need about as much CPU as the main thread and DuckDB's flush together, so half the
 * cores receive and parse while the rest write. 0 = listeners on the main thread.
 */
export function hepThreadCount(setting: number | "auto", cores = availableParallelism()): number {
  if (setting !== "auto") return setting;
  return Math.min(16, Math.max(1, Math.floor(cores / 2)));
}
