/**
 * Keys of the superseded file model that an operator's old configuration may still carry
 * (docs/OPERATIONS.md "Keys of the superseded file model"). They are accepted with one warning
 * each, removed before the configuration is checked, and listed by `svc show-config` as ignored:
 * an old config still starts, and nothing pretends to honour them.
 */

/** Legacy compaction levels: files `{uuid}.{level}.parquet` merged level by level after a time-out. */
const LEVEL_KEYS = [
  "level1_timeout_sec",
  "level2_timeout_sec",
  "level3_timeout_sec",
  "level1_max_size_mb",
  "level2_max_size_mb",
  "level3_max_size_mb",
];

const COMPACTION_INSTEAD =
  "belongs to the superseded file model (compaction levels of {uuid}.{level}.parquet files) and is ignored: the lakehouse merges a table's files per partition once they are untouched for storage.lakehouse.compaction.min_age_sec, up to target_file_size_bytes (docs/ARCHITECTURE.md, Maintenance)";
const SECTION_INSTEAD =
  "belongs to the superseded file model (arrow_settings, the per-file metadata store with its bloom filters, retention and vacuum) and is ignored: the lakehouse keeps its metadata in the DuckLake catalog (storage.lakehouse.catalog_type, catalog_path), its retention in storage.lakehouse.retention, and the node check answers from the catalog";

/** Whole sections of the old model: every key under them is ignored. */
const LEGACY_SECTIONS = ["arrow_settings", "metadata"];

export interface IgnoredKey {
  key: string;
  reason: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Removes legacy keys from `raw` (a parsed config file, changed in place) and returns them with the reason. */
export function takeLegacyKeys(raw: unknown): IgnoredKey[] {
  const out: IgnoredKey[] = [];
  if (!isPlainObject(raw)) return out;
  const levels = (obj: unknown, path: string) => {
    if (!isPlainObject(obj)) return;
    for (const k of LEVEL_KEYS) {
      if (!(k in obj)) continue;
      delete obj[k];
      out.push({ key: `${path}.${k}`, reason: COMPACTION_INSTEAD });
    }
  };
  // Old files had the levels in a top-level `compaction` section, checked every check_interval_sec;
  // any other key there stays for the loader to name as unknown.
  const top = raw.compaction;
  if (isPlainObject(top)) {
    levels(top, "compaction");
    if ("check_interval_sec" in top) {
      delete top.check_interval_sec;
      out.push({ key: "compaction.check_interval_sec", reason: COMPACTION_INSTEAD });
    }
    if (Object.keys(top).length === 0) delete raw.compaction;
  }
  const storage = raw.storage;
  if (isPlainObject(storage) && isPlainObject(storage.lakehouse))
    levels(storage.lakehouse.compaction, "storage.lakehouse.compaction");
  for (const section of LEGACY_SECTIONS) {
    const s = raw[section];
    if (s === undefined) continue;
    const keys = isPlainObject(s) ? Object.keys(s) : [];
    if (keys.length === 0) out.push({ key: section, reason: SECTION_INSTEAD });
    for (const k of keys) out.push({ key: `${section}.${k}`, reason: SECTION_INSTEAD });
    delete raw[section];
  }
  return out;
}
