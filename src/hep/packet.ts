/**
 * The decoded form of a HEP v1/v2/v3 packet and the reasons a decode can fail. Field comments name
 * the HEP3 chunk (rev. 37 "Generic chunk types") each value comes from.
 */
import type { Result } from "../core/index.ts";

/** Every reason `decodeHep` can return, as a list so callers can pre-register one counter per reason. */
export const HEP_DECODE_REASONS = [
  /** Fewer bytes than the fixed header of the detected version. */
  "too_short",
  /** Neither "HEP3"/"EEP3" nor a first octet of 1 or 2 (the v1/v2 version). */
  "bad_magic",
  /** "HEP"/"EEP" followed by a version digit other than "3". */
  "unsupported_version",
  /** HEP3 total length (octets 4-5) differs from the buffer length, or the v1/v2 header length is wrong. */
  "bad_length",
  /** A chunk header or body runs past the end of the packet. */
  "truncated_chunk",
  /** A chunk shorter than its own 6-octet header, or a fixed-size chunk with the wrong size. */
  "bad_chunk_length",
  /** IP family chunk 0x0001 (or the v1/v2 family octet) is neither 2 (AF_INET) nor 10 (AF_INET6). */
  "bad_family",
  /** Source or destination address missing, or not of the packet's family. */
  "bad_address",
  /** No payload chunk 0x000f / 0x0010, or an empty one. */
  "missing_payload",
  /** The compressed payload chunk 0x0010 did not inflate (corrupt, or larger than maxInflatedBytes). */
  "gzip_failed",
] as const;

export type HepDecodeReason = (typeof HEP_DECODE_REASONS)[number];

export interface DecodeOptions {
  /** Receive time in epoch milliseconds; the fallback timestamp. Default: Date.now() at decode time. */
  nowMs?: number;
  /** Agent clocks may run this far ahead of nowMs before the receive time is used instead. Default 1 day. */
  maxSkewMs?: number;
  /** Agent timestamps older than nowMs - maxAgeMs are replaced by the receive time. Default 10 years. */
  maxAgeMs?: number;
  /** Upper bound for an inflated compressed payload (decompression-bomb guard). Default 1 MiB. */
  maxInflatedBytes?: number;
}

export const DEFAULT_MAX_SKEW_MS = 86_400_000;
export const DEFAULT_MAX_AGE_MS = 10 * 365.25 * 86_400_000;
export const DEFAULT_MAX_INFLATED_BYTES = 1 << 20;

