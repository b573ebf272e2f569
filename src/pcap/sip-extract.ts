/**
 * SIP messages out of a capture file: link layer → IP (fragments, tunnels) → UDP datagrams (one
 * datagram, one message, RFC 3261 §18.3), TCP streams (reassembled, split by Content-Length, or
 * WebSocket per RFC 7118) and SCTP DATA chunks (one user message, one SIP message, RFC 4168 §5).
 * Everything that is not SIP is counted by reason and skipped. A message carries the frame number
 * and time of the packet that completed it, as tshark reports it.
 */
import { IpDecoder, IPPROTO, type IpPacket } from "./ip.ts";
import { decodeLink } from "./link.ts";
import { detectCaptureFormat, iterPackets, type CaptureFormat, type CapturedPacket, type PcapReason } from "./read.ts";
import { SctpMessageAssembler, type SctpStat } from "./sctp-messages.ts";
import { sipStartInDatagram } from "./sip-framing.ts";
import { SipStreamDecoder, type StreamMessage, type StreamStat } from "./stream-decoder.ts";
import { TcpDirection, type StreamChunk } from "./tcp-stream.ts";
import { decodeSctp, decodeTcp, decodeUdp } from "./transport.ts";

export type SipTransport = "udp" | "tcp" | "sctp" | "ws";

export interface CapturedSip {
  timestampUs: number;
  srcIp: string;
  dstIp: string;
  srcPort: number;
  dstPort: number;
  ipFamily: 4 | 6;
  transport: SipTransport;
  /** The raw SIP message (for UDP a view into the capture, otherwise a copy). */
  payload: Uint8Array;
  frameNumber: number;
}

/** Every reason a packet, or bytes in it, did not become a SIP message, plus a few plain counts. */
export type ExtractStat =
  | "frames"
  | "sip_messages"
  | "link_truncated"
  | "unsupported_link_type"
  | "not_ip"
  | "ip_truncated"
  | "ip_bad_header"
  | "ip_fragment_held"
  | "ip_fragments_expired"
  | "ip_no_payload"
  | "ip_tunnel_too_deep"
  | "other_ip_protocol"
  | "udp_bad_header"
  | "udp_not_sip"
  | "tcp_bad_header"
  | "tcp_retransmission"
  | "tcp_out_of_order"
  | "tcp_restarted"
  | "tcp_flows_evicted"
  | "sctp_bad_header"
  | "sctp_not_sip"
  | StreamStat
  | SctpStat;

export interface ExtractOptions {
  /** A SIP message (or WebSocket / SCTP message) larger than this is dropped. Default 1 MiB. */
  maxMessageBytes?: number;
  /** At most this many TCP directions are tracked; the least recently active is flushed and dropped. */
  maxTcpFlows?: number;
  /**
   * A UDP datagram that is not SIP: true when the caller took it (RTP or RTCP of a call in the
   * capture, docs/ARCHITECTURE.md "PCAP import"), so it is not counted as udp_not_sip.
   */
  onOtherUdp?: (d: OtherUdpDatagram) => boolean;
}

/** A UDP datagram that is not SIP, with its addresses and time; `payload` is a view valid during the call. */
export type OtherUdpDatagram = Omit<CapturedSip, "transport">;

export interface SipExtraction {
  messages: CapturedSip[];
  stats: Partial<Record<ExtractStat, number>>;
  format: CaptureFormat | null;
  /** Why the file could not be read to its end: a bad header (no messages at all) or a cut-short record. */
  error: { reason: PcapReason; detail?: string } | null;
}

interface TcpFlow {
  ip: IpPacket;
  srcPort: number;
  dstPort: number;
  stream: TcpDirection;
  decoder: SipStreamDecoder;
}

/** Incremental extractor: feed packets in file order, then call finish() once. */
export class SipExtractor {
  readonly stats: Partial<Record<ExtractStat, number>> = {};
  private readonly ip = new IpDecoder();
  private readonly flows = new Map<string, TcpFlow>();
  private readonly sctp: SctpMessageAssembler;
  private readonly maxMessageBytes: number;
  private readonly maxTcpFlows: number;
  private readonly onOtherUdp: ExtractOptions["onOtherUdp"];
  private readonly count = (stat: ExtractStat, n = 1) => {
    this.stats[stat] = (this.stats[stat] ?? 0) + n;
  };

  constructor(opts: ExtractOptions = {}) {
    this.maxMessageBytes = opts.maxMessageBytes ?? 1 << 20;
    this.maxTcpFlows = opts.maxTcpFlows ?? 65536;
    this.onOtherUdp = opts.onOtherUdp;
    this.sctp = new SctpMessageAssembler(this.count, this.maxMessageBytes);
  }

  /** Appends the SIP messages this packet completes to `out` (and returns it). */
  addPacket(packet: CapturedPacket, out: CapturedSip[] = []): CapturedSip[] {
    this.count("frames");
    const link = decodeLink(packet.linkType, packet.data);
    if (!link.ok) {
      this.count(link.reason);
      return out;
    }
    const ip = this.ip.decode(link.value.version, link.value.data, packet.timestampUs);
    if (!ip.ok) {
      this.count(ip.reason);
      return out;
    }
    const pkt = ip.value;
    if (pkt.protocol === IPPROTO.UDP) this.udp(pkt, packet, out);
    else if (pkt.protocol === IPPROTO.TCP) this.tcp(pkt, packet, out);
    else if (pkt.protocol === IPPROTO.SCTP) this.sctpPacket(pkt, packet, out);
    else this.count("other_ip_protocol");
    return out;
  }

