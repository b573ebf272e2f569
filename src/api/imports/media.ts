import { CODEC_IMPAIRMENT, eModel } from "../../core/index.ts";
import { decodeRtcp, type HepPacket } from "../../hep/index.ts";
import { parseRtpHeader, RtpStreamStats, type CapturedSip, type OtherUdpDatagram } from "../../pcap/index.ts";
import { parseSip, sipSdp, type SdpCodec } from "../../sip/index.ts";
import type { MediaCounts } from "./schema.ts";

/**
 * RTP and RTCP of the calls in an imported capture (docs/ARCHITECTURE.md "PCAP import"): the SDP
 * of each SIP message seen so far names the call's media addresses; a UDP datagram to or from one
 * of them is RTCP on the RTCP port (the `a=rtcp` attribute, else RTP port + 1, RFC 3550 §11), or on
 * the RTP port when its type is an RTCP one (rtcp-mux, RFC 5761 §4), and is stored as a HEP 5 row
 * with the Call-ID as correlation id; RTP feeds per-stream statistics, stored at the end as one
 * HEP 34 media report per stream marked `"source": "rtp"` (docs/CALL-VIEW.md "Computed from RTP").
 */

interface Endpoint {
  callId: string;
  rtcp: boolean;
  codecs: SdpCodec[];
}

interface Stream {
  callId: string;
  d: Omit<OtherUdpDatagram, "payload" | "timestampUs" | "frameNumber">;
  ssrc: number;
  pt: number;
  codec: { name: string; clockRate: number; assumed: boolean };
  stats: RtpStreamStats;
}

/** RFC 3551 §6 static audio payload types. */
const STATIC_PT: Record<number, [string, number]> = {
  0: ["PCMU", 8000],
  3: ["GSM", 8000],
  4: ["G723", 8000],
  8: ["PCMA", 8000],
  9: ["G722", 8000],
  18: ["G729", 8000],
};
/** Bounds on what a capture can make us hold: endpoints learnt from SDP and RTP streams tracked. */
const MAX_ENDPOINTS = 100_000;
const MAX_STREAMS = 10_000;

export class CaptureMedia {
  readonly counts: MediaCounts = { rtcp_reports: 0, rtp_packets: 0, rtp_streams: 0 };
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly streams = new Map<string, Stream>();
  private readonly enc = new TextEncoder();

  /** `store` hands a packet to the pipeline (it counts tables and failures); `shiftUs` is the import's time shift. */
  constructor(
    private readonly store: (p: HepPacket) => void,
    private readonly shiftUs: number,
  ) {}

  /** The media addresses of a SIP message's SDP, for the datagrams that follow it. */
  learnSip(m: CapturedSip): void {
    const r = parseSip(m.payload);
    if (!r.ok) return;
    const sdp = sipSdp(m.payload, r.value);
    for (const media of sdp?.media ?? []) {
      if (!media.address || !media.port || this.endpoints.size >= MAX_ENDPOINTS) continue;
      this.endpoints.set(`${media.address}:${media.port}`, {
        callId: r.value.callId,
        rtcp: false,
        codecs: media.codecs,
      });
      this.endpoints.set(`${media.rtcpAddress ?? media.address}:${media.rtcpPort ?? media.port + 1}`, {
        callId: r.value.callId,
        rtcp: true,
        codecs: media.codecs,
      });
    }
  }

