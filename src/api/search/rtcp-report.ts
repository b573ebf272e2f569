import { CODEC_IMPAIRMENT, eModel } from "../../core/index.ts";
import { decodeRtcp, rttMs } from "../../hep/index.ts";
import type { MediaEndpoint } from "./qos.ts";

/**
 * One RTCP report (HEP 5) as the QoS readers see it (docs/CALL-VIEW.md "Binary RTCP"): binary
 * RTCP (stored base64, data_extra.payload_encoding) is decoded into the JSON form agents send, and
 * both forms get the same derived figures: `jitter_ms` by the stream's clock, `rtt` (ms) from
 * LSR/DLSR and the report's arrival time, and `mos`/`r_factor` by the E-model when the report
 * carries none. So a report read as JSON or as binary gives the same QoS figures.
 */

/** Clock rate when the SDP does not name the stream's codec: G.711, G.729, G.722 (RFC 3551 §4.5.2) all tick at 8 kHz. */
const ASSUMED_CLOCK_RATE = 8000;

/** The stream's RTP clock: the SDP's for either address of the report (as qos.ts buildStreams finds it), else 8000 Hz. */
export function rtcpClockRate(
  media: readonly MediaEndpoint[],
  r: { src_ip: string; src_port: number; dst_ip: string; dst_port: number },
): number {
  const at = (ip: string, port: number) =>
    media.find((m) => m.ip === ip && m.port === port && m.clock_rate !== null)?.clock_rate ?? undefined;
  return at(r.src_ip, r.src_port) ?? at(r.dst_ip, r.dst_port) ?? ASSUMED_CLOCK_RATE;
}

export type RtcpReportJson = { ok: true; json: Record<string, unknown> } | { ok: false; reason: string };

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/**
 * The figures an RTCP report implies (same for both forms). MOS: G.711's Ie 0 and Bpl 25.1 (the
 * SDP's codec is not known here), loss = the report's fraction lost, one-way delay = RTT / 2 plus
 * a jitter buffer of twice the jitter. An RFC 3611 VoIP Metrics block's own MOS and R win.
 */
function derive(o: Record<string, unknown>, arrivalMs: number, clockRate: number): Record<string, unknown> {
  const block = Array.isArray(o.report_blocks)
    ? (o.report_blocks[0] as Record<string, unknown> | undefined)
    : undefined;
  const xr = Array.isArray(o.xr) ? (o.xr as Array<Record<string, unknown>>) : [];
  const out: Record<string, unknown> = {};
  let rtt: number | null = null;
  const lsr = num(block?.lsr);
  const dlsr = num(block?.dlsr);
  if (lsr !== undefined && dlsr !== undefined) rtt = rttMs(arrivalMs, lsr, dlsr);
  const dlrr = xr.flatMap((b) => (Array.isArray(b.dlrr) ? (b.dlrr as Array<Record<string, unknown>>) : []))[0];
  if (rtt === null && dlrr) rtt = rttMs(arrivalMs, num(dlrr.lrr) ?? 0, num(dlrr.dlrr) ?? 0);
  const voip = xr.find((b) => b.block_type === 7);
  if (rtt === null && num(voip?.round_trip_delay)) rtt = num(voip!.round_trip_delay)!;
  if (rtt !== null && o.rtt === undefined) out.rtt = rtt;
  const jitter = num(block?.ia_jitter);
  if (jitter !== undefined) out.jitter_ms = Math.round((jitter * 1e6) / clockRate) / 1000;
  if (o.mos !== undefined || o.r_factor !== undefined) return out;
  if (num(voip?.mos_cq) !== undefined || num(voip?.r_factor) !== undefined) {
    if (num(voip?.mos_cq) !== undefined) out.mos = voip!.mos_cq;
    if (num(voip?.r_factor) !== undefined) out.r_factor = voip!.r_factor;
    return out;
  }
  const fl = num(block?.fraction_lost);
  if (fl === undefined) return out;
  const g711 = CODEC_IMPAIRMENT.pcmu!;
  const q = eModel({
    ie: g711.ie,
    bpl: g711.bpl,
    ppl: (fl * 100) / 256,
    delayMs: (rtt ?? 0) / 2 + 2 * ((jitter ?? 0) / (clockRate / 1000)),
  });
  out.mos = q.mos;
  out.r_factor = q.r;
  out.mos_estimated = "e-model";
  return out;
}

/** The report as a JSON object with the derived figures, or why it cannot be read. */
export function rtcpReportJson(
  payload: string,
  encoding: unknown,
  arrivalMs: number,
  clockRate: number,
): RtcpReportJson {
  let o: Record<string, unknown>;
  if (encoding === "base64") {
    const r = decodeRtcp(Buffer.from(payload, "base64"));
    if (!r.ok) return { ok: false, reason: `${r.reason}: ${r.detail}` };
    o = r.value as unknown as Record<string, unknown>;
  } else {
    let j: unknown;
    try {
      j = JSON.parse(payload);
    } catch {
      return { ok: false, reason: "not JSON" };
    }
    if (!j || typeof j !== "object" || Array.isArray(j)) return { ok: false, reason: "not a JSON object" };
    o = j as Record<string, unknown>;
  }
  return { ok: true, json: { ...o, ...derive(o, arrivalMs, clockRate) } };
}

/** The payload text the QoS readers (qos.ts qosPoint) take: the normalised JSON, or the payload as stored when it cannot be read. */
export function rtcpPayloadText(payload: string, encoding: unknown, arrivalMs: number, clockRate: number): string {
  const r = rtcpReportJson(payload, encoding, arrivalMs, clockRate);
  return r.ok ? JSON.stringify(r.json) : payload;
}
