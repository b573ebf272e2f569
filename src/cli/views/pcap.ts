import { fail, ok, type Result } from "../../core/index.ts";
import { storedRowToPcapRecord, writePcap, type PcapRecord } from "../../pcap/index.ts";
import type { Row } from "../post-filter.ts";
import { rowTimeUs } from "./row-time.ts";

/**
 * `--format pcap` rules 3-4 (docs/CLI.md "PCAP rules"): a row becomes a frame when it has a non-empty `payload`,
 * `src_ip` and `dst_ip`; ports are optional (0 → 5060, src/pcap/write.ts); frames are sorted by
 * `timestamp` ascending; the framing is src/pcap's writePcap, the same one the coordinator's
 * `POST /transactions/export/pcap` uses. No usable row at all is an error (rule 4).
 */
export interface PcapOutput {
  bytes: Uint8Array;
  written: number;
  /** Rows without a payload or an address (rule 3), not written. */
  skipped: number;
}

export function rowsToPcap(rows: readonly Row[]): Result<PcapOutput, "NO_SIP_PAYLOAD"> {
  const records: PcapRecord[] = [];
  for (const r of rows) {
    const src = typeof r.src_ip === "string" ? r.src_ip : "";
    const dst = typeof r.dst_ip === "string" ? r.dst_ip : "";
    if (typeof r.payload !== "string" || r.payload === "" || src === "" || dst === "") continue;
    records.push(storedRowToPcapRecord(r, rowTimeUs(r) ?? 0));
  }
  if (records.length === 0)
    return fail(
      "NO_SIP_PAYLOAD",
      `none of the ${rows.length} rows has a SIP payload with source and destination address`,
    );
  records.sort((a, b) => a.timestampUs - b.timestampUs);
  return ok({ bytes: writePcap(records), written: records.length, skipped: rows.length - records.length });
}
