import type { PcapRecord } from "./write.ts";

/**
 * A stored message row (the search and call-view shape: `src_ip`, `dst_ip`, `src_port`,
 * `dst_port`, `payload`, `data_extra`) as a PCAP record. Payloads that were not valid UTF-8 are
 * stored base64 with `data_extra.payload_encoding` = "base64" (docs/CALL-VIEW.md "Binary RTCP") and go back to bytes.
 * Shared by the API export and `svc search --format pcap`, so both frame messages identically.
 */
const encoder = new TextEncoder();

const num = (v: unknown): number | undefined =>
  typeof v === "number"
    ? v
    : typeof v === "bigint"
      ? Number(v)
      : typeof v === "string" && v !== "" && Number.isFinite(Number(v))
        ? Number(v)
        : undefined;

export function storedPayloadBytes(row: Record<string, unknown>): Uint8Array {
  const text = typeof row.payload === "string" ? row.payload : "";
  const extra = row.data_extra;
  const b64 =
    typeof extra === "object" && extra !== null && (extra as Record<string, unknown>).payload_encoding === "base64";
  return b64 ? new Uint8Array(Buffer.from(text, "base64")) : encoder.encode(text);
}

export function storedRowToPcapRecord(row: Record<string, unknown>, timestampUs: number): PcapRecord {
  const r: PcapRecord = {
    timestampUs,
    srcIp: String(row.src_ip ?? ""),
    dstIp: String(row.dst_ip ?? ""),
    payload: storedPayloadBytes(row),
  };
  const sp = num(row.src_port);
  const dp = num(row.dst_port);
  if (sp !== undefined) r.srcPort = sp;
  if (dp !== undefined) r.dstPort = dp;
  return r;
}