export interface HepPacket {
  /** 1 and 2 are the fixed-header formats; 3 is the chunked format ("HEP3" or "EEP3"). */
  version: 1 | 2 | 3;
  /** 4 or 6, from chunk 0x0001 (AF_INET 2 / AF_INET6 10), or inferred from the address chunks. */
  ipFamily: 4 | 6;
  /** IP protocol number, chunk 0x0002 (17 UDP, 6 TCP, 132 SCTP); 0 when absent. */
  ipProtocol: number;
  /** Dotted quad (0x0003) or RFC 5952 text (0x0005). */
  srcIp: string;
  /** Dotted quad (0x0004) or RFC 5952 text (0x0006). */
  dstIp: string;
  /** Chunk 0x0007; 0 when absent. */
  srcPort: number;
  /** Chunk 0x0008; 0 when absent. */
  dstPort: number;
  /** Capture time, epoch microseconds: 0x0009 × 10^6 + 0x000a, or the receive time when tsFallback. */
  timestampUs: number;
  /** True when the agent sent no timestamp or one outside [now - maxAge, now + maxSkew]. */
  tsFallback: boolean;
  /** Capture protocol type, chunk 0x000b (see HEP_PROTO); 0 when absent. */
  protoType: number;
  /** Numeric capture agent id, chunk 0x000c (v2: the 16-bit captid); 0 when absent. */
  captureId: number;
  /** Chunk 0x000e as UTF-8 text. */
  authKey?: string;
  /** Captured bytes: a view into the input (0x000f) or the inflated bytes of 0x0010. */
  payload: Uint8Array;
  /** True when the payload came from the compressed chunk 0x0010. */
  payloadCompressed: boolean;
  /** Chunk 0x0011 as UTF-8 text. */
  correlationId?: string;
  /** Chunk 0x0012. */
  vlan?: number;
  /** Capture agent name, chunk 0x0013, as UTF-8 text. */
  nodeName?: string;
  /** Chunk 0x0014 as "aa:bb:cc:dd:ee:ff". */
  srcMac?: string;
  /** Chunk 0x0015 as "aa:bb:cc:dd:ee:ff". */
  dstMac?: string;
  /** Ethernet type, chunk 0x0016. */
  ethType?: number;
  /** TCP flags octet, chunk 0x0017. */
  tcpFlags?: number;
  /** IP TOS octet, chunk 0x0018. */
  ipTos?: number;
  /** Chunk 0x0020 as sent (uint16; HOMER agents send MOS × 100, e.g. 432 for 4.32). */
  mos?: number;
  /** Chunk 0x0021 as sent (uint16; HOMER agents send R-factor × 100). */
  rFactor?: number;
  /** GEO location, chunk 0x0022, as UTF-8 text in the agent's own format. */
  geo?: string;
  /** Chunk 0x0023 as sent (uint32, the agent's jitter unit). */
  jitter?: number;
  /** Chunk 0x0024 ("call", "registration"). */
  transactionType?: string;
  /** Chunk 0x0025. */
  payloadJsonKeys?: string;
  /** Tags' values, chunk 0x0026. */
  tags?: string;
  /** Type of tag, chunk 0x0027 (uint16). */
  tagType?: number;
  /** Event type, chunk 0x0028 (see HEP_EVENT: 1 recording, 2 recording LI). */
  eventType?: number;
  /** Chunk 0x0029. */
  groupId?: string;
  /** Keep-alive timer in seconds, chunk 0x000d. */
  keepAliveTimer?: number;
  /** Chunks with a non-zero vendor id, skipped (their meaning is up to each vendor). */
  vendorChunks: number;
  /** Generic (vendor 0) chunks of a type this decoder does not know, skipped. */
  unknownChunks: number;
}

export type HepDecodeResult = Result<HepPacket, HepDecodeReason>;

const EMPTY = new Uint8Array(0);

/** A packet object with every field present, so all decoded packets share one shape. */
export function newPacket(version: 1 | 2 | 3): HepPacket {
  return {
    version,
    ipFamily: 4,
    ipProtocol: 0,
    srcIp: "",
    dstIp: "",
    srcPort: 0,
    dstPort: 0,
    timestampUs: 0,
    tsFallback: false,
    protoType: 0,
    captureId: 0,
    authKey: undefined,
    payload: EMPTY,
    payloadCompressed: false,
    correlationId: undefined,
    vlan: undefined,
    nodeName: undefined,
    srcMac: undefined,
    dstMac: undefined,
    ethType: undefined,
    tcpFlags: undefined,
    ipTos: undefined,
    mos: undefined,
    rFactor: undefined,
    geo: undefined,
    jitter: undefined,
    transactionType: undefined,
    payloadJsonKeys: undefined,
    tags: undefined,
    tagType: undefined,
    eventType: undefined,
    groupId: undefined,
    keepAliveTimer: undefined,
    vendorChunks: 0,
    unknownChunks: 0,
  };
}

/**
 * Sets timestampUs and tsFallback: the agent's time when it lies in [now - maxAge, now + maxSkew],
 * otherwise the receive time (agents with unset clocks send 0 or 1970 dates).
 */
export function setTimestamp(p: HepPacket, agentUs: number, opts: DecodeOptions | undefined): void {
  const nowMs = opts?.nowMs ?? Date.now();
  if (agentUs >= 0) {
    const lowUs = (nowMs - (opts?.maxAgeMs ?? DEFAULT_MAX_AGE_MS)) * 1000;
    const highUs = (nowMs + (opts?.maxSkewMs ?? DEFAULT_MAX_SKEW_MS)) * 1000;
    if (agentUs >= lowUs && agentUs <= highUs) {
      p.timestampUs = agentUs;
      p.tsFallback = false;
      return;
    }
  }
  p.timestampUs = Math.floor(nowMs * 1000);
  p.tsFallback = true;
}
