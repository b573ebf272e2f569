import { sep } from "node:path";

/**
 * Start-up checks of `storage.lakehouse.compaction` (docs/ARCHITECTURE.md "Compaction engines"; house
 * rule: a key that is accepted does something, or start-up refuses it with the reason).
 */
export interface CompactionConfig {
  enable: boolean;
  engine: "duckdb" | "native";
  target_file_size_bytes: number;
  max_row_group_bytes: number;
  memory_limit: string;
}

/** target_file_size_bytes' default (docs/ARCHITECTURE.md "Compaction engines"): a different value only means something to the native engine. */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 536_870_912;
/** max_row_group_bytes' default (docs/ARCHITECTURE.md "Compaction memory"), capped by ROW_GROUP_SHARE without a word. */
export const DEFAULT_MAX_ROW_GROUP_BYTES = 268_435_456;
/**
 * A source row group must fit five times in compaction.memory_limit: DuckDB reads a whole column
 * chunk at once and the writer buffers a row group of the output, so a 75 MB (uncompressed) row
 * group of 4 KB messages ran out of memory at a 300 MB limit and went through at 400 MB.
 */
export const ROW_GROUP_SHARE = 5;
/** Below this DuckDB's sort runs out of memory even on small merges (docs/BENCHMARKS.md "Compaction memory"). */
export const MIN_COMPACTION_MEMORY_BYTES = 192e6;

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** A DuckDB memory size ("128MB", "1GiB", "2 GB"; KB/MB/GB are powers of 1000 as in DuckDB) in bytes, or undefined. */
export function parseMemorySize(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b)\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = UNITS[m[2]!.toLowerCase()];
  return unit === undefined ? undefined : Math.floor(Number(m[1]) * unit);
}

/** A directory component `key=value` of the data path (native compaction refuses it: read as a Hive partition). */
export function hivePathComponent(dataPath: string): string | undefined {
  return dataPath.split(sep).find((c) => /^[^=]+=.*$/.test(c));
}

/** Every problem of the compaction configuration, each naming the key and the reason. */
export function compactionConfigProblems(c: CompactionConfig, dataPath: string): string[] {
  const out: string[] = [];
  const key = "storage.lakehouse.compaction";
  if (c.engine === "native") {
    const hive = hivePathComponent(dataPath);
    if (hive !== undefined) {
      out.push(
        `${key}.engine: native refuses data_path ${dataPath}: its directory ${hive} would be read as a key=value partition; use engine duckdb or another data_path`,
      );
    }
  } else if (c.target_file_size_bytes !== DEFAULT_TARGET_FILE_SIZE_BYTES) {
    out.push(
      `${key}.target_file_size_bytes applies to engine native only (the default merge writes files up to max_file_size_bytes); remove it or set ${key}.engine to native`,
    );
  }
  const mem = parseMemorySize(c.memory_limit);
  if (mem === undefined)
    out.push(`${key}.memory_limit: ${JSON.stringify(c.memory_limit)} is not a size such as 224MB or 1GB`);
  else if (mem < MIN_COMPACTION_MEMORY_BYTES)
    out.push(`${key}.memory_limit: ${c.memory_limit} is below 192MB, too little for DuckDB to sort a merge`);
  else if (c.max_row_group_bytes !== DEFAULT_MAX_ROW_GROUP_BYTES && c.max_row_group_bytes > mem / ROW_GROUP_SHARE) {
    out.push(
      `${key}.max_row_group_bytes: ${c.max_row_group_bytes} would do nothing: row groups above a fifth of ${key}.memory_limit (${Math.floor(mem / ROW_GROUP_SHARE)} bytes) are never merged; raise memory_limit to at least ${Math.ceil((c.max_row_group_bytes * ROW_GROUP_SHARE) / 1e6)}MB or lower max_row_group_bytes`,
    );
  }
  return out;
}
