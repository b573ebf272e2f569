/**
 * The compaction's metrics: files merged away, merges committed, rollbacks, skips and
 * out-of-memory splits per table, and whether the native engine switched itself off (what they tell
 * an operator: docs/INSTALL.md, docs/ARCHITECTURE.md "Compaction engines" and "Compaction memory").
 */
import type { Counter, Gauge, MetricsRegistry } from "../../core/index.ts";

export interface CompactionMetrics {
  mergedAway: Counter<"table">;
  merges: Counter<"table" | "engine">;
  rollbacks: Counter<"table" | "reason">;
  skips: Counter<"table" | "reason">;
  nativeDisabled: Gauge;
  splits: Counter<"table">;
}

/** Registers the compaction's metrics; the native engine starts on (the gauge at 0). */
export function compactionMetrics(metrics: MetricsRegistry): CompactionMetrics {
  const m: CompactionMetrics = {
    mergedAway: metrics.counter("svc_lake_compacted_files_total", "Data files merged away by compaction, per table.", [
      "table",
    ]),
    merges: metrics.counter(
      "svc_lake_compaction_merges_total",
      "Merged files committed by compaction, per table and engine (duckdb = the default merge).",
      ["table", "engine"],
    ),
    rollbacks: metrics.counter(
      "svc_lake_compaction_rollbacks_total",
      "Merges not committed, per table and reason: row_count and partition_changed (the swap rolled back), out_of_memory and error (the merge failed). The files stay as they were; the merge is retried next cycle.",
      ["table", "reason"],
    ),
    skips: metrics.counter(
      "svc_lake_compaction_skipped_total",
      "Left out of a compaction cycle, per table and reason (native: partitions; default merge: files): young (native only), row_group_bytes, deletes, retention_cut, sort_bytes (a file alone above what one merge may hold), out_of_memory (a file no smaller merge could take after an out-of-memory error).",
      ["table", "reason"],
    ),
    splits: metrics.counter(
      "svc_lake_compaction_oom_splits_total",
      "Merges that ran out of compaction.memory_limit and were retried as two smaller pieces, per table; the table's merges stay smaller for a while (docs/ARCHITECTURE.md, Compaction memory).",
      ["table"],
    ),
    nativeDisabled: metrics.gauge(
      "svc_lake_compaction_native_disabled",
      "1 when the native compaction engine switched itself off (duplicate catalog snapshots) until restart.",
    ),
  };
  m.nativeDisabled.set(0);
  return m;
}
