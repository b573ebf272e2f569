/**
 * Media quality reports mirrored as HEP (docs/LOADGEN.md "Media and RTCP reports", flag
 * `send_media_report`): when an INVITE call ends well, one report per direction as HEP protocol
 * type 34 ("MOS full report", JSON, what RTP agents such as sipcapture's rtpagent send), with the
 * Call-ID as correlation id (chunk 0x0011), the MOS × 100 in chunk 0x0020 and the call's SDP audio
 * addresses as the HEP addresses. loadgen sends no RTP, so the figures are those of a lossless
 * stream of the negotiated codec: packets expected over the media time, none lost, no jitter, and
 * the MOS a simplified ITU-T G.107 E-model gives that codec; `synthetic: true` says so.
 */
import { CODEC_IMPAIRMENT, eModel } from "../core/index.ts";
import { encodeHep3 } from "../hep/index.ts";
import { streamSsrc, type MediaAddress } from "./rtcp.ts";

/** What a call knows about its media when it ends well (SipCall.mediaPair). */
export interface MediaSession {
  local: MediaAddress;
  remote: MediaAddress;
  /** The SDP answer (the negotiated one): its m=audio line's first payload type is the codec. */
  answerSdp?: string;
  /** ACK → BYE in ms (the time media would flow). */
  mediaMs?: number;
}

export interface Codec {
  pt: number;
  name: string;
  clockRate: number;
  /** Packetization time in ms: the SDP's a=ptime, else 20. */
  ptimeMs: number;
  /** Equipment impairment factor (docs/LOADGEN.md "Media and RTCP reports"); null when not rated. */
  ie: number | null;
}

/** RFC 3551 §6 static payload types the reports name without an a=rtpmap. */
const STATIC_PT: Record<number, [string, number]> = {
  0: ["PCMU", 8000],
  3: ["GSM", 8000],
  4: ["G723", 8000],
  8: ["PCMA", 8000],
  9: ["G722", 8000],
  18: ["G729", 8000],
};

/**
 * Ie per codec, ITU-T G.113 Appendix I: G.711 0, G.729A 11, G.723.1 (6.3 kbit/s) 15, GSM full
 * rate 20. G.722 and Opus are wideband codecs the narrowband E-model cannot credit: rated as G.711.
 */
const IE = (name: string): number | undefined => CODEC_IMPAIRMENT[name.toLowerCase()]?.ie;

/** The codec of an SDP's first m=audio payload type; null without an audio line. */
export function codecOf(sdp: string): Codec | null {
  const m = /^m=audio \d+(?:\/\d+)? \S+ (\d+)/m.exec(sdp);
  if (!m) return null;
  const pt = Number(m[1]);
  const map = new RegExp(`^a=rtpmap:${pt} ([^/\\s]+)/(\\d+)`, "m").exec(sdp);
  const known = STATIC_PT[pt];
  const name = map ? map[1]! : (known?.[0] ?? `PT${pt}`);
  const clockRate = map ? Number(map[2]) : (known?.[1] ?? 8000);
  const ptime = /^a=ptime:(\d+)/m.exec(sdp);
  const ie = IE(name);
  return { pt, name, clockRate, ptimeMs: ptime && Number(ptime[1]) > 0 ? Number(ptime[1]) : 20, ie: ie ?? null };
}

/** The E-model (docs/CALL-VIEW.md "MOS by the E-model"), shared with the QoS view. */
export { eModel };

/** One direction's report: rtpagent's upper-case members plus the lower-case ones svc reads. */
export function mediaReportJson(
  callId: string,
  from: MediaAddress,
  to: MediaAddress,
  dir: 0 | 1,
  codec: Codec | null,
  mediaMs: number,
  nowMs: number,
): Record<string, unknown> {
  const ptime = codec?.ptimeMs ?? 20;
  const ms = Math.max(0, Math.round(mediaMs));
  const expected = Math.floor(ms / ptime);
  const q = codec?.ie === null || codec?.ie === undefined ? null : eModel(codec.ie);
  const json: Record<string, unknown> = {
    CORRELATION_ID: callId,
    RTP_SIP_CALL_ID: callId,
    REPORT_TS: nowMs / 1000,
    TYPE: "FINAL",
    DIR: dir,
    PARTY: dir,
    REPORT_NAME: `${from.ip}:${from.port}`,
    SRC_IP: from.ip,
    SRC_PORT: from.port,
    DST_IP: to.ip,
    DST_PORT: to.port,
    CODEC_PT: codec?.pt ?? null,
    CODEC_NAME: codec?.name ?? null,
    CLOCK: codec?.clockRate ?? null,
    PTIME: ptime,
    TOTAL_PK: expected,
    EXPECTED_PK: expected,
    PACKET_LOSS: 0,
    OUT_ORDER: 0,
    JITTER: 0,
    MAX_JITTER: 0,
    MEAN_JITTER: 0,
  };
  if (q)
    Object.assign(json, {
      MOS: q.mos,
      MIN_MOS: q.mos,
      MEAN_MOS: q.mos,
      RFACTOR: q.r,
      MIN_RFACTOR: q.r,
      MEAN_RFACTOR: q.r,
      mos: Math.round(q.mos * 100),
    });
  Object.assign(json, {
    packets_lost: 0,
    fraction_lost: 0,
    ssrc: streamSsrc(callId, from),
    media_ms: ms,
    ie: codec?.ie ?? null,
    synthetic: true,
  });
  return json;
}

/** Both directions as HEP3 packets (protocol type 34, UDP between the RTP addresses). */
export function mediaReportPackets(
  callId: string,
  media: MediaSession,
  hep: { captureId: number; authKey: string },
  nowMs: number,
): Uint8Array[] {
  const codec = media.answerSdp ? codecOf(media.answerSdp) : null;
  const out: Uint8Array[] = [];
  for (const [from, to, dir] of [
    [media.local, media.remote, 0],
    [media.remote, media.local, 1],
  ] as const) {
    const json = mediaReportJson(callId, from, to, dir, codec, media.mediaMs ?? 0, nowMs);
    out.push(
      encodeHep3({
        srcIp: from.ip,
        dstIp: to.ip,
        srcPort: from.port,
        dstPort: to.port,
        ipProtocol: 17,
        protoType: 34,
        timestampUs: nowMs * 1000,
        captureId: hep.captureId,
        correlationId: callId,
        ...(typeof json.mos === "number" ? { mos: json.mos } : {}),
        ...(hep.authKey ? { authKey: hep.authKey } : {}),
        payload: JSON.stringify(json),
      }),
    );
  }
  return out;
}
