/**
 * Packet capture files: read pcap / pcapng, extract SIP (UDP, TCP, WebSocket, SCTP; IPv4, IPv6,
 * fragments, tunnels), and write SIP messages as a pcap. Pure: bytes in, bytes or records out.
 */
export { IpDecoder, type IpDecoderOptions, type IpPacket, type IpReason } from "./ip.ts";
export { decodeLink, ETHERTYPE, LINKTYPE, type LinkReason, type NetworkLayer } from "./link.ts";
export {
  countCaptureRecords,
  detectCaptureFormat,
  iterPackets,
  readCapture,
  type CaptureFile,
  type CaptureFormat,
  type CapturedPacket,
  type PacketItem,
  type PcapReason,
} from "./read.ts";
export {
  extractSipMessages,
  SipExtractor,
  type CapturedSip,
  type ExtractOptions,
  type ExtractStat,
  type OtherUdpDatagram,
  type SipExtraction,
  type SipTransport,
} from "./sip-extract.ts";
export { checkStartLine, frameSipMessage, sipStartInDatagram } from "./sip-framing.ts";
export { MAX_UDP_PAYLOAD, PcapWriter, writePcap, type PcapRecord } from "./write.ts";
export { storedPayloadBytes, storedRowToPcapRecord } from "./stored-row.ts";
export { parseRtpHeader, RtpStreamStats, type RtpHeader, type RtpStreamFigures } from "./rtp-stats.ts";