  /** End of capture: bytes waiting behind TCP holes are decoded as far as they go. */
  finish(out: CapturedSip[] = []): CapturedSip[] {
    for (const flow of this.flows.values()) this.flushFlow(flow, out);
    this.flows.clear();
    if (this.ip.expiredDatagrams > 0) this.stats.ip_fragments_expired = this.ip.expiredDatagrams;
    return out;
  }

  private emit(
    out: CapturedSip[],
    ip: IpPacket,
    srcPort: number,
    dstPort: number,
    transport: SipTransport,
    payload: Uint8Array,
    at: { frameNumber: number; timestampUs: number },
  ): void {
    this.count("sip_messages");
    out.push({
      timestampUs: at.timestampUs,
      srcIp: ip.src,
      dstIp: ip.dst,
      srcPort,
      dstPort,
      ipFamily: ip.version,
      transport,
      payload,
      frameNumber: at.frameNumber,
    });
  }

  private udp(ip: IpPacket, packet: CapturedPacket, out: CapturedSip[]): void {
    const udp = decodeUdp(ip.payload);
    if (!udp.ok) {
      this.count(udp.reason);
      return;
    }
    const payload = udp.value.payload;
    const at = sipStartInDatagram(payload);
    if (at < 0) {
      const d = {
        timestampUs: packet.timestampUs,
        srcIp: ip.src,
        dstIp: ip.dst,
        srcPort: udp.value.srcPort,
        dstPort: udp.value.dstPort,
        ipFamily: ip.version,
        payload,
        frameNumber: packet.frameNumber,
      };
      if (this.onOtherUdp?.(d)) return;
      this.count(payload.length > 0 && payload.every((b) => b === 13 || b === 10) ? "keepalive" : "udp_not_sip");
      return;
    }
    this.emit(out, ip, udp.value.srcPort, udp.value.dstPort, "udp", payload.subarray(at), packet);
  }

  private tcp(ip: IpPacket, packet: CapturedPacket, out: CapturedSip[]): void {
    const seg = decodeTcp(ip.payload);
    if (!seg.ok) {
      this.count(seg.reason);
      return;
    }
    const { srcPort, dstPort } = seg.value;
    const key = `${ip.src}|${srcPort}|${ip.dst}|${dstPort}`;
    let flow = this.flows.get(key);
    if (flow === undefined) {
      // A flow with only empty segments (handshake, ACKs) needs no state.
      if (seg.value.payload.length === 0 && !seg.value.syn) return;
      if (this.flows.size >= this.maxTcpFlows) this.evictOldestFlow(out);
      flow = {
        ip,
        srcPort,
        dstPort,
        stream: new TcpDirection(),
        decoder: new SipStreamDecoder(this.count, this.maxMessageBytes),
      };
    } else {
      this.flows.delete(key);
    }
    // Re-inserting keeps the map in least-recently-active order for eviction.
    this.flows.set(key, flow);
    const r = flow.stream.push(seg.value, packet);
    if (r.restarted) {
      this.count("tcp_restarted");
      flow.decoder.reset();
    }
    if (r.kind === "retransmission") this.count("tcp_retransmission");
    else if (r.kind === "out_of_order") this.count("tcp_out_of_order");
    this.decodeChunks(flow, r.chunks, out);
  }

  private decodeChunks(flow: TcpFlow, chunks: StreamChunk[], out: CapturedSip[]): void {
    if (chunks.length === 0) return;
    const messages: StreamMessage[] = [];
    for (const chunk of chunks) flow.decoder.push(chunk, messages);
    for (const m of messages) this.emit(out, flow.ip, flow.srcPort, flow.dstPort, m.transport, m.payload, m.at);
  }

  private flushFlow(flow: TcpFlow, out: CapturedSip[]): void {
    this.decodeChunks(flow, flow.stream.flush(), out);
  }

  private evictOldestFlow(out: CapturedSip[]): void {
    const oldest = this.flows.entries().next();
    if (oldest.done) return;
    this.flows.delete(oldest.value[0]);
    this.flushFlow(oldest.value[1], out);
    this.count("tcp_flows_evicted");
  }

  private sctpPacket(ip: IpPacket, packet: CapturedPacket, out: CapturedSip[]): void {
    const sctp = decodeSctp(ip.payload);
    if (!sctp.ok) {
      this.count(sctp.reason);
      return;
    }
    const { srcPort, dstPort } = sctp.value;
    const association = `${ip.src}|${srcPort}|${ip.dst}|${dstPort}`;
    for (const chunk of sctp.value.dataChunks) {
      const message = this.sctp.push(association, chunk);
      if (message === null) continue;
      // Any PPID: 0 ("unspecified") is what SIP over SCTP uses in practice; the start line decides.
      const at = sipStartInDatagram(message);
      if (at < 0) this.count("sctp_not_sip");
      else this.emit(out, ip, srcPort, dstPort, "sctp", message.subarray(at), packet);
    }
  }
}

/** All SIP messages of a pcap or pcapng file, in frame order, with counts of what was skipped and why. */
export function extractSipMessages(bytes: Uint8Array, opts: ExtractOptions = {}): SipExtraction {
  const extractor = new SipExtractor(opts);
  const messages: CapturedSip[] = [];
  let error: SipExtraction["error"] = null;
  for (const item of iterPackets(bytes)) {
    if (!item.ok) {
      error = item.detail === undefined ? { reason: item.reason } : { reason: item.reason, detail: item.detail };
      break;
    }
    extractor.addPacket(item.value, messages);
  }
  extractor.finish(messages);
  // Messages completed at the end of the file (after a hole) carry earlier frame numbers; sort is stable.
  messages.sort((a, b) => a.frameNumber - b.frameNumber);
  return { messages, stats: extractor.stats, format: detectCaptureFormat(bytes), error };
}
