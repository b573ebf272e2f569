/**
 * Binary RTCP in SQL (docs/KPIS.md "RTCP and MOS"): HEP 5 rows whose payload is the RTCP packet
 * itself are stored base64 (data_extra.payload_encoding); the KPIs read the first report block of
 * their first SR or RR (RFC 3550 §6.4.1: after 28 octets in an SR, 8 in an RR) as they read
 * `report_blocks[0]` of the JSON form, so both forms count alike. Rows that are not version 2,
 * carry no report block or are cut short give NULL, as a JSON report without those members does.
 */

/** The scan with `rtcp_hex` (the packet in hex, NULL unless base64) and `rtcp_blk` (the octet offset of its first report block, NULL without one). */
export function withRtcpBlock(scan: string): string {
  const byte = (k: string) => `TRY_CAST(('0x' || substr(rtcp_hex, 2 * (${k}) + 1, 2)) AS INTEGER)`;
  return `SELECT *, CASE WHEN ${byte("0")} BETWEEN 129 AND 191 AND (${byte("0")} & 31) >= 1 AND ${byte("1")} IN (200, 201)
        AND length(rtcp_hex) >= 2 * ((CASE ${byte("1")} WHEN 200 THEN 28 ELSE 8 END) + 24) THEN (CASE ${byte("1")} WHEN 200 THEN 28 ELSE 8 END) END AS rtcp_blk
    FROM (SELECT *, CASE WHEN json_extract_string(data_extra, '$.payload_encoding') = 'base64' THEN hex(TRY(from_base64(payload))) END AS rtcp_hex FROM (${scan}) t0) t1`;
}

/** A report block's field of a row of withRtcpBlock: `octets` wide at `at` octets into the block, unsigned. */
export function rtcpBlockField(at: number, octets: 1 | 4): string {
  return `TRY_CAST(('0x' || substr(rtcp_hex, 2 * (rtcp_blk + ${at}) + 1, ${octets * 2})) AS UBIGINT)`;
}