  /** True when the datagram was RTP or RTCP of a call of the capture (and so taken). */
  datagram(d: OtherUdpDatagram): boolean {
    const ep = this.endpoints.get(`${d.dstIp}:${d.dstPort}`) ?? this.endpoints.get(`${d.srcIp}:${d.srcPort}`);
    if (!ep) return false;
    const b1 = d.payload[1] ?? 0;
    if (ep.rtcp || (b1 >= 192 && b1 <= 223)) {
      if (!decodeRtcp(d.payload).ok) return false;
      this.counts.rtcp_reports++;
      this.store(this.packet(d, 5, ep.callId, d.payload.slice(), d.timestampUs));
      return true;
    }
    const h = parseRtpHeader(d.payload);
    if (!h) return false;
    const key = `${d.srcIp}:${d.srcPort}>${d.dstIp}:${d.dstPort}|${h.ssrc}`;
    let s = this.streams.get(key);
    if (!s) {
      if (this.streams.size >= MAX_STREAMS) return false;
      const sdpCodec = ep.codecs.find((c) => c.payloadType === h.payloadType);
      const known = STATIC_PT[h.payloadType];
      const name = sdpCodec?.name ?? known?.[0] ?? `PT${h.payloadType}`;
      const clock = sdpCodec?.clockRate ?? known?.[1];
      const codec = { name, clockRate: clock ?? 8000, assumed: clock === undefined };
      s = {
        callId: ep.callId,
        d: { srcIp: d.srcIp, dstIp: d.dstIp, srcPort: d.srcPort, dstPort: d.dstPort, ipFamily: d.ipFamily },
        ssrc: h.ssrc,
        pt: h.payloadType,
        codec,
        stats: new RtpStreamStats(codec.clockRate),
      };
      this.streams.set(key, s);
      this.counts.rtp_streams++;
    }
    s.stats.add(h, d.timestampUs);
    this.counts.rtp_packets++;
    return true;
  }

  /** One media report per RTP stream, at the time of its last packet. */
  finish(): void {
    for (const s of this.streams.values()) {
      const f = s.stats.figures();
      const imp = CODEC_IMPAIRMENT[s.codec.name.toLowerCase()] ?? CODEC_IMPAIRMENT.pcmu!;
      const lossPct = f.expected > 0 ? (Math.max(0, f.lost) * 100) / f.expected : 0;
      // docs/CALL-VIEW.md "MOS by the E-model": the capture has no delay figure; a jitter buffer of twice the mean jitter.
      const q = eModel({ ie: imp.ie, bpl: imp.bpl, ppl: lossPct, delayMs: 2 * f.mean_jitter_ms });
      const report = {
        source: "rtp",
        CORRELATION_ID: s.callId,
        TYPE: "FINAL",
        SRC_IP: s.d.srcIp,
        SRC_PORT: s.d.srcPort,
        DST_IP: s.d.dstIp,
        DST_PORT: s.d.dstPort,
        ssrc: s.ssrc,
        CODEC_PT: s.pt,
        CODEC_NAME: s.codec.name,
        CLOCK: s.codec.clockRate,
        clock_assumed: s.codec.assumed,
        // `jitter` first: the QoS reader takes the first jitter member (ms, as agents report it).
        jitter: f.mean_jitter_ms,
        max_jitter: f.max_jitter_ms,
        last_jitter: f.jitter_ms,
        packets: f.packets,
        expected: f.expected,
        packets_lost: f.lost,
        fraction_lost: f.expected > 0 ? Math.min(255, Math.round((Math.max(0, f.lost) * 256) / f.expected)) : 0,
        loss_pct: Math.round(lossPct * 100) / 100,
        seq_errors: f.seq_errors,
        first_ts: f.first_us / 1e6,
        last_ts: f.last_us / 1e6,
        mos: q.mos,
        r_factor: q.r,
      };
      this.store(
        this.packet(
          { ...s.d, payload: new Uint8Array(0), timestampUs: f.last_us, frameNumber: 0 },
          34,
          s.callId,
          this.enc.encode(JSON.stringify(report)),
          f.last_us,
        ),
      );
    }
    this.streams.clear();
  }

  private packet(d: OtherUdpDatagram, protoType: number, callId: string, payload: Uint8Array, atUs: number): HepPacket {
    return {
      version: 3,
      ipFamily: d.ipFamily,
      ipProtocol: 17,
      srcIp: d.srcIp,
      dstIp: d.dstIp,
      srcPort: d.srcPort,
      dstPort: d.dstPort,
      timestampUs: atUs + this.shiftUs,
      tsFallback: false,
      protoType,
      captureId: 0,
      nodeName: "pcap-import",
      correlationId: callId,
      payload,
      payloadCompressed: false,
      vendorChunks: 0,
      unknownChunks: 0,
    };
  }
}
