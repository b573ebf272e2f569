/**
 * HEP v1/v2/v3: decode, encode, TCP framing and the HEP3 identifiers; the live stream's packet
 * record (stream-capture.ts). Pure code, no I/O.
 */
export { HEP_AF, HEP_CHUNK, HEP_EVENT, HEP_PROTO, HEP_VENDOR, hepProtoName, type HepChunkName } from "./chunks.ts";
export { decodeHep } from "./decode.ts";
export {
  encodeHep2,
  encodeHep3,
  type HepEncodeBase,
  type HepEncodeInput,
  type HepLegacyEncodeInput,
  type HepRawChunk,
} from "./encode.ts";
export { hepFrameLength } from "./frame.ts";
export {
  DEFAULT_MAX_AGE_MS,
  DEFAULT_MAX_INFLATED_BYTES,
  DEFAULT_MAX_SKEW_MS,
  HEP_DECODE_REASONS,
  type DecodeOptions,
  type HepDecodeReason,
  type HepDecodeResult,
  type HepPacket,
} from "./packet.ts";
export {
  FLAG_SIP_PARSED,
  RECORD_HEADER,
  StreamCapture,
  type CaptureChunk,
  type StreamCaptureOptions,
} from "./stream-capture.ts";
export {
  decodeRtcp,
  ntpMiddle32,
  NTP_UNIX_OFFSET_S,
  rttMs,
  RTCP_DECODE_REASONS,
  type RtcpDecodeReason,
  type RtcpDecodeResult,
  type RtcpReport,
  type RtcpReportBlock,
  type RtcpXrBlock,
} from "./rtcp.ts";
