import type { QosStream } from "./qos.ts";

/**
 * Media reports a PCAP import computed from the capture's RTP carry `"source": "rtp"`
 * (docs/CALL-VIEW.md "Computed from RTP"); their streams say so, so the QoS tab can tell them from
 * an agent's.
 */
export type QosStreamWithSource = QosStream & { computed_from_rtp: boolean };

const addrKey = (r: { proto: number; src_ip: string; src_port: number; dst_ip: string; dst_port: number }) =>
  `${r.proto}|${r.src_ip}:${r.src_port}>${r.dst_ip}:${r.dst_port}`;

export function markComputedFromRtp(
  streams: readonly QosStream[],
  rows: ReadonlyArray<{
    proto: number;
    src_ip: string;
    src_port: number;
    dst_ip: string;
    dst_port: number;
    payload: string;
  }>,
): QosStreamWithSource[] {
  const fromRtp = new Set(rows.filter((r) => r.proto !== 5 && /"source"\s*:\s*"rtp"/.test(r.payload)).map(addrKey));
  return streams.map((s) => ({ ...s, computed_from_rtp: fromRtp.has(addrKey(s)) }));
}
