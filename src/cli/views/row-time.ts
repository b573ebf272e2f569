import { parseTimestampUs } from "../../core/index.ts";
import type { Row } from "../post-filter.ts";

/** A number from a JSON member that may be a number, a bigint or numeric text. */
export function num(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/**
 * A row's event time in µs: `timestamp_us` of the search API, else `timestamp` / `time` as ISO
 * text or epoch µs (SQL rows); undefined when the row has no time.
 */
export function rowTimeUs(row: Row): number | undefined {
  const us = num(row.timestamp_us);
  if (us !== undefined) return us;
  for (const k of ["timestamp", "time", "ts"]) {
    const v = row[k];
    if (v === undefined || v === null) continue;
    if (typeof v === "string" && !/^\d+$/.test(v.trim())) {
      const t = parseTimestampUs(v);
      if (t !== null) return t;
      continue;
    }
    const n = num(v);
    if (n !== undefined) return n > 1e14 ? n : n * 1000; // µs (SQL epoch_us) or ms
  }
  return undefined;
}
