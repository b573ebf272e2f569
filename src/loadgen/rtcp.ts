/**
 * RTCP reports mirrored as HEP (docs/LOADGEN.md "Media and RTCP reports"): when an INVITE call ends well,
 * one receiver-side report per direction, HEP protocol type 5 with the Call-ID as correlation id
 * (chunk 0x0011, how heplify and rtpengine tie RTCP to a call). `hep_raw_rtcp` sends the RTCP
 * packet itself (a sender report, RFC 3550 §6.4.1); `hep_homer_lake_rtcp` the JSON form HOMER
 * agents send (report_blocks[].fraction_lost, packets_lost, ia_jitter). loadgen sends no RTP, so
 * the figures say exactly that: zero packets, zero loss, zero jitter.
 */

export interface MediaAddress {
  ip: string;
  port: number;
}

/** c= and m=audio of an SDP body; null without both. */
export function audioAddress(body: string): MediaAddress | null {
  const c = /^c=IN IP[46] (\S+)/m.exec(body);
  const m = /^m=audio (\d+)/m.exec(body);
  return c && m ? { ip: c[1]!, port: Number(m[1]) } : null;
}

/** A deterministic SSRC per call and stream name (no RTP flows, so it only has to be stable). */
export function ssrcOf(callId: string, side: string): number {
  let h = 2166136261;
  for (const ch of `${callId}/${side}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return h >>> 0;
}

/**
 * The SSRC of one stream, from the Call-ID and its sender's media address: both ends' reports of a
 * stream (RTCP and media reports) carry the same SSRC, and the two directions differ.
 */
export const streamSsrc = (callId: string, from: MediaAddress) => ssrcOf(callId, `${from.ip}:${from.port}`);

/** RFC 3550 §6.4.1 sender report with one report block about `sourceSsrc`, all counters zero. */
export function rawSenderReport(ssrc: number, sourceSsrc: number, nowMs: number): Uint8Array {
  const b = new Uint8Array(52);
  const dv = new DataView(b.buffer);
  dv.setUint8(0, 0x81); // V=2, P=0, RC=1
  dv.setUint8(1, 200); // PT=SR
  dv.setUint16(2, 52 / 4 - 1);
  dv.setUint32(4, ssrc);
  const ntpSec = Math.floor(nowMs / 1000) + 2208988800;
  dv.setUint32(8, ntpSec >>> 0);
  dv.setUint32(12, Math.floor(((nowMs % 1000) / 1000) * 0x100000000) >>> 0);
  // RTP timestamp, packet count, octet count: 0 (no RTP sent). Report block:
  dv.setUint32(28, sourceSsrc);
  return b;
}

export function lakeReport(ssrc: number, sourceSsrc: number, nowMs: number): string {
  return JSON.stringify({
    type: 200,
    ssrc,
    report_count: 1,
    sender_information: {
      ntp_timestamp_sec: Math.floor(nowMs / 1000) + 2208988800,
      ntp_timestamp_usec: (nowMs % 1000) * 1000,
      rtp_timestamp: 0,
      packets: 0,
      octets: 0,
    },
    report_blocks: [
      { source_ssrc: sourceSsrc, fraction_lost: 0, packets_lost: 0, highest_seq_no: 0, ia_jitter: 0, lsr: 0, dlsr: 0 },
    ],
  });
}
